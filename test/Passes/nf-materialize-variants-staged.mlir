// The variants of staged one-CTA schedules (256 threads, the row in shared
// memory): the vectorized variant is staged; its twins, peeled and general
// variants hold the row in 512 threads' registers (the lowering stages
// only whole 16-byte chunks of rows that start aligned). Both schedules
// here hold their rows in 512 x 4 registers: the twins and the peeled
// variant come once, after the last staged variant and bounded by its
// capacity, so that a row either staged variant serves takes it first.
// RUN: nf-opt %s -nf-materialize-variants | FileCheck %s

// CHECK-LABEL: nf.kernel @softmax
// CHECK-SAME: name = "v0_cta256x7", vectorized = true, max_d = 14336, schedule = <threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 7, staged = true>
// CHECK-SAME: name = "v1_cta256x8", vectorized = true, max_d = 16384, schedule = <threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, staged = true>
// CHECK-SAME: name = "v2_cta512x8", vectorized = true, max_d = 16384, schedule = <threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 8>
// CHECK-SAME: name = "v3_cta512x16", vectorized = true, max_d = 16384, schedule = <threads_per_row = 512, rows_per_cta = 1, chunk = 2, chunks_per_thread = 16>
// CHECK-SAME: name = "p4_cta512x4", vectorized = false, max_d = 16377, schedule = <threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>
// CHECK-NOT: cta512x
nf.kernel @softmax(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [
      #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 7, staged = true>,
      #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, staged = true>]} {
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
