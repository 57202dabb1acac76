// The 8-byte twin of a 64 x 2 row that NfSelectSchedule took from a warp
// (getWarpRowMaxChunks: two 16-bit [B, S, D] inputs, a result in place,
// one reduction) is held in the warp, 8 chunks of 4 per lane, at the same
// capacity: in 64 threads it ran at 63-71% of a copy on the H200 against
// 80-89 in the warp (fused add + RMSNorm, D = 700-1020). Other kernels'
// twins keep the threads of their row.
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-materialize-variants | FileCheck %s

// CHECK-LABEL: nf.kernel @fused_add_rmsnorm_700
// CHECK-SAME: #nf.variant<name = "v0_warp32x8", vectorized = true, max_d = 1024, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 4, chunks_per_thread = 8>>
nf.kernel @fused_add_rmsnorm_700(%x: tensor<?x?x700xbf16>,
    %res: tensor<?x?x700xbf16>)
    -> (tensor<?x?x700xbf16>, tensor<?x?x700xbf16> {nf.in_place = 1 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 2>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x700xbf16>
  %rb0 = nf.load %res [B, S, D] : tensor<?x?x700xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb0 : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %rf : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %y = nf.rms_norm %r eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}

// -----

// Without the in-place result, the twin keeps 64 threads.
// CHECK-LABEL: nf.kernel @add_norm_900
// CHECK-SAME: #nf.variant<name = "v0_cta64x4", vectorized = true, max_d = 1024, schedule = <threads_per_row = 64, rows_per_cta = 2, chunk = 4, chunks_per_thread = 4>>
nf.kernel @add_norm_900(%x: tensor<?x?x900xbf16>, %res: tensor<?x?x900xbf16>)
    -> tensor<?x?x900xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 2>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x900xbf16>
  %rb0 = nf.load %res [B, S, D] : tensor<?x?x900xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb0 : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %rf : !nf.row<f32>
  %y = nf.rms_norm %r eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
