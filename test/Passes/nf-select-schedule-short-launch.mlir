// A one-row-per-CTA schedule of 128 or 256 threads that is not persistent
// but could be gets `short_launch_rows = 8` (a persistent twin of its
// vectorized variant for short launches, -nf-materialize-variants); rows of
// 64 threads (two per CTA), of a warp or less and of 512 threads do not.
// A kernel with a [B, S, D] input that no reduction reads (here x, added
// after the norm) gets `short_launch_rows = 16`: its persistent rows win to
// about twice the rows per CTA.
// Not without persistence (persistent=none, or no asynchronous copies), nor
// where every schedule that can is persistent already (persistent=all).
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=persistent=none | FileCheck %s --check-prefix=NONE
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=async-copy=false | FileCheck %s --check-prefix=NONE
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=persistent=all | FileCheck %s --check-prefix=ALL

// CHECK-LABEL: nf.kernel @fused_add_gate_norm(
// CHECK-SAME: #nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 4>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, short_launch_rows = 16>, #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, short_launch_rows = 16>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, short_launch_rows = 16>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, short_launch_rows = 16>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>,
// NONE-LABEL: nf.kernel @fused_add_gate_norm(
// NONE-NOT: short_launch_rows
// NONE: nf.return
// ALL-LABEL: nf.kernel @fused_add_gate_norm(
// ALL-SAME: #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>,
// ALL-NOT: short_launch_rows
// ALL: nf.return
nf.kernel @fused_add_gate_norm(%x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
    %gate: tensor<?x1x?xf32>, %weight: tensor<?xf32>)
    -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %rb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %w = nf.load %weight [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.rms_norm %rf weight %w eps 1.0e-6 : !nf.row<f32>
  %gn = nf.mul %g, %n : !nf.row<f32>
  %y = nf.add %xf, %gn : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Both [B, S, D] inputs feed the reduction (fused add + RMSNorm): 8.
// CHECK-LABEL: nf.kernel @fused_add_rmsnorm_3840(
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, short_launch_rows = 8>]
nf.kernel @fused_add_rmsnorm_3840(%x: tensor<?x?x3840xbf16>,
    %residual: tensor<?x?x3840xbf16>, %weight: tensor<3840xbf16>)
    -> tensor<?x?x3840xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x3840xbf16>
  %rb = nf.load %residual [B, S, D] : tensor<?x?x3840xbf16>
  %wb = nf.load %weight [D] : tensor<3840xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %rf : !nf.row<f32>
  %y = nf.rms_norm %r weight %wf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// D = 3840: one schedule, 128 x 4, with its twin.
// CHECK-LABEL: nf.kernel @rmsnorm_3840(
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, short_launch_rows = 8>]
nf.kernel @rmsnorm_3840(%x: tensor<?x?x3840xbf16>, %weight: tensor<3840xbf16>)
    -> tensor<?x?x3840xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x3840xbf16>
  %wb = nf.load %weight [D] : tensor<3840xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Nothing along the row to hold (no [D] or [B, 1, D] operand): no
// persistent form, no twin.
// CHECK-LABEL: nf.kernel @plain_rmsnorm_3840(
// CHECK-NOT: short_launch_rows
// CHECK: nf.return
nf.kernel @plain_rmsnorm_3840(%x: tensor<?x?x3840xbf16>)
    -> tensor<?x?x3840xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x3840xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
