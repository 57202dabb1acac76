//===- NoDriverTest.cpp - the runtime without a CUDA driver ---------------===//
//
// Part of normfuse. Its own executable: main() points NF_CUDA_DRIVER at a
// library that does not exist before anything opens the driver (the driver
// is opened once per process), so this runs the same with or without a GPU.
// Every entry point that needs the driver must give an error saying so,
// never crash.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "runtime/nf_runtime.h"

#include <cstring>

using namespace nf::rt;
using namespace nf_rt_test;

namespace {

const char *const kMissingDriver = "/nonexistent/nf-test/libcuda.so.1";

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(NoDriverTest, GetCudaDriver) {
  std::string error;
  EXPECT_EQ(getCudaDriver(error), nullptr);
  EXPECT_TRUE(contains(error, "cannot load the CUDA driver")) << error;
  EXPECT_TRUE(contains(error, kMissingDriver)) << error;
  // The failure is remembered, not retried into a different answer.
  std::string again;
  EXPECT_EQ(getCudaDriver(again), nullptr);
  EXPECT_EQ(again, error);
  // Describing a driver status needs no driver.
  EXPECT_EQ(describeCudaError(1), "CUDA error (1)");
}

TEST(NoDriverTest, ModuleLoad) {
  Artifact artifact = loadArtifact("fused");
  std::unique_ptr<Module> module;
  Status status = Module::load(artifact, module);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(contains(status.message(), "cannot load the CUDA driver"))
      << status.message();
  EXPECT_EQ(module, nullptr);
}

TEST(NoDriverTest, CachedModule) {
  const Module *module = nullptr;
  for (int attempt = 0; attempt < 2; ++attempt) {
    Status status = getCachedModule(artifactPath("qk_neox"), module);
    EXPECT_FALSE(status.ok());
    EXPECT_TRUE(contains(status.message(), "cannot load the CUDA driver"))
        << status.message();
    EXPECT_EQ(module, nullptr);
  }
  // A bad path is reported as such before the driver is needed.
  Status status = getCachedModule(artifactDir() + "/missing.nfa", module);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(contains(status.message(), "cannot open artifact"))
      << status.message();
}

TEST(NoDriverTest, OutdatedArtifactBeforeTheDriver) {
  // An artifact of format 1 is reported as such, the file being read before
  // the driver is needed: the message says what to do about it.
  std::string path =
      writeTempFile("nodriver-format-1.nfa", formatOneArtifact("fused"));
  const Module *module = nullptr;
  Status status = getCachedModule(path, module);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(contains(status.message(),
                       "artifact line 1: artifact format '1' is not one "
                       "this runtime reads (5 to 10)"))
      << status.message();
  EXPECT_FALSE(contains(status.message(), "CUDA driver")) << status.message();
  EXPECT_EQ(module, nullptr);

  char error[512] = {};
  nf_module *handle = nullptr;
  EXPECT_NE(nf_module_load(path.c_str(), &handle, error, sizeof error), 0);
  EXPECT_EQ(handle, nullptr);
  EXPECT_TRUE(contains(error, "artifact format '1'")) << error;
}

TEST(NoDriverTest, EveryArtifactReadsButDoesNotLoad) {
  // A family of variants (D dynamic) or two (D static): all parse, and
  // none gets to the driver.
  for (const char *name : {"fused", "fused_d3072", "qk_neox_dynamic_d"}) {
    SCOPED_TRACE(name);
    Artifact artifact = loadArtifact(name);
    ASSERT_FALSE(artifact.kernels.empty());
    EXPECT_FALSE(artifact.kernels[0].variants.empty());
    std::unique_ptr<Module> module;
    Status status = Module::load(artifact, module);
    EXPECT_FALSE(status.ok());
    EXPECT_TRUE(contains(status.message(), "cannot load the CUDA driver"))
        << status.message();
    EXPECT_EQ(module, nullptr);
  }
}

TEST(NoDriverTest, CApiModuleLoad) {
  char error[512];
  std::memset(error, 'X', sizeof error);
  nf_module *module = nullptr;
  std::string path = artifactPath("fused");
  EXPECT_NE(nf_module_load(path.c_str(), &module, error, sizeof error), 0);
  EXPECT_EQ(module, nullptr);
  ASSERT_NE(std::memchr(error, '\0', sizeof error), nullptr);
  EXPECT_TRUE(contains(error, "cannot load the CUDA driver")) << error;

  // A short buffer gets a terminated prefix; no buffer at all is fine.
  char small[8];
  std::memset(small, 'X', sizeof small);
  EXPECT_NE(nf_module_load(path.c_str(), &module, small, sizeof small), 0);
  EXPECT_EQ(std::string(small), "cannot ");
  EXPECT_NE(nf_module_load(path.c_str(), &module, nullptr, 0), 0);
  EXPECT_NE(nf_module_load(path.c_str(), &module, small, 0), 0);
  EXPECT_EQ(module, nullptr);
}

TEST(NoDriverTest, CApiBadArguments) {
  char error[256] = {};
  nf_module *module = nullptr;
  EXPECT_NE(nf_module_load(nullptr, &module, error, sizeof error), 0);
  EXPECT_TRUE(contains(error, "null argument")) << error;
  std::string path = artifactPath("fused");
  EXPECT_NE(nf_module_load(path.c_str(), nullptr, error, sizeof error), 0);
  EXPECT_TRUE(contains(error, "null argument")) << error;

  std::string missing = artifactDir() + "/missing.nfa";
  EXPECT_NE(nf_module_load(missing.c_str(), &module, error, sizeof error), 0);
  EXPECT_TRUE(contains(error, "cannot open artifact")) << error;

  EXPECT_NE(nf_launch(nullptr, "k", nullptr, 0, nullptr, 0, nullptr, error,
                      sizeof error),
            0);
  EXPECT_TRUE(contains(error, "nf_launch: null or oversized argument"))
      << error;
  nf_module_unload(nullptr);
}

} // namespace

int main(int argc, char **argv) {
  setenv("NF_CUDA_DRIVER", kMissingDriver, /*overwrite=*/1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
