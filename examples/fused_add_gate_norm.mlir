// Replaces: fused_add_gate_norm, RMSNorm variant (sgl-project/sglang#19249,
//   Z-Image).
// Computes: out = x + gate * (RMSNorm(residual) * weight).
// Shapes: x, residual [B, S, D] bf16 (Z-Image B=1, S=4096, D=3840);
//   gate [B, 1, D] f32; weight [D] f32. D is dynamic.
//
// Rounding: f32 throughout, out is rounded to bf16 once. The normalized
// branch is not rounded before the gate multiply.
// Type parameters: the activations' type and the gate's and weight's;
// `nf-compile --types act=bf16,f16,f32 --types mod=f32,act` builds the five
// combinations into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
!mod = f32
nf.kernel @fused_add_gate_norm(
    %x: tensor<?x?x?x!act>, %residual: tensor<?x?x?x!act>,
    %gate: tensor<?x1x?x!mod>, %weight: tensor<?x!mod>)
    -> tensor<?x?x?x!act> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?x!act>
  %gm = nf.load %gate [B, 1, D] : tensor<?x1x?x!mod>
  %wm = nf.load %weight [D] : tensor<?x!mod>
  %g = nf.cast %gm : !nf.row<!mod> to !nf.row<f32>
  %w = nf.cast %wm : !nf.row<!mod> to !nf.row<f32>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<!act> to !nf.row<f32>
  %n = nf.rms_norm %resf weight %w eps 1.0e-6 : !nf.row<f32>
  %gn = nf.mul %g, %n : !nf.row<f32>
  %out = nf.add %xf, %gn : !nf.row<f32>
  %outb = nf.cast %out : !nf.row<f32> to !nf.row<!act>
  nf.return %outb : !nf.row<!act>
}
