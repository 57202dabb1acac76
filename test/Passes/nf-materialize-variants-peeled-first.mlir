// Where a kernel writes a [B, S, D] result in place and a thread holds 3
// or more chunks, a schedule's peeled variant comes before its 8- and
// 4-byte twins, so rows of a multiple of half or a quarter of a chunk
// (D = 4 (mod 8) in bf16) take 16-byte accesses for their body: on the
// H200 fused add + RMSNorm ran at 85.6-94.2% of a copy against 53.6-83.5
// on the 8-byte twin (D = 300-5100). Rows of fewer chunks per thread, rows
// of a warp or less, and kernels without an in-place result keep the twins
// first (they lost 10 to 40 points on the peeled variant). The vectorized
// variant stays first.
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-materialize-variants | FileCheck %s

// CHECK-LABEL: nf.kernel @in_place_three_chunks
// CHECK-SAME: name = "v0_cta64x3", vectorized = true
// CHECK-SAME: name = "p1_cta64x3", vectorized = false, max_d = 1529
// CHECK-SAME: name = "v2_cta64x6", vectorized = true, max_d = 1536
// CHECK-SAME: name = "v3_cta64x12", vectorized = true, max_d = 1536
// CHECK-SAME: name = "g4_
nf.kernel @in_place_three_chunks(%x: tensor<?x?x?xbf16>,
    %res: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> (tensor<?x?x?xbf16>, tensor<?x?x?xbf16> {nf.in_place = 1 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 3>]} {
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

// Two chunks per thread: the twins first (fused add + RMSNorm at D = 700,
// 91.1% of a copy on its twin, 80.6 peeled).
// CHECK-LABEL: nf.kernel @in_place_two_chunks
// CHECK-SAME: name = "v0_cta64x2", vectorized = true
// CHECK-SAME: name = "v1_warp32x8", vectorized = true
// CHECK-SAME: name = "v2_cta64x8", vectorized = true
// CHECK-SAME: name = "p3_cta64x2", vectorized = false, max_d = 1017
nf.kernel @in_place_two_chunks(%x: tensor<?x?x?xbf16>,
    %res: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> (tensor<?x?x?xbf16>, tensor<?x?x?xbf16> {nf.in_place = 1 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 2>]} {
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

// No result in place: the twins first (RMSNorm at D = 2500, 95.8% of a
// copy on the 8-byte twin of 128 x 3, 71.0 peeled).
// CHECK-LABEL: nf.kernel @three_chunks
// CHECK-SAME: name = "v0_cta64x3", vectorized = true
// CHECK-SAME: name = "v1_cta64x6", vectorized = true
// CHECK-SAME: name = "v2_cta64x12", vectorized = true
// CHECK-SAME: name = "p3_cta64x3", vectorized = false, max_d = 1529
nf.kernel @three_chunks(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 3>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.rms_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.mul %n, %wf : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// A warp row of 3 chunks, in place: the twins first. Its in-place result is
// stored after the exchange (nf-lower-to-gpu-early-stores.mlir), and there
// the twins led the int8 kernel by 17 to 25 points at D = 300-700.
// CHECK-LABEL: nf.kernel @in_place_warp_three_chunks
// CHECK-SAME: name = "v0_warp32x3", vectorized = true
// CHECK-SAME: name = "v1_warp32x6", vectorized = true
// CHECK-SAME: name = "v2_warp32x12", vectorized = true
// CHECK-SAME: name = "p3_warp32x3", vectorized = false, max_d = 761
nf.kernel @in_place_warp_three_chunks(%x: tensor<?x?x?xbf16>,
    %res: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> (tensor<?x?x?xbf16>, tensor<?x?x?xbf16> {nf.in_place = 1 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 3>]} {
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
