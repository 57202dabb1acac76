// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -nf-lower-row-reductions | FileCheck %s

// A cluster schedule: two CTAs of 512 threads share a row of up to 32768
// bf16, each holding 4 chunks per thread. The function asks for clusters of
// two (nvvm.cluster_dim); its CTA's rank is blockIdx.x mod 2 and its row
// blockIdx.x / 2. Thread 0 initializes the reduction's mbarrier (one
// arrival) and fences the initialization for the cluster, predicated in
// the PTX (no branch before the row's loads); the barrier that
// says the other CTA has started is arrived on before the row's loads and
// waited on before the first write into the other CTA's shared memory. The
// CTA's sum (shuffles, then shared memory) goes to slot (reduction, rank)
// of both CTAs from thread 0 (mapa, then st.async counting its bytes on
// that CTA's mbarrier), which first arrives on its own mbarrier expecting
// 4 bytes from each CTA; every thread waits on the mbarrier's phase 0, then
// adds the two slots in rank order. No cluster barrier per reduction.
// CHECK: llvm.mlir.global internal @rms_v0_cluster512x4c2_cluster() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<2 x f32>
// CHECK: llvm.mlir.global internal @rms_v0_cluster512x4c2_cluster_mbar() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<1 x i64>
// CHECK: gpu.func @rms_v0_cluster512x4c2(
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: %[[CTA:.*]] = arith.index_cast %block_id_x : index to i64
// CHECK: arith.remui %[[CTA]], %c2_i64
// CHECK: llvm.inline_asm has_side_effects {{.*}}"{\0A.reg .pred p;\0Asetp.eq.u32 p, $0, 0;\0A@p mbarrier.init.shared.b64 [$1], 1;\0A@p fence.mbarrier_init.release.cluster;\0A}", "r,l"
// CHECK-NEXT: nvvm.cluster.arrive.relaxed
// CHECK-COUNT-4: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: gpu.shuffle  xor
// CHECK: gpu.barrier
// CHECK: nvvm.cluster.wait
// CHECK: llvm.mlir.addressof @rms_v0_cluster512x4c2_cluster : !llvm.ptr<3>
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8_i32
// CHECK: nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.inline_asm has_side_effects {{.*}}"st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [$0], $1, [$2];", "l,r,l"
// CHECK: nvvm.mapa %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.inline_asm has_side_effects {{.*}}"st.async
// CHECK: }
// CHECK-NOT: nvvm.cluster.arrive
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %c0_i32
// CHECK-NOT: nvvm.cluster
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
