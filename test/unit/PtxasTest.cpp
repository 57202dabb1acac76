//===- PtxasTest.cpp - reading ptxas reports, occupancy arithmetic --------===//
//
// Part of normfuse. nf-compile --avoid-spills decides from these which
// kernels spilled and what occupancy to ask for; a misread log would
// silently turn the option off.
//
//===----------------------------------------------------------------------===//

#include "codegen/Ptxas.h"

#include "gtest/gtest.h"

using namespace mlir::nf;

namespace {

// As ptxas 13.0 prints it for -v (two functions, the second spilling).
const char *const kLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'k_general' for 'sm_90'\n"
    "ptxas info    : Function properties for k_general\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 32 registers, used 1 barriers, 64 bytes smem\n"
    "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
    "ptxas info    : Function properties for k\n"
    "    8 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
    "ptxas info    : Used 80 registers, used 1 barriers, 8 bytes cumulative "
    "stack size, 64 bytes smem\n";

TEST(Ptxas, ParsesEveryFunction) {
  auto functions = parsePtxasLog(kLog);
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_EQ(functions[0].name, "k_general");
  EXPECT_EQ(functions[0].registers, 32);
  EXPECT_FALSE(functions[0].spills());
  EXPECT_EQ(functions[1].name, "k");
  EXPECT_EQ(functions[1].registers, 80);
  EXPECT_EQ(functions[1].spillStores, 8);
  EXPECT_EQ(functions[1].spillLoads, 12);
  EXPECT_TRUE(functions[1].spills());
  EXPECT_EQ(functions[1].stack,
            "8 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads");
}

TEST(Ptxas, IgnoresLinesOutsideFunctions) {
  EXPECT_TRUE(parsePtxasLog("").empty());
  EXPECT_TRUE(parsePtxasLog("ptxas info    : Used 10 registers\n").empty());
  // A function cut off before its "Used" line is left out.
  EXPECT_TRUE(parsePtxasLog("ptxas info    : Compiling entry function 'f' for "
                            "'sm_90'\n    0 bytes stack frame, 0 bytes spill "
                            "stores, 0 bytes spill loads\n")
                  .empty());
}

TEST(Ptxas, ReadsMaxThreadsPerEntry) {
  auto threads = readMaxThreads(".visible .entry a(\n  .param .u64 p\n)\n"
                                ".maxntid 256, 1, 1\n{\n}\n"
                                ".entry b()\n.maxntid 128, 1, 1\n{\n}\n"
                                ".visible .entry c()\n{\n}\n");
  EXPECT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads.lookup("a"), 256);
  EXPECT_EQ(threads.lookup("b"), 128);
  EXPECT_FALSE(threads.count("c"));
}

TEST(Ptxas, ResidentCtas) {
  // 80 registers x 256 threads: 25 warps' worth of registers, 3 CTAs.
  EXPECT_EQ(residentCtasPerSm("sm_90", 80, 256), 3);
  // 40 registers: 51 warps' worth, but sm_86 holds 1536 threads: 6 CTAs.
  EXPECT_EQ(residentCtasPerSm("sm_86", 40, 256), 6);
  EXPECT_EQ(residentCtasPerSm("sm_80", 40, 256), 6);
  EXPECT_EQ(residentCtasPerSm("sm_80", 32, 256), 8);
  // Registers are allocated per warp in units of 256 (8 per thread).
  EXPECT_EQ(residentCtasPerSm("sm_90", 81, 128),
            residentCtasPerSm("sm_90", 88, 128));
  // Never below one, even past the register file.
  EXPECT_EQ(residentCtasPerSm("sm_90", 255, 1024), 1);
}

// Two entries as the NVPTX backend prints them; the second has inline
// assembly whose block closes at the start of a line, and a cluster.
static const char *kTwoEntries = ".version 8.1\n"
                                 ".target sm_90\n"
                                 ".address_size 64\n"
                                 "\n"
                                 "\t// .globl\ta\n"
                                 ".visible .entry a(\n"
                                 "\t.param .u64 a_param_0\n"
                                 ")\n"
                                 ".maxntid 256, 1, 1\n"
                                 "{\n"
                                 "\tret;\n"
                                 "\n"
                                 "}\n"
                                 "\t// .globl\tb\n"
                                 ".visible .entry b(\n"
                                 "\t.param .u64 b_param_0\n"
                                 ")\n"
                                 ".maxntid 512, 1, 1\n"
                                 ".minnctapersm 2\n"
                                 ".explicitcluster\n"
                                 ".reqnctapercluster 2, 1, 1\n"
                                 "{\n"
                                 "\t// begin inline asm\n"
                                 "\t{\n"
                                 ".reg .pred p;\n"
                                 "}\n"
                                 "\t// end inline asm\n"
                                 "\tret;\n"
                                 "\n"
                                 "}\n";

TEST(Ptxas, SetsMinCtasPerSmWhereTheBackendPrintsIt) {
  std::string ptx = kTwoEntries;
  ASSERT_TRUE(succeeded(setMinCtasPerSm(ptx, "a", 3)));
  EXPECT_NE(ptx.find(".maxntid 256, 1, 1\n.minnctapersm 3\n{\n"),
            std::string::npos);
  // Replaced, before the cluster directives.
  ASSERT_TRUE(succeeded(setMinCtasPerSm(ptx, "b", 4)));
  EXPECT_NE(ptx.find(".maxntid 512, 1, 1\n.minnctapersm 4\n"
                     ".explicitcluster\n"),
            std::string::npos);
  EXPECT_EQ(ptx.find(".minnctapersm 2"), std::string::npos);
  // Removed: back to the original text.
  ASSERT_TRUE(succeeded(setMinCtasPerSm(ptx, "a", 0)));
  ASSERT_TRUE(succeeded(setMinCtasPerSm(ptx, "b", 2)));
  EXPECT_EQ(ptx, kTwoEntries);
  EXPECT_TRUE(failed(setMinCtasPerSm(ptx, "c", 2)));
  EXPECT_EQ(ptx, kTwoEntries);
}

TEST(Ptxas, SelectsEntries) {
  llvm::StringSet<> onlyB, none;
  onlyB.insert("b");
  std::string b = selectEntries(kTwoEntries, onlyB);
  EXPECT_EQ(b.find(".entry a("), std::string::npos);
  EXPECT_NE(b.find(".version 8.1\n.target sm_90\n"), std::string::npos);
  // The inline assembly's `}` does not end b early.
  EXPECT_NE(b.find("// end inline asm\n\tret;\n\n}\n"), std::string::npos);
  std::string header = selectEntries(kTwoEntries, none);
  EXPECT_EQ(header.find(".entry"), std::string::npos);
  EXPECT_NE(header.find(".address_size 64"), std::string::npos);
  llvm::StringSet<> both;
  both.insert("a");
  both.insert("b");
  EXPECT_EQ(selectEntries(kTwoEntries, both), kTwoEntries);
}

} // namespace
