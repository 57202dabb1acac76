// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// Group reductions (passes/GroupReductions.cpp). Groups of 32 f32 elements
// over chunks of 4 span 8 lanes: each chunk is reduced, then combined over
// its group's lanes (nfgpu.group_reduce, lanes 8; its butterfly is
// nf-lower-row-reductions.mlir's). In the vectorized variant every lane of
// the warp takes every chunk, so the op needs no lane (its member mask is
// the whole warp); the scale's reciprocal is taken once
// per chunk and the group value stored by every lane of the group (the same
// value at the same address), at element base / 32 of the [B, S, D / 32]
// result, under the chunk's own condition.
// CHECK-LABEL: gpu.func @groups_v0_warp32x2(
// CHECK: %[[E0:.*]] = vector.extract %[[V:.*]][0] : f32 from vector<4xf32>
// CHECK: %[[E1:.*]] = vector.extract %[[V]][1] : f32 from vector<4xf32>
// CHECK: %[[E2:.*]] = vector.extract %[[V]][2] : f32 from vector<4xf32>
// CHECK: %[[E3:.*]] = vector.extract %[[V]][3] : f32 from vector<4xf32>
// CHECK: %[[M01:.*]] = arith.maximumf %[[E0]], %[[E1]] : f32
// CHECK: %[[M23:.*]] = arith.maximumf %[[E2]], %[[E3]] : f32
// CHECK: arith.maximumf %[[M01]], %[[M23]] : f32
// CHECK: nfgpu.group_reduce <max> %{{[0-9]+}} lanes 8 : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.rcp.rn.f"
// CHECK-NOT: arith.remui
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: gpu.return
// The general variant skips a chunk past the row in a branch, so the other
// lanes of the warp may not take the butterfly: the op takes the thread's
// lane in its warp (its member mask is then the group's 8 lanes), and the
// group's first lane (base % 32 == 0) stores the value.
// CHECK-LABEL: gpu.func @groups_g2_warp32x2(
// CHECK: %[[LANE:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: nfgpu.group_reduce <max> %{{[0-9]+}} lanes 8 warp_lane %[[LANE]] : f32
// CHECK: arith.remui %{{.*}}, %c32_i64{{.*}} : i64
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: gpu.return
nf.kernel @groups(%x: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>)
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 4, chunks_per_thread = 2>]} {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %a = nf.abs %xf : !nf.row<f32>
  %m = nf.reduce max %a group 32 : !nf.row<f32>
  %c = nf.constant 1.0e-3 : f32
  %s = nf.max %m, %c : !nf.group<f32, 32>, f32
  %q = nf.div %xf, %s : !nf.row<f32>, !nf.group<f32, 32>
  nf.return %q, %s : !nf.row<f32>, !nf.group<f32, 32>
}

// -----

// Groups smaller than a chunk: two groups of 2 per chunk of 4, reduced in
// the thread (no shuffle), each stored by the chunk that holds it.
// CHECK-LABEL: gpu.func @small_groups_v0_warp32x1(
// CHECK-NOT: nfgpu.group_reduce
// CHECK: %[[E0:.*]] = vector.extract %[[V:.*]][0] : f32 from vector<4xf32>
// CHECK: %[[E1:.*]] = vector.extract %[[V]][1] : f32 from vector<4xf32>
// CHECK: arith.addf %[[E0]], %[[E1]] : f32
// CHECK: %[[E2:.*]] = vector.extract %[[V]][2] : f32 from vector<4xf32>
// CHECK: %[[E3:.*]] = vector.extract %[[V]][3] : f32 from vector<4xf32>
// CHECK: arith.addf %[[E2]], %[[E3]] : f32
// CHECK-NOT: nfgpu.group_reduce
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<1>
// CHECK: gpu.return
nf.kernel @small_groups(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 4, chunks_per_thread = 1>]} {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %m = nf.reduce sum %xf group 2 : !nf.row<f32>
  nf.return %m : !nf.group<f32, 2>
}

// -----

// A schedule whose row has fewer threads than a group spans is refused.
nf.kernel @too_few_lanes(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 4, chunks_per_thread = 4>]} {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{a group of 128 elements spans 32 chunks of 4 elements, more than the 16 threads of a row of this schedule; groups of at most 128 elements are supported here}}
  %m = nf.reduce max %xf group 128 : !nf.row<f32>
  nf.return %m : !nf.group<f32, 128>
}
