// A peeled variant (rows of any length whose tensors share their offset
// within a chunk) loads an f32 operand broadcast along the rows, as [D] or
// as [B, 1, D], from the aligned 16-byte granules that hold each chunk's
// elements (three per chunk of 8 bf16), shifted into place by selects: no
// element-by-element loads. Here warp32x4's peeled variants: 4 row chunks
// and 4 x 3 granules of each f32 operand (LayerNorm's weight and bias, a
// seed's [B, 1, D] gate), all 16-byte loads.
// RUN: nf-compile %s --sm sm_90 --emit=ptx | FileCheck %s

// CHECK-LABEL: .entry ln_p61_warp32x4(
// CHECK-COUNT-28: ld.global.nc.v4.b32
// CHECK: selp.f32
// CHECK-NOT: ld.global.nc.{{b32|f32}}{{[[:space:]]}}
// CHECK-LABEL: .entry ln_g62_warp32x32(
nf.kernel @ln(%x: tensor<?x?x?xbf16>, %w: tensor<?xf32>, %b: tensor<?xf32>)
    -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %w0 = nf.load %w [D] : tensor<?xf32>
  %b0 = nf.load %b [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w0 bias %b0 eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// CHECK-LABEL: .entry gate_p41_warp32x4(
// CHECK-COUNT-16: ld.global.nc.v4.b32
// CHECK: selp.f32
// CHECK-NOT: ld.global.nc.{{b32|f32}}{{[[:space:]]}}
// CHECK-LABEL: .entry gate_g42_streaming32(
nf.kernel @gate(%x: tensor<?x?x?xbf16>, %g: tensor<?x1x?xf32>)
    -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %g0 = nf.load %g [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.mul %xf, %g0 : !nf.row<f32>, !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
