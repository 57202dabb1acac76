// The PyTorch fallback of group reductions: the row viewed as [..., D / G, G]
// is reduced over its last dimension and each value repeated over its
// group, so that group values combine with rows and scalars as rows do; a
// [B, S, D / G] result takes every G-th; D not a multiple of G is refused.
// RUN: nf-compile %s --emit=torch | FileCheck %s
// The values are checked against nf-interp by
// test/Python/fallback-matches-interp.test (f32 and int8: any torch).

// CHECK-LABEL: def groups(x):
// CHECK-NEXT:      """nf.kernel @groups on torch: (x: f32[B,S,D]) -> (i8[B,S,D], f32[B,S,D/4], f32[B,S,D]), new tensors."""
// CHECK:           if D % 4: raise ValueError(f"the row length D = {D} is not a multiple of the group size 4")
// CHECK:           = torch.amax({{v[0-9]+}}.unflatten(-1, (-1, 4)), -1).repeat_interleave(4, -1)  # nf.reduce max
// CHECK:           = (torch.sum({{.*}}.unflatten(-1, (-1, 4)), -1, dtype=torch.float64) / 4).to(torch.float32).repeat_interleave(4, -1)  # nf.reduce mean
// CHECK:           out1 = torch.empty((B0, S0, D // 4), dtype=torch.float32, device=dev)
// CHECK-NEXT:      out1[:, None].copy_({{.*}}[..., ::4])
nf.kernel @groups(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xi8>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.abs %0 : !nf.row<f32>
  %2 = nf.reduce max %1 group 4 : !nf.row<f32>
  %c = nf.constant 127.0 : f32
  %3 = nf.div %2, %c : !nf.group<f32, 4>, f32
  %m = nf.constant 1.0e-4 : f32
  %4 = nf.max %3, %m : !nf.group<f32, 4>, f32
  %5 = nf.div %0, %4 : !nf.row<f32>, !nf.group<f32, 4>
  %6 = nf.cast %5 : !nf.row<f32> to !nf.row<i8>
  %7 = nf.reduce mean %0 group 4 : !nf.row<f32>
  %8 = nf.sub %0, %7 : !nf.row<f32>, !nf.group<f32, 4>
  %9 = nf.exp %7 : !nf.group<f32, 4>
  %10 = nf.add %9, %4 : !nf.group<f32, 4>
  nf.return %6, %10, %8 : !nf.row<i8>, !nf.group<f32, 4>, !nf.row<f32>
}
