// examples/qk_rmsnorm_rope_neox.mlir with the row length D (and the weights'
// and the cache's widths) left dynamic, for the runtime tests
// (nf_runtime_test_artifact qk_neox_dynamic_d): a kernel that writes a
// rotary result in place must hold its rows in registers, so every variant
// of its family is bounded and a row longer than the longest has none.
nf.kernel @qk_rmsnorm_rope_neox_dynamic_d(
    %q: tensor<?x?x?xbf16>, %k: tensor<?x?x?xbf16>,
    %wq: tensor<?xbf16>, %wk: tensor<?xbf16>,
    %cos_sin: tensor<?x?xf32>, %positions: tensor<?xi64>)
    -> (tensor<?x?x?xbf16> {nf.in_place = 0 : i64},
        tensor<?x?x?xbf16> {nf.in_place = 1 : i64}) {
  // Q chain.
  %qb = nf.load %q [B, S, D] : tensor<?x?x?xbf16>
  %wqb = nf.load %wq [D] : tensor<?xbf16>
  %qf = nf.cast %qb : !nf.row<bf16> to !nf.row<f32>
  %wqf = nf.cast %wqb : !nf.row<bf16> to !nf.row<f32>
  %qn = nf.rms_norm %qf weight %wqf eps 1.0e-6 : !nf.row<f32>
  %qr = nf.rope neox %qn, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x?xf32>, tensor<?xi64>
  %qo = nf.cast %qr : !nf.row<f32> to !nf.row<bf16>
  // K chain.
  %kb = nf.load %k [B, S, D] : tensor<?x?x?xbf16>
  %wkb = nf.load %wk [D] : tensor<?xbf16>
  %kf = nf.cast %kb : !nf.row<bf16> to !nf.row<f32>
  %wkf = nf.cast %wkb : !nf.row<bf16> to !nf.row<f32>
  %kn = nf.rms_norm %kf weight %wkf eps 1.0e-6 : !nf.row<f32>
  %kr = nf.rope neox %kn, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x?xf32>, tensor<?xi64>
  %ko = nf.cast %kr : !nf.row<f32> to !nf.row<bf16>
  nf.return %qo, %ko : !nf.row<bf16>, !nf.row<bf16>
}
