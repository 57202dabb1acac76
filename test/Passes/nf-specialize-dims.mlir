// RUN: nf-opt %s -split-input-file -nf-specialize-dims=d=1536 -verify-diagnostics | FileCheck %s

// Every dimension a chain uses as D becomes 1536; B, S and the unit
// dimension of [B, 1, D] stay as they are.
// CHECK-LABEL: nf.kernel @mod
// CHECK-SAME: (%x: tensor<?x?x1536xbf16>, %g: tensor<?x1x1536xf32>, %w: tensor<1536xf32>)
// CHECK-SAME: -> tensor<?x?x1536xbf16>
nf.kernel @mod(%x: tensor<?x?x?xbf16>, %g: tensor<?x1x?xf32>, %w: tensor<?xf32>)
    -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %gr = nf.load %g [B, 1, D] : tensor<?x1x?xf32>
  %wr = nf.load %w [D] : tensor<?xf32>
  %y = nf.mul %xf, %gr : !nf.row<f32>
  %z = nf.mul %y, %wr : !nf.row<f32>
  %zb = nf.cast %z : !nf.row<f32> to !nf.row<bf16>
  nf.return %zb : !nf.row<bf16>
}

// -----

// An in-place result keeps the type of its argument.
// CHECK-LABEL: nf.kernel @inplace
// CHECK-SAME: (%q: tensor<?x?x1536xf32>) -> (tensor<?x?x1536xf32> {nf.in_place = 0 : i64})
nf.kernel @inplace(%q: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32> {nf.in_place = 0 : i64}) {
  %r = nf.load %q [B, S, D] : tensor<?x?x?xf32>
  %n = nf.rms_norm %r eps 1.0e-6 : !nf.row<f32>
  nf.return %n : !nf.row<f32>
}

// -----

// A static D that differs is an error, not a silent rewrite.
// expected-error@+1 {{has a static D = 128, which cannot be specialized to 1536}}
nf.kernel @fixed(%q: tensor<?x?x128xf32>) -> tensor<?x?x128xf32> {
  %r = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  nf.return %r : !nf.row<f32>
}
