// RUN: nf-opt %s -split-input-file '-nf-lower-to-gpu=chip=sm_80' -verify-diagnostics
// RUN: not nf-opt %s -split-input-file '-nf-lower-to-gpu=chip=gfx90a' 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: unsupported target 'gfx90a'; expected one of: sm_75 sm_80
// Variant flags (#nf.variant) that the kernel or the target cannot honor.

// LLVM's NVPTX backend cannot select `prefetch.global.L2` below sm_90.
// expected-error@+1 {{'nf.kernel' op variant 'v0_cta128x2' has l2_prefetch, which needs a target of sm_90 or newer (-nf-lower-to-gpu's chip option)}}
nf.kernel @prefetch_sm80(%x: tensor<?x?x2048xbf16>,
                         %residual: tensor<?x?x2048xbf16>,
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

// Rotary rows are computed whole and stored one by one: joint_rows (which
// -nf-materialize-variants never gives a rotary kernel) is refused.
// expected-error@+1 {{'nf.kernel' op variant 'v0_multi_row8x1' has joint_rows, but a kernel with rotary embedding computes each row whole before it stores it, one by one}}
nf.kernel @rope_joint(%q: tensor<?x?x64xbf16>, %cos_sin: tensor<?x64xf32>,
                      %positions: tensor<?xi64>) -> tensor<?x?x64xbf16>
    attributes {nf.variants = [#nf.variant<name = "v0_multi_row8x1", vectorized = true, max_d = 64, schedule = <threads_per_row = 8, rows_per_cta = 32, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>, joint_rows = true>]} {
  %qb = nf.load %q [B, S, D] : tensor<?x?x64xbf16>
  %qf = nf.cast %qb : !nf.row<bf16> to !nf.row<f32>
  %qr = nf.rope neox %qf, %cos_sin[%positions] rotary 64
      : !nf.row<f32>, tensor<?x64xf32>, tensor<?xi64>
  %qo = nf.cast %qr : !nf.row<f32> to !nf.row<bf16>
  nf.return %qo : !nf.row<bf16>
}
