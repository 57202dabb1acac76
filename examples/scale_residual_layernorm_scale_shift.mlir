// Replaces: ScaleResidualNormScaleShift, LayerNorm without affine
//   (sgl-project/sglang#14289, CUDA kernel fused_scale_residual_norm_scale_shift).
// Computes: r = residual + gate * x; y = LayerNorm(r) * (1 + scale) + shift;
//   outputs (y, r).
// Shapes: x, residual [B, S, D] bf16; gate, scale, shift [B, 1, D] f32
//   (Wan2.1 B=1, S=32760, D=1536; HunyuanVideo S=115200, D=3072). D is dynamic.
//
// Rounding: everything is computed in f32. r is rounded to bf16 once, for its
// output only; the LayerNorm consumes the unrounded f32 r (what a fused kernel
// holding r in registers computes). To match a reference that normalizes the
// stored bf16 r instead, normalize `nf.cast %rb : !nf.row<bf16> to !nf.row<f32>`.
nf.kernel @scale_residual_layernorm_scale_shift(
    %x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
    %gate: tensor<?x1x?xf32>, %scale: tensor<?x1x?xf32>,
    %shift: tensor<?x1x?xf32>)
    -> (tensor<?x?x?xbf16>, tensor<?x?x?xbf16>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %gx = nf.mul %g, %xf : !nf.row<f32>
  %r = nf.add %resf, %gx : !nf.row<f32>
  %n = nf.layer_norm %r eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}
