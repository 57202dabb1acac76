// RUN: nf-compile %s --sm sm_90 --emit=ptx | FileCheck %s
// RUN: nf-compile %s --sm sm_80 --emit=ptx | FileCheck %s
// Group reductions of every shape compile to PTX (vector shuffles, not
// vector.extract_strided_slice, which the NVVM pipeline does not lower):
// groups inside a chunk (G = 2, 8: no shuffle) and across 4 and 32 lanes
// (G = 32, 256: shfl.sync with a member mask), results of two group sizes.
// Its values are checked against nf-interp by
// test/Python/fallback-matches-interp.test (the fallback) and on the GPU by
// python/tests/gpu_matrix.py (tools/gpu-quant-check.sh).
// CHECK: .entry groups_mixed_v0_
// CHECK: shfl.sync.bfly.b32
nf.kernel @groups_mixed(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> (tensor<?x?x?xbf16>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %m2 = nf.reduce mean %xf group 2 : !nf.row<f32>
  %s8 = nf.reduce sum %xf group 8 : !nf.row<f32>
  %a = nf.abs %xf : !nf.row<f32>
  %g32 = nf.reduce max %a group 32 : !nf.row<f32>
  %q256 = nf.reduce mean_sq %xf group 256 : !nf.row<f32>
  %one = nf.constant 1.0 : f32
  %d = nf.add %g32, %one : !nf.group<f32, 32>, f32
  %c = nf.sub %xf, %m2 : !nf.row<f32>, !nf.group<f32, 2>
  %y = nf.div %c, %d : !nf.row<f32>, !nf.group<f32, 32>
  %z = nf.mul %y, %wf : !nf.row<f32>
  %t = nf.add %z, %s8 : !nf.row<f32>, !nf.group<f32, 8>
  %tb = nf.cast %t : !nf.row<f32> to !nf.row<bf16>
  %e = nf.sqrt %q256 : !nf.group<f32, 256>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  nf.return %tb, %d, %e, %ms : !nf.row<bf16>, !nf.group<f32, 32>, !nf.group<f32, 256>, f32
}
