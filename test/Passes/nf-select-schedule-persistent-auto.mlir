// Persistent schedules where a reduction does not wait on operands along
// the row (persistent=auto): only in kernels of one 16-bit [B, S, D] input
// and two or more reductions. Their 512 x 4 schedule is persistent; where
// a later reduction reads an operand along the row (rmsnorm_quant_fp8's
// maximum reads the weight), rows of five chunks and of four chunks in 256
// threads too. In kernels of two 16-bit [B, S, D] inputs and two or more
// reductions, 512 x 3 and 512 x 4 (the latter's two slots, 128 KB, only
// where the target allows more than 96 KB: nf-compile sets 200 for sm_90
// and sm_100). f32 rows and kernels of one reduction get none;
// persistent=all makes every schedule that may persistent; persistent=none
// none.
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=persistent=all | FileCheck %s --check-prefix=ALL
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=persistent=none | FileCheck %s --check-prefix=NONE
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=max-persistent-stage-kb=200 | FileCheck %s --check-prefix=KB200

// NONE-NOT: persistent

// LayerNorm, D dynamic: 512 x 4, and no other persistent schedule.
// CHECK-LABEL: nf.kernel @layernorm(
// CHECK-NOT: persistent
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 6>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>
// CHECK-NOT: persistent
// ALL-LABEL: nf.kernel @layernorm(
// ALL-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>
nf.kernel @layernorm(%x: tensor<?x?x?xbf16>, %weight: tensor<?xf32>,
    %bias: tensor<?xf32>) -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %w = nf.load %weight [D] : tensor<?xf32>
  %b = nf.load %bias [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// A static D in 512 x 4's range: persistent, at its bottom (12800 at H200:
// 80.2 -> 88.9% of a copy) as at its top.
// CHECK-LABEL: nf.kernel @layernorm_12800
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>]}
nf.kernel @layernorm_12800(%x: tensor<?x?x12800xbf16>, %weight: tensor<12800xf32>,
    %bias: tensor<12800xf32>) -> tensor<?x?x12800xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x12800xbf16>
  %w = nf.load %weight [D] : tensor<12800xf32>
  %b = nf.load %bias [D] : tensor<12800xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// f32 rows (chunks of 4): none (LayerNorm at 512 x 4 lost 9.9 to 15.3
// points persistent).
// CHECK-LABEL: nf.kernel @layernorm_f32
// CHECK-NOT: persistent
// ALL-LABEL: nf.kernel @layernorm_f32
// ALL-SAME: persistent = true
nf.kernel @layernorm_f32(%x: tensor<?x?x?xf32>, %weight: tensor<?xf32>,
    %bias: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %w = nf.load %weight [D] : tensor<?xf32>
  %b = nf.load %bias [D] : tensor<?xf32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  nf.return %y : !nf.row<f32>
}

// -----

// The maximum reads the weight: 128 x 5, 256 x 4, 256 x 5, 512 x 4 and
// 512 x 5 persistent; 128 x 4, 256 x 3 and 512 x 3 not.
// CHECK-LABEL: nf.kernel @rmsnorm_quant
// CHECK-NOT: persistent
// CHECK-SAME: #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, short_launch_rows = 8>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, persistent = true>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, short_launch_rows = 8>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, persistent = true>
// CHECK-NOT: persistent
nf.kernel @rmsnorm_quant(%x: tensor<?x?x?xbf16>, %weight: tensor<?xbf16>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %weight [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %amax : !nf.row<f8E4M3FN>, f32
}

// -----

// One reduction (RMSNorm): none.
// CHECK-LABEL: nf.kernel @rmsnorm
// CHECK-NOT: persistent
// ALL-LABEL: nf.kernel @rmsnorm
// ALL-SAME: persistent = true
nf.kernel @rmsnorm(%x: tensor<?x?x?xbf16>, %weight: tensor<?xbf16>)
    -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %weight [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Two inputs, two reductions (fused add + RMSNorm + int8): 512 x 3
// persistent (96 KB of slots); 512 x 4 (128 KB) and 512 x 5 (160 KB) only
// with room for them.
// CHECK-LABEL: nf.kernel @fused_add_rmsnorm_quant
// CHECK-NOT: persistent
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, short_launch_rows = 8>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>
// CHECK-NOT: persistent
// KB200-LABEL: nf.kernel @fused_add_rmsnorm_quant
// KB200-NOT: persistent
// KB200-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, short_launch_rows = 8>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, persistent = true>
// KB200-NOT: persistent
nf.kernel @fused_add_rmsnorm_quant(%x: tensor<?x?x?xbf16>,
    %residual: tensor<?x?x?xbf16>, %weight: tensor<?xbf16>)
    -> (tensor<?x?x?xi8>, tensor<?x?x?xbf16> {nf.in_place = 1 : i64},
        tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %weight [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %resf : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %rr = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %rr weight %wf eps 1.0e-6 : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<i8>
  nf.return %q8, %rb, %amax : !nf.row<i8>, !nf.row<bf16>, f32
}
