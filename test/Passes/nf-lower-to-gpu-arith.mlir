// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -split-input-file | FileCheck %s

// How elementwise math is lowered (passes/LowerToGPU.cpp, emitElementwise,
// emitReciprocals, exp2Approx); the precision each form has is stated in the
// ops' descriptions (docs/NfDialect.md).

// A row divided by a per-row scalar: one correctly rounded reciprocal per
// row, the scalar and the row scaled by 2^64 when the scalar is subnormal,
// then two multiplications per element and no division.
// CHECK-LABEL: gpu.func @div_scalar_v0_warp32x1(
// CHECK: %[[S:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[ABS:.*]] = math.absf %[[S]] : f32
// CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[ABS]], %{{.*}} : f32
// CHECK: %[[K:.*]] = arith.select %[[TINY]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[SK:.*]] = arith.mulf %[[S]], %[[K]] : f32
// CHECK: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.rcp.rn.f"(%[[SK]]) : (f32) -> f32
// CHECK: %[[KV:.*]] = vector.broadcast %[[K]] : f32 to vector<8xf32>
// CHECK: %[[XK:.*]] = arith.mulf %{{.*}}, %[[KV]] : vector<8xf32>
// CHECK: %[[RV:.*]] = vector.broadcast %[[R]] : f32 to vector<8xf32>
// CHECK: arith.mulf %[[XK]], %[[RV]] : vector<8xf32>
// CHECK-NOT: arith.divf
// CHECK-NOT: llvm.nvvm.rcp.rn.f
// CHECK: gpu.return
nf.kernel @div_scalar(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 1>]} {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %s = nf.reduce sum %xf : !nf.row<f32>
  %two = nf.constant 2.0 : f32
  %t = nf.mul %s, %two : f32
  %y = nf.div %xf, %t : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}

// -----

// A divisor known to be normal (or NaN): the maximum of a value and a
// positive normal constant, a quantization scale's lower bound. Its
// reciprocal is finite, so there is no scaling: one multiplication per
// element (the same result RN(x * RN(1/s))).
// CHECK-LABEL: gpu.func @div_normal_scalar_v0_warp32x1(
// CHECK-NOT: math.absf
// CHECK: %[[S:.*]] = arith.maximumf %{{.*}}, %cst{{.*}} : f32
// CHECK-NEXT: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.rcp.rn.f"(%[[S]]) : (f32) -> f32
// CHECK: %[[RV:.*]] = vector.broadcast %[[R]] : f32 to vector<8xf32>
// CHECK-NEXT: arith.mulf %{{.*}}, %[[RV]] : vector<8xf32>
// CHECK-NOT: arith.mulf %{{.*}} : vector<8xf32>
// CHECK: gpu.return
nf.kernel @div_normal_scalar(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 1>]} {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %floor = nf.constant 1.0e-6 : f32
  %s = nf.max %m, %floor : f32
  %y = nf.div %xf, %s : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}

// -----

// Two rows: an IEEE division per element (arith.divf, div.rn.f32 in PTX).
// CHECK-LABEL: gpu.func @div_rows_v0_warp32x1(
// CHECK: arith.divf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-NOT: llvm.nvvm.rcp.rn.f
// CHECK: gpu.return
nf.kernel @div_rows(%x: tensor<?x?x?xf32>, %w: tensor<?xf32>) -> tensor<?x?x?xf32>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 1>]} {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %wf = nf.load %w [D] : tensor<?xf32>
  %y = nf.div %xf, %wf : !nf.row<f32>
  nf.return %y : !nf.row<f32>
}

// -----

// exp: the product with log2(e), then ex2.approx.ftz (subnormal results
// flushed to zero) per element; sigmoid: the same exponential of -x, then
// the correctly rounded reciprocal of 1 + e^-x (equal to the division
// 1 / (1 + e^-x)).
// CHECK-LABEL: gpu.func @exp_sigmoid_v0_warp32x1(
// CHECK: %[[L:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[LV:.*]] = vector.broadcast %[[L]] : f32 to vector<8xf32>
// CHECK: %[[T:.*]] = arith.mulf %{{.*}}, %[[LV]] : vector<8xf32>
// CHECK: %[[T0:.*]] = vector.extract %[[T]][0] : f32 from vector<8xf32>
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[T0]]) : (f32) -> f32
// CHECK-COUNT-7: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: arith.negf %{{.*}} : vector<8xf32>
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.nvvm.rcp.rn.f"
// CHECK-NOT: "llvm.nvvm.ex2.approx.f32"
// CHECK-NOT: math.exp
// CHECK: gpu.return
nf.kernel @exp_sigmoid(%x: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>)
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 1>]} {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %e = nf.exp %xf : !nf.row<f32>
  %g = nf.sigmoid %xf : !nf.row<f32>
  nf.return %e, %g : !nf.row<f32>, !nf.row<f32>
}
