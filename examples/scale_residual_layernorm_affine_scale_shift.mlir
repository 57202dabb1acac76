// Replaces: ScaleResidualNormScaleShift, LayerNorm with weight and bias, fp32
//   (sgl-project/sglang#14289, fused_scale_residual_norm_scale_shift; the
//   "#1 fp32, LN weight+bias, gate [1, 1, D]" case of ANCHORS.md).
// Computes: r = residual + gate * x;
//   y = (LayerNorm(r) * weight + bias) * (1 + scale) + shift; outputs (y, r).
// Shapes: x, residual [B, S, D] f32 (B=1, S=32760, D=1536); gate [1, 1, D]
//   passed as a [D] view (gate.view(-1)); weight, bias [D] f32; scale, shift
//   [B, 1, D] f32. D is dynamic.
//
// The gate is loaded as [D]: loading the [1, 1, D] tensor as [B, 1, D] would
// tie its leading 1 to B and refuse B > 1. Everything is f32: every op rounds
// to f32, there are no casts.
nf.kernel @scale_residual_layernorm_affine_scale_shift(
    %x: tensor<?x?x?xf32>, %residual: tensor<?x?x?xf32>, %gate: tensor<?xf32>,
    %weight: tensor<?xf32>, %bias: tensor<?xf32>,
    %scale: tensor<?x1x?xf32>, %shift: tensor<?x1x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %res = nf.load %residual [B, S, D] : tensor<?x?x?xf32>
  %g = nf.load %gate [D] : tensor<?xf32>
  %w = nf.load %weight [D] : tensor<?xf32>
  %b = nf.load %bias [D] : tensor<?xf32>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %gx = nf.mul %g, %xr : !nf.row<f32>
  %r = nf.add %res, %gx : !nf.row<f32>
  %n = nf.layer_norm %r weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  nf.return %y, %r : !nf.row<f32>, !nf.row<f32>
}
