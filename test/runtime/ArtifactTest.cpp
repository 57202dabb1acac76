//===- ArtifactTest.cpp - reading nf-compile artifacts --------------------===//
//
// Part of normfuse. The reader against the real compiler's output, and
// against malformed artifacts: each one is an error naming its line, never
// a crash or a silently wrong kernel.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include <cstring>
#include <fstream>
#include <sstream>

using namespace nf::rt;
using namespace nf_rt_test;

namespace {

//===----------------------------------------------------------------------===//
// The compiler's artifacts
//===----------------------------------------------------------------------===//

const ParamInfo *findParam(const KernelInfo &kernel, const std::string &kind,
                           int index, int dim = 0) {
  for (const ParamInfo &param : kernel.params)
    if (param.kind == kind && param.index == index && param.dim == dim)
      return &param;
  return nullptr;
}

TEST(ArtifactTest, ReadsCompilerOutput) {
  Artifact artifact = loadArtifact("fused");
  EXPECT_EQ(artifact.target, "sm_90");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &k = artifact.kernels[0];
  EXPECT_EQ(artifact.findKernel("fused_add_gate_norm"), &k);
  EXPECT_EQ(artifact.findKernel("nope"), nullptr);

  EXPECT_EQ(k.name, "fused_add_gate_norm");
  EXPECT_FALSE(k.schedule.empty());
  EXPECT_GT(k.threadsPerRow, 0);
  EXPECT_GT(k.rowsPerCta, 0);
  EXPECT_GT(k.chunk, 0);
  EXPECT_EQ(k.blockSize, k.threadsPerRow * k.rowsPerCta);
  EXPECT_EQ(k.rowLength, -1);
  EXPECT_EQ(k.vectorizedFunction, "fused_add_gate_norm");
  EXPECT_EQ(k.generalFunction, "fused_add_gate_norm_general");
  EXPECT_EQ(k.numChains, 1);

  ASSERT_EQ(k.args.size(), 4u);
  const char *names[] = {"x", "residual", "gate", "weight"};
  const DType dtypes[] = {DType::BF16, DType::BF16, DType::F32, DType::F32};
  const Shape shapes[] = {{-1, -1, -1}, {-1, -1, -1}, {-1, 1, -1}, {-1}};
  const char *bcasts[] = {"BSD", "BSD", "B1D", "D"};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(k.args[i].name, names[i]);
    EXPECT_TRUE(k.args[i].isTensor);
    EXPECT_EQ(k.args[i].dtype, dtypes[i]);
    EXPECT_EQ(k.args[i].shape, shapes[i]);
    EXPECT_EQ(k.args[i].role, "data");
    EXPECT_EQ(k.args[i].bcast, bcasts[i]);
    EXPECT_EQ(k.args[i].chains, std::vector<int>{0});
  }
  ASSERT_EQ(k.results.size(), 1u);
  EXPECT_EQ(k.results[0].dtype, DType::BF16);
  EXPECT_EQ(k.results[0].shape, (Shape{-1, -1, -1}));
  EXPECT_EQ(k.results[0].chain, 0);
  EXPECT_EQ(k.results[0].inPlace, -1);

  // The ABI: every pointer, the chain sizes, D and the row strides.
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(findParam(k, "arg_ptr", i)) << i;
  EXPECT_TRUE(findParam(k, "result_ptr", 0));
  EXPECT_TRUE(findParam(k, "chain_rows", 0));
  EXPECT_TRUE(findParam(k, "row_length", 0));
  EXPECT_TRUE(findParam(k, "arg_stride", 0, 0));
  EXPECT_TRUE(findParam(k, "arg_stride", 0, 1));
  EXPECT_TRUE(findParam(k, "result_stride", 0, 1));
  const ParamInfo *x = findParam(k, "arg_ptr", 0);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->type, "!llvm.ptr<1>");
  EXPECT_EQ(x->name, "x");
  EXPECT_EQ(findParam(k, "row_length", 0)->type, "i64");

  EXPECT_NE(artifact.ptx.find(".visible .entry fused_add_gate_norm("),
            std::string::npos);
  EXPECT_NE(artifact.ptx.find(".visible .entry fused_add_gate_norm_general("),
            std::string::npos);
  EXPECT_TRUE(artifact.cubin.empty());
}

TEST(ArtifactTest, ReadsStaticRowLength) {
  Artifact artifact = loadArtifact("fused_d3072");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &k = artifact.kernels[0];
  EXPECT_EQ(k.rowLength, 3072);
  EXPECT_EQ(k.args[0].shape, (Shape{-1, -1, 3072}));
  EXPECT_EQ(k.args[3].shape, (Shape{3072}));
  EXPECT_EQ(k.results[0].shape, (Shape{-1, -1, 3072}));
}

TEST(ArtifactTest, ReadsTwoChainsInPlaceAndRope) {
  Artifact artifact = loadArtifact("qk_neox");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &k = artifact.kernels[0];
  EXPECT_EQ(k.name, "qk_rmsnorm_rope_neox");
  EXPECT_EQ(k.numChains, 2);
  EXPECT_EQ(k.rowLength, 128);
  ASSERT_EQ(k.args.size(), 6u);
  EXPECT_EQ(k.args[0].chains, std::vector<int>{0});
  EXPECT_EQ(k.args[1].chains, std::vector<int>{1});
  EXPECT_EQ(k.args[4].name, "cos_sin");
  EXPECT_EQ(k.args[4].role, "rope_cache");
  EXPECT_EQ(k.args[4].chains, (std::vector<int>{0, 1}));
  EXPECT_EQ(k.args[5].name, "positions");
  EXPECT_EQ(k.args[5].role, "rope_positions");
  EXPECT_EQ(k.args[5].dtype, DType::I64);
  ASSERT_EQ(k.results.size(), 2u);
  EXPECT_EQ(k.results[0].inPlace, 0);
  EXPECT_EQ(k.results[0].chain, 0);
  EXPECT_EQ(k.results[1].inPlace, 1);
  EXPECT_EQ(k.results[1].chain, 1);
  EXPECT_TRUE(findParam(k, "cache_rows", 4));
  EXPECT_TRUE(findParam(k, "chain_rows", 1));
}

TEST(ArtifactTest, ReadsScalarArgument) {
  Artifact artifact = loadArtifact("qk_interleaved");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &k = artifact.kernels[0];
  ASSERT_EQ(k.args.size(), 7u);
  const ArgumentInfo &offset = k.args[6];
  EXPECT_EQ(offset.name, "offset");
  EXPECT_FALSE(offset.isTensor);
  EXPECT_EQ(offset.dtype, DType::I64);
  EXPECT_TRUE(offset.shape.empty());
  EXPECT_EQ(offset.role, "rope_offset");
  const ParamInfo *param = findParam(k, "arg_scalar", 6);
  ASSERT_TRUE(param);
  EXPECT_EQ(param->type, "i64");
}

TEST(ArtifactTest, ReadsFramesAndSelect) {
  Artifact frames = loadArtifact("frames");
  ASSERT_EQ(frames.kernels.size(), 1u);
  EXPECT_EQ(frames.kernels[0].args[2].bcast, "BF1D");
  EXPECT_EQ(frames.kernels[0].args[2].shape, (Shape{-1, -1, 1, -1}));
  EXPECT_EQ(frames.kernels[0].results.size(), 2u);

  Artifact select = loadArtifact("select");
  ASSERT_EQ(select.kernels.size(), 1u);
  const KernelInfo &k = select.kernels[0];
  EXPECT_EQ(k.numChains, 2);
  EXPECT_EQ(k.args[1].role, "select_index");
  EXPECT_EQ(k.args[1].dtype, DType::I32);
  EXPECT_EQ(k.args[1].chains, (std::vector<int>{0, 1}));
}

TEST(ArtifactTest, MissingFile) {
  Artifact artifact;
  std::string error;
  EXPECT_FALSE(
      readArtifactFile(artifactDir() + "/does-not-exist.nfa", artifact, error));
  EXPECT_NE(error.find("cannot open artifact"), std::string::npos) << error;
  EXPECT_NE(error.find("does-not-exist.nfa"), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// Malformed artifacts
//===----------------------------------------------------------------------===//

const char *const kPtx = ".version 7.8\n"
                         ".target sm_90\n"
                         ".visible .entry k()\n"
                         "{\n"
                         "}\n";

/// A small valid artifact, one line per element (line i + 1 of the file).
std::vector<std::string> validLines() {
  return {
      "normfuse-artifact 1", // 1
      "target sm_90",        // 2
      "kernel k",            // 3
      "schedule multi_row threads_per_row 16 rows_per_cta 16 chunk 8 "
      "chunks_per_thread 1",                    // 4
      "block 256 shared 0",                     // 5
      "row_length ?",                           // 6
      "function vectorized k",                  // 7
      "function general k_general",             // 8
      "chains 1",                               // 9
      "arg 0 x tensor bf16 ?x?x? data BSD 0",   // 10
      "arg 1 w tensor f32 ? data D 0",          // 11
      "result 0 bf16 ?x?x? chain 0 in_place -", // 12
      "param arg_ptr 0 0 !llvm.ptr<1> x",       // 13
      "param arg_ptr 1 0 !llvm.ptr<1> w",       // 14
      "param result_ptr 0 0 !llvm.ptr<1> out0", // 15
      "param chain_rows 0 0 i64 rows.0",        // 16
      "param row_length 0 0 i64 D",             // 17
      "param arg_stride 0 0 i64 stride.x.0",    // 18
      "end",                                    // 19
  };
}

/// The artifact of `lines` followed by the PTX blob, as the writer lays it
/// out: "ptx N", N bytes, a newline.
std::string join(const std::vector<std::string> &lines,
                 const std::string &tail = std::string("ptx ") +
                                           std::to_string(strlen(kPtx)) + "\n" +
                                           kPtx + "\n") {
  std::string text;
  for (const std::string &line : lines)
    text += line + "\n";
  return text + tail;
}

/// `lines` with line `lineNo` (1-based) replaced by `text`.
std::string withLine(int lineNo, const std::string &text) {
  std::vector<std::string> lines = validLines();
  lines.at(lineNo - 1) = text;
  return join(lines);
}

std::string withoutLine(int lineNo) {
  std::vector<std::string> lines = validLines();
  lines.erase(lines.begin() + lineNo - 1);
  return join(lines);
}

/// Expects `text` to be rejected at `lineNo` with a message containing
/// `what`.
void expectRejected(const std::string &text, int lineNo,
                    const std::string &what) {
  Artifact artifact;
  std::string error;
  EXPECT_FALSE(parseArtifact(text, artifact, error)) << text;
  std::string where = "artifact line " + std::to_string(lineNo) + ": ";
  EXPECT_EQ(error.rfind(where, 0), 0u) << "error: " << error;
  EXPECT_NE(error.find(what), std::string::npos)
      << "error: " << error << "\nmissing: " << what;
}

TEST(ArtifactTest, ValidHandWritten) {
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(validLines()), artifact, error)) << error;
  ASSERT_EQ(artifact.kernels.size(), 1u);
  EXPECT_EQ(artifact.ptx, kPtx);
  EXPECT_EQ(artifact.kernels[0].params.size(), 6u);
  // Blank lines are allowed between entries.
  std::vector<std::string> lines = validLines();
  lines.insert(lines.begin() + 5, "");
  EXPECT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  // A cubin after the PTX.
  std::string cubin("\x7f"
                    "ELF\n\0\1\2",
                    8);
  std::string text = join(validLines()) + "cubin " +
                     std::to_string(cubin.size()) + "\n" + cubin + "\n";
  ASSERT_TRUE(parseArtifact(text, artifact, error)) << error;
  EXPECT_EQ(artifact.cubin, cubin);
  EXPECT_EQ(artifact.ptx, kPtx);
}

TEST(ArtifactTest, WrongMagic) {
  expectRejected(withLine(1, "normfuse-artifact 2"), 1,
                 "not a normfuse artifact");
  expectRejected(withLine(1, "// a PTX file"), 1, "not a normfuse artifact");
  Artifact artifact;
  std::string error;
  EXPECT_FALSE(parseArtifact("", artifact, error));
  EXPECT_NE(error.find("not a normfuse artifact"), std::string::npos);
}

TEST(ArtifactTest, TruncatedBlobs) {
  std::string text = join(validLines());
  // Cut inside the PTX: the "ptx N" header is line 20.
  expectRejected(text.substr(0, text.size() - 10), 20, "truncated PTX");
  // A size that does not end at the blob's newline.
  expectRejected(join(validLines(), "ptx 7\n" + std::string(kPtx) + "\n"), 20,
                 "truncated PTX");
  expectRejected(join(validLines(), "ptx -5\nabc\n"), 20, "truncated PTX");
  expectRejected(join(validLines(), "ptx 99999999999999999999\nabc\n"), 20,
                 "truncated PTX");
  // A cubin cut short: its header is line 27 (the PTX spans 21-25 and the
  // writer's newline after it, line 26).
  expectRejected(text + "cubin 100\n\x7f"
                        "ELF",
                 27, "truncated cubin");
}

TEST(ArtifactTest, LineNumbersCountTheBlob) {
  // The first line after the PTX blob is line 27 of the file.
  expectRejected(join(validLines()) + "bogus line\n", 27,
                 "'bogus' outside a kernel");
  std::vector<std::string> lines = validLines();
  lines.pop_back(); // "end" after the PTX: the kernel is still open
  expectRejected(join(lines) + "frobnicate\n", 26, "unexpected 'frobnicate'");
}

TEST(ArtifactTest, UnknownLines) {
  expectRejected(withLine(6, "frobnicate 3"), 6, "unexpected 'frobnicate 3'");
  // A known key with the wrong number of words.
  expectRejected(withLine(5, "block 256"), 5, "unexpected 'block 256'");
  expectRejected(withLine(19, "end now"), 19, "unexpected 'end now'");
  expectRejected(withLine(7, "function fast k"), 7,
                 "unknown function variant 'fast'");
  // Kernel lines outside a kernel.
  std::vector<std::string> lines = validLines();
  lines.insert(lines.begin() + 2, "block 128 shared 0");
  expectRejected(join(lines), 3, "'block' outside a kernel");
  lines = validLines();
  lines.push_back("chains 1");
  expectRejected(join(lines), 20, "'chains' outside a kernel");
}

TEST(ArtifactTest, IncompleteKernel) {
  expectRejected(withoutLine(8), 18, "kernel 'k' is incomplete");
  expectRejected(withoutLine(5), 18, "kernel 'k' is incomplete");
  expectRejected(withoutLine(4), 18, "kernel 'k' is incomplete");
  expectRejected(withLine(5, "block 0 shared 0"), 19,
                 "kernel 'k' is incomplete");
  // No "end" before the end of the file.
  std::vector<std::string> lines = validLines();
  lines.pop_back();
  expectRejected(join(lines), 25, "kernel 'k' has no 'end'");
  // No PTX and no cubin.
  expectRejected(join(validLines(), ""), 19, "no PTX or cubin");
}

TEST(ArtifactTest, GarbageNumbers) {
  expectRejected(withLine(4, "schedule multi_row threads_per_row sixteen "
                             "rows_per_cta 16 chunk 8 chunks_per_thread 1"),
                 4, "malformed schedule");
  expectRejected(withLine(4, "schedule multi_row threads_per_row 16 "
                             "rows_per_cta 16x chunk 8 chunks_per_thread 1"),
                 4, "malformed schedule");
  expectRejected(withLine(5, "block 25x6 shared 0"), 5, "malformed block");
  expectRejected(withLine(5, "block 99999999999 shared 0"), 5,
                 "malformed block");
  expectRejected(withLine(6, "row_length 12.5"), 6, "malformed row_length");
  expectRejected(withLine(9, "chains two"), 9, "malformed chains");
  expectRejected(withLine(10, "arg 0 x tensor bf16 ?x?xQ data BSD 0"), 10,
                 "malformed argument");
  expectRejected(withLine(10, "arg 0 x tensor f64 ?x?x? data BSD 0"), 10,
                 "malformed argument");
  expectRejected(withLine(10, "arg 0 x vector bf16 ?x?x? data BSD 0"), 10,
                 "malformed argument");
  expectRejected(withLine(10, "arg 0 x tensor bf16 ?x?x? data BSD 0,x"), 10,
                 "malformed argument chains '0,x'");
  expectRejected(withLine(12, "result 0 bf16 ?x?x? chain zero in_place -"), 12,
                 "malformed result");
  expectRejected(withLine(12, "result 0 bf16 ?x?x? chain 0 in_place q"), 12,
                 "malformed result");
  expectRejected(withLine(13, "param arg_ptr 1e3 0 !llvm.ptr<1> x"), 13,
                 "malformed param");
}

TEST(ArtifactTest, IndicesOutOfRange) {
  // The launch code indexes arrays with these: they are checked at "end".
  expectRejected(withLine(4, "schedule multi_row threads_per_row 16 "
                             "rows_per_cta 0 chunk 8 chunks_per_thread 1"),
                 19, "kernel 'k': malformed schedule");
  expectRejected(withLine(4, "schedule multi_row threads_per_row 16 "
                             "rows_per_cta 16 chunk 0 chunks_per_thread 1"),
                 19, "kernel 'k': malformed schedule");
  expectRejected(withLine(10, "arg 0 x tensor bf16 ?x?x? data BSD 0,5"), 19,
                 "argument 'x' names chain 5 of 1");
  expectRejected(withLine(12, "result 0 bf16 ?x?x? chain 1 in_place -"), 19,
                 "result 0 names chain 1 of 1");
  expectRejected(withLine(12, "result 0 bf16 ?x? chain 0 in_place -"), 19,
                 "result 0 is not [B, S, D]");
  expectRejected(withLine(12, "result 0 bf16 ?x?x? chain 0 in_place 7"), 19,
                 "result 0 is in place into argument 7");
  expectRejected(withLine(13, "param arg_ptr 9 0 !llvm.ptr<1> x"), 19,
                 "parameter 'x' (arg_ptr 9 0) is out of range");
  expectRejected(withLine(18, "param arg_stride 0 3 i64 stride.x.3"), 19,
                 "parameter 'stride.x.3' (arg_stride 0 3) is out of range");
  expectRejected(withLine(16, "param chain_rows 1 0 i64 rows.1"), 19,
                 "parameter 'rows.1' (chain_rows 1 0) is out of range");
  expectRejected(withLine(16, "param arg_scalar 0 0 i64 x"), 19,
                 "parameter 'x' (arg_scalar 0 0) is out of range");
  expectRejected(withLine(16, "param magic 0 0 i64 m"), 19,
                 "unknown parameter kind 'magic'");
}

/// Every prefix of a real artifact is rejected or, if it ends after the
/// PTX, accepted; none crashes.
TEST(ArtifactTest, EveryTruncationOfARealArtifact) {
  Artifact full;
  std::string error;
  std::ifstream in(artifactPath("qk_interleaved"), std::ios::binary);
  ASSERT_TRUE(in);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  ASSERT_TRUE(parseArtifact(text, full, error)) << error;
  size_t ptxHeader = text.find("\nptx ");
  ASSERT_NE(ptxHeader, std::string::npos);
  for (size_t cut = 0; cut + 1 < text.size(); ++cut) {
    Artifact artifact;
    if (parseArtifact(text.substr(0, cut), artifact, error))
      ADD_FAILURE() << "a prefix of " << cut << " bytes parses";
    else if (error.rfind("artifact line ", 0) != 0)
      ADD_FAILURE() << "no line in: " << error;
    // Speed: test every byte of the metadata, then every 97th of the PTX.
    if (cut > ptxHeader + 8)
      cut += 96;
  }
}

} // namespace
