//===- NfRun.h - what nf-run's files share ----------------------*- C++ -*-===//
//
// Part of normfuse. The error exit and option helpers of nf-run.cpp, and
// the entry points of its three modes: --case (CaseMode.cpp), --bench
// (BenchMode.cpp) and --tune (TuneMode.cpp). Buffers.h has the device
// buffers and input sets they launch on.
//
//===----------------------------------------------------------------------===//

#ifndef NF_TOOLS_NFRUN_NFRUN_H
#define NF_TOOLS_NFRUN_NFRUN_H

#include "runtime/Runtime.h"

#include <cstdint>
#include <map>
#include <string>

namespace nfrun {

struct BenchInputs;

/// Prints "nf-run: error: MESSAGE" on stderr and exits with status 2.
[[noreturn]] void die(const std::string &message);

/// die()s with "WHAT: " and the driver's name for `r` unless `r` is success.
void checkCuda(const nf::rt::CudaDriver *cu, nf::rt::CUresult r,
               const char *what);

/// A non-negative integer option value, or a clear error.
int64_t parseCount(const std::string &option, const std::string &text);

/// nf-run --case: runs the kernel named by DIR's manifest on its inputs and
/// checks every output, guard byte and unwritten input. Returns the exit
/// status (1 if a check failed).
int runCase(const nf::rt::CudaDriver *cu, const nf::rt::Artifact &artifact,
            const nf::rt::Module &module, const std::string &caseDir,
            int64_t pad, bool misalign, bool graph);

/// Microseconds per launch of `k` (variant `variant`, or the runtime's
/// choice at -1) over the rotating sets, after one warm-up launch per set.
double timeLaunches(const nf::rt::CudaDriver *cu, const nf::rt::Module &module,
                    const nf::rt::KernelInfo &k, const BenchInputs &in,
                    nf::rt::CUstream stream, int iters, int variant,
                    nf::rt::LaunchPlan *plan);

/// nf-run --bench: times `k` on `in` and the copy floor, prints the BENCH
/// line. Returns the exit status.
int runBench(const nf::rt::CudaDriver *cu, const nf::rt::Module &module,
             const nf::rt::KernelInfo &k, const BenchInputs &in,
             const std::string &dimsText, int iters);

/// nf-run --tune: times every variant of `k` that serves the shapes of `in`
/// (`dims`) and records the fastest in the artifact's tune file. Returns the
/// exit status (1 if a variant's results differ from the default's).
int runTune(const nf::rt::CudaDriver *cu, const std::string &artifactPath,
            const nf::rt::Artifact &artifact, const nf::rt::Module &module,
            const nf::rt::KernelInfo &k,
            const std::map<std::string, std::string> &dims, BenchInputs &in,
            const std::string &dimsText, int iters);

} // namespace nfrun

#endif // NF_TOOLS_NFRUN_NFRUN_H
