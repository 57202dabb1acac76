// RUN: nf-opt %s -nf-lower-row-reductions -split-input-file | FileCheck %s

// An exp_sum combines with the maximum before it: at each step of the
// butterfly both values are shuffled before either is combined, and the
// sum is combined first, from the two maxima as they were: the larger
// maximum's sum plus the other's scaled by 2^(-|mx - my| * log2 e), a
// factor of 1 where the maxima are equal.
// CHECK-LABEL: gpu.func @warp(
// CHECK: %[[M:.*]], %{{.*}} = gpu.shuffle  xor %[[MX:[^,]*]], %c16_i32
// CHECK-NEXT: %[[S:.*]], %{{.*}} = gpu.shuffle  xor %[[SX:[^,]*]], %c16_i32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[MX]], %[[M]]
// CHECK-NEXT: %[[A:.*]] = math.absf %[[D]]
// CHECK-NEXT: %[[L:.*]] = arith.constant -1.44269502
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[A]], %[[L]]
// CHECK-NEXT: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[T]])
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[EQ:.*]] = arith.cmpf oeq, %[[MX]], %[[M]]
// CHECK-NEXT: %[[F:.*]] = arith.select %[[EQ]], %[[ONE]], %[[E]]
// CHECK-NEXT: %[[GE:.*]] = arith.cmpf oge, %[[MX]], %[[M]]
// CHECK-NEXT: %[[KEEPX:.*]] = math.fma %[[S]], %[[F]], %[[SX]]
// CHECK-NEXT: %[[KEEPY:.*]] = math.fma %[[SX]], %[[F]], %[[S]]
// CHECK-NEXT: arith.select %[[GE]], %[[KEEPX]], %[[KEEPY]]
// CHECK-NEXT: arith.maximumf %[[MX]], %[[M]]
// CHECK-COUNT-4: llvm.nvvm.ex2.approx.ftz.f32
// CHECK-NOT: llvm.nvvm.ex2.approx.ftz.f32
// CHECK: gpu.return
module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @warp(%m: f32, %s: f32, %lane: i64, %row: i64, %out: !llvm.ptr<1>) kernel {
    %x, %e = nfgpu.row_reduce [#nfgpu.combining<max>,
                               #nfgpu.combining<exp_sum>] %m, %s
        lane %lane row %row {threads_per_row = 32 : i64,
        rows_per_cta = 1 : i64, cluster_size = 1 : i64, slot = 0 : i64} : f32, f32
    llvm.store %x, %out : f32, !llvm.ptr<1>
    llvm.store %e, %out : f32, !llvm.ptr<1>
    gpu.return
  }
}
}

// -----

// Rows of 2 warps over a cluster of 2 CTAs: after the barrier both
// values of both warps are read before the warps' pairs are combined (one
// exp_sum step), and in the cluster both slots are sent and received
// before the ranks' pairs are combined in rank order (one more).
// CHECK-LABEL: gpu.func @cluster(
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.nvvm.ex2.approx.ftz.f32
// CHECK-NOT: llvm.nvvm.ex2.approx.ftz.f32
// CHECK: nvvm.cluster.wait
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.nvvm.ex2.approx.ftz.f32
// CHECK-NOT: llvm.nvvm.ex2.approx.ftz.f32
// CHECK: arith.maximumf
// CHECK: gpu.return
module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @cluster(%m: f32, %s: f32, %lane: i64, %row: i64, %rank: i64, %tid: i32, %out: !llvm.ptr<1>) kernel {
    nfgpu.cluster_arrive %tid
    %x, %e = nfgpu.row_reduce [#nfgpu.combining<max>,
                               #nfgpu.combining<exp_sum>] %m, %s
        lane %lane row %row rank %rank {threads_per_row = 64 : i64,
        rows_per_cta = 1 : i64, cluster_size = 2 : i64, slot = 0 : i64,
        cluster_wait} : f32, f32
    llvm.store %x, %out : f32, !llvm.ptr<1>
    llvm.store %e, %out : f32, !llvm.ptr<1>
    gpu.return
  }
}
}
