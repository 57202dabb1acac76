// Parses, but fails verification: the row has the wrong element type.
nf.kernel @k(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xbf16> {
  %r = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %r : !nf.row<f32>
}
