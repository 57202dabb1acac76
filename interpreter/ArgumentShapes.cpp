//===- ArgumentShapes.cpp - roles and shapes of kernel arguments ----------===//
//
// Part of normfuse. What each argument of a kernel is used as, and the
// shapes to give the arguments for a set of symbolic sizes: what a tool
// needs to make inputs for a kernel.
//
//===----------------------------------------------------------------------===//

#include "interpreter/Interpreter.h"

using namespace mlir;
using namespace mlir::nf;

FailureOr<SmallVector<std::vector<int64_t>>> mlir::nf::deriveArgumentShapes(
    KernelOp kernel, const std::map<DimSymbol, int64_t> &sizes,
    const llvm::StringMap<std::vector<int64_t>> &overrides,
    std::string &error) {
  auto types = kernel.getArgumentTypes();
  auto fail = [&](const Twine &message) {
    error = ("@" + kernel.getSymName() + ": " + message).str();
    return failure();
  };
  SmallVector<std::optional<std::vector<int64_t>>> shapes(types.size());
  for (const auto &entry : overrides) {
    std::optional<unsigned> index;
    for (unsigned i = 0; i < types.size(); ++i)
      if (kernel.getArgumentName(i) == entry.getKey())
        index = i;
    if (!index)
      return fail("no argument is named '" + entry.getKey() + "'");
    auto type = dyn_cast<RankedTensorType>(types[*index]);
    if (!type)
      return fail("argument %" + entry.getKey() +
                  " is a scalar; it has no shape to give");
    if (type.getRank() != (int64_t)entry.getValue().size())
      return fail("argument %" + entry.getKey() + " has rank " +
                  Twine(type.getRank()) + ", but the shape given for it is " +
                  formatShape(entry.getValue()));
    shapes[*index] = entry.getValue();
  }

  ChainAnalysis analysis(kernel);
  for (const Chain &chain : analysis.getChains()) {
    std::map<DimSymbol, int64_t> known;
    // Sizes of the chain's symbols; max_pos belongs to each cache alone.
    auto isChainSymbol = [](DimSymbol symbol) {
      return symbol != DimSymbol::MaxPos && symbol != DimSymbol::Rotary &&
             symbol != DimSymbol::One;
    };
    for (const DimUse &use : chain.dims)
      if (isChainSymbol(use.symbol) && !use.type.isDynamicDim(use.dim))
        known.try_emplace(use.symbol, use.type.getDimSize(use.dim));
    for (const DimUse &use : chain.dims)
      if (isChainSymbol(use.symbol) && use.argument >= 0 &&
          shapes[use.argument] &&
          overrides.count(kernel.getArgumentName(use.argument)))
        known.try_emplace(use.symbol, (*shapes[use.argument])[use.dim]);
    for (const DimUse &use : chain.dims) {
      if (use.argument < 0 || shapes[use.argument])
        continue;
      // Every dimension of this argument is a use of this chain.
      auto type = cast<RankedTensorType>(types[use.argument]);
      std::vector<int64_t> shape(type.getRank(), -1);
      for (const DimUse &dim : chain.dims) {
        if (dim.argument != use.argument)
          continue;
        int64_t &size = shape[dim.dim];
        if (!type.isDynamicDim(dim.dim)) {
          size = type.getDimSize(dim.dim);
        } else if (dim.symbol == DimSymbol::One) {
          size = 1;
        } else if (dim.symbol == DimSymbol::Rotary) {
          size = cast<RopeOp>(dim.user).getRotaryDim();
        } else if (auto it = known.find(dim.symbol); it != known.end()) {
          size = it->second;
        } else if (auto it = sizes.find(dim.symbol); it != sizes.end()) {
          size = it->second;
        } else {
          return fail("no size for " + stringifyDimSymbol(dim.symbol) +
                      " (dimension " + Twine(dim.dim) + " of %" +
                      kernel.getArgumentName(dim.argument) + ")");
        }
      }
      if (llvm::is_contained(shape, -1))
        return fail("cannot size every dimension of %" +
                    kernel.getArgumentName(use.argument));
      shapes[use.argument] = std::move(shape);
    }
  }

  SmallVector<std::vector<int64_t>> result;
  for (auto [i, type] : llvm::enumerate(types)) {
    if (shapes[i]) {
      result.push_back(*shapes[i]);
      continue;
    }
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor) {
      result.push_back({});
      continue;
    }
    if (!tensor.hasStaticShape())
      return fail("argument %" + kernel.getArgumentName(i) +
                  " is not used by any op and has dynamic dimensions; give "
                  "its shape");
    result.push_back(std::vector<int64_t>(tensor.getShape().begin(),
                                          tensor.getShape().end()));
  }
  return result;
}
