//===- Passes.td - nf passes -------------------------------*- tablegen -*-===//
//
// Part of normfuse. Every pass of the compiler, in pipeline order.
//
//===----------------------------------------------------------------------===//

#ifndef NF_PASSES_TD
#define NF_PASSES_TD

include "mlir/Pass/PassBase.td"

def NfDecompose : Pass<"nf-decompose"> {
  let summary = "rewrite layer_norm, rms_norm and modulate into primitives";
  let description = [{
    Replaces each composite op by casts, reductions and elementwise ops that
    compute the same function, so that later passes and the interpreter see
    a small set of primitives. Composites compute in f32 and round once: the
    decomposition casts f16/bf16 operands to f32 (exact), computes in f32 and
    casts the result back. LayerNorm takes the variance as a second pass over
    the centred row, never as E[x^2] - E[x]^2.

    Before:
    ```mlir
    %y = nf.rms_norm %x weight %w eps 1.000000e-06 : !nf.row<f32>
    ```
    After:
    ```mlir
    %ms = nf.reduce mean_sq %x : !nf.row<f32>
    %eps = nf.constant 1.000000e-06 : f32
    %v = nf.add %ms, %eps : f32
    %rstd = nf.rsqrt %v : f32
    %n = nf.mul %x, %rstd : !nf.row<f32>, f32
    %y = nf.mul %n, %w : !nf.row<f32>
    ```
  }];
  let dependentDialects = ["::mlir::nf::NfDialect"];
}

#endif // NF_PASSES_TD
