//===- Artifact.h - the file nf-compile writes ------------------*- C++ -*-===//
//
// Part of normfuse.
//
// An artifact is a text header describing every kernel (the metadata the
// runtime validates launches against) followed by the PTX, the PyTorch
// fallback source (TorchEmitter.h), and optionally a cubin.
// docs/Artifact.md specifies the format.
//
//===----------------------------------------------------------------------===//

#ifndef NF_CODEGEN_ARTIFACT_H
#define NF_CODEGEN_ARTIFACT_H

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir::nf {

/// Writes the artifact of `module`, which went through compileToPTX().
/// `torchSource` is the fallback generateTorchFallback() made of the same
/// module before compileToPTX().
LogicalResult writeArtifact(ModuleOp module, StringRef chip, StringRef ptx,
                            StringRef torchSource,
                            std::optional<StringRef> cubin,
                            llvm::raw_ostream &os);

/// The per-kernel summary the README's main job prints: schedule, block,
/// shared memory.
void printKernelSummary(ModuleOp module, llvm::raw_ostream &os);

} // namespace mlir::nf

#endif // NF_CODEGEN_ARTIFACT_H
