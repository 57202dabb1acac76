// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -nf-lower-row-reductions -split-input-file | FileCheck %s

// A staged softmax row of 4 chunks per thread (32 f32 values): the
// exponentials of the sum's pass are held across the second exchange, and
// the epilogue multiplies them by the reciprocal of the sum without
// reading the row back from shared memory or computing e^(x - max) again
// (maybeRematerialize, kMaxHeldStagedValues).
// CHECK-LABEL: gpu.func @held_v0_cluster256x4c8(
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-32: llvm.nvvm.ex2.approx.ftz.f32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: llvm.nvvm.ex2.approx.ftz.f32
// CHECK-NOT: !llvm.ptr<3> -> vector<8xf16>
// CHECK: llvm.nvvm.rcp.rn.f
// CHECK-NOT: llvm.nvvm.ex2.approx.ftz.f32
// CHECK-NOT: !llvm.ptr<3> -> vector<8xf16>
// CHECK-COUNT-4: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
// CHECK-LABEL: gpu.func @held_g1_streaming1024(
nf.kernel @held(%x: tensor<?x?x?xf16>) -> tensor<?x?x?xf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, cluster_size = 8, staged = true>]} {
  %xh = nf.load %x [B, S, D] : tensor<?x?x?xf16>
  %xf = nf.cast %xh : !nf.row<f16> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yh = nf.cast %y : !nf.row<f32> to !nf.row<f16>
  nf.return %yh : !nf.row<f16>
}

// -----

// 5 chunks per thread (40 values): more than a thread holds; the epilogue
// reads each chunk back from shared memory after the second exchange and
// computes its exponentials again.
// CHECK-LABEL: gpu.func @recomputed_v0_cluster256x5c8(
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-40: llvm.nvvm.ex2.approx.ftz.f32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.nvvm.rcp.rn.f
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
// CHECK-COUNT-40: llvm.nvvm.ex2.approx.ftz.f32
// CHECK-LABEL: gpu.func @recomputed_g1_streaming1024(
nf.kernel @recomputed(%x: tensor<?x?x?xf16>) -> tensor<?x?x?xf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, cluster_size = 8, staged = true>]} {
  %xh = nf.load %x [B, S, D] : tensor<?x?x?xf16>
  %xf = nf.cast %xh : !nf.row<f16> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yh = nf.cast %y : !nf.row<f32> to !nf.row<f16>
  nf.return %yh : !nf.row<f16>
}
