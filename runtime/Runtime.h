//===- Runtime.h - loading and launching normfuse kernels -------*- C++ -*-===//
//
// Part of normfuse. MLIR-free. A Module holds an artifact loaded into a CUDA
// context; launch() validates device tensors against the kernel's metadata,
// picks the variant (docs/Artifact.md) and the grid, and launches on
// the caller's stream. The launch path neither allocates nor synchronizes,
// so launches can be captured in CUDA graphs. planLaunch() is the
// validation alone, usable (and tested) without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef NF_RUNTIME_RUNTIME_H
#define NF_RUNTIME_RUNTIME_H

#include "runtime/Artifact.h"
#include "runtime/CudaDriver.h"

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nf::rt {

constexpr int kMaxRank = 4;
constexpr int kMaxParams = 160;

/// A tensor in device memory. Strides are in elements; the last one must be
/// 1 (rows are contiguous).
struct Tensor {
  uint64_t data = 0;
  DType dtype = DType::F32;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};

/// One kernel argument: a tensor or an integer scalar.
struct Value {
  bool isTensor = true;
  Tensor tensor;
  int64_t scalar = 0;
};

class Status {
public:
  Status() = default;
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.text = std::move(message);
    return s;
  }
  bool ok() const { return !failed; }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return text; }

private:
  bool failed = false;
  std::string text;
};

/// Everything a launch needs, computed from the metadata and the tensors.
struct LaunchPlan {
  /// Index of the variant launched (KernelInfo::variants), and whether it
  /// is a vectorized one.
  int variant = -1;
  bool vectorized = false;
  unsigned grid = 0; ///< 0: nothing to do (no rows)
  /// A persistent variant (schedule "persistent"): the batch entries B and
  /// tokens S of its rows, and ceil(S / rows_per_cta). Its CTAs walk the
  /// rows of one batch entry, so it may be launched with B * P CTAs for any
  /// 1 <= P <= ceil(S / rows_per_cta) (`grid` is the largest); the launch
  /// picks P from the CTAs resident at once. 0 otherwise.
  int64_t batches = 0, rowsPerBatch = 0, ctasPerBatch = 0;
  unsigned block = 0;
  int64_t rowLength = 0;
  int numParams = 0;
  uint64_t params[kMaxParams] = {};
};

/// The symbolic size each dimension of an argument stands for ("B", "S",
/// "F", "D", "1", or "P"/"R" for a rotary cache's rows and width), from its
/// role and broadcast kind; returns the rank, 0 for scalars and unused
/// arguments. Static tables: it runs on every launch.
int getDimLetters(const ArgumentInfo &arg, const char *const *&letters);

/// Validates a launch of `kernel` and fills `plan`. Checks: argument and
/// result counts, tensor vs scalar, dtypes, ranks, static sizes, contiguous
/// rows, the sizes each chain's tensors imply (B, S, D, F agree; S % F == 0;
/// a result is [B, S, D], or [B, S] with one value per row), null pointers,
/// in-place results passed as their argument, results that overlap other
/// tensors. Chooses the first variant whose guard holds: a vectorized one
/// needs every row tensor (not the [B, S] results) 16-byte aligned with
/// strides that keep it so and D a multiple of its chunk; a bounded one
/// D <= max_d. With `variant` >= 0, that variant instead, or an error where
/// its guard does not hold for the call (every variant whose guard holds
/// computes the same results: the guard is its correctness bound). With
/// `tuned`, the variant it names for the call's D where its guard holds
/// (else the first whose guard holds). `residentCtas` (one per variant, or
/// null) says how many CTAs of each function fit on the device at once: a
/// short launch's persistent twin (max_rows_per_cta > 0) serves a launch of
/// at most max_rows_per_cta rows per resident CTA, and none without the
/// count.
using TunedVariants = std::vector<std::pair<int64_t, int>>;
Status planLaunch(const KernelInfo &kernel, const Value *args, size_t numArgs,
                  const Tensor *results, size_t numResults, LaunchPlan &plan,
                  int variant = -1, const TunedVariants *tuned = nullptr,
                  const int64_t *residentCtas = nullptr);

/// The variant `tuned` (sorted by D) names for rows of `d` elements, or -1.
int lookupTuned(const TunedVariants &tuned, int64_t d);

/// Variants chosen by measurement for given row lengths (`nf-run --tune`,
/// docs/Artifact.md "Tune files"), launched instead of the first variant
/// whose guard holds where their guard holds too.
struct TuningTable {
  /// Per kernel of the artifact (as Artifact::kernels): (D, variant index),
  /// sorted by D.
  std::vector<TunedVariants> entries;
  /// The variant tuned for kernel `kernel` at rows of `d` elements, or -1.
  int lookup(size_t kernel, int64_t d) const;
  /// Sets (or replaces) the variant of kernel `kernel` at rows of `d`.
  void set(size_t kernel, int64_t d, int variant);
};

/// The tune file of the artifact at `artifactPath`: the same path + ".tune".
std::string getTuneFilePath(const std::string &artifactPath);

/// Parses a tune file (`path` only names it in errors) for `artifact`. A
/// file written for another build of the artifact (its `artifact` line
/// names another digest) gives an empty table: the runtime then launches
/// the default variants. Errors name the file and line.
Status parseTuning(const Artifact &artifact, const std::string &text,
                   const std::string &path, TuningTable &table);

/// Reads the tune file of the artifact at `artifactPath` (see
/// getTuneFilePath); none: an empty table.
Status readTuning(const Artifact &artifact, const std::string &artifactPath,
                  TuningTable &table);

/// The text of the tune file for `table` and `artifact`.
std::string formatTuning(const Artifact &artifact, const TuningTable &table);

/// Whether the call's tensors have the dtypes `kernel` was built for (its
/// tensor arguments' and results'; counts and kinds are planLaunch's).
bool matchesDtypes(const KernelInfo &kernel, const Value *args, size_t numArgs,
                   const Tensor *results, size_t numResults);

/// Of `kernels` (an artifact's), the index of the one named `name` that
/// serves the call: the only one, or of the combinations of a
/// `nf-compile --types` build the first whose dtypes the call's tensors
/// have. Errors name the kernel, or the combinations built and the call's
/// dtypes. Allocates only to say why it fails.
Status selectKernel(const std::vector<KernelInfo> &kernels, const char *name,
                    const Value *args, size_t numArgs, const Tensor *results,
                    size_t numResults, size_t &index);

/// Per-function resource use, read after loading.
struct FunctionInfo {
  CUfunction function = nullptr;
  int registers = 0;
  int localBytes = 0;
  int sharedBytes = 0;
  int maxThreads = 0;
  /// A persistent variant's CTAs resident on the device at once (CTAs per
  /// SM times SMs); 0 for other variants, or where the driver could not
  /// say (then such a variant launches one CTA per row, which it computes
  /// alike).
  int64_t residentCtas = 0;
};

class Module {
public:
  /// Loads `artifact` (PTX through the driver's JIT, or the cubin when it
  /// has one) into the current context, or the primary context of device 0
  /// when none is current. Checks every function's register, local memory
  /// and thread limits against the kernel's block. The module launches in
  /// that context whatever context is current at launch (one module per
  /// device: load it with the device's context current).
  static Status load(const Artifact &artifact, std::unique_ptr<Module> &out);
  ~Module();

  const Artifact &getArtifact() const { return artifact; }
  /// The context the module was loaded into (the device it launches on).
  CUcontext getContext() const { return context; }
  /// Resource use of variant `variant` of `kernel`; null if unknown.
  const FunctionInfo *getFunctionInfo(const std::string &kernel,
                                      int variant) const;

  /// Variants to launch instead of the default ones at some row lengths
  /// (readTuning). Not to be changed while another thread launches.
  void setTuning(TuningTable table) { tuning = std::move(table); }
  const TuningTable &getTuning() const { return tuning; }

  /// Validates and launches on `stream` (a stream of the module's device):
  /// variant `variant` where it is >= 0 (an error where its guard does not
  /// hold), else the tuned variant for the call's D where there is one and
  /// its guard holds, else the default. No allocation, no synchronization on
  /// success.
  Status launch(const char *kernel, const Value *args, size_t numArgs,
                const Tensor *results, size_t numResults, CUstream stream,
                LaunchPlan *planOut = nullptr, int variant = -1) const;

private:
  Module() = default;
  Artifact artifact;
  CUmodule module = nullptr;
  CUcontext context = nullptr;
  const CudaDriver *driver = nullptr;
  struct Entry {
    const KernelInfo *info;
    std::vector<FunctionInfo> variants; ///< as KernelInfo::variants
    /// FunctionInfo::residentCtas of each variant (planLaunch's).
    std::vector<int64_t> residentCtas;
  };
  std::vector<Entry> entries; ///< as artifact.kernels
  TuningTable tuning;
};

/// A process-wide cache of modules by artifact path, safe to use from
/// several threads, each with the artifact's tune file read (readTuning).
/// The module stays loaded until the process exits.
Status getCachedModule(const std::string &artifactPath, const Module *&out);

} // namespace nf::rt

#endif // NF_RUNTIME_RUNTIME_H
