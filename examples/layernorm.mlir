// Replaces: plain LayerNorm forward with weight and bias (Quack layernorm_fwd,
//   torch.nn.functional.layer_norm of a bf16 activation with f32 parameters).
// Computes: y = LayerNorm(x) * weight + bias, eps 1e-6.
// Shapes: x [B, S, D] bf16; weight, bias [D] f32. D is dynamic (the
//   roofline benchmark, bench/roofline.py, runs it from D = 64 to 65536).
//
// Rounding: x is widened to f32 (exact); mean, centred variance, scaling,
// weight and bias are f32; y is rounded to bf16 once (what
// F.layer_norm(x.float(), ..., weight, bias).to(bf16) computes).
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @layernorm(%x: tensor<?x?x?x!act>, %weight: tensor<?xf32>,
                     %bias: tensor<?xf32>)
    -> tensor<?x?x?x!act> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %w = nf.load %weight [D] : tensor<?xf32>
  %b = nf.load %bias [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<!act>
  nf.return %yb : !nf.row<!act>
}
