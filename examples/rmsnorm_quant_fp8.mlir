// Replaces: RMSNorm followed by dynamic per-token FP8 quantization (vLLM's
//   rms_norm_dynamic_per_token_quant with an fp8 output; the norm kernel
//   plus a separate quantization kernel that reads the activation again).
// Computes: y = RMSNorm(x) * weight, eps 1e-6; per token
//   scale = max(max|y| / 448, 1 / (448 * 512)); q = fp8_e4m3(y / scale).
//   Outputs (q, scale): q [B, S, D] f8E4M3FN, scale [B, S] f32, so that
//   q * scale approximates y (what an FP8 GEMM takes as its input scale).
// Shapes: x [B, S, D] bf16; weight [D] bf16. D is dynamic.
//
// Rounding: the norm, the weight multiply, the row maximum and the scale are
// f32 (y is not rounded to bf16 first); y / scale multiplies by the
// correctly rounded reciprocal of the scale (nf.div); the cast to f8E4M3FN
// rounds to nearest even and saturates at +-448 (nf.cast). The lower bound
// of the scale (vLLM's) keeps an all-zero row finite (q = 0).
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @rmsnorm_quant_fp8(%x: tensor<?x?x?x!act>, %weight: tensor<?x!act>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %wb = nf.load %weight [D] : tensor<?x!act>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<!act> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %qmax = nf.constant 448.0 : f32
  %s0 = nf.div %amax, %qmax : f32
  %smin = nf.constant 4.35965e-06 : f32
  %scale = nf.max %s0, %smin : f32
  %q = nf.div %y, %scale : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %scale : !nf.row<f8E4M3FN>, f32
}
