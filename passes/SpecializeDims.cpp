//===- SpecializeDims.cpp - fix the row length D --------------------------===//
//
// Part of normfuse. Implements -nf-specialize-dims.
//
//===----------------------------------------------------------------------===//

#include "dialect/Chains.h"
#include "passes/Passes.h"

#include "mlir/IR/Verifier.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFSPECIALIZEDIMS
#include "passes/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

namespace {

static RankedTensorType withDim(RankedTensorType type, unsigned dim,
                                int64_t size) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  return RankedTensorType::get(shape, type.getElementType());
}

struct NfSpecializeDimsPass
    : nf::impl::NfSpecializeDimsBase<NfSpecializeDimsPass> {
  using NfSpecializeDimsBase::NfSpecializeDimsBase;

  void runOnOperation() override {
    if (rowLength == 0)
      return;
    if (rowLength < 0) {
      getOperation()->emitError("-nf-specialize-dims: d must be positive, "
                                "found ")
          << static_cast<int64_t>(rowLength);
      return signalPassFailure();
    }
    getOperation()->walk([&](KernelOp kernel) {
      if (failed(specialize(kernel)))
        signalPassFailure();
    });
  }

  LogicalResult specialize(KernelOp kernel) {
    SmallVector<Type> argTypes(kernel.getArgumentTypes());
    SmallVector<Type> resultTypes(kernel.getResultTypes());
    ChainAnalysis chains(kernel);
    for (const Chain &chain : chains.getChains()) {
      for (const DimUse &use : chain.dims) {
        if (use.symbol != DimSymbol::D)
          continue;
        Type &slot = use.argument >= 0 ? argTypes[use.argument]
                                       : resultTypes[use.result];
        auto type = cast<RankedTensorType>(slot);
        if (!type.isDynamicDim(use.dim)) {
          if (type.getDimSize(use.dim) != rowLength)
            return kernel.emitOpError("has a static D = ")
                   << type.getDimSize(use.dim)
                   << ", which cannot be specialized to "
                   << static_cast<int64_t>(rowLength);
          continue;
        }
        slot = withDim(type, use.dim, rowLength);
      }
    }
    // The result written in place keeps the type of its argument.
    for (unsigned r = 0; r < resultTypes.size(); ++r)
      if (std::optional<unsigned> a = kernel.getInPlaceArgument(r))
        argTypes[*a] = resultTypes[r];
    Block &body = kernel.getBody().front();
    for (auto [arg, type] : llvm::zip(body.getArguments(), argTypes))
      arg.setType(type);
    kernel.setFunctionTypeAttr(TypeAttr::get(
        FunctionType::get(kernel.getContext(), argTypes, resultTypes)));
    return mlir::verify(kernel);
  }
};

} // namespace
