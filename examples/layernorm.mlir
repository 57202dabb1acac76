// Replaces: plain LayerNorm forward with weight and bias (Quack layernorm_fwd,
//   torch.nn.functional.layer_norm of a bf16 activation with f32 parameters).
// Computes: y = LayerNorm(x) * weight + bias, eps 1e-6.
// Shapes: x [B, S, D] bf16; weight, bias [D] f32. D is dynamic (the
//   roofline benchmark, bench/roofline.py, runs it from D = 64 to 65536).
//
// Rounding: x is widened to f32 (exact); mean, centred variance, scaling,
// weight and bias are f32; y is rounded to bf16 once (what
// F.layer_norm(x.float(), ..., weight, bias).to(bf16) computes).
nf.kernel @layernorm(%x: tensor<?x?x?xbf16>, %weight: tensor<?xf32>,
                     %bias: tensor<?xf32>)
    -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %w = nf.load %weight [D] : tensor<?xf32>
  %b = nf.load %bias [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.layer_norm %xf weight %w bias %b eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
