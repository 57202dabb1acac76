// Replaces: fused add + RMSNorm with the residual updated in place, then
//   dynamic per-token int8 quantization (the fused add-RMSNorm-quant
//   kernels of LLM serving engines; vLLM's
//   rms_norm_dynamic_per_token_quant with residual and an int8 output).
// Computes: r = x + residual; residual <- r (in place);
//   y = RMSNorm(r) * weight, eps 1e-6; per token
//   scale = max(max|y| / 127, 1 / (127 * 512)); q = int8(y / scale).
//   Outputs (q, r, scale): q [B, S, D] i8, r [B, S, D] (in place), scale
//   [B, S] f32.
// Shapes: x, residual [B, S, D] bf16; weight [D] bf16. D is dynamic.
//
// Rounding: the sum is computed in f32 and rounded to bf16, and the RMSNorm
// reads the rounded r (what the next layer reads from the residual
// stream); the norm, weight multiply, row maximum and scale are f32;
// y / scale multiplies by the correctly rounded reciprocal of the scale
// (nf.div); the cast to i8 rounds to nearest even and saturates to
// [-128, 127] (nf.cast).
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @fused_add_rmsnorm_quant_i8(
    %x: tensor<?x?x?x!act>, %residual: tensor<?x?x?x!act>,
    %weight: tensor<?x!act>)
    -> (tensor<?x?x?xi8>, tensor<?x?x?x!act> {nf.in_place = 1 : i64},
        tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %resb = nf.load %residual [B, S, D] : tensor<?x?x?x!act>
  %wb = nf.load %weight [D] : tensor<?x!act>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %resf = nf.cast %resb : !nf.row<!act> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<!act> to !nf.row<f32>
  %r = nf.add %xf, %resf : !nf.row<f32>
  %rb = nf.cast %r : !nf.row<f32> to !nf.row<!act>
  %rr = nf.cast %rb : !nf.row<!act> to !nf.row<f32>
  %y = nf.rms_norm %rr weight %wf eps 1.0e-6 : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %qmax = nf.constant 127.0 : f32
  %s0 = nf.div %amax, %qmax : f32
  %smin = nf.constant 1.53789e-05 : f32
  %scale = nf.max %s0, %smin : f32
  %q = nf.div %y, %scale : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<i8>
  nf.return %q8, %rb, %scale : !nf.row<i8>, !nf.row<!act>, f32
}
