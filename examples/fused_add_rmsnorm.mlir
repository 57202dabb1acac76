// Replaces: fused_add_rms_norm of LLM serving (vLLM's CUDA kernel, Quack
//   rmsnorm_fwd with residual=..., FlashInfer fused_add_rmsnorm): the
//   residual stream is updated in place and normalized in one pass.
// Computes: r = x + residual; residual <- r (in place);
//   y = RMSNorm(r) * weight, eps 1e-6; outputs (y, r).
// Shapes: x, residual [B, S, D] bf16; weight [D] bf16. D is dynamic (the
//   roofline benchmark, bench/roofline.py, runs it from D = 64 to 65536).
//
// residual is overwritten in place (result 1 aliases argument 1).
// Rounding: the sum is computed in f32 and rounded to bf16, and the RMSNorm
// reads the *rounded* r: the residual stream is a bf16 tensor, and vLLM's
// kernel (a bf16 add) normalizes what it stores, so y is consistent with the
// residual the next layer reads. (Quack's kernel normalizes the f32 sum
// before rounding it for storage; the two differ by far less than the bf16
// tolerance.) The norm and the weight multiply are f32; y is rounded once.
nf.kernel @fused_add_rmsnorm(
    %x: tensor<?x?x?xbf16>, %residual: tensor<?x?x?xbf16>,
    %weight: tensor<?xbf16>)
    -> (tensor<?x?x?xbf16>, tensor<?x?x?xbf16> {nf.in_place = 1 : i64}) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %weight [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %r = nf.add %xf, %resf : !nf.row<f32>
  // The rounding point: r as stored in the residual stream.
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<bf16>
  %rr = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %rr weight %wf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb, %rb : !nf.row<bf16>, !nf.row<bf16>
}
