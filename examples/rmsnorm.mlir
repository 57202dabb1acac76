// Replaces: plain RMSNorm forward with a weight (Quack rmsnorm_fwd, the
//   RMSNorm of LLaMA-style models; torch.compile of the same formula).
// Computes: y = RMSNorm(x) * weight, eps 1e-6.
// Shapes: x [B, S, D] bf16; weight [D] bf16. D is dynamic (the roofline
//   benchmark, bench/roofline.py, runs it from D = 64 to 65536).
//
// Rounding: x and weight are widened to f32 (exact), the mean of squares,
// the scaling and the weight multiply are f32, and y is rounded to bf16 once
// (what Quack's kernel and torch.compile of
// `(x.float() * rsqrt(mean(x.float()^2) + eps) * w.float()).to(bf16)` do).
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @rmsnorm(%x: tensor<?x?x?x!act>, %weight: tensor<?x!act>)
    -> tensor<?x?x?x!act> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %wb = nf.load %weight [D] : tensor<?x!act>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<!act> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<!act>
  nf.return %yb : !nf.row<!act>
}
