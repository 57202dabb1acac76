// One-CTA rows staged in shared memory: a kernel that reads one [B, S, D]
// tensor, reduces it twice or more and reads no operand along the row
// (softmax) holds the rows that 512 threads would hold in 32 or more
// elements each (16-bit rows of 12289 to 16384) in 256 threads whose chunks
// are copied into shared memory (at most 32 KB per CTA).
// RUN: nf-opt %s -split-input-file -nf-select-schedule | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-select-schedule=threads-per-row=512 | FileCheck %s --check-prefix=FORCED

// bf16, D = 16384: 512 x 4 chunks in registers, or 256 x 8 staged (32 KB).
// A forced schedule is taken as it is.
// CHECK-LABEL: nf.kernel @softmax_16384
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 8, staged = true>]}
// FORCED-LABEL: nf.kernel @softmax_16384
// FORCED-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]}
nf.kernel @softmax_16384(%x: tensor<?x?x16384xbf16>) -> tensor<?x?x16384xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x16384xbf16>
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

// D = 13312: 1664 chunks, 7 per thread of 256 (28 KB).
// CHECK-LABEL: nf.kernel @softmax_13312
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 7, staged = true>]}
nf.kernel @softmax_13312(%x: tensor<?x?x13312xf16>) -> tensor<?x?x13312xf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x13312xf16>
  %xf = nf.cast %xb : !nf.row<f16> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<f16>
  nf.return %yb : !nf.row<f16>
}

// -----

// D = 12288: 512 x 3 (24 elements per thread, 40 registers) stays in
// registers; staged it measured slower.
// CHECK-LABEL: nf.kernel @softmax_12288
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>]}
nf.kernel @softmax_12288(%x: tensor<?x?x12288xbf16>) -> tensor<?x?x12288xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x12288xbf16>
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

// D = 20480: 512 x 5 would take 40 KB staged; it stays in registers.
// CHECK-LABEL: nf.kernel @softmax_20480
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5>]}
nf.kernel @softmax_20480(%x: tensor<?x?x20480xbf16>) -> tensor<?x?x20480xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x20480xbf16>
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

// f32, D = 8192: 512 x 4 chunks of 4 elements, 16 per thread: in registers.
// CHECK-LABEL: nf.kernel @softmax_f32_8192
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 4>]}
nf.kernel @softmax_f32_8192(%x: tensor<?x?x8192xf32>) -> tensor<?x?x8192xf32> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x8192xf32>
  %m = nf.reduce max %xb : !nf.row<f32>
  %c = nf.sub %xb, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  nf.return %y : !nf.row<f32>
}

// -----

// An operand along the row (LayerNorm's f32 weight): in registers
// (LayerNorm staged measured slower; at this D its CTAs are persistent,
// nf-select-schedule-persistent.mlir).
// CHECK-LABEL: nf.kernel @layernorm_16384
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>]}
nf.kernel @layernorm_16384(%x: tensor<?x?x16384xbf16>, %w: tensor<16384xf32>) -> tensor<?x?x16384xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x16384xbf16>
  %wf = nf.load %w [D] : tensor<16384xf32>
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

// One reduction (RMSNorm without weight): in registers (32 registers).
// CHECK-LABEL: nf.kernel @one_reduction_16384
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]}
nf.kernel @one_reduction_16384(%x: tensor<?x?x16384xbf16>) -> tensor<?x?x16384xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x16384xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %y = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
