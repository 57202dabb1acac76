// Rows too long for one CTA's registers, shared by the CTAs of a cluster
// (max-cluster > 1; nf-compile sets 8 from sm_90 on).
// RUN: nf-opt %s -split-input-file -nf-select-schedule=max-cluster=8 | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-select-schedule=max-cluster=2 | FileCheck %s --check-prefix=TWO
// RUN: nf-opt %s -split-input-file -nf-select-schedule | FileCheck %s --check-prefix=NONE
// RUN: not nf-opt %s -split-input-file -nf-select-schedule=max-cluster=3 2>&1 | FileCheck %s --check-prefix=BAD

// bf16, D = 32768: 4096 chunks, twice what 512 threads hold in 4 chunks
// each. A kernel of one reduction and one [B, S, D] input (RMSNorm) whose
// row 1024 threads hold in 4 chunks each takes one CTA of 1024 threads,
// with or without clusters.
// CHECK-LABEL: nf.kernel @static_long
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]}
// NONE-LABEL: nf.kernel @static_long
// NONE-SAME: nf.schedules = [#nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]}
// BAD: error: 'nf.kernel' op max-cluster must be 1, 2, 4 or 8, found 3
nf.kernel @static_long(%x: tensor<?x?x32768xbf16>) -> tensor<?x?x32768xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x32768xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// D = 65536 needs four CTAs (the kernel reads one [B, S, D] tensor, so
// each holds its quarter in shared memory, staged): with at most two,
// streamed.
// CHECK-LABEL: nf.kernel @static_longer
// CHECK-SAME: chunks_per_thread = 8, cluster_size = 4, staged = true>]}
// TWO-LABEL: nf.kernel @static_longer
// TWO-SAME: nf.schedules = [#nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @static_longer(%x: tensor<?x?x65536xbf16>) -> tensor<?x?x65536xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x65536xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// D dynamic: after the one-CTA schedules (512 threads x 5 chunks, which
// every kernel gets before a cluster: D <= 20480 in bf16; then, for this
// kernel of one reduction and one input, 1024 threads x 3 and 4 chunks:
// D <= 32768), one per (cluster, chunks) up to 8 staged CTAs x 256
// threads x 8 chunks (bf16: D <= 131072), then streaming.
// CHECK-LABEL: nf.kernel @any
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>,
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>,
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, cluster_size = 4, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, cluster_size = 4, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, cluster_size = 8, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, cluster_size = 8, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
// NONE-LABEL: nf.kernel @any
// NONE-NOT: cluster_size
// NONE: nf.return
nf.kernel @any(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// One reduction over two [B, S, D] tensors (fused add + RMSNorm) at
// D = 32768: not staged (two tensors, 64 KB per CTA); two CTAs of 512
// threads x 4 chunks in registers.
// CHECK-LABEL: nf.kernel @two_inputs_long
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, cluster_size = 2>]}
nf.kernel @two_inputs_long(%x: tensor<?x?x32768xbf16>, %r: tensor<?x?x32768xbf16>) -> tensor<?x?x32768xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x32768xbf16>
  %rb = nf.load %r [B, S, D] : tensor<?x?x32768xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %h = nf.add %xf, %rf : !nf.row<f32>, !nf.row<f32>
  %ms = nf.reduce mean_sq %h : !nf.row<f32>
  %y = nf.mul %h, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Two reductions over the row (a decomposed LayerNorm: mean, then the
// variance, then an f32 weight): one [B, S, D] input, and the second
// reduction reads no operand along the row, so the row is staged. Registers
// would take four CTAs (512 x 3 chunks); staged, a pair of CTAs holds it in
// 256 threads x 8 chunks (32 KB of shared memory each).
// CHECK-LABEL: nf.kernel @two_reductions
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, cluster_size = 2, staged = true>]}
nf.kernel @two_reductions(%x: tensor<?x?x32768xbf16>, %w: tensor<32768xf32>) -> tensor<?x?x32768xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x32768xbf16>
  %wf = nf.load %w [D] : tensor<32768xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %m = nf.reduce mean %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %sq = nf.mul %c, %c : !nf.row<f32>, !nf.row<f32>
  %v = nf.reduce mean %sq : !nf.row<f32>
  %n = nf.mul %c, %v : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>, !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Two reductions at D = 24576 (a softmax: one [B, S, D] tensor, no operand
// along the row): two CTAs that hold 512 x 3 chunks, staged: 256 threads x
// 6 chunks.
// CHECK-LABEL: nf.kernel @two_reductions_pair
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 6, cluster_size = 2, staged = true>]}
// NONE-LABEL: nf.kernel @two_reductions_pair
// NONE-SAME: chunks_per_thread = 0>]}
nf.kernel @two_reductions_pair(%x: tensor<?x?x24576xbf16>) -> tensor<?x?x24576xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x24576xbf16>
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

// The same with D dynamic. Softmax reads one [B, S, D] tensor and no
// operand along the row, so after the one-CTA schedules (up to 512 x 5: two
// reductions per 4 bytes of row traffic per element allow five chunks; the
// rows 512 x 4 would hold staged in 256 threads, nf-select-schedule-staged.mlir)
// come staged clusters: pairs of CTAs of 256 threads x 6 to 8 chunks (bf16:
// D <= 32768), then 4 and 8 CTAs of 4 to 6 chunks (D <= 98304), then
// streaming.
// CHECK-LABEL: nf.kernel @two_reductions_family
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 7, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 6, cluster_size = 2, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 7, cluster_size = 2, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, cluster_size = 2, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, cluster_size = 4, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 6, cluster_size = 4, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, cluster_size = 8, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 6, cluster_size = 8, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @two_reductions_family(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
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

// f32, two reductions, D = 12288: one CTA of 1024 threads x 3 chunks holds
// the row (nf-select-schedule.mlir), so no cluster is formed for it.
// CHECK-LABEL: nf.kernel @two_reductions_f32
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 4, chunks_per_thread = 3>]}
nf.kernel @two_reductions_f32(%x: tensor<?x?x12288xf32>) -> tensor<?x?x12288xf32> {
  %xf = nf.load %x [B, S, D] : tensor<?x?x12288xf32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}

// -----

// Two reductions over a row read from two [B, S, D] tensors (seed #1's
// residual add, then LayerNorm): the streamed schedule would re-read both
// per pass, so the row takes the fewest CTAs of 512 threads x at most 3
// chunks: at D = 32768 four CTAs of 2 chunks.
// CHECK-LABEL: nf.kernel @two_reductions_two_inputs
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, cluster_size = 4>]}
// TWO-LABEL: nf.kernel @two_reductions_two_inputs
// TWO-SAME: chunks_per_thread = 0>]}
nf.kernel @two_reductions_two_inputs(%x: tensor<?x?x32768xbf16>, %r: tensor<?x?x32768xbf16>) -> tensor<?x?x32768xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x32768xbf16>
  %rb = nf.load %r [B, S, D] : tensor<?x?x32768xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %a = nf.add %xf, %rf : !nf.row<f32>, !nf.row<f32>
  %m = nf.reduce mean %a : !nf.row<f32>
  %c = nf.sub %a, %m : !nf.row<f32>, f32
  %sq = nf.mul %c, %c : !nf.row<f32>, !nf.row<f32>
  %v = nf.reduce mean %sq : !nf.row<f32>
  %y = nf.mul %c, %v : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// The same with D dynamic: after the one-CTA schedules (up to 512 x 5),
// clusters of 2, 4 and 8 CTAs of 2 or 3 chunks (bf16: D <= 98304), then
// streaming.
// CHECK-LABEL: nf.kernel @two_reductions_two_inputs_family
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, cluster_size = 2>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, cluster_size = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, cluster_size = 4>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, cluster_size = 8>,
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, cluster_size = 8>,
// CHECK-SAME: #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @two_reductions_two_inputs_family(%x: tensor<?x?x?xbf16>, %r: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %rb = nf.load %r [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %a = nf.add %xf, %rf : !nf.row<f32>, !nf.row<f32>
  %m = nf.reduce mean %a : !nf.row<f32>
  %c = nf.sub %a, %m : !nf.row<f32>, f32
  %sq = nf.mul %c, %c : !nf.row<f32>, !nf.row<f32>
  %v = nf.reduce mean %sq : !nf.row<f32>
  %y = nf.mul %c, %v : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// With an operand along the row (a decomposed LayerNorm's f32 weight) and
// one [B, S, D] input, D dynamic: staged clusters of 2, 4 and 8 CTAs, then
// the streamed schedule.
// CHECK-LABEL: nf.kernel @two_reductions_weight_family
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>, #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 6, cluster_size = 2, staged = true>,
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 6, cluster_size = 8, staged = true>, #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @two_reductions_weight_family(%x: tensor<?x?x?xbf16>, %w: tensor<?xf32>) -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wf = nf.load %w [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %m = nf.reduce mean %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %sq = nf.mul %c, %c : !nf.row<f32>, !nf.row<f32>
  %v = nf.reduce mean %sq : !nf.row<f32>
  %n = nf.mul %c, %v : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>, !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// A second reduction that reads the weight (rmsnorm_quant_fp8's max of
// |x * rstd * w|): not staged (it held 55-64 registers staged and spilled).
// Clusters of 512-thread CTAs in registers up to 8 CTAs, as for kernels of
// two inputs: the streamed schedule would re-read the weight on each pass
// (a kernel of one input whose later reductions read no operand, LayerNorm,
// is staged instead: @two_reductions_weight_family). Its 512 x 5 CTAs are
// persistent (nf-select-schedule-persistent.mlir).
// CHECK-LABEL: nf.kernel @later_reduction_reads_weight
// CHECK-SAME: #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, persistent = true>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, cluster_size = 2>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, cluster_size = 4>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, cluster_size = 4>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, cluster_size = 8>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, cluster_size = 8>, #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @later_reduction_reads_weight(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>) -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %n = nf.mul %xf, %ms : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>, !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %m = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %m : !nf.row<f32>, f32
  %qb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %qb : !nf.row<bf16>
}

// -----

// Not staged: a kernel without a reduction (nothing is read twice), and an
// fp8 input beside f32 rows, whose 4-element chunks are 4 bytes of it (the
// staged copy moves 16 bytes at a time): both hold their rows in registers.
// CHECK-LABEL: nf.kernel @dequantize_long
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 4, cluster_size = 4>]}
nf.kernel @dequantize_long(%a: tensor<?x?x32768xf8E4M3FN>)
    -> tensor<?x?x32768xf32> {
  %a8 = nf.load %a [B, S, D] : tensor<?x?x32768xf8E4M3FN>
  %af = nf.cast %a8 : !nf.row<f8E4M3FN> to !nf.row<f32>
  nf.return %af : !nf.row<f32>
}

// -----

// CHECK-LABEL: nf.kernel @fp8_rms_long
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 4, cluster_size = 4>]}
nf.kernel @fp8_rms_long(%a: tensor<?x?x32768xf8E4M3FN>)
    -> tensor<?x?x32768xf32> {
  %a8 = nf.load %a [B, S, D] : tensor<?x?x32768xf8E4M3FN>
  %af = nf.cast %a8 : !nf.row<f8E4M3FN> to !nf.row<f32>
  %ms = nf.reduce mean_sq %af : !nf.row<f32>
  %y = nf.mul %af, %ms : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}
