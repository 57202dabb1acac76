//===- RuntimeTestSupport.h - helpers of the runtime tests ------*- C++ -*-===//
//
// Part of normfuse. Artifacts compiled by nf-compile at build time (see
// CMakeLists.txt) and tensors at fake device addresses: planLaunch() only
// looks at the numbers, so no GPU is needed.
//
//===----------------------------------------------------------------------===//

#ifndef NF_TEST_RUNTIME_RUNTIMETESTSUPPORT_H
#define NF_TEST_RUNTIME_RUNTIMETESTSUPPORT_H

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
  const std::string header = "normfuse-artifact 4\n";
  EXPECT_EQ(text.rfind(header, 0), 0u) << "no format 4 header in " << name;
  return "normfuse-artifact 1\n" + text.substr(header.size());
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
