// RUN: nf-opt %s -split-input-file -nf-materialize-variants -nf-lower-to-gpu | FileCheck %s

// A row's batch entry and token (passes/LowerRows.cpp, setUpRow): the
// kernel takes S as a multiplier and a shift (its `Sdiv` parameter, the
// runtime's runtime/Divisor.h, after rows, S and F: %arg4 to %arg7 here)
// and computes b = (umulhi(row, m) + row) >> l and s = row - b * S in
// 32 bits, with no division instruction. The [B, 1, D] operand is read at
// b's offset, the [B, S, D] rows at b's and s's.
// CHECK-LABEL: gpu.func @modulate_v0_warp32x1(
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64, %[[S:[a-z0-9]+]]: i64, %{{[a-z0-9]+}}: i64, %[[DIV:[a-z0-9]+]]: i64, %{{[a-z0-9]+}}: i64
// CHECK-NOT: arith.{{divui|remui}} %{{.*}}, %[[S]]
// CHECK: %[[S32:.*]] = arith.trunci %[[S]] : i64 to i32
// CHECK: %[[M:.*]] = arith.trunci %[[DIV]] : i64 to i32
// CHECK: %[[LW:.*]] = arith.shrui %[[DIV]], %{{.*}} : i64
// CHECK: %[[L:.*]] = arith.trunci %[[LW]] : i64 to i32
// CHECK: %{{[a-z0-9_]+}}, %[[HIGH:[a-z0-9_]+]] = arith.mului_extended %[[ROW32:[a-z0-9_]+]], %[[M]] : i32
// CHECK: %[[SUM:.*]] = arith.addi %[[HIGH]], %[[ROW32]] : i32
// CHECK: %[[B:.*]] = arith.shrui %[[SUM]], %[[L]] : i32
// CHECK: %[[BS:.*]] = arith.muli %[[B]], %[[S32]] : i32
// CHECK: %[[TOKEN:.*]] = arith.subi %[[ROW32]], %[[BS]] : i32
// CHECK-NOT: arith.{{divui|remui}} %{{.*}}, %[[S]]
// CHECK: gpu.return
nf.kernel @modulate(%x: tensor<?x?x?xbf16>, %scale: tensor<?x1x?xf32>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 1>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.mul %xf, %sc : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// A streamed row keeps the division instruction (its loop's registers: the
// multiplier's form spilled a 1024-thread streamed variant on sm_120).
// CHECK-LABEL: gpu.func @modulate_streamed_v0_streaming256(
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64, %[[S:[a-z0-9]+]]: i64
// CHECK-NOT: arith.mului_extended
// CHECK: %[[S32:.*]] = arith.trunci %[[S]] : i64 to i32
// CHECK: arith.divui %{{.*}}, %[[S32]] : i32
// CHECK-NOT: arith.mului_extended
// CHECK: gpu.return
nf.kernel @modulate_streamed(%x: tensor<?x?x?xbf16>, %scale: tensor<?x1x?xf32>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.mul %xf, %sc : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
