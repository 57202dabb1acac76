// Replaces: fused_norm_tanh_mul_add (sgl-project/sglang#18762, CuTe DSL
//   kernel for Z-Image, limited there to D % 256 == 0 and D <= 8192).
// Computes: r = residual + tanh(gate) * (RMSNorm(x) * weight); outputs r.
// Shapes: x, residual [B, S, D] bf16 (Z-Image B=1, S~4096, D=3840);
//   gate [B, 1, D] f32; weight [D] f32. D is dynamic.
//
// Rounding: f32 throughout, r is rounded to bf16 once.
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @norm_tanh_mul_add(
    %x: tensor<?x?x?x!act>, %residual: tensor<?x?x?x!act>,
    %gate: tensor<?x1x?xf32>, %weight: tensor<?xf32>)
    -> tensor<?x?x?x!act> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?x!act>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %w = nf.load %weight [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<!act> to !nf.row<f32>
  %n = nf.rms_norm %xf weight %w eps 1.0e-6 : !nf.row<f32>
  %tg = nf.tanh %g : !nf.row<f32>
  %tn = nf.mul %tg, %n : !nf.row<f32>
  %r = nf.add %resf, %tn : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<!act>
  nf.return %rb : !nf.row<!act>
}
