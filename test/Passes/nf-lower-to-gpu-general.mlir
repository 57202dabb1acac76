// RUN: nf-opt %s -nf-materialize-variants="drop=sm_v0_cta256x4,sm_v1_cta256x8,sm_v2_cta256x16,rms_v0_cta256x4,rms_v1_cta256x8,rms_v2_cta256x16,sm512_v0_cta512x4,sm512_v1_cta512x8,sm512_v2_cta512x16,fa_v0_cta256x4,fa_v1_cta256x8,fa_v2_cta256x16,sm_p3_cta256x4,rms_p3_cta256x4,sm512_p3_cta512x4,fa_p3_cta256x4,five_v0_cta1024x4,five_v1_cta1024x8,five_v2_cta1024x16" -nf-lower-to-gpu -nf-lower-row-reductions | FileCheck %s

// The general variant of a two-reduction row at 256 threads x 32 elements
// keeps its row in registers: each element's load is predicated on being
// in the row (scf.if yielding the element, zero otherwise) from an
// unclamped index, so no index is clamped into the row (no arith.minsi).
// CHECK: gpu.func @sm_g4_cta256x32(
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

// The streamed general variant of a one-reduction row takes 8 elements per
// thread and iteration (step 8 x 256): an iteration whose elements are all
// in the row loads them from unclamped indices, the last one clamps them.
// The stores are tested once for the row being in the chain, not per
// element.
// CHECK-LABEL: gpu.func @rms_g4_streaming256(
// CHECK: scf.for %{{.*}} step %c2048_i64 iter_args(%{{.*}}) -> (f32)
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK-NOT: arith.minsi
// CHECK-COUNT-8: llvm.load %{{.*}} invariant {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
// CHECK: } else {
// CHECK-COUNT-8: arith.minsi
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} step %c2048_i64
// CHECK-COUNT-8: llvm.store
// CHECK: } else {
// CHECK: gpu.return
nf.kernel @rms(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %sq = nf.mul %xf, %xf : !nf.row<f32>, !nf.row<f32>
  %s = nf.reduce sum %sq : !nf.row<f32>
  %y = nf.mul %xf, %s : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  %o = nf.mul %yb, %wb : !nf.row<bf16>, !nf.row<bf16>
  nf.return %o : !nf.row<bf16>
}

// Rows of two reductions, streamed (512 threads), keep one element per
// iteration. A softmax's maximum and sum take one pass over the row (a
// running maximum and sum, two iteration values) and one exchange, then
// the pass that stores.
// CHECK-LABEL: gpu.func @sm512_g4_streaming512(
// CHECK: scf.for %{{.*}} step %c512_i64{{.*}} iter_args(%{{.*}}, %{{.*}}) -> (f32, f32)
// CHECK-NOT: scf.if %{{.*}} -> (f32)
// CHECK-NOT: iter_args
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK-NOT: iter_args
// CHECK: scf.for %{{.*}} step %c512_i64
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
nf.kernel @sm512(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
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

// With three loads per element, an unrolled store loop loads all of its
// iteration's elements (3 x 8) before its first store: in the one-load-
// per-element order a store would keep the next element's loads behind it.
// With two (@rms above) the loads stay where their elements are computed.
// CHECK-LABEL: gpu.func @fa_g4_streaming256(
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} step %c2048_i64
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.store
// CHECK: llvm.load
// CHECK-NOT: llvm.load
// CHECK: llvm.store
// CHECK: } else {
nf.kernel @fa(%x: tensor<?x?x?xbf16>, %r: tensor<?x?x?xbf16>, %w: tensor<?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %rb = nf.load %r [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %a = nf.add %xf, %rf : !nf.row<f32>, !nf.row<f32>
  %sq = nf.mul %a, %a : !nf.row<f32>, !nf.row<f32>
  %s = nf.reduce sum %sq : !nf.row<f32>
  %y = nf.mul %a, %s : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  %o = nf.mul %yb, %wb : !nf.row<bf16>, !nf.row<bf16>
  nf.return %o : !nf.row<bf16>
}

// At 1024 threads (64 registers a thread), five loads x 8 elements are past
// maxPrefetchedValues (32): the loads stay with their element, the first
// store follows the first element's five loads.
// CHECK-LABEL: gpu.func @five_g3_streaming1024(
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} step %c8192_i64
// CHECK-COUNT-5: llvm.load
// CHECK-NOT: llvm.load
// CHECK: llvm.store
// CHECK: } else {
nf.kernel @five(%x: tensor<?x?x?xbf16>, %r: tensor<?x?x?xbf16>, %w: tensor<?xbf16>,
                %sc: tensor<?x1x?xbf16>, %sh: tensor<?x1x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %rb = nf.load %r [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %scb = nf.load %sc [B, 1, D] : tensor<?x1x?xbf16>
  %shb = nf.load %sh [B, 1, D] : tensor<?x1x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %a = nf.add %xf, %rf : !nf.row<f32>, !nf.row<f32>
  %sq = nf.mul %a, %a : !nf.row<f32>, !nf.row<f32>
  %s = nf.reduce sum %sq : !nf.row<f32>
  %y = nf.mul %a, %s : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  %o = nf.mul %yb, %wb : !nf.row<bf16>, !nf.row<bf16>
  %p = nf.mul %o, %scb : !nf.row<bf16>, !nf.row<bf16>
  %m = nf.add %p, %shb : !nf.row<bf16>, !nf.row<bf16>
  nf.return %m : !nf.row<bf16>
}
