//===- TorchEmitter.h - PyTorch fallback generated from nf IR ---*- C++ -*-===//
//
// Part of normfuse.
//
// Writes, for every nf.kernel of a module, a Python function that computes
// with PyTorch what the kernel computes, op for op, with the semantics of
// the reference interpreter (interpreter/Interpreter.cpp): the fallback for
// tensors the GPU kernel cannot take (CPU tensors). It is generated from the
// same IR as the kernel so that the two cannot drift apart.
//
// The generated file (one per module):
//
//   import torch
//   def <kernel>(<arguments, in IR order>):
//       """<what it computes>"""
//       ...
//       return (<result 0>, <result 1>, ...)
//   KERNELS = {"<kernel>": <kernel>, ...}
//
// Contract of each function: tensors on any device with any strides,
// scalars (rotary offsets) as Python ints; shapes and dtypes already
// validated by the caller. It returns a tuple of new contiguous tensors,
// one per kernel result, of the result's dtype and [B, S, D] shape, also for
// results the kernel writes in place (the caller copies them back). It never
// writes its arguments. docs/Rationale.md says what it guarantees.
//
//===----------------------------------------------------------------------===//

#ifndef NF_CODEGEN_TORCHEMITTER_H
#define NF_CODEGEN_TORCHEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::nf {

/// Writes the fallback of every kernel of `module` to `os`. The kernels must
/// be decomposed (-nf-decompose): composites are reported, not translated.
/// `sourceName` is the input file named in the header comment. On failure
/// an error naming the op or kernel goes to the context's diagnostic
/// handler and nothing is written.
LogicalResult emitTorchFallback(ModuleOp module, StringRef sourceName,
                                llvm::raw_ostream &os);

/// Decomposes a copy of `module` (which stays as it is) and returns its
/// fallback source. Diagnostics go to the context's handler.
FailureOr<std::string> generateTorchFallback(ModuleOp module,
                                             StringRef sourceName);

} // namespace mlir::nf

#endif // NF_CODEGEN_TORCHEMITTER_H
