//===- TuningTest.cpp - tune files, no GPU --------------------------------===//
//
// Part of normfuse. The tune file that nf-run --tune writes beside an
// artifact and the runtime reads when it loads it (docs/Artifact.md, "Tune
// files"): the table it holds, what it refuses with which message, and that
// a file written for another build of the artifact is ignored.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

using namespace nf::rt;
using namespace nf_rt_test;

namespace {

class TuningTest : public ::testing::Test {
protected:
  void SetUp() override {
    artifact = loadArtifact("fused");
    ASSERT_EQ(artifact.kernels.size(), 1u);
    ASSERT_EQ(artifact.digest.size(), 16u);
    ASSERT_GT(kernel().variants.size(), 3u);
  }
  const KernelInfo &kernel() const { return artifact.kernels[0]; }
  const std::string &function(int v) const {
    return kernel().variants[v].function;
  }
  /// A tune file for this artifact with `lines` after its artifact line.
  std::string file(const std::string &lines) const {
    return "normfuse-tune 1\nartifact " + artifact.digest + "\n" + lines;
  }
  Status parse(const std::string &text, TuningTable &table) const {
    return parseTuning(artifact, text, "t.tune", table);
  }
  /// Parsing `text` fails with a message that contains `what`.
  void expectRefused(const std::string &text, const std::string &what) const {
    TuningTable table;
    Status status = parse(text, table);
    ASSERT_FALSE(status.ok()) << text;
    EXPECT_NE(status.message().find(what), std::string::npos)
        << status.message();
    EXPECT_EQ(status.message().rfind("tune file 't.tune' line ", 0), 0u)
        << status.message();
  }

  Artifact artifact;
};

TEST_F(TuningTest, EntriesByKernelAndRowLength) {
  TuningTable table;
  Status status =
      parse(file("# a comment\n\nfused_add_gate_norm 8192 " + function(2) +
                 "\nfused_add_gate_norm 1536 " + function(1) + "\n"),
            table);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(table.lookup(0, 8192), 2);
  EXPECT_EQ(table.lookup(0, 1536), 1);
  // Only the row lengths measured.
  EXPECT_EQ(table.lookup(0, 1537), -1);
  EXPECT_EQ(table.lookup(0, 4096), -1);
  EXPECT_EQ(table.lookup(1, 8192), -1);
  // A later line for the same D replaces the earlier one.
  ASSERT_TRUE(parse(file("fused_add_gate_norm 64 " + function(1) +
                         "\nfused_add_gate_norm 64 " + function(3) + "\n"),
                    table)
                  .ok());
  EXPECT_EQ(table.lookup(0, 64), 3);
}

TEST_F(TuningTest, WrittenThenReadBack) {
  TuningTable table;
  table.set(0, 4096, 3);
  table.set(0, 100, 1);
  table.set(0, 4096, 2);
  std::string text = formatTuning(artifact, table);
  EXPECT_EQ(text.rfind("normfuse-tune 1\n", 0), 0u) << text;
  TuningTable back;
  Status status = parse(text, back);
  ASSERT_TRUE(status.ok()) << status.message() << "\n" << text;
  EXPECT_EQ(back.entries, table.entries);
  EXPECT_EQ(back.lookup(0, 4096), 2);
  EXPECT_EQ(back.lookup(0, 100), 1);
}

TEST_F(TuningTest, AnotherBuildsFileIsIgnored) {
  // Recompiling the artifact changes its digest and may change its
  // variants: the entries made for the old build are not used.
  std::string other = artifact.digest;
  other[0] = other[0] == '0' ? '1' : '0';
  TuningTable table;
  table.set(0, 8192, 2);
  Status status = parse("normfuse-tune 1\nartifact " + other +
                            "\nno_such_kernel 8192 no_such_function\n",
                        table);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(table.entries.empty());
}

TEST_F(TuningTest, NoFileIsNoTable) {
  TuningTable table;
  table.set(0, 8192, 2);
  Status status =
      readTuning(artifact, ::testing::TempDir() + "/none.nfa", table);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(table.entries.empty());
  EXPECT_EQ(getTuneFilePath("/a/k.nfa"), "/a/k.nfa.tune");
}

TEST_F(TuningTest, ReadFromBesideTheArtifact) {
  std::string path = writeTempFile(
      "beside.nfa.tune", file("fused_add_gate_norm 3072 " + function(2)));
  TuningTable table;
  Status status = readTuning(
      artifact, path.substr(0, path.size() - std::string(".tune").size()),
      table);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(table.lookup(0, 3072), 2);
}

TEST_F(TuningTest, MalformedFilesAreRefused) {
  expectRefused("", "line 0: empty tune file");
  expectRefused("normfuse-artifact 7\n", "line 1: not a normfuse tune file");
  expectRefused("normfuse-tune 1\n", "no 'artifact <digest>' line");
  expectRefused("normfuse-tune 1\nfused_add_gate_norm 64 " + function(1) + "\n",
                "line 2: expected 'artifact <digest>'");
  expectRefused(file("fused_add_gate_norm 64\n"),
                "line 3: expected '<kernel> <D> <function>'");
  expectRefused(file("fused_add_gate_norm 64 " + function(1) + " extra\n"),
                "line 3: expected three words at most");
  expectRefused(file("fused_add_gate_norm sixty-four " + function(1) + "\n"),
                "line 3: expected a positive row length, found 'sixty-four'");
  expectRefused(file("fused_add_gate_norm 0 " + function(1) + "\n"),
                "expected a positive row length, found '0'");
  expectRefused(file("fused_add_gate_norm 64x " + function(1) + "\n"),
                "expected a positive row length, found '64x'");
  expectRefused(file("rmsnorm 64 " + function(1) + "\n"),
                "line 3: the artifact has no function '" + function(1) +
                    "' of a kernel 'rmsnorm'");
  expectRefused(file("fused_add_gate_norm 64 rmsnorm_v0_multi_row16x1\n"),
                "no function 'rmsnorm_v0_multi_row16x1'");
}

} // namespace
