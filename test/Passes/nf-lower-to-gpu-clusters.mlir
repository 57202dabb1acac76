// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu | FileCheck %s

// A cluster schedule: two CTAs of 512 threads share a row of up to 32768
// bf16, each holding 4 chunks per thread. The function asks for clusters of
// two (nvvm.cluster_dim); its CTA's rank is blockIdx.x mod 2 and its row
// blockIdx.x / 2. The barrier that says the other CTA has started is
// arrived on before the row's loads and waited on before the first write
// into the other CTA's shared memory. The CTA's sum (shuffles, then shared
// memory) goes to slot (reduction, rank) of both CTAs (mapa + store to
// address space 7) from thread 0; the first warp arrives with release
// semantics, the others relaxed; after the wait each CTA adds the two slots
// in rank order.
// CHECK: llvm.mlir.global internal @rms_v0_cluster512x4c2_cluster() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<2 x f32>
// CHECK: gpu.func @rms_v0_cluster512x4c2(
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: %[[CTA:.*]] = arith.index_cast %block_id_x : index to i64
// CHECK: arith.remui %[[CTA]], %c2_i64
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK-COUNT-4: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: gpu.shuffle  xor
// CHECK: gpu.barrier
// CHECK: nvvm.cluster.wait
// CHECK: llvm.mlir.addressof @rms_v0_cluster512x4c2_cluster : !llvm.ptr<3>
// CHECK: scf.if
// CHECK: nvvm.mapa %{{.*}}, %c0_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<7>
// CHECK: scf.if
// CHECK-NEXT: nvvm.cluster.arrive{{$}}
// CHECK-NEXT: } else {
// CHECK-NEXT: nvvm.cluster.arrive.relaxed
// CHECK: nvvm.cluster.wait
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// The general variant streams the row with one CTA of 1024 threads.
// CHECK: gpu.func @rms_g1_streaming1024(
// CHECK-NOT: nvvm.cluster
// CHECK: gpu.return
nf.kernel @rms(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, cluster_size = 2>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
