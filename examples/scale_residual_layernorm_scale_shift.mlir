// ScaleResidualNormScaleShift (Wan2.1), bf16 activations, fp32 modulation.
nf.kernel @srnss(%x: tensor<?x?x1536xbf16>, %residual: tensor<?x?x1536xbf16>,
                 %gate: tensor<?x1x1536xf32>, %scale: tensor<?x1x1536xf32>,
                 %shift: tensor<?x1x1536xf32>)
    -> (tensor<?x?x1536xbf16>, tensor<?x?x1536xbf16>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x1536xbf16>
  %res = nf.load %residual [B, S, D] : tensor<?x?x1536xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x1536xf32>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x1536xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x1536xf32>
  %xf = nf.cast %xr : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %res : !nf.row<bf16> to !nf.row<f32>
  %gx = nf.mul %g, %xf : !nf.row<f32>
  %r = nf.add %rf, %gx : !nf.row<f32>
  %n = nf.layer_norm %r eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}
