//===- Interpreter.h - reference interpreter of nf kernels ------*- C++ -*-===//
//
// Part of normfuse.
//
// The executable definition of the semantics of an `nf.kernel`: GPU kernels
// generated from the same IR are tested against its results. It evaluates
// every op in double precision and rounds each result once to its element
// type (FloatFormats.h), exactly as the op descriptions in NfOps.td say. The
// composites (layer_norm, rms_norm, modulate, rope) are evaluated directly
// from their formulas, not through -nf-decompose, so that the decomposition
// can be checked against them.
//
// Nothing here asserts on bad input: every mismatch between the kernel and
// the tensors it is given is returned as an error message.
//
//===----------------------------------------------------------------------===//

#ifndef NF_INTERPRETER_INTERPRETER_H
#define NF_INTERPRETER_INTERPRETER_H

#include "dialect/Chains.h"
#include "dialect/NfOps.h"
#include "interpreter/FloatFormats.h"

#include "llvm/ADT/StringMap.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::nf {

/// A dense row-major tensor on the host. Values are held as doubles and are
/// assumed to be representable in `elementType`. Scalar kernel arguments are
/// rank-0 tensors (empty shape, one element).
struct HostTensor {
  ElementKind elementType = ElementKind::F32;
  std::vector<int64_t> shape;
  std::vector<double> data;

  HostTensor() = default;
  /// A zero-filled tensor.
  HostTensor(ElementKind elementType, std::vector<int64_t> shape);
  static HostTensor scalar(ElementKind elementType, double value);

  /// The product of the dimensions (1 for a scalar), or -1 if a dimension
  /// is negative.
  int64_t getNumElements() const;
};

/// "2x8x64", or "scalar" for rank 0.
std::string formatShape(ArrayRef<int64_t> shape);

/// Runs `kernel`, which must have passed the verifier (as any parsed kernel
/// has), on `args` (one per kernel argument, in order) and returns
/// one tensor per kernel result, each `[B, S, D]` of the chain writing it.
/// Results written in place (`nf.in_place`) are returned like the others;
/// the caller decides whether they replace the argument. On failure, `error`
/// says what was wrong (argument count, rank, dtype, static or inconsistent
/// sizes, S % F, rotary_dim > D, positions outside the cache, an op the
/// interpreter does not know).
FailureOr<SmallVector<HostTensor>>
interpretKernel(KernelOp kernel, ArrayRef<HostTensor> args, std::string &error);

/// Shapes for the arguments of `kernel`, to make inputs for it. A dimension
/// fixed in the argument's type keeps that size; for a dynamic one, each
/// chain takes the size of its symbol (B, S, D, F, MaxPos) from, in order,
/// a static dimension of the same symbol elsewhere in the chain, an
/// argument of the chain in `overrides` (full shapes by argument name),
/// then `sizes`. The rotary width of a cache is the rope's rotary_dim.
/// Scalars get an empty shape. Fails for an unknown or misranked override,
/// or a size that is needed and not given.
FailureOr<SmallVector<std::vector<int64_t>>>
deriveArgumentShapes(KernelOp kernel, const std::map<DimSymbol, int64_t> &sizes,
                     const llvm::StringMap<std::vector<int64_t>> &overrides,
                     std::string &error);

} // namespace mlir::nf

#endif // NF_INTERPRETER_INTERPRETER_H
