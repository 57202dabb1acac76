// RUN: nf-opt %s -split-input-file -nf-decompose '-nf-materialize-variants=chip=sm_90' | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-decompose '-nf-materialize-variants=chip=sm_80' | FileCheck %s --check-prefix=SM80
// RUN: nf-opt %s -split-input-file -nf-decompose '-nf-materialize-variants=chip=sm_75' | FileCheck %s --check-prefix=SM75
// A chip nf-compile does not know is an error, not a target without
// features.
// RUN: not nf-opt %s -split-input-file -nf-decompose '-nf-materialize-variants=chip=sm_99' 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: unsupported target 'sm_99'; expected one of: sm_75 sm_80
// The flags -nf-materialize-variants gives each variant for the lowering
// (#nf.variant's l2_prefetch, joint_rows, third_cta). Below sm_90 no
// variant prefetches: LLVM's NVPTX backend cannot select
// `prefetch.global.L2` there.
// SM80-NOT: l2_prefetch

// Seed #2's form: x is read by no reduction (the row loads it after its
// exchange). A row of one CTA of 128 threads prefetches it into L2 from
// sm_90 on; its streamed general variant, which reads the row again per
// pass, does not.
// CHECK-LABEL: nf.kernel @fagn(
// CHECK-SAME: #nf.variant<name = "v0_cta128x2", {{.*}}, l2_prefetch = true>,
// CHECK-SAME: #nf.variant<name = "g1_streaming128", {{[^#]*}}chunks_per_thread = 0>>]
// SM80-LABEL: nf.kernel @fagn(
// SM80-NOT: l2_prefetch
// SM80-SAME: ]
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

// Rows of 512 threads do not (slower with the prefetch on the H200).
// CHECK-LABEL: nf.kernel @fagn512(
// CHECK-NOT: l2_prefetch
// CHECK-SAME: ]
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
// CHECK-LABEL: nf.kernel @rms(
// CHECK-NOT: l2_prefetch
// CHECK-SAME: ]
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

// D dynamic: the vectorized variants (the twins too) and the peeled one
// prefetch; the streamed general variant does not.
// CHECK-LABEL: nf.kernel @fagnd(
// CHECK-SAME: #nf.variant<name = "v0_cta128x2", {{[^#]*}}, l2_prefetch = true>,
// CHECK-SAME: #nf.variant<name = "v1_cta128x4", {{[^#]*}}, l2_prefetch = true>,
// CHECK-SAME: #nf.variant<name = "v2_cta128x8", {{[^#]*}}, l2_prefetch = true>,
// CHECK-SAME: #nf.variant<name = "p3_cta128x2", {{[^#]*}}, peeled = true, l2_prefetch = true>,
// CHECK-SAME: #nf.variant<name = "g4_streaming128", {{[^#]*}}chunks_per_thread = 0>>]
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
// CHECK-LABEL: nf.kernel @fagnw(
// CHECK-SAME: #nf.variant<name = "v0_warp32x3", {{[^#]*}}, l2_prefetch = true>,
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

// Rows of 16 threads, one per thread, do not (slower on long launches on
// the H200).
// CHECK-LABEL: nf.kernel @fagn16(
// CHECK-NOT: l2_prefetch
// CHECK-SAME: ]
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

// Two rows per thread of 8 threads in 16-byte chunks: the rows share
// their exchanges, and x is prefetched (ptxas otherwise sank the second
// row's x load below the first row's store). The 8-byte twin holds one
// row per thread; the 4-byte twin's two rows go one after the other (its
// chunks are 4 bytes of x), and neither prefetches. Without the prefetch
// (sm_80) the rows still share their exchanges.
// CHECK-LABEL: nf.kernel @fagn8(
// CHECK-SAME: #nf.variant<name = "v0_multi_row8x1", {{[^#]*}}rows_per_thread = 2>, l2_prefetch = true, joint_rows = true>,
// CHECK-SAME: #nf.variant<name = "v1_multi_row8x2", {{[^#]*}}chunks_per_thread = 2>>,
// CHECK-SAME: #nf.variant<name = "v2_multi_row8x4", {{[^#]*}}rows_per_thread = 2>>,
// CHECK-SAME: #nf.variant<name = "g3_multi_row8x8", {{[^#]*}}rows_per_thread = 2>>]
// SM80-LABEL: nf.kernel @fagn8(
// SM80-SAME: #nf.variant<name = "v0_multi_row8x1", {{[^#]*}}rows_per_thread = 2>, joint_rows = true>,
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

// -----

// LayerNorm of a 16-bit row with f32 weight and bias in 512 threads x 4
// chunks: recomputed between its reductions for a third CTA per SM (its
// 16-byte variant only, not its twins, peeled or general variants), on
// targets that hold three CTAs of 512 threads per SM (not sm_75).
// CHECK-LABEL: nf.kernel @ln(
// CHECK-SAME: #nf.variant<name = "v0_cta512x4", {{[^#]*}}chunks_per_thread = 4>, third_cta = true>,
// CHECK-NOT: third_cta
// CHECK-SAME: ]
// SM75-NOT: third_cta
nf.kernel @ln(%x: tensor<?x?x?xbf16>, %weight: tensor<?xf32>,
              %bias: tensor<?xf32>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %w = nf.load %weight [D] : tensor<?xf32>
  %b = nf.load %bias [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
