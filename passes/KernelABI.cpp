//===- KernelABI.cpp - parameters of a generated GPU kernel ---------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelABI.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"

using namespace mlir;
using namespace mlir::nf;

SmallVector<unsigned> mlir::nf::getCacheArguments(KernelOp kernel) {
  SmallVector<unsigned> caches;
  kernel.walk([&](RopeOp rope) {
    if (auto arg = dyn_cast<BlockArgument>(rope.getCache()))
      if (!llvm::is_contained(caches, arg.getArgNumber()))
        caches.push_back(arg.getArgNumber());
  });
  llvm::sort(caches);
  return caches;
}

SmallVector<KernelParam>
mlir::nf::computeKernelABI(KernelOp kernel, const ChainAnalysis &chains) {
  MLIRContext *ctx = kernel.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1);
  Type i64 = IntegerType::get(ctx, 64);
  SmallVector<KernelParam> params;
  auto argTypes = kernel.getArgumentTypes();
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    std::string name = kernel.getArgumentName(i);
    if (isa<RankedTensorType>(type))
      params.push_back({KernelParam::ArgPointer, (int)i, 0, ptr, name});
    else
      params.push_back({KernelParam::ArgScalar, (int)i, 0, type, name});
  }
  unsigned numResults = kernel.getResultTypes().size();
  for (unsigned r = 0; r < numResults; ++r)
    if (!kernel.getInPlaceArgument(r))
      params.push_back({KernelParam::ResultPointer, (int)r, 0, ptr,
                        "out" + std::to_string(r)});
  for (unsigned c = 0; c < chains.getChains().size(); ++c) {
    std::string suffix = "." + std::to_string(c);
    params.push_back({KernelParam::ChainRows, (int)c, 0, i64, "rows" + suffix});
    params.push_back({KernelParam::ChainS, (int)c, 0, i64, "S" + suffix});
    params.push_back({KernelParam::ChainF, (int)c, 0, i64, "F" + suffix});
    params.push_back(
        {KernelParam::ChainSDivisor, (int)c, 0, i64, "Sdiv" + suffix});
  }
  params.push_back({KernelParam::RowLength, 0, 0, i64, "D"});
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      continue;
    for (int64_t d = 0; d + 1 < tensor.getRank(); ++d)
      params.push_back(
          {KernelParam::ArgStride, (int)i, (int)d, i64,
           "stride." + kernel.getArgumentName(i) + "." + std::to_string(d)});
  }
  for (unsigned r = 0; r < numResults; ++r) {
    if (kernel.getInPlaceArgument(r))
      continue;
    // [B, S, D] rows or [B, S] per-row values: every dimension but the last.
    auto type = cast<RankedTensorType>(kernel.getResultTypes()[r]);
    for (int d = 0; d + 1 < type.getRank(); ++d)
      params.push_back(
          {KernelParam::ResultStride, (int)r, d, i64,
           "stride.out" + std::to_string(r) + "." + std::to_string(d)});
  }
  for (unsigned a : getCacheArguments(kernel))
    params.push_back({KernelParam::CacheRows, (int)a, 0, i64,
                      "max_pos." + kernel.getArgumentName(a)});
  return params;
}
