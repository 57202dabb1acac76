//===- ArtifactTest.cpp - reading nf-compile artifacts --------------------===//
//
// Part of normfuse. The reader against the real compiler's output, and
// against malformed artifacts: each one is an error naming its line, never
// a crash or a silently wrong kernel.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"
#include "runtime/Digest.h"

#include <algorithm>
#include <cstdint>
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

/// A bound on D that orders variants: max_d, or "any" for 0; a peeled
/// variant's is its schedule's capacity (its max_d is chunk - 1 less: a row
/// may start that far past an aligned address).
int64_t bound(const VariantInfo &v) {
  if (v.peeled)
    return v.maxD + v.chunk - 1;
  return v.maxD == 0 ? INT64_MAX : v.maxD;
}

/// What every family of variants nf-compile writes satisfies: functions in
/// the PTX, schedules the launch can divide by, register-resident variants
/// bounded by what they hold, the order the runtime relies on (by the rows
/// they serve, a vectorized variant before the peeled and general ones of
/// the same bound, a peeled one before the general one), and a general
/// variant for every row a vectorized or peeled one serves.
void expectSoundFamily(const Artifact &artifact, const KernelInfo &k) {
  SCOPED_TRACE(k.name);
  ASSERT_FALSE(k.variants.empty());
  int64_t mostVectorized = 0, mostGeneral = 0;
  for (size_t i = 0; i < k.variants.size(); ++i) {
    const VariantInfo &v = k.variants[i];
    SCOPED_TRACE(v.function);
    EXPECT_EQ(v.function.rfind(k.name + "_", 0), 0u);
    for (size_t j = 0; j < i; ++j) {
      EXPECT_NE(k.variants[j].function, v.function) << "twice";
    }
    EXPECT_NE(artifact.ptx.find(".visible .entry " + v.function + "("),
              std::string::npos);
    EXPECT_FALSE(v.schedule.empty());
    // rows_per_cta: the row groups of a CTA times the rows a group holds.
    ASSERT_GT(v.threadsPerRow, 0);
    EXPECT_EQ(v.blockSize % v.threadsPerRow, 0);
    ASSERT_GT(v.blockSize / v.threadsPerRow, 0);
    EXPECT_EQ(v.rowsPerCta % (v.blockSize / v.threadsPerRow), 0);
    // General variants access one element at a time; peeled ones whole
    // chunks, and only register-resident ones.
    EXPECT_FALSE(v.vectorized && v.peeled);
    if (v.vectorized || v.peeled) {
      EXPECT_GT(v.chunk, 1);
    } else {
      EXPECT_EQ(v.chunk, 1);
    }
    if (v.peeled) {
      EXPECT_GT(v.chunksPerThread, 0);
    }
    // A register-resident variant serves exactly the rows it holds; a
    // streaming one holds none.
    int64_t capacity =
        (int64_t)v.threadsPerRow * v.chunksPerThread * v.chunk * v.clusterSize;
    // The CTAs of a cluster share a row only in register-resident
    // vectorized variants of one row per CTA.
    if (v.clusterSize > 1) {
      EXPECT_EQ(v.schedule, "cluster");
      EXPECT_TRUE(v.vectorized);
      EXPECT_EQ(v.rowsPerCta, 1);
    }
    if (v.chunksPerThread > 0) {
      EXPECT_EQ(v.maxD, v.peeled ? capacity - v.chunk + 1 : capacity);
    } else {
      EXPECT_EQ(v.schedule, "streaming");
    }
    if (i > 0) {
      const VariantInfo &prev = k.variants[i - 1];
      EXPECT_LE(bound(prev), bound(v)) << "after " << prev.function;
      if (bound(prev) == bound(v)) {
        EXPECT_FALSE(!prev.vectorized && v.vectorized)
            << "after " << prev.function;
        EXPECT_FALSE(!prev.vectorized && !prev.peeled && v.peeled)
            << "after " << prev.function;
      }
    }
    if (v.vectorized || v.peeled)
      mostVectorized =
          std::max(mostVectorized, v.maxD == 0 ? INT64_MAX : v.maxD);
    else
      mostGeneral = std::max(mostGeneral, bound(v));
  }
  EXPECT_GE(mostGeneral, mostVectorized)
      << "a misaligned row that a vectorized variant serves has no variant";
}

TEST(ArtifactTest, ReadsCompilerOutput) {
  Artifact artifact = loadArtifact("fused");
  EXPECT_EQ(artifact.target, "sm_90");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &k = artifact.kernels[0];
  EXPECT_EQ(artifact.findKernel("fused_add_gate_norm"), &k);
  EXPECT_EQ(artifact.findKernel("nope"), nullptr);

  EXPECT_EQ(k.name, "fused_add_gate_norm");
  EXPECT_EQ(k.rowLength, -1);
  EXPECT_EQ(k.numChains, 1);

  // D dynamic: a family of variants, from short register-resident rows to
  // unbounded streamed ones.
  expectSoundFamily(artifact, k);
  ASSERT_GT(k.variants.size(), 4u);
  int registerResident = 0, halfChunk = 0, quarterChunk = 0, peeled = 0;
  for (size_t i = 0; i < k.variants.size(); ++i) {
    const VariantInfo &v = k.variants[i];
    SCOPED_TRACE(v.function);
    // bf16 rows: 16-byte chunks of 8 elements; each register-resident one
    // is followed by its 8-byte twin (4 elements, twice the chunks, the
    // same threads and bound) for rows of a multiple of 4, then its 4-byte
    // twin (2 elements, four times the chunks) for even rows.
    if (v.vectorized && (v.chunk == 4 || v.chunk == 2)) {
      ++(v.chunk == 4 ? halfChunk : quarterChunk);
      size_t back = v.chunk == 4 ? 1 : 2;
      ASSERT_GE(i, back);
      const VariantInfo &full = k.variants[i - back];
      EXPECT_TRUE(full.vectorized);
      EXPECT_EQ(full.chunk, 8);
      EXPECT_EQ(v.chunksPerThread, 8 / v.chunk * full.chunksPerThread);
      EXPECT_EQ(v.threadsPerRow, full.threadsPerRow);
      EXPECT_EQ(v.maxD, full.maxD);
    } else if (v.vectorized) {
      EXPECT_EQ(v.chunk, 8);
    }
    registerResident += v.chunksPerThread > 0;
    peeled += v.peeled;
  }
  EXPECT_GT(registerResident, 2);
  // Rows of any offset (odd D) with the f32 gate and weight in granules.
  EXPECT_GT(peeled, 2);
  EXPECT_GT(halfChunk, 2);
  EXPECT_EQ(quarterChunk, halfChunk);
  // The last two serve any D: streamed, vectorized then general.
  const VariantInfo &vec = k.variants[k.variants.size() - 2];
  const VariantInfo &gen = k.variants.back();
  EXPECT_TRUE(vec.vectorized);
  EXPECT_FALSE(gen.vectorized);
  for (const VariantInfo *v : {&vec, &gen}) {
    SCOPED_TRACE(v->function);
    EXPECT_EQ(v->maxD, 0);
    EXPECT_EQ(v->schedule, "streaming");
    EXPECT_EQ(v->chunksPerThread, 0);
  }
  // Every other one is bounded.
  for (size_t i = 0; i + 2 < k.variants.size(); ++i)
    EXPECT_GT(k.variants[i].maxD, 0) << k.variants[i].function;

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

  // One entry point per variant (checked above), and no other.
  size_t entries = 0;
  for (size_t at = 0;
       (at = artifact.ptx.find(".visible .entry ", at)) != std::string::npos;
       ++at)
    ++entries;
  EXPECT_EQ(entries, k.variants.size());
  EXPECT_TRUE(artifact.cubin.empty());

  // The PyTorch fallback of the same IR, whole: header to kernel table.
  const std::string &torch = artifact.torchSource;
  EXPECT_EQ(torch.rfind("# Generated by nf-compile from "
                        "fused_add_gate_norm.mlir; do not edit.\n",
                        0),
            0u)
      << torch.substr(0, 200);
  EXPECT_NE(torch.find("\nimport torch\n"), std::string::npos);
  EXPECT_NE(
      torch.find("\ndef fused_add_gate_norm(x, residual, gate, weight):\n"),
      std::string::npos);
  EXPECT_NE(torch.find("\"fused_add_gate_norm\": fused_add_gate_norm,\n}\n"),
            std::string::npos);
  EXPECT_EQ(torch.back(), '\n');
}

TEST(ArtifactTest, EveryFamilyIsSound) {
  for (const char *name :
       {"fused", "fused_d3072", "fused_d32768", "qk_neox", "qk_neox_dynamic_d",
        "qk_interleaved", "frames", "select", "rmsnorm", "layernorm"}) {
    SCOPED_TRACE(name);
    Artifact artifact = loadArtifact(name);
    ASSERT_FALSE(artifact.kernels.empty());
    for (const KernelInfo &k : artifact.kernels)
      expectSoundFamily(artifact, k);
  }
}

TEST(ArtifactTest, ReadsLongStaticRow) {
  // D = 32768 (sm_90): too long for one CTA's registers, so the vectorized
  // variant is shared by a cluster of two CTAs of 512 threads x 4 chunks;
  // the general one streams, by 1024 threads, one CTA per row.
  Artifact artifact = loadArtifact("fused_d32768");
  const KernelInfo &k = artifact.kernels[0];
  ASSERT_EQ(k.variants.size(), 2u);
  const VariantInfo &v = k.variants[0], &g = k.variants[1];
  EXPECT_TRUE(v.vectorized);
  EXPECT_EQ(v.schedule, "cluster");
  EXPECT_EQ(v.clusterSize, 2);
  EXPECT_EQ(v.chunksPerThread, 4);
  EXPECT_EQ(v.blockSize, 512);
  EXPECT_EQ(v.maxD, 32768);
  EXPECT_FALSE(g.vectorized);
  EXPECT_EQ(g.schedule, "streaming");
  EXPECT_EQ(g.clusterSize, 1);
  EXPECT_EQ(g.chunksPerThread, 0);
  EXPECT_EQ(g.blockSize, 1024);
}

TEST(ArtifactTest, ReadsStaticRowLength) {
  Artifact artifact = loadArtifact("fused_d3072");
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &k = artifact.kernels[0];
  EXPECT_EQ(k.rowLength, 3072);
  // A static D: one schedule, its vectorized variant with the persistent
  // twin of short launches before it, and its general variant, all
  // serving D.
  ASSERT_EQ(k.variants.size(), 3u);
  EXPECT_TRUE(k.variants[0].vectorized);
  EXPECT_EQ(k.variants[0].schedule, "persistent");
  // 16 rows per resident CTA: the kernel (seed #2) reads x only after its
  // reduction.
  EXPECT_EQ(k.variants[0].maxRowsPerCta, 16);
  EXPECT_GT(k.variants[0].dynamicSharedBytes, 0);
  EXPECT_TRUE(k.variants[1].vectorized);
  EXPECT_EQ(k.variants[1].schedule, "cta");
  EXPECT_EQ(k.variants[1].maxRowsPerCta, 0);
  EXPECT_FALSE(k.variants[2].vectorized);
  for (const VariantInfo &v : k.variants) {
    SCOPED_TRACE(v.function);
    EXPECT_GE(bound(v), 3072);
  }
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
  ASSERT_EQ(k.variants.size(), 2u);
  EXPECT_TRUE(k.variants[0].vectorized);
  EXPECT_FALSE(k.variants[1].vectorized);
}

TEST(ArtifactTest, InPlaceRotaryHoldsRowsInRegisters) {
  // Written in place and rotated: a row is read whole before any of it is
  // stored, so every variant, the general ones too, is register-resident
  // and bounded; with D dynamic no variant serves every D.
  for (const char *name : {"qk_neox", "qk_interleaved", "qk_neox_dynamic_d"}) {
    SCOPED_TRACE(name);
    Artifact artifact = loadArtifact(name);
    ASSERT_EQ(artifact.kernels.size(), 1u);
    const KernelInfo &k = artifact.kernels[0];
    int general = 0;
    for (const VariantInfo &v : k.variants) {
      SCOPED_TRACE(v.function);
      EXPECT_GT(v.chunksPerThread, 0);
      EXPECT_GT(v.maxD, 0);
      general += !v.vectorized;
    }
    EXPECT_GT(general, 0);
  }
  Artifact dynamicD = loadArtifact("qk_neox_dynamic_d");
  const KernelInfo &k = dynamicD.kernels[0];
  EXPECT_EQ(k.rowLength, -1);
  EXPECT_EQ(k.results[0].inPlace, 0);
  EXPECT_EQ(k.results[1].inPlace, 1);
  EXPECT_GT(k.variants.size(), 4u);
  EXPECT_GT(k.variants.back().maxD, 4096);
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

// The variants of the hand-written artifact (lines 5 to 8): two register-
// resident ones of 16 x 1 x 8 = 128 elements, one of 256 threads holding
// 256 x 2 x 8 = 4096, and one streamed for any D.
const char *const kV0 = "variant k_v0 vectorized max_d 128 schedule multi_row "
                        "threads_per_row 16 rows_per_cta 32 chunk 8 "
                        "chunks_per_thread 1 block 256 shared 0";
const char *const kG1 = "variant k_g1 general max_d 128 schedule multi_row "
                        "threads_per_row 16 rows_per_cta 32 chunk 1 "
                        "chunks_per_thread 8 block 256 shared 0";
const char *const kV2 = "variant k_v2 vectorized max_d 4096 schedule cta "
                        "threads_per_row 256 rows_per_cta 1 chunk 8 "
                        "chunks_per_thread 2 block 256 shared 32";
const char *const kG3 = "variant k_g3 general max_d 0 schedule streaming "
                        "threads_per_row 512 rows_per_cta 1 chunk 1 "
                        "chunks_per_thread 0 block 512 shared 64";

/// A small valid artifact, one line per element (line i + 1 of the file).
std::vector<std::string> validLines() {
  return {
      "normfuse-artifact 5",                            // 1
      "target sm_90",                                   // 2
      "kernel k",                                       // 3
      "row_length ?",                                   // 4
      kV0,                                              // 5
      kG1,                                              // 6
      kV2,                                              // 7
      kG3,                                              // 8
      "chains 1",                                       // 9
      "arg 0 x tensor bf16 ?x?x? data BSD 0",           // 10
      "arg 1 w tensor f32 ? data D 0",                  // 11
      "result 0 bf16 ?x?x? chain 0 in_place - group -", // 12
      "param arg_ptr 0 0 !llvm.ptr<1> x",               // 13
      "param arg_ptr 1 0 !llvm.ptr<1> w",               // 14
      "param result_ptr 0 0 !llvm.ptr<1> out0",         // 15
      "param chain_rows 0 0 i64 rows.0",                // 16
      "param row_length 0 0 i64 D",                     // 17
      "param arg_stride 0 0 i64 stride.x.0",            // 18
      "end",                                            // 19
  };
}

/// The same kernel in format 1 (before variants): one schedule, block,
/// and a vectorized and a general function.
std::vector<std::string> formatOneLines() {
  return {
      "normfuse-artifact 1",
      "target sm_90",
      "kernel k",
      "schedule multi_row threads_per_row 16 rows_per_cta 16 chunk 8 "
      "chunks_per_thread 1",
      "block 256 shared 0",
      "row_length ?",
      "function vectorized k",
      "function general k_general",
      "chains 1",
      "arg 0 x tensor bf16 ?x?x? data BSD 0",
      "arg 1 w tensor f32 ? data D 0",
      "result 0 bf16 ?x?x? chain 0 in_place - group -",
      "param arg_ptr 0 0 !llvm.ptr<1> x",
      "param arg_ptr 1 0 !llvm.ptr<1> w",
      "param result_ptr 0 0 !llvm.ptr<1> out0",
      "param chain_rows 0 0 i64 rows.0",
      "param row_length 0 0 i64 D",
      "param arg_stride 0 0 i64 stride.x.0",
      "end",
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

std::vector<std::string> words(const std::string &line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string word; in >> word;)
    w.push_back(word);
  return w;
}

std::string unwords(const std::vector<std::string> &w) {
  std::string line;
  for (const std::string &word : w)
    line += (line.empty() ? "" : " ") + word;
  return line;
}

/// `line` with word `index` (0-based) replaced by `text`.
std::string withWord(const std::string &line, size_t index,
                     const std::string &text) {
  std::vector<std::string> w = words(line);
  w.at(index) = text;
  return unwords(w);
}

/// Where the fields of a variant line are (word index).
enum VariantWord {
  kVectorized = 2,
  kMaxD = 4,
  kSchedule = 6,
  kThreadsPerRow = 8,
  kRowsPerCta = 10,
  kChunk = 12,
  kChunksPerThread = 14,
  kBlock = 16,
  kShared = 18,
};

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

void expectAccepted(const std::string &text) {
  Artifact artifact;
  std::string error;
  EXPECT_TRUE(parseArtifact(text, artifact, error)) << error << "\n" << text;
}

TEST(ArtifactTest, ValidHandWritten) {
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(validLines()), artifact, error)) << error;
  ASSERT_EQ(artifact.kernels.size(), 1u);
  EXPECT_EQ(artifact.ptx, kPtx);
  const KernelInfo &k = artifact.kernels[0];
  EXPECT_EQ(k.params.size(), 6u);
  EXPECT_EQ(k.rowLength, -1);
  // The variants in the order of the file.
  ASSERT_EQ(k.variants.size(), 4u);
  const char *functions[] = {"k_v0", "k_g1", "k_v2", "k_g3"};
  const bool vectorized[] = {true, false, true, false};
  const int64_t maxD[] = {128, 128, 4096, 0};
  const char *schedules[] = {"multi_row", "multi_row", "cta", "streaming"};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(functions[i]);
    const VariantInfo &v = k.variants[i];
    EXPECT_EQ(v.function, functions[i]);
    EXPECT_EQ(v.vectorized, vectorized[i]);
    EXPECT_EQ(v.maxD, maxD[i]);
    EXPECT_EQ(v.schedule, schedules[i]);
  }
  // Blank lines are allowed between entries.
  std::vector<std::string> lines = validLines();
  lines.insert(lines.begin() + 5, "");
  EXPECT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  EXPECT_EQ(artifact.kernels[0].variants.size(), 4u);
  // A cubin after the PTX.
  std::string cubin("\x7f"
                    "ELF\n\0\1\2",
                    8);
  std::string text = join(validLines()) + "cubin " +
                     std::to_string(cubin.size()) + "\n" + cubin + "\n";
  ASSERT_TRUE(parseArtifact(text, artifact, error)) << error;
  EXPECT_EQ(artifact.cubin, cubin);
  EXPECT_EQ(artifact.ptx, kPtx);
  // No PyTorch fallback: artifacts written before it existed.
  EXPECT_TRUE(artifact.torchSource.empty());
  // The fallback between the PTX and the cubin, as the writer lays it out.
  std::string torch = "import torch\n\ndef k(x, w):\n    return (x,)\n";
  text = join(validLines()) + "torch " + std::to_string(torch.size()) + "\n" +
         torch + "\n" + "cubin " + std::to_string(cubin.size()) + "\n" + cubin +
         "\n";
  ASSERT_TRUE(parseArtifact(text, artifact, error)) << error;
  EXPECT_EQ(artifact.ptx, kPtx);
  EXPECT_EQ(artifact.torchSource, torch);
  EXPECT_EQ(artifact.cubin, cubin);
  // An empty one, and one at the end of the file without its newline.
  ASSERT_TRUE(
      parseArtifact(join(validLines()) + "torch 0\n\n", artifact, error))
      << error;
  EXPECT_TRUE(artifact.torchSource.empty());
  ASSERT_TRUE(
      parseArtifact(join(validLines()) + "torch 6\nimport", artifact, error))
      << error;
  EXPECT_EQ(artifact.torchSource, "import");
}

TEST(ArtifactTest, ReadsEveryFieldOfAVariant) {
  // Every number different, so that none is read from another's place.
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(
      withLine(7, "variant k_x vectorized max_d 3000 schedule streaming "
                  "threads_per_row 64 rows_per_cta 3 chunk 4 "
                  "chunks_per_thread 0 block 192 shared 48"),
      artifact, error))
      << error;
  ASSERT_EQ(artifact.kernels[0].variants.size(), 4u);
  const VariantInfo &v = artifact.kernels[0].variants[2];
  EXPECT_EQ(v.function, "k_x");
  EXPECT_TRUE(v.vectorized);
  EXPECT_EQ(v.maxD, 3000);
  EXPECT_EQ(v.schedule, "streaming");
  EXPECT_EQ(v.threadsPerRow, 64);
  EXPECT_EQ(v.rowsPerCta, 3);
  EXPECT_EQ(v.chunk, 4);
  EXPECT_EQ(v.chunksPerThread, 0);
  EXPECT_EQ(v.blockSize, 192);
  EXPECT_EQ(v.sharedBytes, 48);
  // max_d is 64-bit.
  ASSERT_TRUE(parseArtifact(withLine(8, withWord(kG3, kMaxD, "8589934592")),
                            artifact, error))
      << error;
  EXPECT_EQ(artifact.kernels[0].variants[3].maxD, int64_t(1) << 33);
}

TEST(ArtifactTest, OneGeneralVariantIsEnough) {
  // The runtime takes the first variant whose guard holds, and says so when
  // none does (PlanLaunchTest); but every row length a vectorized variant
  // serves must have a general variant for other alignments.
  for (int keep : {6, 8}) {
    SCOPED_TRACE(keep);
    std::vector<std::string> lines = validLines();
    lines.erase(lines.begin() + 4, lines.begin() + 8);
    lines.insert(lines.begin() + 4, validLines()[keep - 1]);
    Artifact artifact;
    std::string error;
    ASSERT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
    ASSERT_EQ(artifact.kernels[0].variants.size(), 1u);
    EXPECT_EQ(artifact.kernels[0].variants[0].function,
              words(validLines()[keep - 1])[1]);
  }
  // Vectorized variants alone, or longer than every general one: refused
  // ("end" is line 16 with one variant, 19 with all four).
  for (int keep : {5, 7}) {
    SCOPED_TRACE(keep);
    std::vector<std::string> lines = validLines();
    lines.erase(lines.begin() + 4, lines.begin() + 8);
    lines.insert(lines.begin() + 4, validLines()[keep - 1]);
    expectRejected(join(lines), 16,
                   "kernel 'k': no general variant serves every row length "
                   "the vectorized ones do");
  }
  expectRejected(withoutLine(8), 18,
                 "kernel 'k': no general variant serves every row length the "
                 "vectorized ones do");
  // Any other one left out.
  for (int line : {5, 6, 7})
    expectAccepted(withoutLine(line));
  // In any order.
  std::vector<std::string> lines = validLines();
  std::reverse(lines.begin() + 4, lines.begin() + 8);
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  EXPECT_EQ(artifact.kernels[0].variants[0].function, "k_g3");
}

TEST(ArtifactTest, NoVariant) {
  std::vector<std::string> lines = validLines();
  lines.erase(lines.begin() + 4, lines.begin() + 8);
  // "end" is now line 15.
  expectRejected(join(lines), 15, "kernel 'k': no variant");
  // The variants blanked out: "end" stays line 19.
  lines = validLines();
  for (int i = 4; i < 8; ++i)
    lines[i] = "";
  expectRejected(join(lines), 19, "kernel 'k': no variant");
}

TEST(ArtifactTest, WrongMagic) {
  expectRejected(withLine(1, "// a PTX file"), 1,
                 "not a normfuse artifact (expected 'normfuse-artifact 10')");
  expectRejected(withLine(1, "normfuse-artifact"), 1,
                 "not a normfuse artifact");
  expectRejected(withLine(1, "normfuse-artifact2"), 1,
                 "not a normfuse artifact");
  Artifact artifact;
  std::string error;
  EXPECT_FALSE(parseArtifact("", artifact, error));
  EXPECT_NE(error.find("not a normfuse artifact"), std::string::npos);
}

TEST(ArtifactTest, OtherFormatVersions) {
  // An artifact of format 1 (written before variants) is refused at its
  // header, with what to do about it, not at its first unknown line.
  expectRejected(join(formatOneLines()), 1,
                 "artifact format '1' is not one this runtime reads (5 to 10)");
  expectRejected(join(formatOneLines()), 1,
                 "recompile it with this version's nf-compile");
  // Only the header differs: still format 1.
  expectRejected(withLine(1, "normfuse-artifact 1"), 1,
                 "artifact format '1' is not one this runtime reads");
  // Nor format 2 (before digests), format 3 (variants with cluster and
  // stage fields), format 4 (results without a group), nor a later one.
  for (const char *format : {"2", "3", "4", "11", "5.0"})
    expectRejected(withLine(1, std::string("normfuse-artifact ") + format), 1,
                   std::string("artifact format '") + format +
                       "' is not one this runtime reads (5 to 10)");
  // Format 6 variant lines end in `cluster <n>`: a format 5 line under a
  // format 6 header is refused at that line, not read as one CTA per row.
  expectRejected(withLine(1, "normfuse-artifact 6"), 5, "unexpected 'variant");
  // A real artifact with the old header.
  expectRejected(formatOneArtifact("fused"), 1,
                 "artifact format '1' is not one this runtime reads (5 to 10)");
}

TEST(ArtifactTest, FormatSevenPeeledVariants) {
  // Format 7 adds peeled variants: read as such, refused under an older
  // header, and refused where the schedule cannot hold a row that starts
  // chunk - 1 elements past an aligned address.
  std::vector<std::string> lines = validLines();
  lines[0] = "normfuse-artifact 7";
  for (int i = 4; i < 8; ++i)
    lines[i] += " cluster 1";
  std::string peeled = "variant k_p9 peeled max_d 1017 schedule warp "
                       "threads_per_row 32 rows_per_cta 4 chunk 8 "
                       "chunks_per_thread 4 block 128 shared 0 cluster 1";
  lines.insert(lines.begin() + 4, peeled);
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  EXPECT_EQ(artifact.format, 7);
  const VariantInfo &v = artifact.kernels[0].variants[0];
  EXPECT_TRUE(v.peeled);
  EXPECT_FALSE(v.vectorized);
  EXPECT_EQ(v.maxD, 1017);
  lines[0] = "normfuse-artifact 6";
  expectRejected(join(lines), 5, "malformed variant");
  lines[0] = "normfuse-artifact 7";
  lines[4] = "variant k_p9 peeled max_d 1018 schedule warp threads_per_row 32 "
             "rows_per_cta 4 chunk 8 chunks_per_thread 4 block 128 shared 0 "
             "cluster 1";
  expectRejected(join(lines), 20, "is peeled but its schedule cannot hold");
  lines[4] = "variant k_p9 peeled max_d 0 schedule streaming threads_per_row "
             "256 rows_per_cta 1 chunk 8 chunks_per_thread 0 block 256 "
             "shared 0 cluster 1";
  expectRejected(join(lines), 20, "is peeled but its schedule cannot hold");
}

TEST(ArtifactTest, FormatEightDynamicSharedField) {
  // Format 8: every variant line ends in `dynamic_shared <n>`, which the
  // launch gives; format 7 lines read as 0, and are refused under a format
  // 8 header (a reader that ignored the field would launch a persistent
  // variant without its slots).
  std::vector<std::string> lines = validLines();
  lines[0] = "normfuse-artifact 8";
  for (int i = 4; i < 8; ++i)
    lines[i] += " cluster 1 dynamic_shared 0";
  lines[4] = "variant k_p vectorized max_d 16384 schedule persistent "
             "threads_per_row 512 rows_per_cta 1 chunk 8 chunks_per_thread 4 "
             "block 512 shared 64 cluster 1 dynamic_shared 65536";
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  EXPECT_EQ(artifact.format, 8);
  EXPECT_EQ(artifact.kernels[0].variants[0].dynamicSharedBytes, 65536);
  EXPECT_EQ(artifact.kernels[0].variants[1].dynamicSharedBytes, 0);
  // More than any GPU gives, or negative: refused at load.
  std::vector<std::string> bad = lines;
  bad[4].replace(bad[4].rfind("65536"), 5, "232449");
  expectRejected(join(bad), 19, "has a malformed schedule");
  bad[4].replace(bad[4].rfind("232449"), 6, "-16");
  expectRejected(join(bad), 19, "has a malformed schedule");
  // The field missing, or misnamed, under the format 8 header.
  bad = lines;
  bad[5] = bad[5].substr(0, bad[5].rfind(" dynamic_shared"));
  expectRejected(join(bad), 6, "unexpected 'variant");
  bad = lines;
  bad[5].replace(bad[5].rfind("dynamic_shared"), 14, "dynamic_sharex");
  expectRejected(join(bad), 6, "malformed variant");
  // Format 7: no field, 0.
  lines = validLines();
  lines[0] = "normfuse-artifact 7";
  for (int i = 4; i < 8; ++i)
    lines[i] += " cluster 1";
  ASSERT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  EXPECT_EQ(artifact.format, 7);
  EXPECT_EQ(artifact.kernels[0].variants[0].dynamicSharedBytes, 0);
}

TEST(ArtifactTest, FormatNineMaxRowsPerCtaField) {
  // Format 9: every variant line ends in `max_rows_per_cta <n>`, which
  // only a persistent vectorized variant may set; format 8 lines read as
  // 0, and are refused under a format 9 header (a reader that ignored the
  // field would launch a short launch's twin for every launch).
  std::vector<std::string> lines = validLines();
  lines[0] = "normfuse-artifact 9";
  for (int i = 4; i < 8; ++i)
    lines[i] += " cluster 1 dynamic_shared 0 max_rows_per_cta 0";
  lines[4] = "variant k_p vectorized max_d 128 schedule persistent "
             "threads_per_row 16 rows_per_cta 8 chunk 8 chunks_per_thread 1 "
             "block 128 shared 0 cluster 1 dynamic_shared 4096 "
             "max_rows_per_cta 64";
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  EXPECT_EQ(artifact.format, 9);
  EXPECT_EQ(artifact.kernels[0].variants[0].maxRowsPerCta, 64);
  EXPECT_EQ(artifact.kernels[0].variants[1].maxRowsPerCta, 0);
  // Negative, or on a variant that does not walk rows: refused at load.
  std::vector<std::string> bad = lines;
  bad[4].replace(bad[4].rfind("64"), 2, "-8");
  expectRejected(join(bad), 19, "only a persistent vectorized variant");
  bad = lines;
  bad[5].replace(bad[5].rfind("max_rows_per_cta 0"), 18, "max_rows_per_cta 8");
  expectRejected(join(bad), 19, "only a persistent vectorized variant");
  // The field missing, or misnamed, under the format 9 header.
  bad = lines;
  bad[5] = bad[5].substr(0, bad[5].rfind(" max_rows_per_cta"));
  expectRejected(join(bad), 6, "unexpected 'variant");
  bad = lines;
  bad[5].replace(bad[5].rfind("max_rows_per_cta"), 16, "max_rows_per_ctx");
  expectRejected(join(bad), 6, "malformed variant");
  // Format 8: no field, 0.
  lines = validLines();
  lines[0] = "normfuse-artifact 8";
  for (int i = 4; i < 8; ++i)
    lines[i] += " cluster 1 dynamic_shared 0";
  ASSERT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  EXPECT_EQ(artifact.format, 8);
  EXPECT_EQ(artifact.kernels[0].variants[0].maxRowsPerCta, 0);
}

TEST(ArtifactTest, FormatTenSDivisorParameter) {
  // Format 10 adds the `chain_s_divisor` parameter (runtime/Divisor.h),
  // which, like the other per-chain parameters, names a chain the kernel
  // has; variant lines are format 9's.
  std::vector<std::string> lines = validLines();
  lines[0] = "normfuse-artifact 10";
  for (int i = 4; i < 8; ++i)
    lines[i] += " cluster 1 dynamic_shared 0 max_rows_per_cta 0";
  lines[15] += "\nparam chain_s_divisor 0 0 i64 Sdiv.0";
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  EXPECT_EQ(artifact.format, 10);
  ASSERT_EQ(artifact.kernels[0].params.size(), 7u);
  EXPECT_EQ(artifact.kernels[0].params[4].kind, "chain_s_divisor");
  std::vector<std::string> bad = lines;
  bad[15] = "param chain_rows 0 0 i64 rows.0\nparam chain_s_divisor 1 0 i64 "
            "Sdiv.1";
  expectRejected(join(bad), 20,
                 "parameter 'Sdiv.1' (chain_s_divisor 1 0) is "
                 "out of range");
  // Under format 9's header the parameter kind did not exist yet.
  std::vector<std::string> older = lines;
  older[0] = "normfuse-artifact 9";
  expectRejected(join(older), 20,
                 "parameter 'Sdiv.0' (chain_s_divisor) is format 10's, not "
                 "format 9's");
}

TEST(ArtifactTest, FormatSixClusterField) {
  // Format 6: every variant line ends in `cluster <n>`; format 5 lines (the
  // other tests' hand-written bodies) read as cluster 1.
  std::vector<std::string> lines = validLines();
  lines[0] = "normfuse-artifact 6";
  for (int i = 4; i < 8; ++i)
    lines[i] += " cluster 1";
  lines[6] = "variant k_v2 vectorized max_d 32768 schedule cluster "
             "threads_per_row 512 rows_per_cta 1 chunk 8 chunks_per_thread 4 "
             "block 512 shared 72 cluster 2";
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(lines), artifact, error)) << error;
  EXPECT_EQ(artifact.format, 6);
  ASSERT_EQ(artifact.kernels[0].variants.size(), 4u);
  EXPECT_EQ(artifact.kernels[0].variants[0].clusterSize, 1);
  EXPECT_EQ(artifact.kernels[0].variants[2].clusterSize, 2);
  ASSERT_TRUE(parseArtifact(join(validLines()), artifact, error)) << error;
  EXPECT_EQ(artifact.format, 5);
  EXPECT_EQ(artifact.kernels[0].variants[2].clusterSize, 1);
  // A cluster of 3, 16 or 0, a missing or misnamed field, a cluster
  // variant of two rows per CTA or streamed, or one whose max_d is past
  // what the cluster holds: refused.
  auto variant = [&](const std::string &text) {
    std::vector<std::string> bad = lines;
    bad[6] = text;
    return join(bad);
  };
  const std::string head =
      "variant k_v2 vectorized max_d 32768 schedule cluster threads_per_row "
      "512 rows_per_cta ";
  for (const char *tail :
       {"1 chunk 8 chunks_per_thread 4 block 512 shared 72 cluster 3",
        "1 chunk 8 chunks_per_thread 4 block 512 shared 72 cluster 16",
        "1 chunk 8 chunks_per_thread 4 block 512 shared 72 cluster 0",
        "2 chunk 8 chunks_per_thread 4 block 512 shared 72 cluster 2",
        "1 chunk 8 chunks_per_thread 0 block 512 shared 72 cluster 2"})
    expectRejected(variant(head + tail), 19, "has a malformed schedule");
  expectRejected(
      variant(head + "1 chunk 8 chunks_per_thread 4 block 512 shared 72"), 7,
      "unexpected 'variant");
  expectRejected(variant(head +
                         "1 chunk 8 chunks_per_thread 4 block 512 shared 72 "
                         "clusters 2"),
                 7, "malformed variant");
  expectRejected(
      variant("variant k_v2 vectorized max_d 65536 schedule cluster "
              "threads_per_row 512 rows_per_cta 1 chunk 8 chunks_per_thread 4 "
              "block 512 shared 72 cluster 2"),
      19, "holds rows of at most 32768 elements but max_d is 65536");
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
  // A PyTorch fallback cut short, or with a size past its newline.
  expectRejected(text + "torch 100\nimport torch\n", 27,
                 "truncated PyTorch fallback");
  expectRejected(text + "torch 3\nimport torch\n", 27,
                 "truncated PyTorch fallback");
  expectRejected(text + "torch x\nimport torch\n", 27,
                 "truncated PyTorch fallback");
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
  expectRejected(withLine(4, "frobnicate 3"), 4, "unexpected 'frobnicate 3'");
  expectRejected(withLine(19, "end now"), 19, "unexpected 'end now'");
  // The lines of format 1 are not those of format 2.
  for (const char *old :
       {"schedule multi_row threads_per_row 16 rows_per_cta 16 chunk 8 "
        "chunks_per_thread 1",
        "block 256 shared 0", "function vectorized k",
        "function general k_general", "cluster 2", "stage 2",
        "cluster 1 stage 0"}) {
    expectRejected(withLine(6, old), 6, std::string("unexpected '") + old);
  }
  // Kernel lines outside a kernel.
  std::vector<std::string> lines = validLines();
  lines.insert(lines.begin() + 2, kV0);
  expectRejected(join(lines), 3, "'variant' outside a kernel");
  lines = validLines();
  lines.push_back("chains 1");
  expectRejected(join(lines), 20, "'chains' outside a kernel");
}

TEST(ArtifactTest, VariantWithTheWrongNumberOfWords) {
  // 19 words: the key, the function, vectorized|general and eight pairs.
  ASSERT_EQ(words(kV0).size(), 19u);
  std::vector<std::string> w = words(kV0);
  // The last number missing, the last pair missing, a word too many.
  std::vector<std::string> shorter(w.begin(), w.end() - 1);
  expectRejected(withLine(5, unwords(shorter)), 5,
                 "unexpected '" + unwords(shorter) + "'");
  shorter.pop_back();
  expectRejected(withLine(5, unwords(shorter)), 5,
                 "unexpected '" + unwords(shorter) + "'");
  std::string longer = std::string(kV0) + " 0";
  expectRejected(withLine(5, longer), 5, "unexpected '" + longer + "'");
  expectRejected(withLine(5, std::string(kV0) + " extra 1"), 5,
                 "unexpected 'variant k_v0");
  // Without the function name.
  w.erase(w.begin() + 1);
  expectRejected(withLine(5, unwords(w)), 5, "unexpected 'variant vectorized");
  expectRejected(withLine(5, "variant"), 5, "unexpected 'variant'");
}

TEST(ArtifactTest, MalformedVariant) {
  // vectorized|general, misspelt.
  for (const char *kind :
       {"vectorised", "Vectorized", "generic", "general,", "fast", "-"}) {
    SCOPED_TRACE(kind);
    expectRejected(withLine(5, withWord(kV0, kVectorized, kind)), 5,
                   "malformed variant");
    expectRejected(withLine(6, withWord(kG1, kVectorized, kind)), 6,
                   "malformed variant");
  }
  // Not a number, or not all of one, in each numeric field.
  for (int field : {kMaxD, kThreadsPerRow, kRowsPerCta, kChunk,
                    kChunksPerThread, kBlock, kShared}) {
    SCOPED_TRACE(field);
    for (const char *bad : {"sixteen", "16x", "8.0", "1e3", "-", "0x10", "?"})
      expectRejected(withLine(7, withWord(kV2, field, bad)), 7,
                     "malformed variant");
  }
  // Past 32 bits where the field is an int; past 64 bits for max_d.
  for (int field :
       {kThreadsPerRow, kRowsPerCta, kChunk, kChunksPerThread, kBlock, kShared})
    expectRejected(withLine(8, withWord(kG3, field, "99999999999")), 8,
                   "malformed variant");
  expectRejected(withLine(8, withWord(kG3, kMaxD, "99999999999999999999")), 8,
                 "malformed variant");
  // The keys in their place, spelt as written.
  expectRejected(withLine(5, withWord(kV0, kMaxD - 1, "maxd")), 5,
                 "malformed variant");
  expectRejected(withLine(5, withWord(kV0, kShared - 1, "smem")), 5,
                 "malformed variant");
  expectRejected(withLine(5, withWord(kV0, kSchedule - 1, "kind")), 5,
                 "malformed variant");
  // Two pairs swapped, or a key swapped with its number.
  std::vector<std::string> w = words(kV0);
  std::swap(w[kThreadsPerRow - 1], w[kRowsPerCta - 1]);
  std::swap(w[kThreadsPerRow], w[kRowsPerCta]);
  expectRejected(withLine(5, unwords(w)), 5, "malformed variant");
  w = words(kV0);
  std::swap(w[kBlock - 1], w[kBlock]);
  expectRejected(withLine(5, unwords(w)), 5, "malformed variant");
  w = words(kV0);
  std::swap(w[kVectorized], w[kMaxD - 1]);
  std::swap(w[kMaxD - 1], w[kMaxD]);
  expectRejected(withLine(5, unwords(w)), 5, "malformed variant");
}

TEST(ArtifactTest, VariantScheduleOutOfRange) {
  // The launch divides by these and uses them as CUDA launch sizes: they
  // are checked at "end" (line 19), naming the variant.
  struct Bad {
    int field;
    const char *value;
  };
  for (Bad bad :
       {Bad{kMaxD, "-1"}, Bad{kThreadsPerRow, "0"}, Bad{kThreadsPerRow, "-16"},
        Bad{kRowsPerCta, "0"}, Bad{kRowsPerCta, "-1"}, Bad{kChunk, "0"},
        Bad{kChunksPerThread, "-1"}, Bad{kBlock, "0"}, Bad{kBlock, "1025"},
        Bad{kBlock, "-256"}, Bad{kShared, "-1"}}) {
    SCOPED_TRACE(std::to_string(bad.field) + " " + bad.value);
    expectRejected(withLine(5, withWord(kV0, bad.field, bad.value)), 19,
                   "kernel 'k': variant 'k_v0' has a malformed schedule");
    expectRejected(withLine(8, withWord(kG3, bad.field, bad.value)), 19,
                   "kernel 'k': variant 'k_g3' has a malformed schedule");
  }
  // At the limits.
  expectAccepted(withLine(8, withWord(kG3, kBlock, "1024")));
}

TEST(ArtifactTest, RegisterResidentVariantBoundedByItsCapacity) {
  // A register-resident variant (chunks_per_thread > 0) holds
  // threads_per_row * chunks_per_thread * chunk elements of a row:
  // a longer row would be wrong, not slow, so max_d must be set and within.
  expectRejected(withLine(5, withWord(kV0, kMaxD, "0")), 19,
                 "kernel 'k': variant 'k_v0' holds rows of at most 128 "
                 "elements but max_d is 0");
  expectRejected(withLine(5, withWord(kV0, kMaxD, "129")), 19,
                 "variant 'k_v0' holds rows of at most 128 elements but max_d "
                 "is 129");
  // The general variant: 16 threads of 8 elements.
  expectRejected(withLine(6, withWord(kG1, kMaxD, "0")), 19,
                 "variant 'k_g1' holds rows of at most 128 elements but max_d "
                 "is 0");
  expectRejected(withLine(6, withWord(kG1, kMaxD, "256")), 19,
                 "variant 'k_g1' holds rows of at most 128");
  // 256 threads x 2 chunks x 8.
  expectRejected(withLine(7, withWord(kV2, kMaxD, "4097")), 19,
                 "variant 'k_v2' holds rows of at most 4096 elements but "
                 "max_d is 4097");
  expectRejected(withLine(7, withWord(kV2, kThreadsPerRow, "128")), 19,
                 "variant 'k_v2' holds rows of at most 2048 elements but "
                 "max_d is 4096");
  expectRejected(withLine(7, withWord(kV2, kMaxD, "99999999999")), 19,
                 "variant 'k_v2' holds rows of at most 4096");
  // Fewer than it holds is fine (the compiler bounds it by its tier).
  expectAccepted(withLine(5, withWord(kV0, kMaxD, "100")));
  expectAccepted(withLine(5, withWord(kV0, kMaxD, "1")));
  // A streamed variant (chunks_per_thread 0) holds no row: any bound or
  // none.
  expectAccepted(withLine(8, withWord(kG3, kMaxD, "5000")));
  // (As long as the general variants still serve every row length the
  // vectorized ones do: NoGeneralVariantForLongRows.)
  expectAccepted(
      withLine(6, withWord(withWord(kG1, kMaxD, "1"), kChunksPerThread, "0")));
  // Sizes whose product does not fit in 64 bits still bound the variant:
  // 2^30 threads x 2^30 chunks x 16 elements is 2^64, not 0.
  auto sized = [](const char *threads, const char *chunk,
                  const char *chunksPerThread, const char *maxD) {
    std::string line = kV0;
    line = withWord(line, kThreadsPerRow, threads);
    line = withWord(line, kChunk, chunk);
    line = withWord(line, kChunksPerThread, chunksPerThread);
    return withLine(5, withWord(line, kMaxD, maxD));
  };
  expectRejected(sized("1073741824", "16", "1073741824", "0"), 19,
                 "variant 'k_v0' holds rows of at most 9223372036854775807 "
                 "elements but max_d is 0");
  expectRejected(sized("2147483647", "2147483647", "2147483647", "0"), 19,
                 "variant 'k_v0' holds rows of at most 9223372036854775807 "
                 "elements but max_d is 0");
  expectAccepted(
      sized("1073741824", "16", "1073741824", "9223372036854775807"));
  expectAccepted(
      sized("2147483647", "2147483647", "2147483647", "9223372036854775807"));
  // A large product that fits is exact: 2^10 x 2^10 x 2^20 = 2^40.
  expectRejected(sized("1024", "1024", "1048576", "0"), 19,
                 "holds rows of at most 1099511627776 elements but max_d is 0");
  expectRejected(sized("1024", "1024", "1048576", "1099511627777"), 19,
                 "holds rows of at most 1099511627776 elements");
  expectAccepted(sized("1024", "1024", "1048576", "1099511627776"));
}

TEST(ArtifactTest, IncompleteKernel) {
  // No "end" before the end of the file.
  std::vector<std::string> lines = validLines();
  lines.pop_back();
  expectRejected(join(lines), 25, "kernel 'k' has no 'end'");
  // No PTX and no cubin.
  expectRejected(join(validLines(), ""), 19, "no PTX or cubin");
  // A second kernel without variants, after a sound one.
  lines = validLines();
  lines.insert(lines.end(), {"kernel k2", "row_length 64", "chains 0", "end"});
  expectRejected(join(lines), 23, "kernel 'k2': no variant");
}

TEST(ArtifactTest, GarbageNumbers) {
  expectRejected(withLine(4, "row_length 12.5"), 4, "malformed row_length");
  expectRejected(withLine(4, "row_length D"), 4, "malformed row_length");
  expectRejected(withLine(9, "chains two"), 9, "malformed chains");
  expectRejected(withLine(10, "arg 0 x tensor bf16 ?x?xQ data BSD 0"), 10,
                 "malformed argument");
  expectRejected(withLine(10, "arg 0 x tensor f64 ?x?x? data BSD 0"), 10,
                 "malformed argument");
  expectRejected(withLine(10, "arg 0 x vector bf16 ?x?x? data BSD 0"), 10,
                 "malformed argument");
  expectRejected(withLine(10, "arg 0 x tensor bf16 ?x?x? data BSD 0,x"), 10,
                 "malformed argument chains '0,x'");
  expectRejected(
      withLine(12, "result 0 bf16 ?x?x? chain zero in_place - group -"), 12,
      "malformed result");
  expectRejected(withLine(12, "result 0 bf16 ?x?x? chain 0 in_place q group -"),
                 12, "malformed result");
  expectRejected(withLine(13, "param arg_ptr 1e3 0 !llvm.ptr<1> x"), 13,
                 "malformed param");
}

TEST(ArtifactTest, IndicesOutOfRange) {
  // The launch code indexes arrays with these: they are checked at "end".
  expectRejected(withLine(10, "arg 0 x tensor bf16 ?x?x? data BSD 0,5"), 19,
                 "argument 'x' names chain 5 of 1");
  expectRejected(withLine(12, "result 0 bf16 ?x?x? chain 1 in_place - group -"),
                 19, "result 0 names chain 1 of 1");
  // A result is [B, S, D] or [B, S] (QuantizedDtypesAndPerRowResults).
  expectRejected(withLine(12, "result 0 bf16 ? chain 0 in_place - group -"), 19,
                 "result 0 is neither [B, S, D] nor [B, S]");
  expectRejected(
      withLine(12, "result 0 bf16 ?x?x?x? chain 0 in_place - group -"), 19,
      "result 0 is neither [B, S, D] nor [B, S]");
  expectRejected(withLine(12, "result 0 bf16 ?x?x? chain 0 in_place 7 group -"),
                 19, "result 0 is in place into argument 7");
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
  // Negative indices, refused before anything is indexed with them.
  expectRejected(withLine(13, "param arg_ptr -1 0 !llvm.ptr<1> x"), 19,
                 "parameter 'x' (arg_ptr -1 0) is out of range");
  expectRejected(withLine(15, "param result_ptr -2 0 !llvm.ptr<1> out0"), 19,
                 "parameter 'out0' (result_ptr -2 0) is out of range");
  expectRejected(withLine(18, "param arg_stride 0 -1 i64 stride.x.0"), 19,
                 "parameter 'stride.x.0' (arg_stride 0 -1) is out of range");
  // A result's strides are of its own dimensions.
  expectRejected(withLine(18, "param result_stride 0 3 i64 stride.out0.3"), 19,
                 "(result_stride 0 3) is out of range");
  std::string perRow = quantizedArtifactBody();
  std::string stride = "param result_stride 1 0 i64 stride.out1.0";
  size_t at = perRow.find(stride);
  ASSERT_NE(at, std::string::npos);
  perRow.replace(at, stride.size(), "param result_stride 1 2 i64 s");
  Artifact artifact;
  std::string error;
  EXPECT_FALSE(parseArtifact(perRow, artifact, error));
  EXPECT_NE(error.find("kernel 'quant': parameter 's' (result_stride 1 2) is "
                       "out of range"),
            std::string::npos)
      << error;
}

TEST(ArtifactTest, DtypeNames) {
  // Every dtype by its artifact spelling (MLIR's: f8E4M3FN, f8E5M2), its
  // size, and back.
  struct Expected {
    DType dtype;
    const char *name;
    int bytes;
  } all[] = {{DType::F32, "f32", 4},           {DType::F16, "f16", 2},
             {DType::BF16, "bf16", 2},         {DType::I8, "i8", 1},
             {DType::I32, "i32", 4},           {DType::I64, "i64", 8},
             {DType::F8E4M3FN, "f8E4M3FN", 1}, {DType::F8E5M2, "f8E5M2", 1}};
  for (const Expected &e : all) {
    SCOPED_TRACE(e.name);
    EXPECT_STREQ(dtypeName(e.dtype), e.name);
    EXPECT_EQ(dtypeBytes(e.dtype), e.bytes);
    DType parsed = DType::F32;
    EXPECT_TRUE(parseDType(e.name, parsed));
    EXPECT_EQ(parsed, e.dtype);
  }
  // Spelled otherwise, they are not dtypes.
  DType parsed;
  for (const char *other :
       {"f8e4m3fn", "f8E4M3", "f8E4M3FNUZ", "f8E5M2FNUZ", "fp8", "u8", ""})
    EXPECT_FALSE(parseDType(other, parsed)) << other;
  expectRejected(withLine(10, "arg 0 x tensor f8e4m3fn ?x?x? data BSD 0"), 10,
                 "malformed argument");
  expectRejected(
      withLine(12, "result 0 f8E4M3 ?x?x? chain 0 in_place - group -"), 12,
      "malformed result");
}

TEST(ArtifactTest, GroupResults) {
  Artifact artifact;
  std::string error;
  std::string text = groupArtifactBody();
  ASSERT_TRUE(parseArtifact(text, artifact, error)) << error;
  ASSERT_EQ(artifact.kernels[0].results.size(), 2u);
  EXPECT_EQ(artifact.kernels[0].results[0].group, 0);
  EXPECT_EQ(artifact.kernels[0].results[1].group, 128);
  EXPECT_EQ(artifact.kernels[0].rowMultiple, 128);
  auto replaced = [&](const std::string &line) {
    std::string t = text;
    std::string old = "result 1 f32 ?x?x? chain 0 in_place - group 128";
    t.replace(t.find(old), old.size(), line);
    return t;
  };
  auto rejected = [&](const std::string &line, const std::string &message) {
    SCOPED_TRACE(line);
    Artifact a;
    std::string e;
    EXPECT_FALSE(parseArtifact(replaced(line), a, e));
    EXPECT_NE(e.find(message), std::string::npos) << e;
  };
  rejected("result 1 f32 ?x?x? chain 0 in_place - group 96",
           "result 1 has group 96: group results are [B, S, D / G] f32 "
           "tensors, G a power of two, not written in place");
  rejected("result 1 bf16 ?x?x? chain 0 in_place - group 128",
           "result 1 has group 128");
  rejected("result 1 f32 ?x? chain 0 in_place - group 128",
           "result 1 has group 128");
  rejected("result 1 f32 ?x?x? chain 0 in_place 0 group 128",
           "result 1 has group 128");
  rejected("result 1 f32 ?x?x? chain 0 in_place - group 0", "malformed result");
  rejected("result 1 f32 ?x?x? chain 0 in_place - group -8",
           "malformed result");
  // Format 4's result line, without the group field.
  rejected("result 1 f32 ?x?x? chain 0 in_place -",
           "unexpected 'result 1 f32 ?x?x? chain 0 in_place -'");
  rejected("result 1 f32 ?x?x? chain 0 in_place - grp 128", "malformed result");
  // The row multiple is a power of two.
  for (const char *bad : {"0", "96", "-128", "x"}) {
    std::string t = text;
    t.replace(t.find("row_multiple 128"), 16,
              std::string("row_multiple ") + bad);
    Artifact a;
    std::string e;
    EXPECT_FALSE(parseArtifact(t, a, e)) << bad;
    EXPECT_NE(e.find("malformed row_multiple (a power of two)"),
              std::string::npos)
        << e;
  }
  // Absent: 1.
  ASSERT_TRUE(parseArtifact(quantizedArtifactBody(), artifact, error)) << error;
  EXPECT_EQ(artifact.kernels[0].rowMultiple, 1);
}

TEST(ArtifactTest, QuantizedDtypesAndPerRowResults) {
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(quantizedArtifactBody(), artifact, error)) << error;
  ASSERT_EQ(artifact.kernels.size(), 1u);
  const KernelInfo &k = artifact.kernels[0];
  ASSERT_EQ(k.args.size(), 4u);
  const DType argDtypes[] = {DType::F8E4M3FN, DType::F8E5M2, DType::I8,
                             DType::F32};
  const Shape argShapes[] = {{-1, -1, -1}, {-1, -1, -1}, {-1}, {-1}};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(k.args[i].name);
    EXPECT_EQ(k.args[i].dtype, argDtypes[i]);
    EXPECT_EQ(k.args[i].shape, argShapes[i]);
    EXPECT_EQ(k.args[i].role, "data");
  }
  ASSERT_EQ(k.results.size(), 4u);
  const DType resultDtypes[] = {DType::I8, DType::F32, DType::F8E4M3FN,
                                DType::F8E5M2};
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(k.results[r].dtype, resultDtypes[r]);
    // Result 1 is [B, S]: one value per row.
    EXPECT_EQ(k.results[r].shape,
              r == 1 ? (Shape{-1, -1}) : (Shape{-1, -1, -1}));
    EXPECT_EQ(k.results[r].chain, 0);
    EXPECT_EQ(k.results[r].inPlace, -1);
  }
  // Its one stride parameter, of dimension 0.
  EXPECT_TRUE(findParam(k, "result_stride", 1, 0));
  EXPECT_FALSE(findParam(k, "result_stride", 1, 1));
  EXPECT_TRUE(findParam(k, "result_stride", 2, 1));

  // Static sizes of a [B, S] result are read as such.
  std::string text = quantizedArtifactBody();
  std::string line = "result 1 f32 ?x? chain 0";
  size_t at = text.find(line);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, line.size(), "result 1 f32 2x8 chain 0");
  ASSERT_TRUE(parseArtifact(text, artifact, error)) << error;
  EXPECT_EQ(artifact.kernels[0].results[1].shape, (Shape{2, 8}));
}

/// A real artifact's file and its body (the file without the digest line).
struct RealArtifact {
  std::string file, body;
};
RealArtifact readRealArtifact(const std::string &name) {
  RealArtifact real;
  real.file = readFile(artifactPath(name));
  size_t at = real.file.rfind("\ndigest fnv1a64 ");
  EXPECT_NE(at, std::string::npos) << "no digest line in " << name;
  if (at != std::string::npos)
    real.body = real.file.substr(0, at + 1);
  return real;
}

/// Every prefix of a real artifact's body is rejected or, if it ends right
/// after the PTX (the PyTorch fallback that follows is optional), accepted;
/// none crashes. (The body parser's own robustness: a file cut short never
/// gets this far, see EveryTruncatedFileIsRefused.)
TEST(ArtifactTest, EveryTruncationOfARealArtifact) {
  Artifact full;
  std::string error;
  std::string text = readRealArtifact("qk_interleaved").body;
  ASSERT_TRUE(parseArtifact(text, full, error)) << error;
  size_t ptxHeader = text.find("\nptx ");
  ASSERT_NE(ptxHeader, std::string::npos);
  ASSERT_FALSE(full.torchSource.empty());
  // The PTX blob ends here; its newline and the fallback follow.
  size_t ptxEnd = text.find('\n', ptxHeader + 1) + 1 + full.ptx.size();
  ASSERT_EQ(text.compare(ptxEnd, 7, "\ntorch "), 0);
  for (size_t cut = 0; cut + 1 < text.size(); ++cut) {
    Artifact artifact;
    bool afterPtx = cut == ptxEnd || cut == ptxEnd + 1;
    if (parseArtifact(text.substr(0, cut), artifact, error)) {
      if (!afterPtx)
        ADD_FAILURE() << "a prefix of " << cut << " bytes parses";
      else if (artifact.ptx != full.ptx || !artifact.torchSource.empty())
        ADD_FAILURE() << "the prefix of " << cut << " bytes reads wrong";
    } else if (afterPtx) {
      ADD_FAILURE() << "the artifact without its fallback is rejected: "
                    << error;
    } else if (error.rfind("artifact line ", 0) != 0) {
      ADD_FAILURE() << "no line in: " << error;
    }
    // Speed: test every byte of the metadata, then every 97th of the PTX
    // and the fallback, and every byte around their boundary.
    if (cut > ptxHeader + 8 && (cut + 200 < ptxEnd || cut > ptxEnd + 200))
      cut += 96;
  }
}

TEST(ArtifactTest, DigestOfARealArtifact) {
  RealArtifact real = readRealArtifact("qk_interleaved");
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifactFile(real.file, artifact, error)) << error;
  EXPECT_EQ(artifact.digest.size(), 16u);
  EXPECT_EQ(real.file.substr(real.body.size()), digestLine(real.body));
  // FNV-1a 64 of known inputs (the empty string is the offset basis).
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(digestLine(""), "digest fnv1a64 cbf29ce484222325\n");
}

/// Every prefix of a real artifact file is refused, each with the reason
/// (no digest line, or one that does not match); none crashes.
TEST(ArtifactTest, EveryTruncatedFileIsRefused) {
  RealArtifact real = readRealArtifact("qk_interleaved");
  ASSERT_FALSE(real.body.empty());
  for (size_t cut = 0; cut < real.file.size(); ++cut) {
    Artifact artifact;
    std::string error;
    if (parseArtifactFile(real.file.substr(0, cut), artifact, error)) {
      ADD_FAILURE() << "a prefix of " << cut << " bytes is accepted";
      continue;
    }
    bool reason = error.find("no digest line") != std::string::npos ||
                  error.find("digest mismatch") != std::string::npos ||
                  (cut < 20 && error.find("artifact line 1") == 0);
    if (!reason)
      ADD_FAILURE() << "cut at " << cut << ": " << error;
    // Every byte of the first 2 KiB and the last 200, every 97th between.
    if (cut > 2048 && cut + 200 < real.file.size())
      cut += 96;
  }
}

/// A changed byte anywhere in the body (the metadata, the PTX, the
/// fallback) is refused as a digest mismatch, and so is a changed digest.
TEST(ArtifactTest, ChangedBytesAreRefused) {
  RealArtifact real = readRealArtifact("qk_interleaved");
  ASSERT_FALSE(real.body.empty());
  size_t tested = 0;
  // From the byte after the header line (a changed header is refused as
  // another format, before the digest is read).
  for (size_t at = real.file.find('\n') + 1; at < real.body.size();
       at += 89, ++tested) {
    std::string changed = real.file;
    changed[at] = changed[at] == 'x' ? 'y' : 'x';
    Artifact artifact;
    std::string error;
    EXPECT_FALSE(parseArtifactFile(changed, artifact, error)) << "at " << at;
    EXPECT_NE(error.find("digest mismatch"), std::string::npos)
        << "at " << at << ": " << error;
  }
  EXPECT_GT(tested, 100u);
  // One bit of a digit of the digest line.
  std::string changed = real.file;
  changed[changed.size() - 2] ^= 1;
  Artifact artifact;
  std::string error;
  EXPECT_FALSE(parseArtifactFile(changed, artifact, error));
  EXPECT_NE(error.find("digest mismatch"), std::string::npos) << error;
}

TEST(ArtifactTest, FileWithoutDigestIsRefused) {
  RealArtifact real = readRealArtifact("qk_interleaved");
  std::string path = writeTempFile("no-digest.nfa", real.body);
  Artifact artifact;
  std::string error;
  EXPECT_FALSE(readArtifactFile(path, artifact, error));
  EXPECT_NE(error.find("no-digest.nfa"), std::string::npos) << error;
  EXPECT_NE(error.find("no digest line"), std::string::npos) << error;
  EXPECT_NE(error.find("recompile"), std::string::npos) << error;
}

/// Two dtype combinations of kernel k (a --types build): x bf16 and x f16.
std::vector<std::string> typedLines() {
  std::vector<std::string> lines = validLines(), second;
  lines.insert(lines.begin() + 3, {"symbol k__bf16", "types act=bf16"});
  for (size_t i = 2; i < lines.size(); ++i) {
    std::string line = lines[i];
    for (size_t at; (at = line.find("bf16")) != std::string::npos;)
      line.replace(at, 4, "f16");
    second.push_back(line);
  }
  lines.insert(lines.end(), second.begin(), second.end());
  return lines;
}

TEST(ArtifactTest, DtypeCombinations) {
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(typedLines()), artifact, error)) << error;
  ASSERT_EQ(artifact.kernels.size(), 2u);
  EXPECT_EQ(artifact.kernels[1].name, "k");
  EXPECT_EQ(artifact.kernels[1].symbol, "k__f16");
  EXPECT_EQ(artifact.kernels[1].types, "act=f16");
  EXPECT_EQ(artifact.kernels[1].args[0].dtype, DType::F16);
  EXPECT_NE(describeArtifact(artifact).find(
                "\"name\":\"k\",\"symbol\":\"k__f16\",\"types\":\"act=f16\""),
            std::string::npos);

  // The launch picks the combination of the tensors' dtypes.
  const std::vector<KernelInfo> &kernels = artifact.kernels;
  FakeMemory mem;
  for (DType act : {DType::BF16, DType::F16}) {
    Value args[] = {tensorValue(mem.tensor(act, {2, 3, 64})),
                    tensorValue(mem.tensor(DType::F32, {64}))};
    Tensor out = mem.tensor(act, {2, 3, 64});
    size_t index = 9;
    ASSERT_TRUE(selectKernel(kernels, "k", args, 2, &out, 1, index));
    EXPECT_EQ(index, act == DType::BF16 ? 0u : 1u);
    LaunchPlan plan;
    EXPECT_TRUE(planLaunch(kernels[index], args, 2, &out, 1, plan));
  }
  // A combination not built: refused, naming those that were.
  Value args[] = {tensorValue(mem.tensor(DType::F32, {2, 3, 64})),
                  tensorValue(mem.tensor(DType::F32, {64}))};
  Tensor out = mem.tensor(DType::F32, {2, 3, 64});
  size_t index;
  Status s = selectKernel(kernels, "k", args, 2, &out, 1, index);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "kernel 'k' was not built for the dtypes of this "
                         "call (x: f32, w: f32, result 0: f32); it was built "
                         "for act=bf16; act=f16 (nf-compile --types)");
  EXPECT_FALSE(selectKernel(kernels, "nope", args, 2, &out, 1, index));

  // One name twice is only allowed as distinct combinations.
  std::vector<std::string> same = typedLines();
  same[same.size() - 17] = "types act=bf16";
  expectRejected(join(same), (int)same.size(),
                 "kernel 'k' appears twice, not as two dtype combinations");
  std::vector<std::string> twice = validLines();
  std::vector<std::string> copy(twice.begin() + 2, twice.end());
  twice.insert(twice.end(), copy.begin(), copy.end());
  expectRejected(join(twice), (int)twice.size(), "appears twice");
}

TEST(ArtifactTest, DescribeIsJson) {
  Artifact artifact;
  std::string error;
  ASSERT_TRUE(parseArtifact(join(validLines()) + "ptx 3\nabc\ntorch 9\n"
                                                 "a = \"\\\n\"\n",
                            artifact, error))
      << error;
  std::string json = describeArtifact(artifact);
  EXPECT_EQ(json.rfind("{\"format\":5,\"digest\":\"\",\"target\":\"sm_90\","
                       "\"has_cubin\":false,",
                       0),
            0u)
      << json;
  // The fallback's quote, backslash and newlines are escaped.
  EXPECT_NE(json.find("\"torch_source\":\"a = \\\"\\\\\\n\\\"\\n\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"index\":1,\"name\":\"w\",\"is_tensor\":true,"
                      "\"dtype\":\"f32\",\"shape\":[-1],\"role\":\"data\","
                      "\"bcast\":\"D\",\"chains\":[0]}"),
            std::string::npos)
      << json;
  EXPECT_NE(
      json.find(
          "\"results\":[{\"index\":0,\"dtype\":\"bf16\","
          "\"shape\":[-1,-1,-1],\"chain\":0,\"in_place\":-1,\"group\":0}]"),
      std::string::npos)
      << json;
}

} // namespace
