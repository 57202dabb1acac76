//===- Passes.h - nf passes -------------------------------------*- C++ -*-===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#ifndef NF_PASSES_PASSES_H
#define NF_PASSES_PASSES_H

#include "dialect/NfOps.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace nf {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Patterns that rewrite the composite ops into primitives.
void populateDecomposePatterns(RewritePatternSet &patterns);

/// The rewrites of -nf-factor-row-scalars on every kernel in `root`;
/// returns whether any applied. nf-lower-to-gpu applies them to the
/// variants they pay in.
bool factorRowScalars(Operation *root);

/// The exponential both -nf-lower-to-gpu and -nf-lower-row-reductions emit:
/// 2^x on MUFU.EX2, subnormal results flushed to zero (docs/Rationale.md,
/// "Exponentials flush subnormal results").
inline constexpr llvm::StringLiteral kEx2Intrinsic =
    "llvm.nvvm.ex2.approx.ftz.f32";

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace nf
} // namespace mlir

#endif // NF_PASSES_PASSES_H
