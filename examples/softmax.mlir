// Replaces: row softmax of an f16 tensor (Quack softmax_fwd,
//   torch.softmax(x.float(), -1).to(f16)); attention-score style rows.
// Computes: m = max(x); e = exp(x - m); y = e / sum(e).
// Shapes: x [B, S, D] f16. D is dynamic (the roofline benchmark,
//   bench/roofline.py, runs it from D = 64 to 65536).
//
// Rounding: x is widened to f32 (exact); the max, the shifted exponentials,
// their sum and the division are f32; y is rounded to f16 once. Subtracting
// the row max keeps exp from overflowing for any finite x.
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = f16
nf.kernel @softmax(%x: tensor<?x?x?x!act>) -> tensor<?x?x?x!act> {
  %xh = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %xf = nf.cast %xh : !nf.row<!act> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yh = nf.cast %y : !nf.row<f32> to !nf.row<!act>
  nf.return %yh : !nf.row<!act>
}
