// Replaces: fused_norm_tanh_mul_add_norm_scale (sgl-project/sglang#18762,
//   CuTe DSL kernel for Z-Image, limited there to D % 256 == 0, D <= 8192).
// Computes: r = residual + tanh(gate) * (RMSNorm1(x) * weight1);
//   y = (RMSNorm2(r) * weight2) * (1 + scale); outputs (y, r).
// Shapes: x, residual [B, S, D] bf16 (Z-Image B=1, S~4096, D=3840);
//   gate, scale [B, 1, D] f32; weight1, weight2 [D] f32. D is dynamic.
//
// Rounding, deliberately unlike the other residual examples: r is rounded to
// bf16 and the second RMSNorm normalizes the *rounded* r, as an unfused bf16
// implementation does (r is a bf16 tensor between its two steps). y is then
// consistent with the r the next layer reads.
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @norm_tanh_mul_add_norm_scale(
    %x: tensor<?x?x?x!act>, %residual: tensor<?x?x?x!act>,
    %gate: tensor<?x1x?xf32>, %weight1: tensor<?xf32>,
    %weight2: tensor<?xf32>, %scale: tensor<?x1x?xf32>)
    -> (tensor<?x?x?x!act>, tensor<?x?x?x!act>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?x!act>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %w1 = nf.load %weight1 [D] : tensor<?xf32>
  %w2 = nf.load %weight2 [D] : tensor<?xf32>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<!act> to !nf.row<f32>
  %n1 = nf.rms_norm %xf weight %w1 eps 1.0e-6 : !nf.row<f32>
  %tg = nf.tanh %g : !nf.row<f32>
  %tn = nf.mul %tg, %n1 : !nf.row<f32>
  %r = nf.add %resf, %tn : !nf.row<f32>
  // The rounding point: r as stored.
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<!act>
  %rr = nf.cast %rb : !nf.row<!act> to !nf.row<f32>
  %n2 = nf.rms_norm %rr weight %w2 eps 1.0e-6 : !nf.row<f32>
  %one = nf.constant 1.0 : f32
  %sc1 = nf.add %sc, %one : !nf.row<f32>, f32
  %y = nf.mul %n2, %sc1 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<!act>
  nf.return %yb, %rb : !nf.row<!act>, !nf.row<!act>
}
