//===- Codegen.h - nf IR to PTX through MLIR's NVVM pipeline ----*- C++ -*-===//
//
// Part of normfuse.
//
// The compile pipeline as named stages, each of which can be printed:
//   nf      the input, verified
//   rows    specialized, decomposed and scheduled nf kernels
//   gpu     gpu.module with the generated kernels (gpu/arith/vector/llvm)
//   nvvm    the same in the LLVM and NVVM dialects
//   ptx     PTX text from the NVPTX backend
//
//===----------------------------------------------------------------------===//

#ifndef NF_CODEGEN_CODEGEN_H
#define NF_CODEGEN_CODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
namespace nf {

struct CodegenOptions {
  /// Target, e.g. "sm_90a". validateCodegenOptions() checks it.
  std::string chip = "sm_90";
  /// CUDA toolkit root: libdevice (math functions) is linked from here.
  std::string cudaPath = "/usr/local/cuda";
  /// Fix D at compile time (0: as the IR has it).
  int64_t rowLength = 0;
  /// Schedule overrides (0: chosen by -nf-select-schedule).
  int64_t threadsPerRow = 0;
  int64_t rowsPerCta = 0;
  int64_t rowsPerThread = 0; ///< 0: the schedule's choice
  bool streaming = false;
  /// -nf-select-schedule's `persistent`: auto, all or none (nf-compile
  /// --persistent).
  std::string persistent = "auto";
  /// Most CTAs of a thread-block cluster that share a row too long for one
  /// CTA's registers: -1 for the target's default (8 from sm_90 on, where
  /// clusters exist; 1 before), 1 for none (such rows are streamed).
  int64_t maxCluster = -1;
  /// Occupancy asked of ptxas per generated function: emitted as
  /// `.minnctapersm` (nvvm.minctasm). nf-compile fills it for the functions
  /// ptxas spilled (see --avoid-spills); empty by default.
  llvm::StringMap<int64_t> minCtasPerSm;
  /// Register-resident vectorized variants of families to leave out
  /// (-nf-materialize-variants drop=...): those ptxas spills.
  std::vector<std::string> dropVariants;
  /// Print the IR after this stage ("rows", "gpu", "nvvm") to `dump`.
  std::string dumpStage;
};

/// Checks options before they can reach the NVPTX backend, which aborts the
/// process on some invalid targets instead of reporting them.
LogicalResult validateCodegenOptions(const CodegenOptions &options,
                                     std::string &error);

/// Dialects, interfaces and translations the pipeline needs.
void registerCodegenDialects(DialectRegistry &registry);

/// Runs the pipeline on `module` (nf kernels in, PTX out). `module` keeps
/// the scheduled nf.kernel ops, whose attributes describe the kernels.
/// Diagnostics go to the context's handler.
FailureOr<std::string> compileToPTX(ModuleOp module,
                                    const CodegenOptions &options,
                                    llvm::raw_ostream *dump = nullptr);

} // namespace nf
} // namespace mlir

#endif // NF_CODEGEN_CODEGEN_H
