// A schedule of one chunk per thread holds two rows per thread (short
// rows). In kernels of two [B, S, D] inputs and one reduction its 8-byte
// twin holds one row per thread (the H200 measured fused add + RMSNorm and
// seeds #1 and #2 with RMSNorm up to 16 points faster at D = 36-124);
// the 4-byte twin, the peeled and the general variants, and the twins of
// kernels of one input or of two reductions keep two (they lost up to 12).
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-materialize-variants | FileCheck %s

// CHECK-LABEL: nf.kernel @two_inputs_one_reduction
// CHECK-SAME: name = "v0_multi_row16x1", vectorized = true, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>
// CHECK-SAME: name = "v1_multi_row16x2", vectorized = true, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 4, chunks_per_thread = 2>>
// CHECK-SAME: name = "v2_multi_row16x4", vectorized = true, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 2, chunks_per_thread = 4, rows_per_thread = 2>
// CHECK-SAME: name = "p3_multi_row16x1", vectorized = false, max_d = 121, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>
// CHECK-SAME: name = "g4_multi_row16x8", vectorized = false, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 1, chunks_per_thread = 8, rows_per_thread = 2>
nf.kernel @two_inputs_one_reduction(%x: tensor<?x?x?xbf16>,
    %res: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> (tensor<?x?x?xbf16>, tensor<?x?x?xbf16> {nf.in_place = 1 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, rows_per_thread = 2, chunk = 8, chunks_per_thread = 1>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %rb0 = nf.load %res [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb0 : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %rf : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %n = nf.rms_norm %r eps 1.0e-6 : !nf.row<f32>
  %y = nf.mul %n, %wf : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}

// -----

// Two reductions (LayerNorm): two rows per thread in every variant.
// CHECK-LABEL: nf.kernel @two_inputs_two_reductions
// CHECK-SAME: name = "v1_multi_row16x2", vectorized = true, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 4, chunks_per_thread = 2, rows_per_thread = 2>
nf.kernel @two_inputs_two_reductions(%x: tensor<?x?x?xbf16>,
    %res: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, rows_per_thread = 2, chunk = 8, chunks_per_thread = 1>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %rb0 = nf.load %res [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb0 : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %rf : !nf.row<f32>
  %n = nf.layer_norm %r eps 1.0e-6 : !nf.row<f32>
  %nb = nf.cast %n : !nf.row<f32> to !nf.row<bf16>
  nf.return %nb : !nf.row<bf16>
}

// -----

// One input: two rows per thread in every variant.
// CHECK-LABEL: nf.kernel @one_input
// CHECK-SAME: name = "v1_multi_row16x2", vectorized = true, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 4, chunks_per_thread = 2, rows_per_thread = 2>
nf.kernel @one_input(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, rows_per_thread = 2, chunk = 8, chunks_per_thread = 1>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.rms_norm %xf eps 1.0e-6 : !nf.row<f32>
  %nb = nf.cast %n : !nf.row<f32> to !nf.row<bf16>
  nf.return %nb : !nf.row<bf16>
}
