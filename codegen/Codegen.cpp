//===- Codegen.cpp - nf IR to PTX through MLIR's NVVM pipeline ------------===//
//
// Part of normfuse. The only translation unit that includes the NVVM and
// LLVM dialect registrations (each costs seconds of compile time).
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"
#include "dialect/NfGpuDialect.h"
#include "dialect/NfOps.h"
#include "passes/Passes.h"
#include "passes/QuantizedCasts.h"
#include "passes/Schedule.h"
#include "passes/Target.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::nf;

static std::string libdevicePath(StringRef cudaPath) {
  llvm::SmallString<256> path(cudaPath);
  llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
  return std::string(path);
}

LogicalResult mlir::nf::validateCodegenOptions(const CodegenOptions &options,
                                               std::string &error) {
  if (!llvm::is_contained(getSupportedChips(), options.chip)) {
    error = getUnsupportedChipMessage(options.chip);
    return failure();
  }
  if (!llvm::sys::fs::exists(libdevicePath(options.cudaPath))) {
    error = "libdevice not found at '" + libdevicePath(options.cudaPath) +
            "'; pass the CUDA toolkit root with --cuda-path";
    return failure();
  }
  if (options.rowLength < 0) {
    error = "D must be positive";
    return failure();
  }
  if (options.threadsPerRow != 0 &&
      (options.threadsPerRow < 0 || options.threadsPerRow > 1024 ||
       !llvm::isPowerOf2_64(options.threadsPerRow))) {
    error = "threads per row must be a power of two from 1 to 1024";
    return failure();
  }
  if (options.rowsPerCta < 0 || options.rowsPerCta > 1024) {
    error = "rows per CTA must be from 1 to 1024";
    return failure();
  }
  if (options.rowsPerThread < 0 || options.rowsPerThread > 8) {
    error = "rows per thread must be from 1 to 8";
    return failure();
  }
  if (options.maxCluster != -1 &&
      (options.maxCluster < 1 || options.maxCluster > 8 ||
       !llvm::isPowerOf2_64(options.maxCluster))) {
    error = "max cluster must be 1, 2, 4 or 8";
    return failure();
  }
  if (options.maxCluster > 1 && !getTargetInfo(options.chip).hasClusters()) {
    error = "thread-block clusters need sm_90 or newer, not " + options.chip;
    return failure();
  }
  static const StringRef stages[] = {"", "rows", "gpu", "nvvm"};
  if (!llvm::is_contained(stages, options.dumpStage)) {
    error =
        "unknown stage '" + options.dumpStage + "'; expected rows, gpu or nvvm";
    return failure();
  }
  return success();
}

void mlir::nf::registerCodegenDialects(DialectRegistry &registry) {
  registry.insert<NfDialect, nfgpu::NfGpuDialect, arith::ArithDialect,
                  cf::ControlFlowDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect, NVVM::NVVMDialect,
                  scf::SCFDialect, vector::VectorDialect>();
  // convert-gpu-to-nvvm collects patterns from these interfaces; a missing
  // one leaves ops silently unconverted.
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

static LogicalResult runStage(ModuleOp module, PassManager &pm, StringRef stage,
                              const CodegenOptions &options,
                              llvm::raw_ostream *dump) {
  if (failed(pm.run(module)))
    return failure();
  if (dump && options.dumpStage == stage)
    module.print(*dump);
  return success();
}

/// Bytes of an LLVM global of scalars or (nested) arrays of them.
static int64_t globalBytes(Type type) {
  if (auto array = dyn_cast<LLVM::LLVMArrayType>(type))
    return array.getNumElements() * globalBytes(array.getElementType());
  return type.isIntOrFloat() ? type.getIntOrFloatBitWidth() / 8 : 0;
}

/// Stores on each nf.kernel (getSharedBytesAttrName) the static shared
/// memory each of its GPU functions allocated: workgroup attributions and
/// the shared globals it addresses (exchange slots, mbarriers, staged
/// rows).
static void recordSharedBytes(ModuleOp module) {
  llvm::StringMap<int64_t> bytes, dynamicBytes;
  module.walk([&](gpu::GPUFuncOp func) {
    if (auto dynamic =
            func->getAttrOfType<IntegerAttr>(getDynamicSharedBytesAttrName()))
      dynamicBytes[func.getName()] = dynamic.getInt();
    int64_t total = 0;
    for (BlockArgument buffer : func.getWorkgroupAttributions()) {
      auto type = cast<MemRefType>(buffer.getType());
      total += type.getNumElements() * type.getElementTypeBitWidth() / 8;
    }
    llvm::StringSet<> seen;
    func.walk([&](LLVM::AddressOfOp address) {
      auto global =
          dyn_cast_or_null<LLVM::GlobalOp>(SymbolTable::lookupNearestSymbolFrom(
              func, address.getGlobalNameAttr()));
      if (global && global.getAddrSpace() == 3 &&
          seen.insert(global.getSymName()).second)
        total += globalBytes(global.getGlobalType());
    });
    // ptxas lays the buffers out with their alignments and reports whole
    // 16-byte units (RMSNorm's staged cluster of 4: 32,824 bytes of
    // buffers, 32,832 reported).
    bytes[func.getName()] = llvm::alignTo(total, 16);
  });
  Builder builder(module.getContext());
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    FailureOr<SmallVector<VariantAttr>> variants = getVariants(kernel);
    if (failed(variants))
      continue;
    SmallVector<NamedAttribute> entries, dynamicEntries;
    for (VariantAttr variant : *variants) {
      std::string name = getVariantFunctionName(kernel, variant);
      if (auto found = bytes.find(name); found != bytes.end())
        entries.push_back(builder.getNamedAttr(
            name, builder.getI64IntegerAttr(found->second)));
      if (auto found = dynamicBytes.find(name); found != dynamicBytes.end())
        dynamicEntries.push_back(builder.getNamedAttr(
            name, builder.getI64IntegerAttr(found->second)));
    }
    kernel->setAttr(getSharedBytesAttrName(),
                    builder.getDictionaryAttr(entries));
    kernel->setAttr(getDynamicSharedBytesAttrName(),
                    builder.getDictionaryAttr(dynamicEntries));
  }
}

FailureOr<std::string> mlir::nf::compileToPTX(ModuleOp module,
                                              const CodegenOptions &options,
                                              llvm::raw_ostream *dump) {
  MLIRContext *ctx = module.getContext();
  std::string error;
  if (failed(validateCodegenOptions(options, error)))
    return module.emitError(error), failure();

  // Stage "rows": the nf program, specialized, decomposed, scheduled and
  // split into variants.
  PassManager rows(ctx);
  NfSpecializeDimsOptions specialize;
  specialize.rowLength = options.rowLength;
  rows.addPass(createNfSpecializeDims(specialize));
  rows.addPass(createNfDecompose());
  NfSelectScheduleOptions schedule;
  schedule.threadsPerRow = options.threadsPerRow;
  schedule.rowsPerCta = options.rowsPerCta;
  schedule.rowsPerThread = options.rowsPerThread;
  schedule.forceStreaming = options.streaming;
  schedule.persistent = options.persistent;
  TargetInfo targetInfo = getTargetInfo(options.chip);
  schedule.asyncCopy = targetInfo.hasAsyncCopy();
  schedule.maxPersistentStageKB = targetInfo.maxPersistentStageBytes / 1024;
  schedule.maxCluster = options.maxCluster >= 1    ? options.maxCluster
                        : targetInfo.hasClusters() ? 8
                                                   : 1;
  rows.addPass(createNfSelectSchedule(schedule));
  NfMaterializeVariantsOptions variants;
  variants.drop.assign(options.dropVariants.begin(),
                       options.dropVariants.end());
  variants.chip = options.chip;
  rows.addPass(createNfMaterializeVariants(variants));
  if (failed(runStage(module, rows, "rows", options, dump)))
    return failure();

  // Stage "gpu": one gpu.module holding every kernel and variant.
  PassManager gpuStage(ctx);
  NfLowerToGPUOptions lowering;
  lowering.chip = options.chip;
  gpuStage.addPass(createNfLowerToGPU(lowering));
  if (failed(gpuStage.run(module)))
    return failure();
  for (const auto &hint : options.minCtasPerSm) {
    bool found = false;
    module.walk([&](gpu::GPUFuncOp func) {
      if (func.getName() != hint.getKey())
        return;
      func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    Builder(ctx).getI32IntegerAttr(hint.getValue()));
      found = true;
    });
    if (!found)
      return module.emitError("occupancy hint for '")
                 << hint.getKey() << "', which is not a generated kernel",
             failure();
  }
  if (dump && options.dumpStage == "gpu")
    module.print(*dump);

  // Stage "nvvm": the GPU level's exchanges, whose shared memory the
  // artifact reports as allocated; contraction (their adds included), then
  // NVVM.
  PassManager exchanges(ctx);
  exchanges.addPass(createNfLowerRowReductions());
  if (failed(exchanges.run(module)))
    return failure();
  recordSharedBytes(module);
  PassManager nvvm(ctx);
  nvvm.addPass(createNfAllowContraction());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = 3;
  // TargetInfo::ptxFeatures: PTX 8.1 on sm_90 for `st.async` (the relaxed
  // cluster barrier arrive: 8.0). Drivers from CUDA 12.1 on read it.
  target.features = targetInfo.ptxFeatures.str();
  nvvm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &gpuModule = nvvm.nest<gpu::GPUModuleOp>();
  gpuModule.addPass(createSCFToControlFlowPass());
  // convert-gpu-to-nvvm first simplifies the regions of the whole module
  // (greedily, merging blocks); on the control flow scf-to-cf leaves that
  // was 11 of seed #1's 26 s of compile, after a canonicalization 1 s. Same
  // speed and results on the H200 (docs/Rationale.md, "Spills: asking
  // ptxas for the occupancy it chose").
  gpuModule.addPass(createCanonicalizerPass());
  gpuModule.addPass(createConvertGpuOpsToNVVMOps());
  // NVVM ops without an LLVM intrinsic (the mbarrier wait loop of cluster
  // schedules) become inline PTX.
  gpuModule.addPass(createConvertNVVMToLLVMPass());
  gpuModule.addPass(createCanonicalizerPass());
  gpuModule.addPass(createCSEPass());
  nvvm.addPass(createReconcileUnrealizedCastsPass());
  if (failed(runStage(module, nvvm, "nvvm", options, dump)))
    return failure();

  // Stage "ptx". libdevice comes from the toolkit named in the options, so
  // the result does not depend on the environment.
  PassManager ptx(ctx);
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.cudaPath;
  binary.compilationTarget = "isa";
  ptx.addPass(createGpuModuleToBinaryPass(binary));
  if (failed(ptx.run(module)))
    return failure();

  std::string assembly;
  module.walk([&](gpu::BinaryOp binaryOp) {
    for (Attribute attr : binaryOp.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(attr))
        assembly = object.getObject().str();
  });
  if (assembly.empty())
    return module.emitError("the NVVM pipeline produced no PTX"), failure();
  // A math function left external would fail later in ptxas or the driver.
  size_t unresolved = assembly.find(".extern .func __nv_");
  if (unresolved != std::string::npos)
    return module.emitError("PTX calls a libdevice function that was not "
                            "linked: ")
               << assembly.substr(unresolved,
                                  assembly.find('\n', unresolved) - unresolved),
           failure();
  return assembly;
}
