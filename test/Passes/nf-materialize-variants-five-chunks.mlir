// A 5-chunk schedule (40 elements per thread) has no general variant of
// its own where the next schedule holds its rows in one CTA: its general
// variant would stream, and the rows it would serve (misaligned, or past
// the peeled bound) take the next schedule's peeled or general variant,
// which hold the row in registers. The 4-chunk schedule before it keeps
// its general variant (32 elements per thread, held predicated).
// RUN: nf-opt %s -split-input-file -nf-materialize-variants | FileCheck %s

// CHECK-LABEL: nf.kernel @softmax_steps
// CHECK-SAME: name = "p3_warp32x4", vectorized = false, max_d = 1017
// CHECK-SAME: name = "g4_warp32x32", vectorized = false, max_d = 1024
// CHECK-SAME: name = "v5_warp32x5", vectorized = true, max_d = 1280
// CHECK-SAME: name = "p8_warp32x5", vectorized = false, max_d = 1273
// CHECK-SAME: name = "v9_cta64x3", vectorized = true, max_d = 1536
// CHECK-SAME: name = "p12_cta64x3", vectorized = false, max_d = 1529
// CHECK-SAME: name = "g13_cta64x24", vectorized = false, max_d = 1536
nf.kernel @softmax_steps(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [
      #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>,
      #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 5>,
      #nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 3>]} {
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

// -----

// The last one-CTA schedule, 512 x 5, keeps its streamed general variant:
// after it comes a cluster, whose general variant streams too.
// CHECK-LABEL: nf.kernel @last_one_cta
// CHECK-SAME: name = "p3_cta512x5", vectorized = false, max_d = 20473
// CHECK-SAME: name = "g4_streaming512", vectorized = false, max_d = 20480
// CHECK-SAME: name = "v5_cluster256x6c2", vectorized = true, max_d = 24576
nf.kernel @last_one_cta(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [
      #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>,
      #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 6, cluster_size = 2, staged = true>]} {
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
