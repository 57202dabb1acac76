// Replaces: ScaleResidualNormScaleShift, RMSNorm without weight
//   (sgl-project/sglang#14289, fused_scale_residual_norm_scale_shift with
//   norm_type="rms").
// Computes: r = residual + gate * x; y = RMSNorm(r) * (1 + scale) + shift;
//   outputs (y, r).
// Shapes: x, residual [B, S, D] bf16; gate, scale, shift [B, 1, D] f32
//   (B=1..2, S up to 115200, D=1536..3072). D is dynamic.
//
// Rounding: f32 throughout; r is rounded to bf16 for its output only and the
// RMSNorm sees the unrounded f32 r.
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @scale_residual_rmsnorm_scale_shift(
    %x: tensor<?x?x?x!act>, %residual: tensor<?x?x?x!act>,
    %gate: tensor<?x1x?xf32>, %scale: tensor<?x1x?xf32>,
    %shift: tensor<?x1x?xf32>)
    -> (tensor<?x?x?x!act>, tensor<?x?x?x!act>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?x!act>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<!act> to !nf.row<f32>
  %gx = nf.mul %g, %xf : !nf.row<f32>
  %r = nf.add %resf, %gx : !nf.row<f32>
  %n = nf.rms_norm %r eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<!act>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<!act>
  nf.return %yb, %rb : !nf.row<!act>, !nf.row<!act>
}
