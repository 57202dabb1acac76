// A 16-bit row that 512 threads hold in 3 chunks of 8 elements, of a kernel
// that reads one [B, S, D] tensor, reduces it twice or more and reads f32
// operands along the row, is held in 6 chunks of 4 elements instead: each
// 16-byte f32 access of a warp then covers consecutive addresses.
// RUN: nf-opt %s -split-input-file -nf-decompose -nf-select-schedule | FileCheck %s

// LayerNorm, bf16 row, f32 weight and bias, D = 12288.
// CHECK-LABEL: nf.kernel @layernorm_12288
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 6>]}
nf.kernel @layernorm_12288(%x: tensor<?x?x12288xbf16>,
    %weight: tensor<12288xf32>, %bias: tensor<12288xf32>)
    -> tensor<?x?x12288xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x12288xbf16>
  %w = nf.load %weight [D] : tensor<12288xf32>
  %b = nf.load %bias [D] : tensor<12288xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// The same with a bf16 weight and bias: chunks of 8.
// CHECK-LABEL: nf.kernel @layernorm_bf16_weight
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>]}
nf.kernel @layernorm_bf16_weight(%x: tensor<?x?x12288xbf16>,
    %weight: tensor<12288xbf16>, %bias: tensor<12288xbf16>)
    -> tensor<?x?x12288xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x12288xbf16>
  %w = nf.load %weight [D] : tensor<12288xbf16>
  %b = nf.load %bias [D] : tensor<12288xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %w : !nf.row<bf16> to !nf.row<f32>
  %bf = nf.cast %b : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %wf bias %bf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Two [B, S, D] inputs (a residual added first): chunks of 8.
// CHECK-LABEL: nf.kernel @add_layernorm
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 3>]}
nf.kernel @add_layernorm(%x: tensor<?x?x12288xbf16>,
    %r: tensor<?x?x12288xbf16>, %weight: tensor<12288xf32>)
    -> tensor<?x?x12288xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x12288xbf16>
  %rb = nf.load %r [B, S, D] : tensor<?x?x12288xbf16>
  %w = nf.load %weight [D] : tensor<12288xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %s = nf.add %xf, %rf : !nf.row<f32>
  %y = nf.layer_norm %s weight %w eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// 512 x 4 chunks (D = 16384): chunks of 8 (persistent at this D,
// nf-select-schedule-persistent.mlir).
// CHECK-LABEL: nf.kernel @layernorm_16384
// CHECK-SAME: nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>]}
nf.kernel @layernorm_16384(%x: tensor<?x?x16384xbf16>,
    %weight: tensor<16384xf32>, %bias: tensor<16384xf32>)
    -> tensor<?x?x16384xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x16384xbf16>
  %w = nf.load %weight [D] : tensor<16384xf32>
  %b = nf.load %bias [D] : tensor<16384xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// D dynamic: the family's schedule for rows of 10241 to 12288 elements.
// CHECK-LABEL: nf.kernel @layernorm_dynamic
// CHECK-SAME: #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 5, short_launch_rows = 8>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 6>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>
nf.kernel @layernorm_dynamic(%x: tensor<?x?x?xbf16>, %weight: tensor<?xf32>,
    %bias: tensor<?xf32>) -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %w = nf.load %weight [D] : tensor<?xf32>
  %b = nf.load %bias [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
