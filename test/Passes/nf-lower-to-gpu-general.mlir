// RUN: nf-opt %s -nf-materialize-variants="drop=sm_v0_cta256x4,sm_v1_cta256x8,sm_v2_cta256x16" -nf-lower-to-gpu | FileCheck %s

// The general variant of a two-reduction row at 256 threads x 32 elements
// keeps its row in registers: each element's load is predicated on being
// in the row (scf.if yielding the element, zero otherwise) from an
// unclamped index, so no index is clamped into the row (no arith.minsi).
// CHECK: gpu.func @sm_g3_cta256x32(
// CHECK-NOT: arith.minsi
// CHECK-COUNT-32: scf.if %{{.*}} -> (bf16) {
// CHECK-NOT: arith.minsi
// CHECK: gpu.return
nf.kernel @sm(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
