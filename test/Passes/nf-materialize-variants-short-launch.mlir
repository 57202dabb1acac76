// A schedule with `short_launch_rows` gets a persistent twin of its
// vectorized variant, right before it, for launches of at most that many
// rows per resident CTA (max_rows_per_cta = short_launch_rows times the
// CTA's rows). The twin takes the number of the variant after it, so the
// other variants keep their names; the 8- and 4-byte twins, the peeled and
// the general variant run one row per CTA and carry no bound on rows.
// RUN: nf-opt %s -split-input-file -verify-diagnostics -nf-materialize-variants | FileCheck %s

// CHECK-LABEL: nf.kernel @fused_add_gate_norm
// CHECK-SAME: name = "v0_persistent128x4", vectorized = true, max_d = 4096, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, max_rows_per_cta = 8>
// CHECK-SAME: name = "v0_cta128x4", vectorized = true, max_d = 4096, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>>
// CHECK-SAME: name = "v1_cta128x8", vectorized = true, max_d = 4096, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 4, chunks_per_thread = 8>>
// CHECK-SAME: name = "v2_cta128x16", vectorized = true, max_d = 4096, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 2, chunks_per_thread = 16>>
// CHECK-SAME: name = "p3_cta128x4", vectorized = false, max_d = 4089, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>, peeled = true>
// CHECK-SAME: name = "g4_streaming128", vectorized = false, max_d = 4096
// CHECK-NOT: short_launch_rows
// CHECK-NOT: #nf.variant
nf.kernel @fused_add_gate_norm(%x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
    %gate: tensor<?x1x?xf32>, %weight: tensor<?xf32>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [
      #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, short_launch_rows = 8>]} {
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

// Rows of several per CTA (a warp each, four per CTA): the bound counts
// rows, 8 per row group.
// CHECK-LABEL: nf.kernel @rmsnorm
// CHECK-SAME: name = "v0_persistent32x3", vectorized = true, max_d = 768, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 3, persistent = true>, max_rows_per_cta = 32>
// CHECK-SAME: name = "v0_warp32x3"
nf.kernel @rmsnorm(%x: tensor<?x?x?xbf16>, %weight: tensor<?xbf16>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [
      #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 3, short_launch_rows = 8>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %weight [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
