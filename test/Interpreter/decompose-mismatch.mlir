// --check-decompose fails loudly when the decomposition changes a result.
// Here it does, by design of the two semantics: the composite rms_norm is
// evaluated in double, while its decomposition reduces mean(x^2) in f32,
// which overflows to inf for |x| ~ 1e30 and turns the row into zeros.
// RUN: not nf-interp --check-decompose %s 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err

// CHECK: @overflow result #0 f32 2x8x64: rel_error 1.00e+00 > 1e-05 MISMATCH
// CHECK: @fine result #0 f32 2x8x64: rel_error {{.*}} <= 1e-05 ok
// ERR: error: -nf-decompose changes the results beyond the tolerance

nf.kernel @overflow(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %big = nf.constant 1.0e+30 : f32
  %xs = nf.mul %xr, %big : !nf.row<f32>, f32
  %y = nf.rms_norm %xs eps 1.0e-6 : !nf.row<f32>
  nf.return %y : !nf.row<f32>
}

nf.kernel @fine(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %y = nf.rms_norm %xr eps 1.0e-6 : !nf.row<f32>
  nf.return %y : !nf.row<f32>
}
