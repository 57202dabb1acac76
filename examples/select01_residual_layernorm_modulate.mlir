// Replaces: fuse_residual_layernorm_scale_shift_gate_select01_kernel
//   (sgl-project/sglang#21318, Triton kernel for Qwen-Image).
// Computes: r = residual + residual_gate * x; with k = index[b, s] in {0, 1}:
//   y = LayerNorm(r) * (1 + scale_k[b]) + shift_k[b]; gate_out = gate_k[b];
//   outputs (y, r, gate_out).
// Shapes: x, residual, residual_gate [B, S, D] bf16 (2, 2048, 3072; the
//   residual gate is the gate_out of the previous select01 kernel);
//   index [B, S] i32; scale0/1, shift0/1, gate0/1 [B, D] bf16. D is dynamic.
//
// Rounding: f32 throughout. r is rounded to bf16 for its output only; the
// LayerNorm consumes the unrounded f32 r, as the Triton kernel does.
// gate_out is copied without conversion.
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @select01_residual_layernorm_modulate(
    %x: tensor<?x?x?x!act>, %residual: tensor<?x?x?x!act>,
    %residual_gate: tensor<?x?x?x!act>, %index: tensor<?x?xi32>,
    %scale0: tensor<?x?x!act>, %shift0: tensor<?x?x!act>,
    %gate0: tensor<?x?x!act>, %scale1: tensor<?x?x!act>,
    %shift1: tensor<?x?x!act>, %gate1: tensor<?x?x!act>)
    -> (tensor<?x?x?x!act>, tensor<?x?x?x!act>, tensor<?x?x?x!act>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?x!act>
  %rgb = nf.load %residual_gate [B, S, D] : tensor<?x?x?x!act>
  %scb = nf.select_load %index, %scale0, %scale1 [B, D]
      : tensor<?x?xi32>, tensor<?x?x!act>
  %shb = nf.select_load %index, %shift0, %shift1 [B, D]
      : tensor<?x?xi32>, tensor<?x?x!act>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<!act> to !nf.row<f32>
  %rg = nf.cast %rgb : !nf.row<!act> to !nf.row<f32>
  %sc = nf.cast %scb : !nf.row<!act> to !nf.row<f32>
  %sh = nf.cast %shb : !nf.row<!act> to !nf.row<f32>
  %gx = nf.mul %rg, %xf : !nf.row<f32>
  %r = nf.add %resf, %gx : !nf.row<f32>
  %n = nf.layer_norm %r eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<!act>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<!act>
  %g = nf.select_load %index, %gate0, %gate1 [B, D]
      : tensor<?x?xi32>, tensor<?x?x!act>
  nf.return %yb, %rb, %g : !nf.row<!act>, !nf.row<!act>, !nf.row<!act>
}
