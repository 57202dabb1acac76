//===- KernelABI.h - parameters of a generated GPU kernel -------*- C++ -*-===//
//
// Part of normfuse.
//
// The lowering and the artifact writer must agree on the order and meaning
// of a kernel's launch parameters, and so must the runtime that fills them.
// This is the one place that order is defined.
//
// Order: one entry per kernel argument (a global pointer for a tensor, the
// value for a scalar); a pointer per result not written in place; per chain
// its row count (B*S), S, F and S's division constants; D; then the strides of
// every dimension but the last of every tensor argument, then of every result
// not in place; then the row count of every rotary cache.
//
//===----------------------------------------------------------------------===//

#ifndef NF_PASSES_KERNELABI_H
#define NF_PASSES_KERNELABI_H

#include "dialect/Chains.h"

#include <string>

namespace mlir::nf {

struct KernelParam {
  enum Kind {
    ArgPointer,    ///< tensor argument `index`
    ArgScalar,     ///< scalar argument `index`
    ResultPointer, ///< result `index`
    ChainRows,     ///< B*S of chain `index`
    ChainS,        ///< S of chain `index`
    ChainF,        ///< F of chain `index` (1 when it has no frames)
    ChainSDivisor, ///< S of chain `index` as multiplier and shift, for a
                   ///< division without a divide (runtime/Divisor.h)
    RowLength,     ///< D
    ArgStride,     ///< stride of dimension `dim` of argument `index`
    ResultStride,  ///< stride of dimension `dim` of result `index`
    CacheRows,     ///< max_pos of the rotary cache argument `index`
  };
  Kind kind;
  int index = 0;
  int dim = 0;
  /// The parameter's type in the generated code: !llvm.ptr<1>, i32 or i64.
  Type type;
  /// "x", "out0", "rows.0", "D", "stride.x.1", ...: for metadata and errors.
  std::string name;
};

/// The launch parameters of `kernel`, in order.
SmallVector<KernelParam> computeKernelABI(KernelOp kernel,
                                          const ChainAnalysis &chains);

/// The arguments read as rotary caches.
SmallVector<unsigned> getCacheArguments(KernelOp kernel);

} // namespace mlir::nf

#endif // NF_PASSES_KERNELABI_H
