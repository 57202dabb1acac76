// Replaces: ScaleResidualNormScaleShift, RMSNorm with weight
//   (sgl-project/sglang#14289, fused_scale_residual_norm_scale_shift with
//   norm_type="rms" and a weight).
// Computes: r = residual + gate * x;
//   y = (RMSNorm(r) * weight) * (1 + scale) + shift; outputs (y, r).
// Shapes: x, residual [B, S, D] f16; gate, scale, shift [B, 1, D] f32;
//   weight [D] f32. D is dynamic.
//
// Rounding: f16 activations are widened to f32 (exact), everything is
// computed in f32, y and r are rounded to f16 once each; the RMSNorm sees the
// unrounded f32 r.
nf.kernel @scale_residual_rmsnorm_affine_scale_shift(
    %x: tensor<?x?x?xf16>, %residual: tensor<?x?x?xf16>,
    %gate: tensor<?x1x?xf32>, %weight: tensor<?xf32>,
    %scale: tensor<?x1x?xf32>, %shift: tensor<?x1x?xf32>)
    -> (tensor<?x?x?xf16>, tensor<?x?x?xf16>) {
  %xh = nf.load %x [B, S, D] : tensor<?x?x?xf16>
  %resh = nf.load %residual [B, S, D] : tensor<?x?x?xf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %w = nf.load %weight [D] : tensor<?xf32>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xh : !nf.row<f16> to !nf.row<f32>
  %resf = nf.cast %resh : !nf.row<f16> to !nf.row<f32>
  %gx = nf.mul %g, %xf : !nf.row<f32>
  %r = nf.add %resf, %gx : !nf.row<f32>
  %n = nf.rms_norm %r weight %w eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %yh = nf.cast %y : !nf.row<f32> to !nf.row<f16>
  %rh = nf.cast %r : !nf.row<f32> to !nf.row<f16>
  nf.return %yh, %rh : !nf.row<f16>, !nf.row<f16>
}
