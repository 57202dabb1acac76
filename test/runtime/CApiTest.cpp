//===- CApiTest.cpp - the packed C API and checks without a GPU -----------===//
//
// Part of normfuse. nf_artifact_read/nf_artifact_check need no driver: the
// Python package checks CPU calls with them before running the generated
// fallback, so they must give the launch path's messages.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "runtime/nf_runtime.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace nf::rt;
using namespace nf_rt_test;

namespace {

/// Packs a [rank]-shaped contiguous tensor.
void packTensor(std::vector<int64_t> &words, int dtype,
                std::vector<int64_t> shape, int64_t data) {
  words.push_back(dtype);
  words.push_back((int64_t)shape.size());
  words.push_back(data);
  for (int64_t n : shape)
    words.push_back(n);
  int64_t stride = 1;
  std::vector<int64_t> strides(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  for (int64_t s : strides)
    words.push_back(s);
}

/// fused_add_gate_norm(x, residual [B, S, D] bf16, gate [B, 1, D] f32,
/// weight [D] f32) -> [B, S, D] bf16, at distinct fake addresses.
std::vector<int64_t> fusedCall(int64_t B, int64_t S, int64_t D,
                               int64_t weightD) {
  std::vector<int64_t> w;
  packTensor(w, NF_BF16, {B, S, D}, 0x100000);
  packTensor(w, NF_BF16, {B, S, D}, 0x200000);
  packTensor(w, NF_F32, {B, 1, D}, 0x300000);
  packTensor(w, NF_F32, {weightD}, 0x400000);
  packTensor(w, NF_BF16, {B, S, D}, 0x500000);
  return w;
}

class CApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string path = artifactPath("fused");
    ASSERT_EQ(nf_artifact_read(path.c_str(), &artifact, error, sizeof error), 0)
        << error;
  }
  void TearDown() override { nf_artifact_free(artifact); }
  int check(const std::vector<int64_t> &w, size_t numArgs = 4,
            size_t numResults = 1) {
    error[0] = '\0';
    return nf_artifact_check(artifact, "fused_add_gate_norm", w.data(),
                             w.size(), numArgs, numResults, error,
                             sizeof error);
  }
  bool says(const char *part) { return std::strstr(error, part) != nullptr; }

  nf_artifact *artifact = nullptr;
  char error[512] = {};
};

TEST_F(CApiTest, ValidCall) {
  EXPECT_EQ(check(fusedCall(2, 3, 64, 64)), 0) << error;
}

TEST_F(CApiTest, AnyRowLengthAndAlignment) {
  // D dynamic: every row length has a variant, aligned or not; the check
  // does not care which one a launch would take.
  for (int64_t d : {1, 12, 64, 1000, 3072, 16384, 20000, 65536})
    EXPECT_EQ(check(fusedCall(2, 3, d, d)), 0) << d << ": " << error;
  std::vector<int64_t> w = fusedCall(2, 3, 64, 64);
  w[2] += 2; // x's data word
  EXPECT_EQ(check(w), 0) << error;
}

TEST_F(CApiTest, SizesThatDisagree) {
  EXPECT_NE(check(fusedCall(2, 3, 64, 65)), 0);
  EXPECT_TRUE(says("weight")) << error;
}

TEST_F(CApiTest, Counts) {
  std::vector<int64_t> w = fusedCall(2, 3, 64, 64);
  // The same words read as 5 arguments: the fifth is there, the result not.
  EXPECT_NE(check(w, 5, 1), 0);
  EXPECT_TRUE(says("end early")) << error;
  EXPECT_NE(check(w, 3, 1), 0);
  EXPECT_TRUE(says("too many")) << error;
  w.push_back(0);
  EXPECT_NE(check(w), 0);
  EXPECT_TRUE(says("1 words too many")) << error;
}

TEST_F(CApiTest, MalformedWords) {
  std::vector<int64_t> w = fusedCall(2, 3, 64, 64);
  std::vector<int64_t> badDtype = w;
  badDtype[0] = 17;
  EXPECT_NE(check(badDtype), 0);
  EXPECT_TRUE(says("bad rank (3) or dtype code (17)")) << error;
  std::vector<int64_t> badRank = w;
  badRank[1] = 9;
  EXPECT_NE(check(badRank), 0);
  EXPECT_TRUE(says("bad rank (9)")) << error;
  std::vector<int64_t> scalarResult(w.begin(), w.end() - 9);
  scalarResult.push_back(NF_PACKED_SCALAR);
  scalarResult.push_back(0);
  EXPECT_NE(check(scalarResult), 0);
  EXPECT_TRUE(says("result 0 must be a tensor")) << error;
  EXPECT_NE(nf_artifact_check(artifact, "nope", w.data(), w.size(), 4, 1, error,
                              sizeof error),
            0);
  EXPECT_TRUE(says("no kernel 'nope'")) << error;
  EXPECT_NE(nf_artifact_check(nullptr, "nope", w.data(), w.size(), 4, 1, error,
                              sizeof error),
            0);
}

TEST_F(CApiTest, LaunchChecksApply) {
  // A result that overlaps an input is refused like on the launch path.
  std::vector<int64_t> w;
  packTensor(w, NF_BF16, {1, 2, 64}, 0x100000);
  packTensor(w, NF_BF16, {1, 2, 64}, 0x200000);
  packTensor(w, NF_F32, {1, 1, 64}, 0x300000);
  packTensor(w, NF_F32, {64}, 0x400000);
  packTensor(w, NF_BF16, {1, 2, 64}, 0x100000 + 16);
  EXPECT_NE(check(w), 0);
  EXPECT_TRUE(says("overlap")) << error;
}

TEST_F(CApiTest, Describe) {
  const char *json = nullptr;
  size_t length = 0;
  ASSERT_EQ(nf_artifact_describe(artifact, &json, &length), 0);
  ASSERT_NE(json, nullptr);
  std::string text(json, length);
  EXPECT_EQ(std::strlen(json), length);
  EXPECT_EQ(text.rfind("{\"format\":" + std::to_string(kArtifactFormat) +
                           ",\"digest\":\"",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("\"cluster\":1"), std::string::npos) << text;
  EXPECT_NE(text.find("\"name\":\"fused_add_gate_norm\""), std::string::npos);
  EXPECT_NE(text.find("\"torch_source\":\""), std::string::npos);
  EXPECT_NE(nf_artifact_describe(nullptr, &json, &length), 0);
  EXPECT_NE(nf_artifact_describe(artifact, nullptr, &length), 0);
}

TEST(CApiReadTest, DamagedFilesAreRefused) {
  // Cut short, or one byte of the PTX changed: refused by both entry
  // points that read a file, with the reason, before anything is used.
  std::string text = readFile(artifactPath("fused"));
  size_t ptx = text.find("\nptx ");
  ASSERT_NE(ptx, std::string::npos);
  std::string changed = text;
  changed[ptx + 100] ^= 0x20;
  struct Case {
    const char *name;
    std::string bytes;
    const char *reason;
  } cases[] = {
      {"capi-cut.nfa", text.substr(0, text.size() / 2), "no digest line"},
      {"capi-changed.nfa", changed, "digest mismatch"},
  };
  for (const Case &c : cases) {
    std::string path = writeTempFile(c.name, c.bytes);
    char error[512] = {};
    nf_artifact *artifact = nullptr;
    EXPECT_NE(nf_artifact_read(path.c_str(), &artifact, error, sizeof error),
              0);
    EXPECT_EQ(artifact, nullptr);
    EXPECT_NE(std::strstr(error, c.reason), nullptr) << error;
    nf_module *module = nullptr;
    EXPECT_NE(nf_module_load(path.c_str(), &module, error, sizeof error), 0);
    EXPECT_EQ(module, nullptr);
    EXPECT_NE(std::strstr(error, c.reason), nullptr) << error;
  }
}

TEST(CApiReadTest, FormatOne) {
  // An artifact written for the runtime of format 1 is refused with what to
  // do about it.
  std::string path =
      writeTempFile("capi-format-1.nfa", formatOneArtifact("fused"));
  nf_artifact *artifact = nullptr;
  char error[256] = {};
  EXPECT_NE(nf_artifact_read(path.c_str(), &artifact, error, sizeof error), 0);
  EXPECT_EQ(artifact, nullptr);
  EXPECT_NE(std::strstr(error, "artifact line 1: artifact format '1' is not "
                               "one this runtime reads (5 to 10)"),
            nullptr)
      << error;
  EXPECT_NE(std::strstr(error, "recompile"), nullptr) << error;
}

TEST(CApiReadTest, RowLongerThanEveryVariant) {
  // In place and rotated with D dynamic: rows up to the longest variant,
  // and an error past it, without a GPU.
  std::string path = artifactPath("qk_neox_dynamic_d");
  int64_t longest = 0;
  // The artifact outlives the loop (a temporary in the range would not).
  Artifact read = loadArtifact("qk_neox_dynamic_d");
  const KernelInfo *info = read.findKernel("qk_rmsnorm_rope_neox_dynamic_d");
  ASSERT_NE(info, nullptr);
  for (const VariantInfo &v : info->variants)
    longest = std::max(longest, v.maxD);
  ASSERT_GT(longest, 128);
  nf_artifact *artifact = nullptr;
  char error[512] = {};
  ASSERT_EQ(nf_artifact_read(path.c_str(), &artifact, error, sizeof error), 0)
      << error;
  auto check = [&](int64_t d) {
    // q, k [2, 4, d] bf16 in place; wq, wk [d] bf16; cos_sin [64, 128]
    // f32; positions [2] i64.
    std::vector<int64_t> w;
    packTensor(w, NF_BF16, {2, 4, d}, 0x1000000);
    packTensor(w, NF_BF16, {2, 4, d}, 0x2000000);
    packTensor(w, NF_BF16, {d}, 0x3000000);
    packTensor(w, NF_BF16, {d}, 0x4000000);
    packTensor(w, NF_F32, {64, 128}, 0x5000000);
    packTensor(w, NF_I64, {2}, 0x6000000);
    packTensor(w, NF_BF16, {2, 4, d}, 0x1000000);
    packTensor(w, NF_BF16, {2, 4, d}, 0x2000000);
    error[0] = '\0';
    return nf_artifact_check(artifact, "qk_rmsnorm_rope_neox_dynamic_d",
                             w.data(), w.size(), 6, 2, error, sizeof error);
  };
  EXPECT_EQ(check(128), 0) << error;
  EXPECT_EQ(check(longest), 0) << error;
  EXPECT_NE(check(longest + 8), 0);
  std::string expected =
      "no variant serves rows of D = " + std::to_string(longest + 8);
  EXPECT_NE(std::strstr(error, expected.c_str()), nullptr) << error;
  nf_artifact_free(artifact);
}

TEST(CApiReadTest, BadPath) {
  nf_artifact *artifact = nullptr;
  char error[256] = {};
  EXPECT_NE(
      nf_artifact_read("/nonexistent/x.nfa", &artifact, error, sizeof error),
      0);
  EXPECT_EQ(artifact, nullptr);
  EXPECT_NE(std::strstr(error, "/nonexistent/x.nfa"), nullptr) << error;
}

/// The hand-written quantized kernel (RuntimeTestSupport.h) through the C
/// API: read from a file with its digest, described, checked.
class CApiQuantizedTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string path = writeTempFile("capi-quantized.nfa",
                                     withDigest(quantizedArtifactBody()));
    ASSERT_EQ(nf_artifact_read(path.c_str(), &artifact, error, sizeof error), 0)
        << error;
  }
  void TearDown() override { nf_artifact_free(artifact); }

  /// x, r [B, S, D] (dtype codes xCode, rCode), bias i8 [D], w f32 [D] ->
  /// q i8 [B, S, D], scale f32 [B, scaleS], e4, e5 [B, S, D].
  static std::vector<int64_t> call(int64_t B, int64_t S, int64_t D,
                                   int xCode = NF_F8E4M3FN,
                                   int rCode = NF_F8E5M2, int64_t scaleS = -1) {
    std::vector<int64_t> w;
    packTensor(w, xCode, {B, S, D}, 0x100000);
    packTensor(w, rCode, {B, S, D}, 0x200000);
    packTensor(w, NF_I8, {D}, 0x300000);
    packTensor(w, NF_F32, {D}, 0x400000);
    packTensor(w, NF_I8, {B, S, D}, 0x500000);
    packTensor(w, NF_F32, {B, scaleS < 0 ? S : scaleS}, 0x600000);
    packTensor(w, NF_F8E4M3FN, {B, S, D}, 0x700000);
    packTensor(w, NF_F8E5M2, {B, S, D}, 0x800000);
    return w;
  }
  int check(const std::vector<int64_t> &w) {
    error[0] = '\0';
    return nf_artifact_check(artifact, "quant", w.data(), w.size(), 4, 4, error,
                             sizeof error);
  }
  bool says(const char *part) { return std::strstr(error, part) != nullptr; }

  nf_artifact *artifact = nullptr;
  char error[512] = {};
};

TEST_F(CApiQuantizedTest, DescribeNamesTheDtypesAndThePerRowShape) {
  const char *json = nullptr;
  size_t length = 0;
  ASSERT_EQ(nf_artifact_describe(artifact, &json, &length), 0);
  std::string text(json, length);
  EXPECT_NE(text.find("{\"index\":0,\"name\":\"x\",\"is_tensor\":true,"
                      "\"dtype\":\"f8E4M3FN\",\"shape\":[-1,-1,-1],"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"name\":\"r\",\"is_tensor\":true,"
                      "\"dtype\":\"f8E5M2\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"name\":\"bias\",\"is_tensor\":true,"
                      "\"dtype\":\"i8\",\"shape\":[-1],"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("\"results\":["
                "{\"index\":0,\"dtype\":\"i8\",\"shape\":[-1,-1,-1],"
                "\"chain\":0,\"in_place\":-1,\"group\":0},"
                "{\"index\":1,\"dtype\":\"f32\",\"shape\":[-1,-1],"
                "\"chain\":0,\"in_place\":-1,\"group\":0},"
                "{\"index\":2,\"dtype\":\"f8E4M3FN\",\"shape\":[-1,-1,-1],"
                "\"chain\":0,\"in_place\":-1,\"group\":0},"
                "{\"index\":3,\"dtype\":\"f8E5M2\",\"shape\":[-1,-1,-1],"
                "\"chain\":0,\"in_place\":-1,\"group\":0}]"),
      std::string::npos)
      << text;
}

TEST_F(CApiQuantizedTest, ChecksThePackedCall) {
  EXPECT_EQ(check(call(2, 5, 64)), 0) << error;
  // The 8-bit codes are read as their dtypes.
  EXPECT_NE(check(call(2, 5, 64, NF_F8E5M2)), 0);
  EXPECT_TRUE(says("argument 'x' must be f8E4M3FN, found f8E5M2")) << error;
  EXPECT_NE(check(call(2, 5, 64, NF_F8E4M3FN, NF_I8)), 0);
  EXPECT_TRUE(says("argument 'r' must be f8E5M2, found i8")) << error;
  // The [B, S] result agrees with the rows.
  EXPECT_NE(check(call(2, 5, 64, NF_F8E4M3FN, NF_F8E5M2, 6)), 0);
  EXPECT_TRUE(says("result 1 [2, 6] gives S = 6, expected 5")) << error;
  // A code past the last is refused as such.
  EXPECT_NE(check(call(2, 5, 64, NF_F8E5M2 + 1)), 0);
  EXPECT_TRUE(says("argument 0 has a bad rank (3) or dtype code (8)")) << error;
}

} // namespace

/// A kernel with a [B, S, D / 128] group result (RuntimeTestSupport.h)
/// through the C API: described with its group, and its launches checked.
class CApiGroupTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string path =
        writeTempFile("capi-group.nfa", withDigest(groupArtifactBody()));
    ASSERT_EQ(nf_artifact_read(path.c_str(), &artifact, error, sizeof error), 0)
        << error;
  }
  void TearDown() override { nf_artifact_free(artifact); }

  /// x [B, S, D] -> q [B, S, D], scale [B, S, groups].
  int check(int64_t B, int64_t S, int64_t D, int64_t groups) {
    std::vector<int64_t> w;
    packTensor(w, NF_F32, {B, S, D}, 0x100000);
    packTensor(w, NF_F32, {B, S, D}, 0x200000);
    packTensor(w, NF_F32, {B, S, groups}, 0x300000);
    error[0] = '\0';
    return nf_artifact_check(artifact, "blocks", w.data(), w.size(), 1, 2,
                             error, sizeof error);
  }
  bool says(const char *part) { return std::strstr(error, part) != nullptr; }

  nf_artifact *artifact = nullptr;
  char error[512] = {};
};

TEST_F(CApiGroupTest, DescribeNamesTheGroup) {
  const char *json = nullptr;
  size_t length = 0;
  ASSERT_EQ(nf_artifact_describe(artifact, &json, &length), 0);
  std::string text(json, length);
  EXPECT_NE(text.find("\"row_length\":-1,\"row_multiple\":128,"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{\"index\":1,\"dtype\":\"f32\",\"shape\":[-1,-1,-1],"
                      "\"chain\":0,\"in_place\":-1,\"group\":128}"),
            std::string::npos)
      << text;
}

TEST_F(CApiGroupTest, ChecksTheGroupResult) {
  EXPECT_EQ(check(2, 3, 384, 3), 0) << error;
  EXPECT_EQ(check(1, 1, 128, 1), 0) << error;
  // D must be a multiple of G, and the last size D / G.
  EXPECT_NE(check(2, 3, 200, 1), 0);
  EXPECT_TRUE(says("row length D = 200 is not a multiple of 128, the group "
                   "size of the kernel's group reductions"))
      << error;
  EXPECT_NE(check(2, 3, 384, 4), 0);
  EXPECT_TRUE(says("result 1 dimension 2 must be D / 128 = 3, found 4"))
      << error;
  EXPECT_NE(check(2, 3, 384, 384), 0);
  EXPECT_TRUE(says("result 1 dimension 2 must be D / 128 = 3, found 384"))
      << error;
}
