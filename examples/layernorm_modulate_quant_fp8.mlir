// Replaces: the DiT block's LayerNorm + adaptive modulation followed by a
//   per-token FP8 quantization of the result for an FP8 GEMM (today the
//   modulation kernel and a quantization kernel that reads its output
//   again).
// Computes: y = LayerNorm(x) * (1 + scale) + shift, eps 1e-6, no affine;
//   per token s = max(max|y| / 448, 1 / (448 * 512)); q = fp8_e4m3(y / s).
//   Outputs (q, s): q [B, S, D] f8E4M3FN, s [B, S] f32.
// Shapes: x [B, S, D] bf16; scale, shift [B, 1, D] f32 (one modulation
//   vector per batch entry, DiT's adaLN output). D is dynamic.
//
// Rounding: x is widened to f32 (exact); the norm, the modulation, the row
// maximum and the scale are f32 (y is not rounded to bf16 first);
// y / s multiplies by the correctly rounded reciprocal of s (nf.div); the
// cast to f8E4M3FN rounds to nearest even and saturates at +-448.
// The activation type: `nf-compile --types act=bf16,f16,f32` builds all three
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @layernorm_modulate_quant_fp8(%x: tensor<?x?x?x!act>,
    %scale: tensor<?x1x?xf32>, %shift: tensor<?x1x?xf32>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?xf32>) {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?x!act>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<!act> to !nf.row<f32>
  %n = nf.layer_norm %xf eps 1.0e-6 : !nf.row<f32>
  %y = nf.modulate %n, %sc, %sh : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %qmax = nf.constant 448.0 : f32
  %s0 = nf.div %amax, %qmax : f32
  %smin = nf.constant 4.35965e-06 : f32
  %s = nf.max %s0, %smin : f32
  %q = nf.div %y, %s : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %s : !nf.row<f8E4M3FN>, f32
}
