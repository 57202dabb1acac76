// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -nf-lower-row-reductions -split-input-file -verify-diagnostics | FileCheck %s

// A kernel with one schedule becomes a vectorized and a general variant
// (-nf-materialize-variants), each a gpu.func @<kernel>_<variant> with one
// pointer per tensor, then the sizes and strides (passes/KernelABI.h).
// The vectorized one loads 16-byte chunks with alignment 16, reduces with
// xor shuffles over the 16 lanes of a row (offsets 8, 4, 2, 1) and stores
// 16-byte chunks; the general one touches single elements.
// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @nf_kernels
// CHECK: gpu.func @rms_v0_multi_row16x1(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64
// CHECK-SAME: kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// A chunk's sum of squares: one multiply, then a fused multiply-add per
// element (no vector.reduction: it would start the sum at +0.0).
// CHECK: %[[E0:.*]] = vector.extract %[[V:.*]][0] : f32 from vector<8xf32>
// CHECK: %[[E1:.*]] = vector.extract %[[V]][1] : f32 from vector<8xf32>
// CHECK: %[[SQ:.*]] = arith.mulf %[[E0]], %[[E0]] : f32
// CHECK-NEXT: math.fma %[[E1]], %[[E1]], %[[SQ]] : f32
// CHECK-COUNT-6: math.fma
// CHECK-NOT: vector.reduction
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// Mean of squares: sum * 1/D (rcp.approx + a Newton step); rsqrt likewise,
// its step r * (1.5 - 0.5 * ((x * r) * r)) kept only where it is not NaN
// (x = 0 or +inf: the approximation's exact inf or 0).
// CHECK: llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"
// CHECK: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"(%[[X:.*]]) : (f32) -> f32
// CHECK-NEXT: %[[XR:.*]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[XR]], %[[R]] : f32
// CHECK: %[[HT:.*]] = arith.mulf %{{.*}}, %[[T]] : f32
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[HT]] : f32
// CHECK-NEXT: %[[REF:.*]] = arith.mulf %[[R]], %[[D]] : f32
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[REF]], %[[REF]] : f32
// CHECK-NEXT: arith.select %[[NAN]], %[[R]], %[[REF]] : f32
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: gpu.func @rms_g1_multi_row16x8(
// CHECK: llvm.load %{{.*}} invariant {alignment = 2 : i64} : !llvm.ptr<1> -> bf16
nf.kernel @rms(%x: tensor<?x?x128xbf16>) -> tensor<?x?x128xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x128xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %r = nf.rsqrt %v : f32
  %y = nf.mul %xf, %r : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Two rows per thread group (rows_per_thread = 2): the CTA covers 8 x 2
// rows, rows 8 apart; both rows' [B, S, D] loads come before the first
// row's shuffles, then each row reduces and stores in turn.
// CHECK-LABEL: gpu.func @rms2_v0_multi_row16x1(
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-COUNT-4: gpu.shuffle
// CHECK: llvm.store
// CHECK-COUNT-4: gpu.shuffle
// CHECK: llvm.store
// CHECK: gpu.func @rms2_g1_multi_row16x8(
nf.kernel @rms2(%x: tensor<?x?x128xbf16>) -> tensor<?x?x128xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x128xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %r = nf.rsqrt %v : f32
  %y = nf.mul %xf, %r : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Composites must be decomposed first.
nf.kernel @composite(%x: tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 4, chunks_per_thread = 1>]} {
  %r = nf.load %x [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{must be decomposed before lowering; run -nf-decompose}}
  %n = nf.rms_norm %r eps 1.0e-6 : !nf.row<f32>
  nf.return %n : !nf.row<f32>
}

// -----

// Unscheduled kernels are refused.
// expected-error@+1 {{needs a non-empty nf.schedules array of #nf.schedule; run -nf-select-schedule first}}
nf.kernel @unscheduled(%x: tensor<?x?x128xf32>) -> tensor<?x?x128xf32> {
  %r = nf.load %x [B, S, D] : tensor<?x?x128xf32>
  nf.return %r : !nf.row<f32>
}

