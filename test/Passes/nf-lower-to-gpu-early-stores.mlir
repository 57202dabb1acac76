// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -split-input-file | FileCheck %s

// Fused add + RMSNorm: r = x + residual depends on no reduction, so in a
// row of more than a warp each chunk's r is rounded and stored in place into
// the residual stream before the row's exchange; y (which needs the norm)
// after it.
// CHECK-LABEL: gpu.func @far_v0_cta64x1(
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: nfgpu.row_reduce
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.return
nf.kernel @far(%x: tensor<?x?x256xbf16>, %residual: tensor<?x?x256xbf16>,
               %weight: tensor<256xbf16>)
    -> (tensor<?x?x256xbf16>, tensor<?x?x256xbf16> {nf.in_place = 1 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 1>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x256xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x256xbf16>
  %wb = nf.load %weight [D] : tensor<256xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %resf : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %rr = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %rr : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %rr, %k : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}

// -----

// Once r is stored in place, the residual as loaded exists only in
// registers: where the thread recomputes its epilogue from the rows as
// loaded (here four f32 products of r are needed after the reduction, twice
// the bits of the two loads), x is loaded again after the exchange
// (invariant) but the residual's load is kept; loaded again, it would read
// r.
// The loads of all four chunks come before the first store of r: a load
// of the residual cannot move above a store that may alias it.
// CHECK-LABEL: gpu.func @pin_v0_cta256x4(
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
// CHECK-COUNT-4: llvm.store
// CHECK: nfgpu.row_reduce
// CHECK-NOT: llvm.load %{{[0-9]+}} {alignment
// CHECK: llvm.load %{{.*}} invariant
// CHECK-NOT: llvm.load %{{[0-9]+}} {alignment
// CHECK: gpu.return
nf.kernel @pin(%x: tensor<?x?x4096xf32>, %residual: tensor<?x?x4096xf32>)
    -> (tensor<?x?x4096xf32>, tensor<?x?x4096xf32> {nf.in_place = 1 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 4, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x4096xf32>
  %rb = nf.load %residual [B, S, D] : tensor<?x?x4096xf32>
  %r = nf.add %xb, %rb : !nf.row<f32>
  %p = nf.mul %r, %r : !nf.row<f32>
  %q = nf.mul %p, %r : !nf.row<f32>
  %u = nf.mul %q, %r : !nf.row<f32>
  %w = nf.mul %u, %r : !nf.row<f32>
  %m = nf.reduce sum %w : !nf.row<f32>
  %a = nf.add %p, %q : !nf.row<f32>
  %b = nf.add %u, %w : !nf.row<f32>
  %c = nf.add %a, %b : !nf.row<f32>
  %z = nf.mul %c, %m : !nf.row<f32>, f32
  nf.return %z, %r : !nf.row<f32>, !nf.row<f32>
}

// -----

// The same in a row of a warp, reduced by shuffles alone: r, written in
// place, is stored with y after the exchange (fused add + RMSNorm's rows of
// 16 threads ran at 40-46% of a copy with r stored before it,
// docs/benchmarks.md).
// CHECK-LABEL: gpu.func @farwarp_v0_warp32x1(
// CHECK-NOT: llvm.store
// CHECK: nfgpu.row_reduce
// CHECK-COUNT-2: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.return
nf.kernel @farwarp(%x: tensor<?x?x256xbf16>, %residual: tensor<?x?x256xbf16>,
                   %weight: tensor<256xbf16>)
    -> (tensor<?x?x256xbf16>, tensor<?x?x256xbf16> {nf.in_place = 1 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 1>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x256xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x256xbf16>
  %wb = nf.load %weight [D] : tensor<256xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %resf : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %rr = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %rr : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %rr, %k : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}

// -----

// In a warp row, an output that depends on no reduction and is written to a
// tensor of its own (seed #1's r) is still stored before the exchange.
// CHECK-LABEL: gpu.func @farsep_v0_warp32x1(
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: nfgpu.row_reduce
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.return
nf.kernel @farsep(%x: tensor<?x?x256xbf16>, %residual: tensor<?x?x256xbf16>,
                  %weight: tensor<256xbf16>)
    -> (tensor<?x?x256xbf16>, tensor<?x?x256xbf16>)
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 1>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x256xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x256xbf16>
  %wb = nf.load %weight [D] : tensor<256xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %resf : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %rr = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %rr : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %rr, %k : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}
