// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -nf-lower-row-reductions -split-input-file | FileCheck %s

// A register-resident row program with one reduction recomputes what its
// epilogue needs from the row as loaded when that holds at most half the bits
// per element across the reduction (passes/LowerToGPU.cpp,
// maybeRematerialize). RMSNorm of a bf16 row: after the shuffles each loaded
// 16-byte chunk passes through an XOR with the row count >> 32 (a zero no
// compiler can prove, so the second widening is not merged with the first
// and the f32 row is not live across the reduction), then is widened again
// for the scaling and the store.
// CHECK-LABEL: gpu.func @rms_v0_warp32x2(
// CHECK: %[[X0:.*]] = llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: arith.extf %[[X0]] : vector<8xbf16> to vector<8xf32>
// CHECK: %[[X1:.*]] = llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: gpu.shuffle  xor
// CHECK: %[[HIGH:.*]] = arith.shrui %arg2, %{{.*}} : i64
// CHECK: %[[ZERO:.*]] = arith.trunci %[[HIGH]] : i64 to i32
// CHECK: %[[W0:.*]] = vector.bitcast %[[X0]] : vector<8xbf16> to vector<4xi32>
// CHECK: %[[Z0:.*]] = vector.broadcast %[[ZERO]] : i32 to vector<4xi32>
// CHECK: %[[H0:.*]] = arith.xori %[[W0]], %[[Z0]] : vector<4xi32>
// CHECK: %[[R0:.*]] = vector.bitcast %[[H0]] : vector<4xi32> to vector<8xbf16>
// CHECK: vector.bitcast %[[X1]] : vector<8xbf16> to vector<4xi32>
// CHECK: arith.extf %[[R0]] : vector<8xbf16> to vector<8xf32>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// Its 8-byte twin (rows of a multiple of 4 elements) likewise, 2 words per
// chunk.
// CHECK-LABEL: gpu.func @rms_v1_warp32x4(
// CHECK: gpu.shuffle  xor
// CHECK: arith.xori %{{.*}}, %{{.*}} : vector<2xi32>
// CHECK: llvm.store %{{.*}} {alignment = 8 : i64} : vector<4xbf16>, !llvm.ptr<1>
// Its 4-byte twin (even rows), one word per chunk.
// CHECK-LABEL: gpu.func @rms_v2_warp32x8(
// CHECK: gpu.shuffle  xor
// CHECK: arith.xori %{{.*}}, %{{.*}} : vector<1xi32>
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// The general variant streams: nothing to rematerialize.
// CHECK-LABEL: gpu.func @rms_g4_streaming32(
// CHECK-NOT: arith.xori
// CHECK: gpu.return
nf.kernel @rms(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %r = nf.rsqrt %v : f32
  %y = nf.mul %xf, %r : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Two bf16 rows summed in f32: recomputing the sum would hold both rows (32
// bits per element), as many as the f32 sum itself; the sum is kept.
// CHECK-LABEL: gpu.func @add_rms_v0_warp32x2(
// CHECK: gpu.shuffle  xor
// CHECK-NOT: arith.xori
// CHECK-NOT: arith.extf
// CHECK: llvm.store
// CHECK-LABEL: gpu.func @add_rms_v1_warp32x4(
nf.kernel @add_rms(%x: tensor<?x?x?xbf16>, %res: tensor<?x?x?xbf16>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %rb = nf.load %res [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %s = nf.add %xf, %rf : !nf.row<f32>
  %ms = nf.reduce mean_sq %s : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %r = nf.rsqrt %v : f32
  %y = nf.mul %s, %r : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Softmax, two reductions: nothing is recomputed (measured slower: the
// recomputation would run between the two barriers); x - max is widened
// once per chunk and each exponential computed once.
// CHECK-LABEL: gpu.func @softmax_v0_warp32x2(
// CHECK-COUNT-2: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK-NOT: arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
// CHECK-NOT: arith.xori
// CHECK-COUNT-16: llvm.nvvm.ex2.approx.ftz.f32
// CHECK-NOT: llvm.nvvm.ex2.approx.ftz.f32
// CHECK: llvm.nvvm.rcp.rn.f
// CHECK-LABEL: gpu.func @softmax_v1_warp32x4(
nf.kernel @softmax(%x: tensor<?x?x?xf16>) -> tensor<?x?x?xf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2>]} {
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

// LayerNorm, two reductions, in a CTA of 512 threads whose thread holds 24
// elements (rematerializesBetweenReductions): the loaded row is hidden
// behind the row count >> 32 before the second reduction (x - mean is
// recomputed from it there) and behind >> 33 before the epilogue, so that
// the two XORs do not cancel and neither the f32 row nor x - mean is live
// across a barrier.
// CHECK-LABEL: gpu.func @ln_v0_cta512x3(
// CHECK: gpu.barrier
// CHECK: %[[C32:.*]] = arith.constant 32 : i64
// CHECK: arith.shrui %arg4, %[[C32]] : i64
// CHECK-COUNT-3: arith.xori %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: gpu.barrier
// CHECK: %[[C33:.*]] = arith.constant 33 : i64
// CHECK: arith.shrui %arg4, %[[C33]] : i64
// CHECK-COUNT-3: arith.xori %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// Its 8-byte twin holds as many elements: likewise.
// CHECK-LABEL: gpu.func @ln_v1_cta512x6(
// CHECK-COUNT-12: arith.xori %{{.*}}, %{{.*}} : vector<2xi32>
// The vectorized variant of 32 elements per thread recomputes too, for the
// third CTA per SM that nf-compile asks ptxas for (recomputesForThirdCta;
// test/Codegen/three-ctas-per-sm.test).
// CHECK-LABEL: gpu.func @ln_v4_cta512x4(
// CHECK: gpu.barrier
// CHECK: arith.shrui %arg4, %{{.*}} : i64
// CHECK-COUNT-4: arith.xori %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: gpu.barrier
// CHECK: arith.shrui %arg4, %{{.*}} : i64
// CHECK-COUNT-4: arith.xori %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: gpu.return
// Its twins keep the f32 row (with the recomputation alone ptxas took 52
// registers, still two CTAs per SM, and it was slower).
// CHECK-LABEL: gpu.func @ln_v5_cta512x8(
// CHECK-NOT: arith.xori
// CHECK: gpu.return
nf.kernel @ln(%x: tensor<?x?x?xbf16>, %w: tensor<?xf32>, %b: tensor<?xf32>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wl = nf.load %w [D] : tensor<?xf32>
  %bl = nf.load %b [D] : tensor<?xf32>
  %eps = nf.constant 1.000000e-06 : f32
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %mean = nf.reduce mean %xf : !nf.row<f32>
  %c = nf.sub %xf, %mean : !nf.row<f32>, f32
  %var = nf.reduce mean_sq %c : !nf.row<f32>
  %v = nf.add %var, %eps : f32
  %r = nf.rsqrt %v : f32
  %n = nf.mul %c, %r : !nf.row<f32>, f32
  %nw = nf.mul %n, %wl : !nf.row<f32>
  %y = nf.add %nw, %bl : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// RMSNorm, then the max of |y| that quantizes it (examples/
// rmsnorm_quant_fp8.mlir): the second reduction reads the bf16 weight, so
// what it computes (y, f32) is held across its barrier whether the row is
// recomputed before it or not. One CTA of 512 x 3 does not recompute between
// the reductions (laterReductionReadsBroadcast; H200, D = 12288: 73.1 ->
// 76.1% of a copy); the cluster variant, chosen for the registers the first
// recomputation frees, still does.
// CHECK-LABEL: gpu.func @rq_v0_cta512x3(
// CHECK-NOT: arith.xori
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @rq_v{{[0-9]+}}_cluster512x3c2(
// CHECK: nvvm.cluster.wait
// CHECK: arith.shrui %{{.*}}, %{{.*}} : i64
// CHECK-COUNT-3: arith.xori %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: gpu.return
nf.kernel @rq(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?xf32>)
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, cluster_size = 2>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %eps = nf.constant 1.000000e-06 : f32
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %r = nf.rsqrt %v : f32
  %n = nf.mul %xf, %r : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %qmax = nf.constant 448.0 : f32
  %s = nf.div %amax, %qmax : f32
  %q = nf.div %y, %s : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %s : !nf.row<f8E4M3FN>, f32
}
