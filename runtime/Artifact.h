//===- Artifact.h - reading nf-compile artifacts ----------------*- C++ -*-===//
//
// Part of normfuse. MLIR-free: the runtime builds on machines with only
// CUDA and a C++ compiler. docs/Artifact.md specifies the format that
// codegen/Artifact.cpp writes.
//
//===----------------------------------------------------------------------===//

#ifndef NF_RUNTIME_ARTIFACT_H
#define NF_RUNTIME_ARTIFACT_H

#include <cstdint>
#include <string>
#include <vector>

namespace nf::rt {

/// In the order of the C API's codes (NF_F32 = 0 ... NF_F8E5M2 = 7,
/// runtime/nf_runtime.h): the C API casts a code to a DType.
enum class DType { F32, F16, BF16, I8, I32, I64, F8E4M3FN, F8E5M2 };

/// "f32", "f16", "bf16", "i8", "i32", "i64", and the 8-bit floats as MLIR
/// prints them (the artifact's spelling): "f8E4M3FN", "f8E5M2".
const char *dtypeName(DType dtype);
int dtypeBytes(DType dtype);
bool parseDType(const std::string &text, DType &dtype);

/// A shape with -1 for dynamic dimensions.
using Shape = std::vector<int64_t>;

struct ArgumentInfo {
  std::string name;
  bool isTensor = true;
  DType dtype = DType::F32;
  Shape shape;       ///< empty for scalars
  std::string role;  ///< data, select_index, rope_cache, rope_positions,
                     ///< rope_offset, unused
  std::string bcast; ///< One, D, BD, B1D, BSD, BF1D for data; BS / B / -
  std::vector<int> chains;
};

struct ResultInfo {
  DType dtype = DType::F32;
  /// [B, S, D], or [B, S]: one value per row of its chain (a per-row
  /// quantization scale, say).
  Shape shape;
  int chain = 0;
  int inPlace = -1; ///< argument index, or -1
  /// G of a [B, S, D / G] result of group values (one f32 per group of G
  /// elements of a row), else 0.
  int64_t group = 0;
};

struct ParamInfo {
  std::string kind; ///< arg_ptr, arg_scalar, result_ptr, chain_rows,
                    ///< chain_s, chain_f, chain_s_divisor, row_length,
                    ///< arg_stride, result_stride, cache_rows
  int index = 0;
  int dim = 0;
  std::string type; ///< !llvm.ptr<1>, i32 or i64
  std::string name;
};

/// One specialization of a kernel: a GPU function, its schedule, and the
/// guard under which the runtime launches it (docs/Artifact.md).
struct VariantInfo {
  std::string function;
  /// Needs 16-byte aligned row tensors and strides and D % chunk == 0.
  bool vectorized = false;
  /// Any D; needs every [B, S, D] tensor to start at the same element
  /// offset modulo the chunk, with strides equal modulo the chunk (each
  /// row's body in 16-byte accesses).
  bool peeled = false;
  /// Longest row it serves (0: any).
  int64_t maxD = 0;
  std::string schedule;
  int threadsPerRow = 0, rowsPerCta = 0, chunk = 0, chunksPerThread = 0;
  int blockSize = 0;
  int sharedBytes = 0;
  /// Dynamic shared memory each launch of the function gives (format 8; a
  /// persistent variant's two slots), in bytes; 0 before.
  int dynamicSharedBytes = 0;
  /// CTAs of a thread-block cluster that share a row (1: none). The
  /// function is compiled for clusters of that size (`.reqnctapercluster`),
  /// so the launch has `clusterSize` consecutive CTAs per CTA's rows.
  int clusterSize = 1;
  /// A short launch's persistent twin (format 9): serves a launch only
  /// where it has at most this many rows per CTA of the function resident
  /// on the device at once (the variant after it serves the others); 0:
  /// any launch.
  int64_t maxRowsPerCta = 0;
};

struct KernelInfo {
  std::string name;
  /// A kernel of a `nf-compile --types` build: one KernelInfo per
  /// combination, all with the same name; its symbol (the fallback's name,
  /// <name>__<types>) and combination ("act=bf16 w=f32"). Empty otherwise.
  std::string symbol, types;
  int64_t rowLength = -1; ///< static D, or -1
  /// D must be a multiple of this: the largest group size of the kernel's
  /// group reductions (returned or not), 1 without any.
  int64_t rowMultiple = 1;
  /// In the order the runtime tries them: it launches the first whose
  /// guard holds.
  std::vector<VariantInfo> variants;
  int numChains = 0;
  std::vector<ArgumentInfo> args;
  std::vector<ResultInfo> results;
  std::vector<ParamInfo> params;
};

/// The artifact format nf-compile writes (the header's number). This
/// runtime also reads format 5, whose variant lines end before `cluster`
/// (no clusters): a reader that ignored the field would launch a cluster
/// variant with too few CTAs, so the field came with a new number. Format 8
/// adds `dynamic_shared` for the same reason: a reader that ignored it
/// would launch a persistent variant without its slots. Format 9 adds
/// `max_rows_per_cta`: a reader that ignored it would launch a short
/// launch's persistent twin for every launch (correct, but slower on long
/// ones). Format 10 adds the `chain_s_divisor` parameter (runtime/Divisor.h):
/// a reader that did not know it would refuse the kernel for its unknown
/// parameter kind rather than say that the file is newer than it.
constexpr int kArtifactFormat = 10;
constexpr int kOldestArtifactFormat = 5;
/// The most dynamic shared memory a variant may ask for: the 227 KB a CTA
/// may have on sm_90 and sm_100, the most of any target.
constexpr int kMaxDynamicSharedBytes = 227 * 1024;

struct Artifact {
  /// The header's format number (kOldestArtifactFormat to kArtifactFormat).
  int format = kArtifactFormat;
  std::string target;
  std::vector<KernelInfo> kernels;
  std::string ptx;
  /// The PyTorch fallback (Python source, one function per kernel, see
  /// codegen/TorchEmitter.h); empty for artifacts written before it existed.
  std::string torchSource;
  std::string cubin;
  /// The file's digest (16 hex digits, runtime/Digest.h); empty when parsed
  /// from a body without one (parseArtifact).
  std::string digest;

  /// The first kernel named `name` (of a --types build: its first
  /// combination; Module::launch picks by dtypes).
  const KernelInfo *findKernel(const std::string &name) const;
};

/// Parses the body of an artifact (the file without its digest line). On
/// failure returns false and says where and what in `error`.
bool parseArtifact(const std::string &text, Artifact &artifact,
                   std::string &error);
/// Checks the digest that ends a whole artifact file's `bytes`, then parses
/// the body: a file cut short or changed is refused before anything in it
/// is used.
bool parseArtifactFile(const std::string &bytes, Artifact &artifact,
                       std::string &error);
/// Reads the file at `path` and parses it with parseArtifactFile; errors
/// name the path.
bool readArtifactFile(const std::string &path, Artifact &artifact,
                      std::string &error);

/// The artifact's metadata as a JSON object: format, digest, target,
/// has_cubin, torch_source (or null), and per kernel its name, row_length,
/// num_chains, args, results and variants (docs/Artifact.md names the
/// fields). What nf_artifact_describe returns.
std::string describeArtifact(const Artifact &artifact);

} // namespace nf::rt

#endif // NF_RUNTIME_ARTIFACT_H
