// Where a reduction waits on operands along the row, a one-CTA row whose
// schedule may not be persistent because its threads would hold more than
// 96 operand registers (seed #3's four f32 operands, 16 bytes per element:
// 128 at 4 chunks of 8) goes to the fewest more threads that may be: 64 x
// 4 -> 128 x 2, 128 x 4 -> 256 x 2, 256 x 4 -> 512 x 2. 512 x 3 (96 held,
// past the 64 a 512-thread CTA leaves) has no wider CTA and stays as it
// is. Without persistence (persistent=none, or no asynchronous copies)
// the rule does not apply: 4 chunks per thread, as before.
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=persistent=none | FileCheck %s --check-prefix=NONE

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
