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
nf.kernel @select01_residual_layernorm_modulate(
    %x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
    %residual_gate: tensor<?x?x?xbf16>, %index: tensor<?x?xi32>,
    %scale0: tensor<?x?xbf16>, %shift0: tensor<?x?xbf16>,
    %gate0: tensor<?x?xbf16>, %scale1: tensor<?x?xbf16>,
    %shift1: tensor<?x?xbf16>, %gate1: tensor<?x?xbf16>)
    -> (tensor<?x?x?xbf16>, tensor<?x?x?xbf16>, tensor<?x?x?xbf16>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %rgb = nf.load %residual_gate [B, S, D] : tensor<?x?x?xbf16>
  %scb = nf.select_load %index, %scale0, %scale1 [B, D]
      : tensor<?x?xi32>, tensor<?x?xbf16>
  %shb = nf.select_load %index, %shift0, %shift1 [B, D]
      : tensor<?x?xi32>, tensor<?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %rg = nf.cast %rgb : !nf.row<bf16> to !nf.row<f32>
  %sc = nf.cast %scb : !nf.row<bf16> to !nf.row<f32>
  %sh = nf.cast %shb : !nf.row<bf16> to !nf.row<f32>
  %gx = nf.mul %rg, %xf : !nf.row<f32>
  %r = nf.add %resf, %gx : !nf.row<f32>
  %n = nf.layer_norm %r eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %g = nf.select_load %index, %gate0, %gate1 [B, D]
      : tensor<?x?xi32>, tensor<?x?xbf16>
  nf.return %yb, %rb, %g : !nf.row<bf16>, !nf.row<bf16>, !nf.row<bf16>
}
