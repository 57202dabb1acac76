// Replaces: fused in-place QK RMSNorm + RoPE, NeoX layout, full rotary
//   (sgl-project/sglang#21440, JIT CUDA kernel qknorm_rope).
// Computes: q = rope_neox(RMSNorm(q) * wq, positions[t]), the same for k; the
//   pairs are (i, i + 64).
// Shapes: q, k [T, H, 128] bf16, read as [B, S, D] with B = T tokens and
//   S = H heads (FLUX H=24, Z-Image H=30, Qwen-Image H=32; T=4096); wq, wk
//   [128] bf16; cos_sin [max_pos, 128] f32 (cos in columns [0, 64), sin in
//   [64, 128)); positions [T] i64. head_dim is fixed at 128.
//
// q and k are overwritten in place (results 0 and 1 alias arguments 0 and 1).
// Rounding: the normalized row stays f32 through the rotation and is rounded
// to bf16 once, as the fused kernel keeps it in registers (the split path,
// QK norm kernel then RoPE kernel, rounds to bf16 in between).
nf.kernel @qk_rmsnorm_rope_neox(
    %q: tensor<?x?x128xbf16>, %k: tensor<?x?x128xbf16>,
    %wq: tensor<128xbf16>, %wk: tensor<128xbf16>,
    %cos_sin: tensor<?x128xf32>, %positions: tensor<?xi64>)
    -> (tensor<?x?x128xbf16> {nf.in_place = 0 : i64},
        tensor<?x?x128xbf16> {nf.in_place = 1 : i64}) {
  // Q chain.
  %qb = nf.load %q [B, S, D] : tensor<?x?x128xbf16>
  %wqb = nf.load %wq [D] : tensor<128xbf16>
  %qf = nf.cast %qb : !nf.row<bf16> to !nf.row<f32>
  %wqf = nf.cast %wqb : !nf.row<bf16> to !nf.row<f32>
  %qn = nf.rms_norm %qf weight %wqf eps 1.0e-6 : !nf.row<f32>
  %qr = nf.rope neox %qn, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %qo = nf.cast %qr : !nf.row<f32> to !nf.row<bf16>
  // K chain: shares only kernel arguments (cache, positions) with Q.
  %kb = nf.load %k [B, S, D] : tensor<?x?x128xbf16>
  %wkb = nf.load %wk [D] : tensor<128xbf16>
  %kf = nf.cast %kb : !nf.row<bf16> to !nf.row<f32>
  %wkf = nf.cast %wkb : !nf.row<bf16> to !nf.row<f32>
  %kn = nf.rms_norm %kf weight %wkf eps 1.0e-6 : !nf.row<f32>
  %kr = nf.rope neox %kn, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %ko = nf.cast %kr : !nf.row<f32> to !nf.row<bf16>
  nf.return %qo, %ko : !nf.row<bf16>, !nf.row<bf16>
}
