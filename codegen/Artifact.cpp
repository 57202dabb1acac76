//===- Artifact.cpp - the file nf-compile writes --------------------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "codegen/Artifact.h"
#include "dialect/Chains.h"
#include "passes/KernelABI.h"
#include "passes/Schedule.h"
#include "runtime/Digest.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::nf;

/// How a variant accesses rows, as the artifact and --ptxas-info name it.
static StringRef accessName(VariantAttr variant) {
  if (variant.getVectorized())
    return "vectorized";
  return variant.getPeeled() ? "peeled" : "general";
}

static std::string formatShape(RankedTensorType type) {
  std::string text;
  for (auto [i, size] : llvm::enumerate(type.getShape())) {
    if (i)
      text += "x";
    text += ShapedType::isDynamic(size) ? "?" : std::to_string(size);
  }
  return text.empty() ? "-" : text;
}

static std::string formatType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

namespace {
struct ArgumentUse {
  std::string role = "unused";
  std::string bcast = "-";
  std::string chains;
};
} // namespace

static SmallVector<ArgumentUse> describeArguments(KernelOp kernel,
                                                  const ChainAnalysis &chains) {
  SmallVector<ArgumentUse> uses(kernel.getArgumentTypes().size());
  auto note = [&](Value value, StringRef role, StringRef bcast,
                  Operation *user) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg)
      return;
    ArgumentUse &use = uses[arg.getArgNumber()];
    use.role = role.str();
    use.bcast = bcast.str();
    std::string chain = std::to_string(chains.getChainOf(user));
    SmallVector<StringRef> seen;
    StringRef(use.chains).split(seen, ',', -1, /*KeepEmpty=*/false);
    if (!llvm::is_contained(seen, chain))
      use.chains += (use.chains.empty() ? "" : ",") + chain;
  };
  // The artifact's names for the roles (docs/Artifact.md), and the shape
  // letters of the non-data roles.
  (void)forEachArgumentUse(kernel, [&](Operation *user, BlockArgument arg,
                                       ArgumentRole role, BroadcastKind kind) {
    switch (role) {
    case ArgumentRole::Data:
      note(arg, "data", stringifyBroadcastKind(kind), user);
      break;
    case ArgumentRole::Index:
      note(arg, "select_index", "BS", user);
      break;
    case ArgumentRole::Cache:
      note(arg, "rope_cache", "-", user);
      break;
    case ArgumentRole::Positions:
      note(arg, "rope_positions", "B", user);
      break;
    case ArgumentRole::Offset:
      note(arg, "rope_offset", "-", user);
      break;
    case ArgumentRole::Unused:
      break;
    }
    return success();
  });
  return uses;
}

static const char *paramKindName(KernelParam::Kind kind) {
  switch (kind) {
  case KernelParam::ArgPointer:
    return "arg_ptr";
  case KernelParam::ArgScalar:
    return "arg_scalar";
  case KernelParam::ResultPointer:
    return "result_ptr";
  case KernelParam::ChainRows:
    return "chain_rows";
  case KernelParam::ChainS:
    return "chain_s";
  case KernelParam::ChainF:
    return "chain_f";
  case KernelParam::ChainSDivisor:
    return "chain_s_divisor";
  case KernelParam::RowLength:
    return "row_length";
  case KernelParam::ArgStride:
    return "arg_stride";
  case KernelParam::ResultStride:
    return "result_stride";
  case KernelParam::CacheRows:
    return "cache_rows";
  }
  llvm_unreachable("unknown parameter kind");
}

/// The dynamic shared memory a launch of the variant's function must give
/// (compileToPTX records it on the kernel; none where it is not recorded).
static int64_t dynamicSharedMemoryBytes(KernelOp kernel, VariantAttr variant) {
  auto bytes =
      kernel->getAttrOfType<DictionaryAttr>(getDynamicSharedBytesAttrName());
  auto entry = bytes ? dyn_cast_or_null<IntegerAttr>(
                           bytes.get(getVariantFunctionName(kernel, variant)))
                     : IntegerAttr();
  return entry ? entry.getInt() : 0;
}

/// Whether a function of the module has dynamic shared memory: a persistent
/// variant's slots, declared once for the whole PTX module (`.extern
/// .shared`, aligned to 128 bytes).
static bool hasDynamicSharedMemory(ModuleOp module) {
  for (KernelOp kernel : module.getOps<KernelOp>())
    if (FailureOr<SmallVector<VariantAttr>> variants = getVariants(kernel);
        succeeded(variants))
      for (VariantAttr variant : *variants)
        if (dynamicSharedMemoryBytes(kernel, variant) > 0)
          return true;
  return false;
}

/// The static shared memory the variant's function allocated
/// (compileToPTX records it on the kernel), or -1 where it is not recorded.
/// In a module with dynamic shared memory, ptxas gives every function that
/// has static shared memory a multiple of the dynamic buffer's 128-byte
/// alignment (H200 family of layernorm_modulate_quant_fp8: 32 and 48 bytes
/// reported as 128, 272 as 384), which is what a CTA then takes.
static int64_t sharedMemoryBytes(KernelOp kernel, VariantAttr variant,
                                 bool alignedToDynamic) {
  auto bytes = kernel->getAttrOfType<DictionaryAttr>(getSharedBytesAttrName());
  if (!bytes)
    return -1;
  auto entry = dyn_cast_or_null<IntegerAttr>(
      bytes.get(getVariantFunctionName(kernel, variant)));
  if (!entry)
    return -1;
  int64_t shared = entry.getInt();
  return alignedToDynamic && shared > 0 ? llvm::alignTo(shared, 128) : shared;
}

LogicalResult mlir::nf::writeArtifact(ModuleOp module, StringRef chip,
                                      StringRef ptx, StringRef torchSource,
                                      std::optional<StringRef> cubin,
                                      llvm::raw_ostream &out) {
  // The body is composed in memory so that its digest can end the file.
  std::string body;
  llvm::raw_string_ostream os(body);
  os << "normfuse-artifact 10\n";
  os << "target " << chip << "\n";
  bool alignedToDynamic = hasDynamicSharedMemory(module);
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    FailureOr<SmallVector<VariantAttr>> variants = getVariants(kernel);
    if (failed(variants))
      return failure();
    ChainAnalysis chains(kernel);
    // A kernel of a --types build: its public name, its symbol, and the
    // dtypes it was built for.
    auto publicName =
        kernel->getAttrOfType<StringAttr>(getPublicNameAttrName());
    auto types = kernel->getAttrOfType<StringAttr>(getTypesAttrName());
    os << "kernel "
       << (publicName ? publicName.getValue() : kernel.getSymName()) << "\n";
    if (publicName && types)
      os << "symbol " << kernel.getSymName() << "\ntypes " << types.getValue()
         << "\n";
    std::optional<int64_t> d = getStaticRowLength(kernel);
    os << "row_length " << (d ? std::to_string(*d) : "?") << "\n";
    // Group reductions need D to be a multiple of their group sizes (powers
    // of two: the largest), whether or not the kernel returns them.
    if (int64_t multiple = getGroupLanes(kernel, 1); multiple > 1)
      os << "row_multiple " << multiple << "\n";
    for (VariantAttr variant : *variants) {
      Schedule s = Schedule::fromAttr(variant.getSchedule());
      int64_t shared = sharedMemoryBytes(kernel, variant, alignedToDynamic);
      if (shared < 0)
        return kernel.emitOpError("has no shared-memory figure for ")
               << getVariantFunctionName(kernel, variant)
               << ": the artifact is written from a module compileToPTX "
                  "compiled";
      os << "variant " << getVariantFunctionName(kernel, variant) << " "
         << accessName(variant) << " max_d " << variant.getMaxD()
         << " schedule " << s.getKindName() << " threads_per_row "
         << s.threadsPerRow << " rows_per_cta " << s.ctaRows() << " chunk "
         << s.chunk << " chunks_per_thread " << s.chunksPerThread << " block "
         << s.blockSize() << " shared " << shared << " cluster "
         << s.clusterSize << " dynamic_shared "
         << dynamicSharedMemoryBytes(kernel, variant) << " max_rows_per_cta "
         << variant.getMaxRowsPerCta() << "\n";
    }
    os << "chains " << chains.getChains().size() << "\n";
    SmallVector<ArgumentUse> uses = describeArguments(kernel, chains);
    for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
      os << "arg " << i << " " << kernel.getArgumentName(i) << " ";
      if (auto tensor = dyn_cast<RankedTensorType>(type))
        os << "tensor " << formatType(tensor.getElementType()) << " "
           << formatShape(tensor);
      else
        os << "scalar " << formatType(type) << " -";
      os << " " << uses[i].role << " " << uses[i].bcast << " "
         << (uses[i].chains.empty() ? "-" : uses[i].chains) << "\n";
    }
    for (auto [r, type] : llvm::enumerate(kernel.getResultTypes())) {
      auto tensor = cast<RankedTensorType>(type);
      std::optional<unsigned> inPlace = kernel.getInPlaceArgument(r);
      os << "result " << r << " " << formatType(tensor.getElementType()) << " "
         << formatShape(tensor) << " chain " << chains.getChainOfResult(r)
         << " in_place " << (inPlace ? std::to_string(*inPlace) : "-");
      // A [B, S, D / G] result of group values says its G.
      auto group =
          dyn_cast<GroupType>(kernel.getReturn()->getOperand(r).getType());
      os << " group " << (group ? std::to_string(group.getSize()) : "-")
         << "\n";
    }
    for (const KernelParam &param : computeKernelABI(kernel, chains))
      os << "param " << paramKindName(param.kind) << " " << param.index << " "
         << param.dim << " " << formatType(param.type) << " " << param.name
         << "\n";
    os << "end\n";
  }
  os << "ptx " << ptx.size() << "\n" << ptx << "\n";
  os << "torch " << torchSource.size() << "\n" << torchSource << "\n";
  if (cubin)
    os << "cubin " << cubin->size() << "\n" << *cubin << "\n";
  os.flush();
  out << body << ::nf::rt::digestLine(body);
  return success();
}

void mlir::nf::printKernelSummary(ModuleOp module, llvm::raw_ostream &os) {
  bool alignedToDynamic = hasDynamicSharedMemory(module);
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    FailureOr<SmallVector<VariantAttr>> variants = getVariants(kernel);
    if (failed(variants))
      continue;
    ChainAnalysis chains(kernel);
    std::optional<int64_t> d = getStaticRowLength(kernel);
    os << kernel.getSymName() << ": D=" << (d ? std::to_string(*d) : "?")
       << ", " << variants->size() << " variants\n";
    for (VariantAttr variant : *variants) {
      Schedule s = Schedule::fromAttr(variant.getSchedule());
      os << "  " << getVariantFunctionName(kernel, variant) << ": "
         << accessName(variant) << " D<="
         << (variant.getMaxD() ? std::to_string(variant.getMaxD()) : "any")
         << " schedule=" << s.getKindName()
         << " threads_per_row=" << s.threadsPerRow
         << " rows_per_cta=" << s.ctaRows()
         << " rows_per_thread=" << s.rowsPerThread;
      if (s.isRegisterResident())
        os << " chunks_per_thread=" << s.chunksPerThread;
      if (s.clusterSize > 1)
        os << " cluster=" << s.clusterSize;
      if (s.staged)
        os << " staged";
      os << " block=" << s.blockSize();
      if (int64_t shared = sharedMemoryBytes(kernel, variant, alignedToDynamic);
          shared >= 0)
        os << " shared=" << shared << "B";
      if (int64_t dynamic = dynamicSharedMemoryBytes(kernel, variant))
        os << " dynamic_shared=" << dynamic << "B";
      if (int64_t rows = variant.getMaxRowsPerCta())
        os << " max_rows_per_cta=" << rows;
      // How the lowering emitted the rows (#nf.variant's flags).
      if (variant.getL2Prefetch())
        os << " l2_prefetch";
      if (variant.getJointRows())
        os << " joint_rows";
      if (variant.getThirdCta())
        os << " third_cta";
      os << "\n";
    }
  }
}
