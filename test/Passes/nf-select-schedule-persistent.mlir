// Persistent schedules: where a reduction waits on an operand along the row
// that the first reduction does not read (the row maximum of a modulated
// LayerNorm), each register-resident schedule that may be is made
// persistent (a 64-thread row gets a CTA of its own for it; rows of a
// warp or less keep sharing theirs); a kernel
// whose operands are read only after its last exchange is not, unless
// `persistent=all`; `persistent=none` makes none, and so does a target
// without asynchronous copies (`async-copy=false`: sm_75).
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=persistent=all | FileCheck %s --check-prefix=ALL
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=persistent=none | FileCheck %s --check-prefix=NONE
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=async-copy=false | FileCheck %s --check-prefix=NONE
// RUN: not nf-opt %s -split-input-file -nf-decompose -nf-select-schedule=persistent=some 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: 'nf.kernel' op persistent must be auto, all or none, found 'some'

// layernorm_modulate_quant_fp8 at D = 4096 (128 threads x 4 chunks).
// CHECK-LABEL: nf.kernel @lmq
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>]}
// ALL-LABEL: nf.kernel @lmq
// ALL-SAME: persistent = true
// NONE-LABEL: nf.kernel @lmq
// NONE-NOT: persistent
nf.kernel @lmq(%x: tensor<?x?x4096xbf16>, %scale: tensor<?x1x4096xf32>,
    %shift: tensor<?x1x4096xf32>)
    -> (tensor<?x?x4096xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x4096xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x4096xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x4096xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %amax : !nf.row<f8E4M3FN>, f32
}

// -----

// LayerNorm with its weight and bias: read after the last exchange only.
// CHECK-LABEL: nf.kernel @layernorm
// CHECK-NOT: persistent
// ALL-LABEL: nf.kernel @layernorm
// ALL-SAME: persistent = true
nf.kernel @layernorm(%x: tensor<?x?x4096xbf16>, %weight: tensor<4096xf32>,
    %bias: tensor<4096xf32>) -> tensor<?x?x4096xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x4096xbf16>
  %w = nf.load %weight [D] : tensor<4096xf32>
  %b = nf.load %bias [D] : tensor<4096xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// RMSNorm then per-token FP8: the row maximum of x * rstd * w is factored
// into rstd * max |x * w| (-nf-factor-row-scalars, which the lowering
// applies), which waits on no exchange.
// CHECK-LABEL: nf.kernel @rmsnorm_quant
// CHECK-NOT: persistent
nf.kernel @rmsnorm_quant(%x: tensor<?x?x4096xbf16>, %weight: tensor<4096xbf16>)
    -> (tensor<?x?x4096xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x4096xbf16>
  %wb = nf.load %weight [D] : tensor<4096xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %amax : !nf.row<f8E4M3FN>, f32
}

// -----

// The gate of r = residual + gate * x feeds the first reduction: it is
// loaded with the row, before any exchange (seed #1).
// CHECK-LABEL: nf.kernel @gated
// CHECK-NOT: persistent
nf.kernel @gated(%x: tensor<?x?x4096xbf16>, %res: tensor<?x?x4096xbf16>,
    %gate: tensor<?x1x4096xf32>) -> tensor<?x?x4096xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x4096xbf16>
  %rb = nf.load %res [B, S, D] : tensor<?x?x4096xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x4096xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %gx = nf.mul %g, %xf : !nf.row<f32>, !nf.row<f32>
  %r = nf.add %rf, %gx : !nf.row<f32>, !nf.row<f32>
  %y = nf.layer_norm %r eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// A row of 64 threads gets a CTA of its own where it may be persistent
// (two rows per CTA, the default for 64-thread rows, may not; H200: 74.6
// -> 97.2% of a copy); without persistence it shares a CTA as before.
// CHECK-LABEL: nf.kernel @lmq_2048
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>]}
// NONE-LABEL: nf.kernel @lmq_2048
// NONE-SAME: nf.schedules = [#nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8, chunks_per_thread = 4>]}
nf.kernel @lmq_2048(%x: tensor<?x?x2048xbf16>, %scale: tensor<?x1x2048xf32>,
    %shift: tensor<?x1x2048xf32>) -> tensor<?x?x2048xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x2048xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x2048xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x2048xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %yb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Rows of a warp or less keep their CTA of 128 threads, four (eight) rows
// walking consecutive tokens, each with its slots (H200, % of a copy, one
// row per warp or half warp -> persistent: D = 512 82.6 -> 96.9, 1024 81.3
// -> 96.3, 1280 77.1 -> 96.8).
// CHECK-LABEL: nf.kernel @lmq_1024
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4, persistent = true>]}
// NONE-LABEL: nf.kernel @lmq_1024
// NONE-SAME: nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>]}
nf.kernel @lmq_1024(%x: tensor<?x?x1024xbf16>, %scale: tensor<?x1x1024xf32>,
    %shift: tensor<?x1x1024xf32>) -> tensor<?x?x1024xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x1024xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x1024xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x1024xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %yb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Rows of 16 threads or fewer take the fewest threads (at least 4) that
// hold them in at most five chunks while persistent, their CTA of 128
// threads walking more rows (H200, % of a copy: D = 128 16 x 1, two rows
// per thread -> 4 x 4 persistent 62.1 -> 91.5; 256 16 x 2 -> 8 x 4, both
// persistent, 87.0 -> 97.8). Not persistent, D = 256 keeps 16 threads (D =
// 128 starts at 4 as every short row of one input and two reductions does,
// nf-select-schedule.mlir); a row of one chunk per 4 threads keeps its two
// rows per thread.
// CHECK-LABEL: nf.kernel @lmq_128
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 4, rows_per_cta = 32, chunk = 8, chunks_per_thread = 4, persistent = true>]}
// NONE-LABEL: nf.kernel @lmq_128
// NONE-SAME: nf.schedules = [#nf.schedule<threads_per_row = 4, rows_per_cta = 32, chunk = 8, chunks_per_thread = 4>]}
nf.kernel @lmq_128(%x: tensor<?x?x128xbf16>, %scale: tensor<?x1x128xf32>,
    %shift: tensor<?x1x128xf32>) -> tensor<?x?x128xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x128xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x128xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x128xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %yb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// CHECK-LABEL: nf.kernel @lmq_256
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 8, rows_per_cta = 16, chunk = 8, chunks_per_thread = 4, persistent = true>]}
// NONE-LABEL: nf.kernel @lmq_256
// NONE-SAME: nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 2>]}
nf.kernel @lmq_256(%x: tensor<?x?x256xbf16>, %scale: tensor<?x1x256xf32>,
    %shift: tensor<?x1x256xf32>) -> tensor<?x?x256xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x256xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x256xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x256xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %yb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// CHECK-LABEL: nf.kernel @lmq_32
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 4, rows_per_cta = 32, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]}
nf.kernel @lmq_32(%x: tensor<?x?x32xbf16>, %scale: tensor<?x1x32xf32>,
    %shift: tensor<?x1x32xf32>) -> tensor<?x?x32xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x32xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x32xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x32xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %yb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// RMSNorm then per-token FP8 at D = 1280 (32 threads x 5 chunks): the
// rules measured on rows of 64 threads or more (here: five chunks, a later
// reduction reading the weight) do not make a warp's row persistent.
// CHECK-LABEL: nf.kernel @rmsnorm_quant_1280
// CHECK-NOT: persistent
// ALL-LABEL: nf.kernel @rmsnorm_quant_1280
// ALL-SAME: threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 5, persistent = true
nf.kernel @rmsnorm_quant_1280(%x: tensor<?x?x1280xbf16>, %weight: tensor<1280xf32>)
    -> (tensor<?x?x1280xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x1280xbf16>
  %wf = nf.load %weight [D] : tensor<1280xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %amax : !nf.row<f8E4M3FN>, f32
}

// -----

// Rows of 512 threads: two slots of 32 KB (dynamic shared memory) and 64
// held registers (scale and shift, 32 elements each) at D = 16384.
// CHECK-LABEL: nf.kernel @lmq_16384
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>]}
// NONE-LABEL: nf.kernel @lmq_16384
// NONE-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]}
nf.kernel @lmq_16384(%x: tensor<?x?x16384xbf16>, %scale: tensor<?x1x16384xf32>,
    %shift: tensor<?x1x16384xf32>) -> tensor<?x?x16384xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x16384xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x16384xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x16384xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %yb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// At 512 x 3, one row per CTA takes half chunks (6 of 4 elements) for f32
// operands along the row; a persistent CTA keeps whole 16-byte chunks.
// CHECK-LABEL: nf.kernel @lmq_12288
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3, persistent = true>]}
// NONE-LABEL: nf.kernel @lmq_12288
// NONE-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 6>]}
nf.kernel @lmq_12288(%x: tensor<?x?x12288xbf16>, %scale: tensor<?x1x12288xf32>,
    %shift: tensor<?x1x12288xf32>) -> tensor<?x?x12288xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x12288xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x12288xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x12288xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %yb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// At 512 x 5 the operands would take 80 of a thread's 128 registers: not
// persistent.
// CHECK-LABEL: nf.kernel @lmq_20480
// CHECK-NOT: persistent
nf.kernel @lmq_20480(%x: tensor<?x?x20480xbf16>, %scale: tensor<?x1x20480xf32>,
    %shift: tensor<?x1x20480xf32>) -> tensor<?x?x20480xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x20480xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x20480xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x20480xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %yb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
