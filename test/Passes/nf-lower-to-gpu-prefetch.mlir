// RUN: nf-opt %s -nf-materialize-variants '-nf-lower-to-gpu=chip=sm_90' -split-input-file | FileCheck %s
// Below sm_90 LLVM's NVPTX backend cannot select `prefetch.global.L2`:
// no prefetch at all.
// RUN: nf-opt %s -nf-materialize-variants '-nf-lower-to-gpu=chip=sm_80' -split-input-file | FileCheck %s --check-prefix=SM80
// SM80-NOT: nvvm.prefetch

// Seed #2's form: x is read by no reduction, so the row loads it after its
// exchange. Each of the thread's chunks of x is prefetched into L2 after
// the residual's loads and before the exchange, then loaded after it.
// CHECK-LABEL: gpu.func @fagn_v0_cta128x2(
// CHECK-COUNT-2: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-NOT: llvm.load %{{.*}} -> vector<8xbf16>
// CHECK-COUNT-2: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: nfgpu.row_reduce
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: gpu.return
nf.kernel @fagn(%x: tensor<?x?x2048xbf16>, %residual: tensor<?x?x2048xbf16>,
                %gate: tensor<?x1x2048xf32>, %weight: tensor<2048xf32>)
    -> tensor<?x?x2048xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x2048xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x2048xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x2048xf32>
  %w = nf.load %weight [D] : tensor<2048xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %resf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %resf, %k : !nf.row<f32>, f32
  %nw = nf.mul %n, %w : !nf.row<f32>
  %gn = nf.mul %g, %nw : !nf.row<f32>
  %out = nf.add %xf, %gn : !nf.row<f32>
  %outb = nf.cast %out : !nf.row<f32> to !nf.row<bf16>
  nf.return %outb : !nf.row<bf16>
}

// -----

// The same kernel in rows of 512 threads (slower with the prefetch on the
// H200): no prefetch.
// CHECK-LABEL: gpu.func @fagn512_v0_cta512x2(
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
nf.kernel @fagn512(%x: tensor<?x?x8192xbf16>, %residual: tensor<?x?x8192xbf16>,
                   %gate: tensor<?x1x8192xf32>, %weight: tensor<8192xf32>)
    -> tensor<?x?x8192xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x8192xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x8192xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x8192xf32>
  %w = nf.load %weight [D] : tensor<8192xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %resf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %resf, %k : !nf.row<f32>, f32
  %nw = nf.mul %n, %w : !nf.row<f32>
  %gn = nf.mul %g, %nw : !nf.row<f32>
  %out = nf.add %xf, %gn : !nf.row<f32>
  %outb = nf.cast %out : !nf.row<f32> to !nf.row<bf16>
  nf.return %outb : !nf.row<bf16>
}

// -----

// RMSNorm: its one [B, S, D] input feeds the reduction: nothing to
// prefetch.
// CHECK-LABEL: gpu.func @rms_v0_cta128x2(
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
nf.kernel @rms(%x: tensor<?x?x2048xbf16>, %weight: tensor<2048xbf16>)
    -> tensor<?x?x2048xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x2048xbf16>
  %wb = nf.load %weight [D] : tensor<2048xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %xf, %k : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// D dynamic: the vectorized variants and the peeled one (rows at any
// offset) prefetch; the streamed general variant, which reads the row
// again per pass, does not.
// CHECK-LABEL: gpu.func @fagnd_v0_cta128x2(
// CHECK-COUNT-2: nvvm.prefetch level = L2
// CHECK: nfgpu.row_reduce
// CHECK-LABEL: gpu.func @fagnd_p3_cta128x2(
// CHECK-COUNT-2: nvvm.prefetch level = L2
// CHECK-NOT: nvvm.prefetch
// CHECK: nfgpu.row_reduce
// CHECK-LABEL: gpu.func @fagnd_g4_streaming128(
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
nf.kernel @fagnd(%x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
                 %gate: tensor<?x1x?xf32>, %weight: tensor<?xf32>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %w = nf.load %weight [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %resf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %resf, %k : !nf.row<f32>, f32
  %nw = nf.mul %n, %w : !nf.row<f32>
  %gn = nf.mul %g, %nw : !nf.row<f32>
  %out = nf.add %xf, %gn : !nf.row<f32>
  %outb = nf.cast %out : !nf.row<f32> to !nf.row<bf16>
  nf.return %outb : !nf.row<bf16>
}

// -----

// A row of one warp (four rows per CTA) prefetches too.
// CHECK-LABEL: gpu.func @fagnw_v0_warp32x3(
// CHECK-COUNT-3: nvvm.prefetch level = L2
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
nf.kernel @fagnw(%x: tensor<?x?x768xbf16>, %residual: tensor<?x?x768xbf16>,
                 %gate: tensor<?x1x768xf32>, %weight: tensor<768xf32>)
    -> tensor<?x?x768xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 3>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x768xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x768xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x768xf32>
  %w = nf.load %weight [D] : tensor<768xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %resf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %resf, %k : !nf.row<f32>, f32
  %nw = nf.mul %n, %w : !nf.row<f32>
  %gn = nf.mul %g, %nw : !nf.row<f32>
  %out = nf.add %xf, %gn : !nf.row<f32>
  %outb = nf.cast %out : !nf.row<f32> to !nf.row<bf16>
  nf.return %outb : !nf.row<bf16>
}

// -----

// Rows of 16 threads do not (slower on long launches on the H200).
// CHECK-LABEL: gpu.func @fagn16_v0_multi_row16x2(
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
nf.kernel @fagn16(%x: tensor<?x?x256xbf16>, %residual: tensor<?x?x256xbf16>,
                 %gate: tensor<?x1x256xf32>, %weight: tensor<256xf32>)
    -> tensor<?x?x256xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 2>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x256xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x256xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x256xf32>
  %w = nf.load %weight [D] : tensor<256xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %resf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %resf, %k : !nf.row<f32>, f32
  %nw = nf.mul %n, %w : !nf.row<f32>
  %gn = nf.mul %g, %nw : !nf.row<f32>
  %out = nf.add %xf, %gn : !nf.row<f32>
  %outb = nf.cast %out : !nf.row<f32> to !nf.row<bf16>
  nf.return %outb : !nf.row<bf16>
}

// -----

// Two rows per thread of 8 threads, which share one exchange: each row's x
// chunk is prefetched before it (ptxas otherwise sank the second
// row's x load below the first row's store: seed #2 at D = 24-128 lost 5
// to 6.5 points of a copy on the H200). The general twin loads element by
// element and prefetches nothing.
// CHECK-LABEL: gpu.func @fagn8_v0_multi_row8x1(
// CHECK-COUNT-2: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-COUNT-2: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NEXT: nfgpu.row_reduce [#nfgpu.combining<sum>, #nfgpu.combining<sum>]
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @fagn8_g3_multi_row8x8(
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
nf.kernel @fagn8(%x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
                 %gate: tensor<?x1x?xf32>, %weight: tensor<?xf32>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 8, rows_per_cta = 32, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]} {
  %eps = nf.constant 1.000000e-06 : f32
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %w = nf.load %weight [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %resf : !nf.row<f32>
  %v = nf.add %ms, %eps : f32
  %k = nf.rsqrt %v : f32
  %n = nf.mul %resf, %k : !nf.row<f32>, f32
  %nw = nf.mul %n, %w : !nf.row<f32>
  %gn = nf.mul %g, %nw : !nf.row<f32>
  %out = nf.add %xf, %gn : !nf.row<f32>
  %outb = nf.cast %out : !nf.row<f32> to !nf.row<bf16>
  nf.return %outb : !nf.row<bf16>
}
