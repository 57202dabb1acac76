// Short rows: a kernel of one [B, S, D] input and two or more reductions
// starts its 16-bit rows of at most 24 chunks (D <= 192) at 4 threads, not
// 16 (H200, % of a copy, D = 128: softmax 93.6 -> 98.9, rmsnorm_quant_fp8
// 77.4 -> 98.3); longer rows, f32 rows, and kernels of one reduction or of
// two inputs keep 16 (RMSNorm at 128 lost 3.6 from 4 threads, fused add +
// RMSNorm 99.0 -> 36.4).
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule | FileCheck %s

// CHECK-LABEL: nf.kernel @softmax_128
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 4, rows_per_cta = 32, chunk = 8, chunks_per_thread = 4>]}
nf.kernel @softmax_128(%x: tensor<?x?x128xf16>) -> tensor<?x?x128xf16> {
  %xh = nf.load %x [B, S, D] : tensor<?x?x128xf16>
  %xf = nf.cast %xh : !nf.row<f16> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yh = nf.cast %y : !nf.row<f32> to !nf.row<f16>
  nf.return %yh : !nf.row<f16>
}

// -----

// Three chunks per thread rather than six: 8 threads.
// CHECK-LABEL: nf.kernel @softmax_192
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 8, rows_per_cta = 16, chunk = 8, chunks_per_thread = 3>]}
nf.kernel @softmax_192(%x: tensor<?x?x192xf16>) -> tensor<?x?x192xf16> {
  %xh = nf.load %x [B, S, D] : tensor<?x?x192xf16>
  %xf = nf.cast %xh : !nf.row<f16> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yh = nf.cast %y : !nf.row<f32> to !nf.row<f16>
  nf.return %yh : !nf.row<f16>
}

// -----

// CHECK-LABEL: nf.kernel @softmax_64
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 4, rows_per_cta = 32, chunk = 8, chunks_per_thread = 2>]}
nf.kernel @softmax_64(%x: tensor<?x?x64xf16>) -> tensor<?x?x64xf16> {
  %xh = nf.load %x [B, S, D] : tensor<?x?x64xf16>
  %xf = nf.cast %xh : !nf.row<f16> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yh = nf.cast %y : !nf.row<f32> to !nf.row<f16>
  nf.return %yh : !nf.row<f16>
}

// -----

// CHECK-LABEL: nf.kernel @softmax_256
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 2>]}
nf.kernel @softmax_256(%x: tensor<?x?x256xf16>) -> tensor<?x?x256xf16> {
  %xh = nf.load %x [B, S, D] : tensor<?x?x256xf16>
  %xf = nf.cast %xh : !nf.row<f16> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yh = nf.cast %y : !nf.row<f32> to !nf.row<f16>
  nf.return %yh : !nf.row<f16>
}

// -----

// f32 rows (chunks of 4 elements) keep 16 threads.
// CHECK-LABEL: nf.kernel @softmax_f32_64
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 4, chunks_per_thread = 1, rows_per_thread = 2>]}
nf.kernel @softmax_f32_64(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %xh = nf.load %x [B, S, D] : tensor<?x?x64xf32>
  %xf = nf.cast %xh : !nf.row<f32> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yh = nf.cast %y : !nf.row<f32> to !nf.row<f32>
  nf.return %yh : !nf.row<f32>
}

// -----

// CHECK-LABEL: nf.kernel @rmsnorm_128
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]}
nf.kernel @rmsnorm_128(%x: tensor<?x?x128xbf16>, %weight: tensor<128xbf16>)
    -> tensor<?x?x128xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x128xbf16>
  %wb = nf.load %weight [D] : tensor<128xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// CHECK-LABEL: nf.kernel @fused_add_rmsnorm_128
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]}
nf.kernel @fused_add_rmsnorm_128(%x: tensor<?x?x128xbf16>,
    %residual: tensor<?x?x128xbf16>, %weight: tensor<128xbf16>)
    -> (tensor<?x?x128xbf16>, tensor<?x?x128xbf16> {nf.in_place = 1 : i64}) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x128xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x128xbf16>
  %wb = nf.load %weight [D] : tensor<128xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %resf : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %rr = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %rr weight %wf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}
