// How many chunks a thread of a one-CTA row holds: by default 5 for a
// kernel of at least one reduction (over the row or its groups) per two
// bytes of [B, S, D] traffic per element, else 4 below 512 threads and 5
// at 512 (before a cluster); `max-chunks` sets it.
// RUN: nf-opt %s -split-input-file -nf-select-schedule | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-select-schedule=max-chunks=4 | FileCheck %s --check-prefix=FOUR
// RUN: not nf-opt %s -split-input-file -nf-select-schedule=max-chunks=17 2>&1 | FileCheck %s --check-prefix=BAD

// A softmax in bf16: two reductions, 2 + 2 bytes per element. D = 1152 is
// 144 chunks: 32 threads x 5 (one warp, 90% of the slots used) rather than
// 64 threads x 3 (75%).
// CHECK-LABEL: nf.kernel @softmax_1152
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 5>]}
// FOUR-LABEL: nf.kernel @softmax_1152
// FOUR-SAME: nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 3>]}
// BAD: error: 'nf.kernel' op max-chunks must be 0 to 16, found 17
nf.kernel @softmax_1152(%x: tensor<?x?x1152xbf16>) -> tensor<?x?x1152xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x1152xbf16>
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

// RMSNorm in bf16: one reduction per 4 bytes, bound by DRAM: 4 chunks at
// most (64 x 3 at D = 1152).
// CHECK-LABEL: nf.kernel @rmsnorm_1152
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 3>]}
nf.kernel @rmsnorm_1152(%x: tensor<?x?x1152xbf16>) -> tensor<?x?x1152xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x1152xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// RMSNorm, then dynamic per-token FP8 quantization of a bf16 row: the sum
// of squares and the maximum, 2 + 1 bytes per element. D = 5120 is 640
// chunks: 128 threads x 5.
// CHECK-LABEL: nf.kernel @norm_quant_5120
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>]}
// FOUR-LABEL: nf.kernel @norm_quant_5120
// FOUR-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>]}
nf.kernel @norm_quant_5120(%x: tensor<?x?x5120xbf16>)
    -> (tensor<?x?x5120xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x5120xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %n = nf.mul %xf, %ms : !nf.row<f32>, f32
  %a = nf.abs %n : !nf.row<f32>
  %m = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %n, %m : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %m : !nf.row<f8E4M3FN>, f32
}

// One reduction per 3 bytes (the maximum alone): 4 chunks at most.
// CHECK-LABEL: nf.kernel @quant_5120
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>]}
nf.kernel @quant_5120(%x: tensor<?x?x5120xbf16>)
    -> (tensor<?x?x5120xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x5120xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %a = nf.abs %xf : !nf.row<f32>
  %m = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %xf, %m : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %m : !nf.row<f8E4M3FN>, f32
}

// -----

// Two reductions over the sum of two bf16 rows, written back in place and
// normalized: 2 + 2 + 2 + 2 bytes per element, so 4 chunks at most.
// CHECK-LABEL: nf.kernel @add_layernorm_1152
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 3>]}
nf.kernel @add_layernorm_1152(%x: tensor<?x?x1152xbf16>,
    %r: tensor<?x?x1152xbf16>)
    -> (tensor<?x?x1152xbf16>, tensor<?x?x1152xbf16> {nf.in_place = 1 : i64}) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x1152xbf16>
  %rb = nf.load %r [B, S, D] : tensor<?x?x1152xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %a = nf.add %xf, %rf : !nf.row<f32>, !nf.row<f32>
  %ab = nf.cast %a : !nf.row<f32> to !nf.row<bf16>
  %m = nf.reduce mean %a : !nf.row<f32>
  %c = nf.sub %a, %m : !nf.row<f32>, f32
  %sq = nf.mul %c, %c : !nf.row<f32>, !nf.row<f32>
  %v = nf.reduce mean %sq : !nf.row<f32>
  %y = nf.mul %c, %v : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %ab : !nf.row<bf16>, !nf.row<bf16>
}

// -----

// RMSNorm at D = 20480 (2560 chunks): 512 threads x 5 in one CTA rather
// than a cluster or a streamed row; with max-chunks=4 (and no clusters,
// the pass default), streamed by 1024 threads.
// CHECK-LABEL: nf.kernel @rmsnorm_20480
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>]}
// FOUR-LABEL: nf.kernel @rmsnorm_20480
// FOUR-SAME: nf.schedules = [#nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]}
nf.kernel @rmsnorm_20480(%x: tensor<?x?x20480xbf16>) -> tensor<?x?x20480xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x20480xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
