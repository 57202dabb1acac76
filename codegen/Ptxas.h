//===- Ptxas.h - Running ptxas and reading what it reports -------*- C++
//-*-===//
//
// Part of normfuse. No MLIR: only LLVM Support, so that the unit tests and
// nf-compile share it cheaply.
//
//===----------------------------------------------------------------------===//

#ifndef NF_CODEGEN_PTXAS_H
#define NF_CODEGEN_PTXAS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace mlir::nf {

/// What `ptxas -v` reports for one entry function.
struct PtxasFunctionInfo {
  std::string name;
  int64_t registers = 0;
  int64_t spillStores = 0;
  int64_t spillLoads = 0;
  /// The "Used N registers, ..." line and the stack/spill line, as printed.
  std::string usage;
  std::string stack;

  bool spills() const { return spillStores > 0 || spillLoads > 0; }
};

/// The ptxas of the CUDA toolkit rooted at `cudaPath`.
std::string getPtxasPath(StringRef cudaPath);

/// Assembles `ptx` for `arch` with the toolkit's ptxas (`-v` when `verbose`).
/// `log` receives what ptxas printed (or why it could not run), `cubin` the
/// object on success. `threads` other than 1 lets ptxas assemble functions
/// on that many threads (0: one per CPU; `-split-compile`, ptxas 12.4 on,
/// retried on one thread where ptxas refuses): its reports are the same,
/// but the cubin's bytes change from run to run, so an artifact's cubin is
/// assembled on one.
LogicalResult runPtxas(StringRef cudaPath, StringRef ptx, StringRef arch,
                       bool verbose, std::string &cubin, std::string &log,
                       int threads = 1);

/// Reads the per-function lines of a `ptxas -v` log, in the order ptxas
/// printed them. Functions without a "Used N registers" line are left out.
SmallVector<PtxasFunctionInfo> parsePtxasLog(StringRef log);

/// The `.maxntid` x extent of each `.entry` in `ptx` (entries without one
/// are left out).
llvm::StringMap<int64_t> readMaxThreads(StringRef ptx);

/// Sets the `.minnctapersm` directive of the `.entry` named `name` in `ptx`
/// to `ctas` (0 removes it), on the line where the NVPTX backend prints it
/// for an nvvm.minctasm attribute: after `.reqntid`/`.maxntid`, before
/// `.maxnreg` and the cluster directives. The directive only asks ptxas for
/// an occupancy, so editing it gives the PTX that recompiling with the
/// attribute would (nf-compile --avoid-spills relies on this instead of
/// running the LLVM backend again per round). Fails where `ptx` has no such
/// entry.
LogicalResult setMinCtasPerSm(std::string &ptx, StringRef name, int64_t ctas);

/// `ptx` with only the `.entry` functions named in `keep`: everything outside
/// entry functions (the header, module-scope declarations) is kept, so that
/// ptxas can assemble a few functions of a large module on their own.
std::string selectEntries(StringRef ptx, const llvm::StringSet<> &keep);

/// How many CTAs of `blockSize` threads fit on one SM of `chip` when each
/// thread holds `registers` registers: the register file (64K 32-bit
/// registers, allocated per warp in units of 256) and the SM's thread limit
/// decide. At least 1.
int64_t residentCtasPerSm(StringRef chip, int64_t registers, int64_t blockSize);

} // namespace mlir::nf

#endif // NF_CODEGEN_PTXAS_H
