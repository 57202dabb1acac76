// RUN: not nf-opt %s -split-input-file 2>&1 | FileCheck %s --implicit-check-not="Stack dump" --implicit-check-not="PLEASE submit"

// Broken input makes nf-opt print a located error and exit non-zero; it
// never crashes. The first case used to crash nf.return's verifier.

// CHECK: error-exit.mlir:[[# @LINE + 1]]:1: error: 'nf.kernel' op result #0 must be a [B, S, D] tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8, a [B, S] tensor of f32 (one value per row), or a [B, S, D / G] tensor of f32 (one value per group), found 'f32'
nf.kernel @scalar_result(%x: tensor<?x?x?xf32>) -> f32 {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @int_result(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xi32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // CHECK: error-exit.mlir:[[# @LINE - 2]]:1: error: 'nf.kernel' op result #0 must be a [B, S, D] tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8, a [B, S] tensor of f32 (one value per row), or a [B, S, D / G] tensor of f32 (one value per group), found 'tensor<?x?x?xi32>'
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @d_mismatch(%x: tensor<?x?x1536xf32>, %w: tensor<3072xf32>)
    -> tensor<?x?x1536xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x1536xf32>
  // CHECK: error-exit.mlir:[[# @LINE + 1]]:8: error: 'nf.load' op D mismatch
  %1 = nf.load %w [D] : tensor<3072xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

// CHECK: error-exit.mlir:[[# @LINE + 1]]:1: error: custom op 'garbage' is unknown
garbage in, errors out
