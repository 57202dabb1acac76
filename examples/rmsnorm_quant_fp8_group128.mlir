// Replaces: RMSNorm followed by per-group (block-scaled) FP8 quantization,
//   one scale per 128 elements of each token (the activation quantization of
//   DeepSeek-V3-style FP8 GEMMs: the norm kernel plus a per-token-group
//   quantization kernel, e.g. vLLM's per_token_group_quant_fp8, that reads
//   the activation again).
// Computes: y = RMSNorm(x) * weight, eps 1e-6; per group of 128 elements
//   scale = max(max|y| / 448, 1 / (448 * 512)); q = fp8_e4m3(y / scale).
//   Outputs (q, scale): q [B, S, D] f8E4M3FN, scale [B, S, D / 128] f32, so
//   that q * scale approximates y, block by block.
// Shapes: x [B, S, D] bf16; weight [D] bf16. D is dynamic, a multiple of 128
//   (the launch refuses other D).
//
// Rounding: as in rmsnorm_quant_fp8.mlir, per group instead of per token:
// the norm, the weight multiply, each group's maximum and its scale are f32;
// y / scale multiplies by the correctly rounded reciprocal of the group's
// scale (nf.div); the cast rounds to nearest even and saturates at +-448.
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @rmsnorm_quant_fp8_group128(%x: tensor<?x?x?x!act>,
                                      %weight: tensor<?x!act>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %wb = nf.load %weight [D] : tensor<?x!act>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<!act> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a group 128 : !nf.row<f32>
  %qmax = nf.constant 448.0 : f32
  %s0 = nf.div %amax, %qmax : !nf.group<f32, 128>, f32
  %smin = nf.constant 4.35965e-06 : f32
  %scale = nf.max %s0, %smin : !nf.group<f32, 128>, f32
  %q = nf.div %y, %scale : !nf.row<f32>, !nf.group<f32, 128>
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %scale : !nf.row<f8E4M3FN>, !nf.group<f32, 128>
}
