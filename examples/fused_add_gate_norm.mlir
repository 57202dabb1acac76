// Replaces: fused_add_gate_norm, RMSNorm variant (sgl-project/sglang#19249,
//   Z-Image).
// Computes: out = x + gate * (RMSNorm(residual) * weight).
// Shapes: x, residual [B, S, D] bf16 (Z-Image B=1, S=4096, D=3840);
//   gate [B, 1, D] f32; weight [D] f32. D is dynamic.
//
// Rounding: f32 throughout, out is rounded to bf16 once. The normalized
// branch is not rounded before the gate multiply.
nf.kernel @fused_add_gate_norm(
    %x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
    %gate: tensor<?x1x?xf32>, %weight: tensor<?xf32>)
    -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %w = nf.load %weight [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %n = nf.rms_norm %resf weight %w eps 1.0e-6 : !nf.row<f32>
  %gn = nf.mul %g, %n : !nf.row<f32>
  %out = nf.add %xf, %gn : !nf.row<f32>
  %outb = nf.cast %out : !nf.row<f32> to !nf.row<bf16>
  nf.return %outb : !nf.row<bf16>
}
