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
// Type parameters: the activations' type and the modulation's (gate, scale,
// shift); `nf-compile --types act=bf16,f16,f32 --types mod=f32,act` builds the
// five combinations into one artifact (the runtime picks by the tensors'
// dtypes).
!act = bf16
!mod = f32
nf.kernel @scale_residual_layernorm_scale_shift(
    %x: tensor<?x?x?x!act>, %residual: tensor<?x?x?x!act>,
    %gate: tensor<?x1x?x!mod>, %scale: tensor<?x1x?x!mod>,
    %shift: tensor<?x1x?x!mod>)
    -> (tensor<?x?x?x!act>, tensor<?x?x?x!act>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?x!act>
  %gm = nf.load %gate [B, 1, D] : tensor<?x1x?x!mod>
  %scm = nf.load %scale [B, 1, D] : tensor<?x1x?x!mod>
  %shm = nf.load %shift [B, 1, D] : tensor<?x1x?x!mod>
  %g = nf.cast %gm : !nf.row<!mod> to !nf.row<f32>
  %sc = nf.cast %scm : !nf.row<!mod> to !nf.row<f32>
  %sh = nf.cast %shm : !nf.row<!mod> to !nf.row<f32>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<!act> to !nf.row<f32>
  %gx = nf.mul %g, %xf : !nf.row<f32>
  %r = nf.add %resf, %gx : !nf.row<f32>
  %n = nf.layer_norm %r eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<!act>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<!act>
  nf.return %yb, %rb : !nf.row<!act>, !nf.row<!act>
}
