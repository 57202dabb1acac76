// Every example computes the same results as written and after
// -nf-decompose (the composites evaluated from their formulas against their
// decomposition into primitives), at two sizes each: one with D not a
// multiple of 8 where D is dynamic, and for QK-norm + RoPE one where K has
// fewer heads than Q. Tolerance: normwise relative error <= 1e-5 for f32
// results, <= 1e-2 for f16/bf16 results.
//
// When adding an example, add its RUN lines here.

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/fused_add_gate_norm.mlir \
// RUN:   | FileCheck %s --check-prefix=FAGNA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/fused_add_gate_norm.mlir \
// RUN:   | FileCheck %s --check-prefix=FAGNB
// FAGNA: @fused_add_gate_norm result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// FAGNA-NOT: result
// FAGNB: @fused_add_gate_norm result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// FAGNB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/fused_add_rmsnorm.mlir \
// RUN:   | FileCheck %s --check-prefix=FARNA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/fused_add_rmsnorm.mlir \
// RUN:   | FileCheck %s --check-prefix=FARNB
// FARNA: @fused_add_rmsnorm result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// FARNA-NEXT: @fused_add_rmsnorm result #1 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// FARNA-NOT: result
// FARNB: @fused_add_rmsnorm result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// FARNB-NEXT: @fused_add_rmsnorm result #1 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// FARNB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/layernorm.mlir \
// RUN:   | FileCheck %s --check-prefix=LNA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/layernorm.mlir \
// RUN:   | FileCheck %s --check-prefix=LNB
// LNA: @layernorm result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// LNA-NOT: result
// LNB: @layernorm result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// LNB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/norm_tanh_mul_add.mlir \
// RUN:   | FileCheck %s --check-prefix=NTMAA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/norm_tanh_mul_add.mlir \
// RUN:   | FileCheck %s --check-prefix=NTMAB
// NTMAA: @norm_tanh_mul_add result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// NTMAA-NOT: result
// NTMAB: @norm_tanh_mul_add result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// NTMAB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/norm_tanh_mul_add_norm_scale.mlir \
// RUN:   | FileCheck %s --check-prefix=NTMANSA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/norm_tanh_mul_add_norm_scale.mlir \
// RUN:   | FileCheck %s --check-prefix=NTMANSB
// NTMANSA: @norm_tanh_mul_add_norm_scale result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// NTMANSA-NEXT: @norm_tanh_mul_add_norm_scale result #1 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// NTMANSA-NOT: result
// NTMANSB: @norm_tanh_mul_add_norm_scale result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// NTMANSB-NEXT: @norm_tanh_mul_add_norm_scale result #1 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// NTMANSB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=4,S=3,P=64 --offset=7 %examples/qk_rmsnorm_rope_interleaved.mlir \
// RUN:   | FileCheck %s --check-prefix=QKIA
// RUN: nf-interp --check-decompose --dims=B=5,S=24,P=16 --shape=k=5x8x128 --seed=2 --offset=7 %examples/qk_rmsnorm_rope_interleaved.mlir \
// RUN:   | FileCheck %s --check-prefix=QKIB
// QKIA: @qk_rmsnorm_rope_interleaved result #0 bf16 4x3x128: rel_error {{.*}} <= 1e-02 ok
// QKIA-NEXT: @qk_rmsnorm_rope_interleaved result #1 bf16 4x3x128: rel_error {{.*}} <= 1e-02 ok
// QKIA-NOT: result
// QKIB: @qk_rmsnorm_rope_interleaved result #0 bf16 5x24x128: rel_error {{.*}} <= 1e-02 ok
// QKIB-NEXT: @qk_rmsnorm_rope_interleaved result #1 bf16 5x8x128: rel_error {{.*}} <= 1e-02 ok
// QKIB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=4,S=3,P=64 %examples/qk_rmsnorm_rope_interleaved_partial.mlir \
// RUN:   | FileCheck %s --check-prefix=QKIPA
// RUN: nf-interp --check-decompose --dims=B=5,S=24,P=16 --shape=k=5x8x128 --seed=2 %examples/qk_rmsnorm_rope_interleaved_partial.mlir \
// RUN:   | FileCheck %s --check-prefix=QKIPB
// QKIPA: @qk_rmsnorm_rope_interleaved_partial result #0 bf16 4x3x128: rel_error {{.*}} <= 1e-02 ok
// QKIPA-NEXT: @qk_rmsnorm_rope_interleaved_partial result #1 bf16 4x3x128: rel_error {{.*}} <= 1e-02 ok
// QKIPA-NOT: result
// QKIPB: @qk_rmsnorm_rope_interleaved_partial result #0 bf16 5x24x128: rel_error {{.*}} <= 1e-02 ok
// QKIPB-NEXT: @qk_rmsnorm_rope_interleaved_partial result #1 bf16 5x8x128: rel_error {{.*}} <= 1e-02 ok
// QKIPB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=4,S=3,P=64 %examples/qk_rmsnorm_rope_neox.mlir \
// RUN:   | FileCheck %s --check-prefix=QKNA
// RUN: nf-interp --check-decompose --dims=B=5,S=24,P=16 --shape=k=5x8x128 --seed=2 %examples/qk_rmsnorm_rope_neox.mlir \
// RUN:   | FileCheck %s --check-prefix=QKNB
// QKNA: @qk_rmsnorm_rope_neox result #0 bf16 4x3x128: rel_error {{.*}} <= 1e-02 ok
// QKNA-NEXT: @qk_rmsnorm_rope_neox result #1 bf16 4x3x128: rel_error {{.*}} <= 1e-02 ok
// QKNA-NOT: result
// QKNB: @qk_rmsnorm_rope_neox result #0 bf16 5x24x128: rel_error {{.*}} <= 1e-02 ok
// QKNB-NEXT: @qk_rmsnorm_rope_neox result #1 bf16 5x8x128: rel_error {{.*}} <= 1e-02 ok
// QKNB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=4,S=3,P=64 --offset=7 %examples/qk_rmsnorm_rope_neox_partial.mlir \
// RUN:   | FileCheck %s --check-prefix=QKNPA
// RUN: nf-interp --check-decompose --dims=B=5,S=24,P=16 --shape=k=5x8x128 --seed=2 --offset=7 %examples/qk_rmsnorm_rope_neox_partial.mlir \
// RUN:   | FileCheck %s --check-prefix=QKNPB
// QKNPA: @qk_rmsnorm_rope_neox_partial result #0 bf16 4x3x128: rel_error {{.*}} <= 1e-02 ok
// QKNPA-NEXT: @qk_rmsnorm_rope_neox_partial result #1 bf16 4x3x128: rel_error {{.*}} <= 1e-02 ok
// QKNPA-NOT: result
// QKNPB: @qk_rmsnorm_rope_neox_partial result #0 bf16 5x24x128: rel_error {{.*}} <= 1e-02 ok
// QKNPB-NEXT: @qk_rmsnorm_rope_neox_partial result #1 bf16 5x8x128: rel_error {{.*}} <= 1e-02 ok
// QKNPB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/rmsnorm.mlir \
// RUN:   | FileCheck %s --check-prefix=RMSA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/rmsnorm.mlir \
// RUN:   | FileCheck %s --check-prefix=RMSB
// RMSA: @rmsnorm result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// RMSA-NOT: result
// RMSB: @rmsnorm result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// RMSB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/scale_residual_layernorm_affine_scale_shift.mlir \
// RUN:   | FileCheck %s --check-prefix=SRLASA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/scale_residual_layernorm_affine_scale_shift.mlir \
// RUN:   | FileCheck %s --check-prefix=SRLASB
// SRLASA: @scale_residual_layernorm_affine_scale_shift result #0 f32 2x8x64: rel_error {{.*}} <= 1e-05 ok
// SRLASA-NEXT: @scale_residual_layernorm_affine_scale_shift result #1 f32 2x8x64: rel_error {{.*}} <= 1e-05 ok
// SRLASA-NOT: result
// SRLASB: @scale_residual_layernorm_affine_scale_shift result #0 f32 3x5x7: rel_error {{.*}} <= 1e-05 ok
// SRLASB-NEXT: @scale_residual_layernorm_affine_scale_shift result #1 f32 3x5x7: rel_error {{.*}} <= 1e-05 ok
// SRLASB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=1,S=4,D=1536 %examples/scale_residual_layernorm_scale_shift.mlir \
// RUN:   | FileCheck %s --check-prefix=SRLSA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/scale_residual_layernorm_scale_shift.mlir \
// RUN:   | FileCheck %s --check-prefix=SRLSB
// SRLSA: @scale_residual_layernorm_scale_shift result #0 bf16 1x4x1536: rel_error {{.*}} <= 1e-02 ok
// SRLSA-NEXT: @scale_residual_layernorm_scale_shift result #1 bf16 1x4x1536: rel_error {{.*}} <= 1e-02 ok
// SRLSA-NOT: result
// SRLSB: @scale_residual_layernorm_scale_shift result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// SRLSB-NEXT: @scale_residual_layernorm_scale_shift result #1 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// SRLSB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64,F=4 %examples/scale_residual_layernorm_scale_shift_frames.mlir \
// RUN:   | FileCheck %s --check-prefix=SRLSFA
// RUN: nf-interp --check-decompose --dims=B=1,S=6,D=100,F=3 --seed=2 %examples/scale_residual_layernorm_scale_shift_frames.mlir \
// RUN:   | FileCheck %s --check-prefix=SRLSFB
// SRLSFA: @scale_residual_layernorm_scale_shift_frames result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// SRLSFA-NEXT: @scale_residual_layernorm_scale_shift_frames result #1 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// SRLSFA-NOT: result
// SRLSFB: @scale_residual_layernorm_scale_shift_frames result #0 bf16 1x6x100: rel_error {{.*}} <= 1e-02 ok
// SRLSFB-NEXT: @scale_residual_layernorm_scale_shift_frames result #1 bf16 1x6x100: rel_error {{.*}} <= 1e-02 ok
// SRLSFB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/scale_residual_rmsnorm_affine_scale_shift.mlir \
// RUN:   | FileCheck %s --check-prefix=SRRASA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/scale_residual_rmsnorm_affine_scale_shift.mlir \
// RUN:   | FileCheck %s --check-prefix=SRRASB
// SRRASA: @scale_residual_rmsnorm_affine_scale_shift result #0 f16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// SRRASA-NEXT: @scale_residual_rmsnorm_affine_scale_shift result #1 f16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// SRRASA-NOT: result
// SRRASB: @scale_residual_rmsnorm_affine_scale_shift result #0 f16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// SRRASB-NEXT: @scale_residual_rmsnorm_affine_scale_shift result #1 f16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// SRRASB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/scale_residual_rmsnorm_scale_shift.mlir \
// RUN:   | FileCheck %s --check-prefix=SRRSA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/scale_residual_rmsnorm_scale_shift.mlir \
// RUN:   | FileCheck %s --check-prefix=SRRSB
// SRRSA: @scale_residual_rmsnorm_scale_shift result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// SRRSA-NEXT: @scale_residual_rmsnorm_scale_shift result #1 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// SRRSA-NOT: result
// SRRSB: @scale_residual_rmsnorm_scale_shift result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// SRRSB-NEXT: @scale_residual_rmsnorm_scale_shift result #1 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// SRRSB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/select01_layernorm_modulate.mlir \
// RUN:   | FileCheck %s --check-prefix=S01A
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/select01_layernorm_modulate.mlir \
// RUN:   | FileCheck %s --check-prefix=S01B
// S01A: @select01_layernorm_modulate result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// S01A-NEXT: @select01_layernorm_modulate result #1 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// S01A-NOT: result
// S01B: @select01_layernorm_modulate result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// S01B-NEXT: @select01_layernorm_modulate result #1 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// S01B-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/select01_residual_layernorm_modulate.mlir \
// RUN:   | FileCheck %s --check-prefix=S01RA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/select01_residual_layernorm_modulate.mlir \
// RUN:   | FileCheck %s --check-prefix=S01RB
// S01RA: @select01_residual_layernorm_modulate result #0 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// S01RA-NEXT: @select01_residual_layernorm_modulate result #1 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// S01RA-NEXT: @select01_residual_layernorm_modulate result #2 bf16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// S01RA-NOT: result
// S01RB: @select01_residual_layernorm_modulate result #0 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// S01RB-NEXT: @select01_residual_layernorm_modulate result #1 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// S01RB-NEXT: @select01_residual_layernorm_modulate result #2 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// S01RB-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/softmax.mlir \
// RUN:   | FileCheck %s --check-prefix=SMAXA
// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/softmax.mlir \
// RUN:   | FileCheck %s --check-prefix=SMAXB
// SMAXA: @softmax result #0 f16 2x8x64: rel_error {{.*}} <= 1e-02 ok
// SMAXA-NOT: result
// SMAXB: @softmax result #0 f16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// SMAXB-NOT: result

// Quantized outputs and per-row results.
// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/rmsnorm_quant_fp8.mlir \
// RUN:   | FileCheck %s --check-prefix=RQF
// RQF: @rmsnorm_quant_fp8 result #0 f8E4M3FN 2x8x64: rel_error {{.*}} <= 1e-02 ok
// RQF-NEXT: @rmsnorm_quant_fp8 result #1 f32 2x8: rel_error {{.*}} <= 1e-05 ok
// RQF-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=3,D=384 %examples/rmsnorm_quant_fp8_group128.mlir \
// RUN:   | FileCheck %s --check-prefix=RQG
// RQG: @rmsnorm_quant_fp8_group128 result #0 f8E4M3FN 2x3x384: rel_error {{.*}} <= 1e-02 ok
// RQG-NEXT: @rmsnorm_quant_fp8_group128 result #1 f32 2x3x3: rel_error {{.*}} <= 1e-05 ok
// RQG-NOT: result

// RUN: nf-interp --check-decompose --dims=B=3,S=5,D=7 --seed=2 %examples/fused_add_rmsnorm_quant_i8.mlir \
// RUN:   | FileCheck %s --check-prefix=FARQ
// FARQ: @fused_add_rmsnorm_quant_i8 result #0 i8 3x5x7: rel_error {{.*}} <= 1e-02 ok
// FARQ-NEXT: @fused_add_rmsnorm_quant_i8 result #1 bf16 3x5x7: rel_error {{.*}} <= 1e-02 ok
// FARQ-NEXT: @fused_add_rmsnorm_quant_i8 result #2 f32 3x5: rel_error {{.*}} <= 1e-05 ok
// FARQ-NOT: result

// RUN: nf-interp --check-decompose --dims=B=2,S=8,D=64 %examples/layernorm_modulate_quant_fp8.mlir \
// RUN:   | FileCheck %s --check-prefix=LMQ
// LMQ: @layernorm_modulate_quant_fp8 result #0 f8E4M3FN 2x8x64: rel_error {{.*}} <= 1e-02 ok
// LMQ-NEXT: @layernorm_modulate_quant_fp8 result #1 f32 2x8: rel_error {{.*}} <= 1e-05 ok
// LMQ-NOT: result

// Loads of every quantized type, cast to f32 (test/runtime/Inputs).
// RUN: nf-interp --check-decompose --dims=B=2,S=3,D=40 %S/../runtime/Inputs/dequantize.mlir \
// RUN:   | FileCheck %s --check-prefix=DEQ
// DEQ: @dequantize result #0 f32 2x3x40: rel_error 0.00e+00 <= 1e-05 ok
// DEQ-NEXT: @dequantize result #1 f32 2x3x40: rel_error 0.00e+00 <= 1e-05 ok
// DEQ-NEXT: @dequantize result #2 f32 2x3x40: rel_error 0.00e+00 <= 1e-05 ok
// DEQ-NOT: result
