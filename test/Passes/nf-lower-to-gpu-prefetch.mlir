// RUN: nf-opt %s -split-input-file '-nf-lower-to-gpu=chip=sm_90' | FileCheck %s
// A variant with l2_prefetch (-nf-materialize-variants gives it, see
// nf-materialize-variants-flags.mlir) prefetches into L2 each chunk of
// every [B, S, D] input no reduction reads, after the row's own loads and
// before the first exchange (below sm_90 such a variant is an error:
// nf-lower-to-gpu-invalid-flags.mlir).

// Seed #2's form: x is read by no reduction, so the row loads it after its
// exchange. Each of the thread's chunks of x is prefetched into L2 after
// the residual's loads and before the exchange, then loaded after it. The
// streamed general variant has no l2_prefetch.
// CHECK-LABEL: gpu.func @fagn_v0_cta128x2(
// CHECK-COUNT-2: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-NOT: llvm.load %{{.*}} -> vector<8xbf16>
// CHECK-COUNT-2: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: nfgpu.row_reduce
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-LABEL: gpu.func @fagn_g1_streaming128(
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
nf.kernel @fagn(%x: tensor<?x?x2048xbf16>, %residual: tensor<?x?x2048xbf16>,
                %gate: tensor<?x1x2048xf32>, %weight: tensor<2048xf32>)
    -> tensor<?x?x2048xbf16>
    attributes {nf.variants = [
        #nf.variant<name = "v0_cta128x2", vectorized = true, max_d = 2048, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2>, l2_prefetch = true>,
        #nf.variant<name = "g1_streaming128", vectorized = false, max_d = 2048, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 1, chunks_per_thread = 0>>]} {
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

// The same variant without the flag: no prefetch.
// CHECK-LABEL: gpu.func @fagnoff_v0_cta128x2(
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
nf.kernel @fagnoff(%x: tensor<?x?x2048xbf16>, %residual: tensor<?x?x2048xbf16>,
                %gate: tensor<?x1x2048xf32>, %weight: tensor<2048xf32>)
    -> tensor<?x?x2048xbf16>
    attributes {nf.variants = [
        #nf.variant<name = "v0_cta128x2", vectorized = true, max_d = 2048, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2>>,
        #nf.variant<name = "g1_streaming128", vectorized = false, max_d = 2048, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 1, chunks_per_thread = 0>>]} {
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

// A peeled variant (rows at any offset) prefetches its chunks too.
// CHECK-LABEL: gpu.func @fagnd_p3_cta128x2(
// CHECK-COUNT-2: nvvm.prefetch level = L2
// CHECK-NOT: nvvm.prefetch
// CHECK: nfgpu.row_reduce
nf.kernel @fagnd(%x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
                 %gate: tensor<?x1x?xf32>, %weight: tensor<?xf32>)
    -> tensor<?x?x?xbf16>
    attributes {nf.variants = [
        #nf.variant<name = "p3_cta128x2", vectorized = false, max_d = 2041, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2>, peeled = true, l2_prefetch = true>,
        #nf.variant<name = "g4_streaming128", vectorized = false, max_d = 2048, schedule = <threads_per_row = 128, rows_per_cta = 1, chunk = 1, chunks_per_thread = 0>>]} {
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

// Two rows per thread that share their exchanges (joint_rows): each row's
// x chunk is prefetched before the one exchange of both. The general
// variant loads element by element and prefetches nothing.
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
    attributes {nf.variants = [
        #nf.variant<name = "v0_multi_row8x1", vectorized = true, max_d = 64, schedule = <threads_per_row = 8, rows_per_cta = 32, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>, l2_prefetch = true, joint_rows = true>,
        #nf.variant<name = "g3_multi_row8x8", vectorized = false, max_d = 64, schedule = <threads_per_row = 8, rows_per_cta = 32, chunk = 1, chunks_per_thread = 8, rows_per_thread = 2>>]} {
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
