nf.kernel @k(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %r = nf.load %x [B, S, Q] : tensor<?x?x?xf32>
  nf.return %r : !nf.row<f32>
}
