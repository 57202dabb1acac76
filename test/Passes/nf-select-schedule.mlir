// Schedules chosen from D and the dtypes, and forced by options.
// RUN: nf-opt %s -split-input-file -nf-select-schedule | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-select-schedule="threads-per-row=32 rows-per-cta=2" | FileCheck %s --check-prefix=FORCED
// RUN: nf-opt %s -split-input-file -nf-select-schedule=streaming | FileCheck %s --check-prefix=STREAM
// RUN: nf-opt %s -split-input-file -nf-select-schedule="rows-per-thread=3" | FileCheck %s --check-prefix=RPT

// bf16, D = 128: 16 chunks of 8 -> 16 threads, one chunk each, 8 row
// groups per 128-thread CTA, two rows per thread group (rows shorter than a
// warp).
// CHECK-LABEL: nf.kernel @head
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]}
// RPT-LABEL: nf.kernel @head
// RPT-SAME: rows_per_thread = 3>]
// FORCED-LABEL: nf.kernel @head
// FORCED-SAME: nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 2, chunk = 8, chunks_per_thread = 1>]}
// STREAM-LABEL: nf.kernel @head
// STREAM-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @head(%q: tensor<?x?x128xbf16>) -> tensor<?x?x128xbf16> {
  %r = nf.load %q [B, S, D] : tensor<?x?x128xbf16>
  nf.return %r : !nf.row<bf16>
}

// -----

// f32, D = 3072: 768 chunks of 4 -> 256 threads with 3 chunks each: a
// CTA per row.
// CHECK-LABEL: nf.kernel @wide
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 4, chunks_per_thread = 3>]}
// RPT-LABEL: nf.kernel @wide
// RPT-SAME: rows_per_thread = 3>]
nf.kernel @wide(%x: tensor<?x?x3072xf32>) -> tensor<?x?x3072xf32> {
  %r = nf.load %x [B, S, D] : tensor<?x?x3072xf32>
  nf.return %r : !nf.row<f32>
}

// -----

// D dynamic: a family, what a static D would get for every distinct
// choice up to 512 threads x 4 chunks (bf16: D <= 16384), smallest first,
// then 1024 threads streaming longer rows. An option that forces a choice
// gives that one schedule (streaming with 256 threads for a dynamic D).
// Two rows per thread only for rows of one chunk per thread.
// CHECK-LABEL: nf.kernel @any
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 1, rows_per_cta = 128, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>,
// CHECK-SAME: #nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>,
// CHECK-SAME: #nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 3>,
// CHECK-SAME: #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
// FORCED-LABEL: nf.kernel @any
// FORCED-SAME: nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 2, chunk = 8, chunks_per_thread = 0>]}
// RPT-LABEL: nf.kernel @any
// RPT-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @any(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %r = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  nf.return %r : !nf.row<bf16>
}

// -----

// D dynamic with a reduction over a [B, S, D] row (decomposed: the
// pipeline runs nf-decompose first): the family, its last schedule
// streamed by 1024 threads.
// CHECK-LABEL: nf.kernel @any_norm
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @any_norm(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Static rows past what 512 threads hold in 4 chunks: bf16 D = 16384 is
// 512 threads x 4 chunks in registers; D = 32768 would need 1024 threads
// (64 registers each: spills), so it is streamed, with 1024 threads.
// CHECK-LABEL: nf.kernel @long16k
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]}
// CHECK-LABEL: nf.kernel @long32k
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @long16k(%x: tensor<?x?x16384xbf16>) -> tensor<?x?x16384xbf16> {
  %r = nf.load %x [B, S, D] : tensor<?x?x16384xbf16>
  nf.return %r : !nf.row<bf16>
}
nf.kernel @long32k(%x: tensor<?x?x32768xbf16>) -> tensor<?x?x32768xbf16> {
  %r = nf.load %x [B, S, D] : tensor<?x?x32768xbf16>
  nf.return %r : !nf.row<bf16>
}

// -----

// f32 rows of two reductions (softmax) past 512 threads x 4 chunks: 1024
// threads hold D = 16384 in 4 chunks (16 elements) each, in registers.
// One reduction over one [B, S, D] input (RMSNorm) at the same D gets the
// same CTA by its own rule (at most 4 chunks of 1024 threads, any width).
// CHECK-LABEL: nf.kernel @softmax16k_f32
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 4, chunks_per_thread = 4>]}
// CHECK-LABEL: nf.kernel @rms16k_f32
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 4, chunks_per_thread = 4>]}
nf.kernel @softmax16k_f32(%x: tensor<?x?x16384xf32>) -> tensor<?x?x16384xf32> {
  %xf = nf.load %x [B, S, D] : tensor<?x?x16384xf32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}
nf.kernel @rms16k_f32(%x: tensor<?x?x16384xf32>) -> tensor<?x?x16384xf32> {
  %xf = nf.load %x [B, S, D] : tensor<?x?x16384xf32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}

// -----

// The same softmax with D dynamic: after 512 threads x 4 chunks (D <=
// 8192), 1024 threads x 3 and x 4 chunks (D <= 12288, <= 16384), then the
// streamed schedule. D = 16385 would need 5 chunks (20 elements): streamed.
// CHECK-LABEL: nf.kernel @softmax_any_f32
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 4, chunks_per_thread = 3>,
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 4, chunks_per_thread = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 4, chunks_per_thread = 0>]}
nf.kernel @softmax_any_f32(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %xf = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}
