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
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @fused_add_rmsnorm(
    %x: tensor<?x?x?x!act>, %residual: tensor<?x?x?x!act>,
    %weight: tensor<?x!act>)
    -> (tensor<?x?x?x!act>, tensor<?x?x?x!act> {nf.in_place = 1 : i64}) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?x!act>
  %wb = nf.load %weight [D] : tensor<?x!act>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<!act> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<!act> to !nf.row<f32>
  %r = nf.add %xf, %resf : !nf.row<f32>
  // The rounding point: r as stored in the residual stream.
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<!act>
  %rr = nf.cast %rb : !nf.row<!act> to !nf.row<f32>
  %y = nf.rms_norm %rr weight %wf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<!act>
  nf.return %yb, %rb : !nf.row<!act>, !nf.row<!act>
}
