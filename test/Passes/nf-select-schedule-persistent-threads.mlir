// Where a reduction waits on operands along the row, the threads of a
// one-CTA row follow what a persistent thread may hold (mayPersist: at most
// 96 operand registers, 64 in a CTA of 512 threads).
// A row whose schedule may not be persistent because its threads would hold
// too many (seed #3's four f32 operands, 16 bytes per element: 128 at 4
// chunks of 8) goes to the fewest more threads that may be: 64 x 4 -> 128 x
// 2, 128 x 4 -> 256 x 2, 256 x 4 -> 512 x 2. 512 x 3 (96 held, past the 64
// a 512-thread CTA leaves) has no wider CTA and stays as it is.
// A row of three chunks in 256 threads goes to 128 threads of six chunks
// where those may be persistent (layernorm_modulate_quant_fp8's two f32
// operands, 8 bytes per element: 96 held); 512 x 3 and 128 x 3 stay.
// Without persistence (persistent=none, or no asynchronous copies) neither
// rule applies.
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=persistent=none | FileCheck %s --check-prefix=NONE
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=async-copy=false | FileCheck %s --check-prefix=NONE

// D dynamic: the family from 64 x 3 (D <= 1536) to 512 x 3.
// CHECK-LABEL: nf.kernel @seed3(
// CHECK-SAME: #nf.schedule<threads_per_row = 64, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, persistent = true>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, persistent = true>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>,
// NONE-LABEL: nf.kernel @seed3(
// NONE-SAME: #nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 3>, #nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 4>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>,
nf.kernel @seed3(%x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
    %gate: tensor<?x1x?xf32>, %weight1: tensor<?xf32>,
    %weight2: tensor<?xf32>, %scale: tensor<?x1x?xf32>)
    -> (tensor<?x?x?xbf16>, tensor<?x?x?xbf16>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %w1 = nf.load %weight1 [D] : tensor<?xf32>
  %w2 = nf.load %weight2 [D] : tensor<?xf32>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %n1 = nf.rms_norm %xf weight %w1 eps 1.0e-6 : !nf.row<f32>
  %tg = nf.tanh %g : !nf.row<f32>
  %tn = nf.mul %tg, %n1 : !nf.row<f32>
  %r = nf.add %resf, %tn : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %rr = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %n2 = nf.rms_norm %rr weight %w2 eps 1.0e-6 : !nf.row<f32>
  %one = nf.constant 1.0 : f32
  %sc1 = nf.add %sc, %one : !nf.row<f32>, f32
  %y = nf.mul %n2, %sc1 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}

// -----

// A static D of 128 x 4 (Z-Image's 3840): 256 x 2, persistent.
// CHECK-LABEL: nf.kernel @seed3_3840
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, persistent = true>]}
// NONE-LABEL: nf.kernel @seed3_3840
// NONE-SAME: nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]}
nf.kernel @seed3_3840(%x: tensor<?x?x3840xbf16>, %residual: tensor<?x?x3840xbf16>,
    %gate: tensor<?x1x3840xf32>, %weight1: tensor<3840xf32>,
    %weight2: tensor<3840xf32>, %scale: tensor<?x1x3840xf32>)
    -> (tensor<?x?x3840xbf16>, tensor<?x?x3840xbf16>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x3840xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x3840xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x3840xf32>
  %w1 = nf.load %weight1 [D] : tensor<3840xf32>
  %w2 = nf.load %weight2 [D] : tensor<3840xf32>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x3840xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %n1 = nf.rms_norm %xf weight %w1 eps 1.0e-6 : !nf.row<f32>
  %tg = nf.tanh %g : !nf.row<f32>
  %tn = nf.mul %tg, %n1 : !nf.row<f32>
  %r = nf.add %resf, %tn : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %rr = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %n2 = nf.rms_norm %rr weight %w2 eps 1.0e-6 : !nf.row<f32>
  %one = nf.constant 1.0 : f32
  %sc1 = nf.add %sc, %one : !nf.row<f32>, f32
  %y = nf.mul %n2, %sc1 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}

// -----

// layernorm_modulate_quant_fp8, D dynamic: 128 x 6 where 256 x 3 was;
// 128 x 3 and 512 x 3 stay.
// CHECK-LABEL: nf.kernel @lmq(
// CHECK-SAME: #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, persistent = true>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 6, persistent = true>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>,
nf.kernel @lmq(%x: tensor<?x?x?xbf16>, %scale: tensor<?x1x?xf32>,
    %shift: tensor<?x1x?xf32>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %amax : !nf.row<f8E4M3FN>, f32
}

// -----

// A static D of 256 x 3: 128 x 6, persistent.
// CHECK-LABEL: nf.kernel @lmq_6144
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 6, persistent = true>]}
// NONE-LABEL: nf.kernel @lmq_6144
// NONE-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>]}
nf.kernel @lmq_6144(%x: tensor<?x?x6144xbf16>, %scale: tensor<?x1x6144xf32>,
    %shift: tensor<?x1x6144xf32>)
    -> (tensor<?x?x6144xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x6144xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x6144xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x6144xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %amax : !nf.row<f8E4M3FN>, f32
}
