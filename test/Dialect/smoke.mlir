// RUN: nf-opt %s | nf-opt | FileCheck %s
// CHECK-LABEL: nf.kernel @k
// CHECK: nf.load %x [B, S, D]
nf.kernel @k(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %r = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %r : !nf.row<f32>
}
