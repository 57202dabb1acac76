//===- RuntimeTestSupport.h - helpers of the runtime tests ------*- C++ -*-===//
//
// Part of normfuse. Artifacts compiled by nf-compile at build time (see
// CMakeLists.txt) and tensors at fake device addresses: planLaunch() only
// looks at the numbers, so no GPU is needed.
//
//===----------------------------------------------------------------------===//

#ifndef NF_TEST_RUNTIME_RUNTIMETESTSUPPORT_H
#define NF_TEST_RUNTIME_RUNTIMETESTSUPPORT_H

#include "runtime/Digest.h"
#include "runtime/Runtime.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace nf_rt_test {

using namespace nf::rt;

/// The directory of the compiled test artifacts; NF_RUNTIME_TEST_ARTIFACTS
/// in the environment overrides the build's (to run a copied binary).
inline std::string artifactDir() {
  if (const char *dir = std::getenv("NF_RUNTIME_TEST_ARTIFACTS"))
    return dir;
  return NF_RUNTIME_TEST_ARTIFACTS;
}

inline std::string artifactPath(const std::string &name) {
  return artifactDir() + "/" + name + ".nfa";
}

/// Reads artifact `name` (fused, fused_d3072, fused_d32768,
/// qk_neox, qk_neox_dynamic_d, qk_interleaved, frames, select; see
/// CMakeLists.txt); fails the test if it does not parse.
inline Artifact loadArtifact(const std::string &name) {
  Artifact artifact;
  std::string error;
  EXPECT_TRUE(readArtifactFile(artifactPath(name), artifact, error)) << error;
  return artifact;
}

/// The bytes of the file at `path` (empty if it cannot be read).
inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// Writes `text` to a file `name` in the test's temporary directory and
/// returns its path.
inline std::string writeTempFile(const std::string &name,
                                 const std::string &text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << text;
  EXPECT_TRUE(out.good()) << "cannot write " << path;
  return path;
}

/// Artifact `name` as the runtime of format 1 would have found it: the
/// same file with the header of that format.
inline std::string formatOneArtifact(const std::string &name) {
  std::string text = readFile(artifactPath(name));
  const std::string header =
      "normfuse-artifact " + std::to_string(kArtifactFormat) + "\n";
  EXPECT_EQ(text.rfind(header, 0), 0u) << "no current header in " << name;
  return "normfuse-artifact 1\n" + text.substr(header.size());
}

/// A hand-written artifact body (no digest line) of one kernel `quant` with
/// the quantized dtypes and a per-row result, as nf-compile writes them:
/// data arguments x f8E4M3FN [B, S, D], r f8E5M2 [B, S, D], bias i8 [D] and
/// w f32 [D]; results q i8 [B, S, D], scale f32 [B, S] (one value per row,
/// one stride parameter), e4 f8E4M3FN and e5 f8E5M2 [B, S, D]. A vectorized
/// variant of 16-element chunks (16-byte accesses of the 1-byte tensors)
/// and a general one, both for any D.
inline std::string quantizedArtifactBody() {
  static const char *const lines[] = {
      "normfuse-artifact 5",
      "target sm_90",
      "kernel quant",
      "row_length ?",
      "variant quant_v0 vectorized max_d 0 schedule streaming threads_per_row "
      "128 rows_per_cta 1 chunk 16 chunks_per_thread 0 block 128 shared 16",
      "variant quant_g1 general max_d 0 schedule streaming threads_per_row "
      "128 rows_per_cta 1 chunk 1 chunks_per_thread 0 block 128 shared 16",
      "chains 1",
      "arg 0 x tensor f8E4M3FN ?x?x? data BSD 0",
      "arg 1 r tensor f8E5M2 ?x?x? data BSD 0",
      "arg 2 bias tensor i8 ? data D 0",
      "arg 3 w tensor f32 ? data D 0",
      "result 0 i8 ?x?x? chain 0 in_place - group -",
      "result 1 f32 ?x? chain 0 in_place - group -",
      "result 2 f8E4M3FN ?x?x? chain 0 in_place - group -",
      "result 3 f8E5M2 ?x?x? chain 0 in_place - group -",
      "param arg_ptr 0 0 !llvm.ptr<1> x",
      "param arg_ptr 1 0 !llvm.ptr<1> r",
      "param arg_ptr 2 0 !llvm.ptr<1> bias",
      "param arg_ptr 3 0 !llvm.ptr<1> w",
      "param result_ptr 0 0 !llvm.ptr<1> out0",
      "param result_ptr 1 0 !llvm.ptr<1> out1",
      "param result_ptr 2 0 !llvm.ptr<1> out2",
      "param result_ptr 3 0 !llvm.ptr<1> out3",
      "param chain_rows 0 0 i64 rows.0",
      "param chain_s 0 0 i64 S.0",
      "param chain_f 0 0 i64 F.0",
      "param row_length 0 0 i64 D",
      "param arg_stride 0 0 i64 stride.x.0",
      "param arg_stride 0 1 i64 stride.x.1",
      "param arg_stride 1 0 i64 stride.r.0",
      "param arg_stride 1 1 i64 stride.r.1",
      "param result_stride 0 0 i64 stride.out0.0",
      "param result_stride 0 1 i64 stride.out0.1",
      "param result_stride 1 0 i64 stride.out1.0",
      "param result_stride 2 0 i64 stride.out2.0",
      "param result_stride 2 1 i64 stride.out2.1",
      "param result_stride 3 0 i64 stride.out3.0",
      "param result_stride 3 1 i64 stride.out3.1",
      "end",
  };
  static const std::string ptx = ".version 7.8\n.target sm_90\n"
                                 ".visible .entry quant_v0()\n{\n}\n"
                                 ".visible .entry quant_g1()\n{\n}\n";
  std::string text;
  for (const char *line : lines)
    text += std::string(line) + "\n";
  return text + "ptx " + std::to_string(ptx.size()) + "\n" + ptx + "\n";
}

/// A hand-written artifact body (no digest line) of one kernel `blocks`
/// with a group result, as nf-compile writes it: x f32 [B, S, D] -> q f32
/// [B, S, D], scale f32 [B, S, D / 128] (one value per group of 128
/// elements). A vectorized variant of 4-element chunks and a general one.
inline std::string groupArtifactBody() {
  static const char *const lines[] = {
      "normfuse-artifact 5",
      "target sm_90",
      "kernel blocks",
      "row_length ?",
      "row_multiple 128",
      "variant blocks_v0 vectorized max_d 0 schedule streaming threads_per_row "
      "256 rows_per_cta 1 chunk 4 chunks_per_thread 0 block 256 shared 0",
      "variant blocks_g1 general max_d 0 schedule streaming threads_per_row "
      "256 rows_per_cta 1 chunk 4 chunks_per_thread 0 block 256 shared 0",
      "chains 1",
      "arg 0 x tensor f32 ?x?x? data BSD 0",
      "result 0 f32 ?x?x? chain 0 in_place - group -",
      "result 1 f32 ?x?x? chain 0 in_place - group 128",
      "param arg_ptr 0 0 !llvm.ptr<1> x",
      "param result_ptr 0 0 !llvm.ptr<1> out0",
      "param result_ptr 1 0 !llvm.ptr<1> out1",
      "param chain_rows 0 0 i64 rows.0",
      "param chain_s 0 0 i64 S.0",
      "param chain_f 0 0 i64 F.0",
      "param row_length 0 0 i64 D",
      "param arg_stride 0 0 i64 stride.x.0",
      "param arg_stride 0 1 i64 stride.x.1",
      "param result_stride 0 0 i64 stride.out0.0",
      "param result_stride 0 1 i64 stride.out0.1",
      "param result_stride 1 0 i64 stride.out1.0",
      "param result_stride 1 1 i64 stride.out1.1",
      "end",
  };
  static const std::string ptx = ".version 7.8\n.target sm_90\n"
                                 ".visible .entry blocks_v0()\n{\n}\n"
                                 ".visible .entry blocks_g1()\n{\n}\n";
  std::string text;
  for (const char *line : lines)
    text += std::string(line) + "\n";
  return text + "ptx " + std::to_string(ptx.size()) + "\n" + ptx + "\n";
}

/// quantizedArtifactBody() parsed; fails the test if it does not parse.
inline Artifact quantizedArtifact() {
  Artifact artifact;
  std::string error;
  EXPECT_TRUE(parseArtifact(quantizedArtifactBody(), artifact, error)) << error;
  return artifact;
}

/// `body` as a whole artifact file: followed by its digest line.
inline std::string withDigest(const std::string &body) {
  return body + digestLine(body);
}

/// The variant `plan` launches (KernelInfo::variants[plan.variant]); fails
/// the test if the index is out of range.
inline const VariantInfo &launchedVariant(const KernelInfo &kernel,
                                          const LaunchPlan &plan) {
  if (plan.variant >= 0 && plan.variant < (int)kernel.variants.size())
    return kernel.variants[plan.variant];
  ADD_FAILURE() << "plan.variant " << plan.variant << " is not one of the "
                << kernel.variants.size() << " variants of " << kernel.name;
  static VariantInfo none = [] {
    VariantInfo v;
    v.rowsPerCta = v.chunk = v.blockSize = 1;
    return v;
  }();
  return none;
}

/// Hands out fake, 256-byte aligned, non-overlapping device addresses.
class FakeMemory {
public:
  uint64_t take(uint64_t bytes) {
    uint64_t at = next;
    next += (bytes + 255) / 256 * 256 + 256;
    return at;
  }

  /// A tensor of `shape`, rows `rowStride` elements apart (0: dense).
  Tensor tensor(DType dtype, std::vector<int64_t> shape,
                int64_t rowStride = 0) {
    Tensor t;
    t.dtype = dtype;
    t.rank = shape.size();
    int64_t stride = 1;
    for (int i = t.rank - 1; i >= 0; --i) {
      t.shape[i] = shape[i];
      t.strides[i] = stride;
      stride *= (i == t.rank - 1 && rowStride) ? rowStride : shape[i];
    }
    t.data = take(stride * dtypeBytes(dtype));
    return t;
  }

private:
  uint64_t next = 0x10000;
};

inline Value tensorValue(const Tensor &t) {
  Value v;
  v.isTensor = true;
  v.tensor = t;
  return v;
}

inline Value scalarValue(int64_t scalar) {
  Value v;
  v.isTensor = false;
  v.scalar = scalar;
  return v;
}

/// One launch's operands.
struct Launch {
  std::vector<Value> args;
  std::vector<Tensor> results;

  Status plan(const KernelInfo &kernel, LaunchPlan &out) const {
    return planLaunch(kernel, args.data(), args.size(), results.data(),
                      results.size(), out);
  }
  Status plan(const KernelInfo &kernel) const {
    LaunchPlan out;
    return plan(kernel, out);
  }
  /// Variant `variant` instead of the first whose guard holds.
  Status planVariant(const KernelInfo &kernel, int variant,
                     LaunchPlan &out) const {
    return planLaunch(kernel, args.data(), args.size(), results.data(),
                      results.size(), out, variant);
  }
};

/// The value of the first parameter of `kind`, `index` and `dim`.
inline uint64_t paramValue(const KernelInfo &kernel, const LaunchPlan &plan,
                           const std::string &kind, int index, int dim = 0) {
  for (size_t p = 0; p < kernel.params.size(); ++p)
    if (kernel.params[p].kind == kind && kernel.params[p].index == index &&
        kernel.params[p].dim == dim)
      return plan.params[p];
  ADD_FAILURE() << "no parameter " << kind << " " << index << " " << dim;
  return ~0ull;
}

} // namespace nf_rt_test

/// Expects `status` to be an error whose message contains every one of the
/// given strings.
#define EXPECT_ERROR(status, ...)                                              \
  do {                                                                         \
    ::nf::rt::Status nf_status_ = (status);                                    \
    EXPECT_FALSE(nf_status_.ok()) << "expected an error";                      \
    for (const char *nf_word_ : {__VA_ARGS__})                                 \
      EXPECT_NE(nf_status_.message().find(nf_word_), std::string::npos)        \
          << "message: " << nf_status_.message() << "\nmissing: " << nf_word_; \
  } while (0)

#endif // NF_TEST_RUNTIME_RUNTIMETESTSUPPORT_H
