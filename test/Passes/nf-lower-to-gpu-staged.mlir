// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -nf-lower-row-reductions -split-input-file -verify-diagnostics | FileCheck %s

// A staged cluster schedule: two CTAs of 256 threads share a row of up to
// 32768 bf16, each holding its 8 chunks per thread in a shared buffer
// (256 x 8 x 16 bytes) instead of registers. Every thread copies its
// chunks there with cp.async (chunk k of all threads, then chunk k + 1),
// waits for its own copies, and reads each chunk back from shared memory
// in each pass: for the sum of squares, and again after the cluster's
// exchange for the epilogue, so that no row element is live across the
// reduction. The weight ([D]) is read from global memory in the epilogue.
// CHECK: llvm.mlir.global internal @rms_v0_cluster256x8c2_stage() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32768 x i8>
// CHECK: gpu.func @rms_v0_cluster256x8c2(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK-NOT: llvm.load
// CHECK: llvm.mlir.addressof @rms_v0_cluster256x8c2_stage : !llvm.ptr<3>
// CHECK-COUNT-8: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK-NEXT: arith.extf
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// The general variant streams the row from global memory, unstaged.
// CHECK: gpu.func @rms_g1_streaming1024(
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.return
nf.kernel @rms(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, cluster_size = 2, staged = true>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %n = nf.mul %xf, %ms : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>, !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// A staged schedule needs a kernel whose CTA's share of the row fits a
// static shared buffer and whose chunks each thread reads alone: not
// rotary embedding, not group reductions, at most 48 KB.
// expected-error@+1 {{'nf.kernel' op has a staged schedule, which needs a kernel without rotary embedding or group reductions whose CTA's share of the row fits in 48 KB of shared memory and whose [B, S, D] inputs take a multiple of 16 bytes per chunk}}
nf.kernel @too_much(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, cluster_size = 2, staged = true>]} {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// A chunk of 4 elements (16 bytes of the f32 rows) is 4 bytes of an fp8
// input: not a whole 16-byte copy.
// expected-error@+1 {{'nf.kernel' op has a staged schedule, which needs a kernel without rotary embedding or group reductions whose CTA's share of the row fits in 48 KB of shared memory and whose [B, S, D] inputs take a multiple of 16 bytes per chunk}}
nf.kernel @fp8_chunks(%x: tensor<?x?x?xf8E4M3FN>) -> tensor<?x?x?xf32>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 4, chunks_per_thread = 5, cluster_size = 2, staged = true>]} {
  %x8 = nf.load %x [B, S, D] : tensor<?x?x?xf8E4M3FN>
  %xf = nf.cast %x8 : !nf.row<f8E4M3FN> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}


// -----

// A staged one-CTA schedule (softmax, nf-select-schedule-staged.mlir): 256
// threads hold a row of up to 14336 bf16 in 7 chunks each, copied into a
// 28 KB shared buffer; no cluster. Its twins (8- and 4-byte chunks) and
// its peeled variant hold the row in 512 threads' registers
// (Schedule::unstaged), up to the staged schedule's 14336 elements; the
// general variant streams.
// CHECK: llvm.mlir.global internal @softmax_v0_cta256x7_stage() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<28672 x i8>
// CHECK: gpu.func @softmax_v0_cta256x7(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-NOT: cluster
// CHECK-COUNT-7: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK: gpu.return
// CHECK: gpu.func @softmax_v1_cta512x8(
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.func @softmax_p4_cta512x4(
// CHECK-SAME: known_block_size = array<i32: 512, 1, 1>
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.return
nf.kernel @softmax(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 7, staged = true>]} {
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
