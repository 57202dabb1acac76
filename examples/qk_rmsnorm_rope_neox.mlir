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
// The activation type: `nf-compile --types act=bf16,f16` builds both
// into one artifact (the runtime picks by the tensors' dtypes).
!act = bf16
nf.kernel @qk_rmsnorm_rope_neox(
    %q: tensor<?x?x128x!act>, %k: tensor<?x?x128x!act>,
    %wq: tensor<128x!act>, %wk: tensor<128x!act>,
    %cos_sin: tensor<?x128xf32>, %positions: tensor<?xi64>)
    -> (tensor<?x?x128x!act> {nf.in_place = 0 : i64},
        tensor<?x?x128x!act> {nf.in_place = 1 : i64}) {
  // Q chain.
  %qb = nf.load %q [B, S, D] : tensor<?x?x128x!act>
  %wqb = nf.load %wq [D] : tensor<128x!act>
  %qf = nf.cast %qb : !nf.row<!act> to !nf.row<f32>
  %wqf = nf.cast %wqb : !nf.row<!act> to !nf.row<f32>
  %qn = nf.rms_norm %qf weight %wqf eps 1.0e-6 : !nf.row<f32>
  %qr = nf.rope neox %qn, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %qo = nf.cast %qr : !nf.row<f32> to !nf.row<!act>
  // K chain: shares only kernel arguments (cache, positions) with Q.
  %kb = nf.load %k [B, S, D] : tensor<?x?x128x!act>
  %wkb = nf.load %wk [D] : tensor<128x!act>
  %kf = nf.cast %kb : !nf.row<!act> to !nf.row<f32>
  %wkf = nf.cast %wkb : !nf.row<!act> to !nf.row<f32>
  %kn = nf.rms_norm %kf weight %wkf eps 1.0e-6 : !nf.row<f32>
  %kr = nf.rope neox %kn, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %ko = nf.cast %kr : !nf.row<f32> to !nf.row<!act>
  nf.return %qo, %ko : !nf.row<!act>, !nf.row<!act>
}
