//===- GpuTest.cpp - loading and launching, where there is a GPU ----------===//
//
// Part of normfuse. These need a CUDA driver and a device: without one each
// test is skipped (GTEST_SKIP), never passed. They check that the compiled
// artifacts load, that every function resolves within its block size, and
// that launches go through or are refused before reaching the driver.
// Numerical results are nf-run's business (tools/gpu-check.sh).
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "runtime/nf_runtime.h"

using namespace nf::rt;
using namespace nf_rt_test;

namespace {

/// Declares `cu`, the driver, or skips the test when there is none.
#define REQUIRE_DRIVER(cu)                                                     \
  std::string cu##Error;                                                       \
  const CudaDriver *cu = getCudaDriver(cu##Error);                             \
  if (!cu)                                                                     \
  GTEST_SKIP() << "needs a CUDA driver and a GPU: " << cu##Error

TEST(GpuTest, LoadsEveryArtifact) {
  REQUIRE_DRIVER(cu);
  for (const char *name : {"fused", "fused_d3072", "qk_neox", "qk_interleaved",
                           "frames", "select"}) {
    SCOPED_TRACE(name);
    Artifact artifact = loadArtifact(name);
    std::unique_ptr<Module> module;
    Status status = Module::load(artifact, module);
    ASSERT_TRUE(status.ok()) << status.message();
    for (const KernelInfo &kernel : artifact.kernels) {
      for (size_t v = 0; v < kernel.variants.size(); ++v) {
        const FunctionInfo *info = module->getFunctionInfo(kernel.name, v);
        ASSERT_NE(info, nullptr);
        EXPECT_NE(info->function, nullptr);
        EXPECT_GT(info->registers, 0);
        EXPECT_GE(info->maxThreads, kernel.variants[v].blockSize);
      }
      EXPECT_EQ(module->getFunctionInfo(kernel.name, kernel.variants.size()),
                nullptr);
    }
    EXPECT_EQ(module->getFunctionInfo("nope", 0), nullptr);
  }
}

TEST(GpuTest, LaunchFusedAddGateNorm) {
  REQUIRE_DRIVER(cu);
  Artifact artifact = loadArtifact("fused");
  std::unique_ptr<Module> module;
  Status status = Module::load(artifact, module);
  ASSERT_TRUE(status.ok()) << status.message();

  const int64_t b = 2, s = 3, d = 64;
  std::vector<CUdeviceptr> buffers;
  auto alloc = [&](DType dtype, std::vector<int64_t> shape) {
    Tensor t;
    t.dtype = dtype;
    t.rank = shape.size();
    int64_t n = 1;
    for (int i = t.rank - 1; i >= 0; --i) {
      t.shape[i] = shape[i];
      t.strides[i] = n;
      n *= shape[i];
    }
    CUdeviceptr ptr = 0;
    EXPECT_EQ(cu->cuMemAlloc_v2(&ptr, n * dtypeBytes(dtype)), 0);
    // 0x3C bytes: small finite values in every float type.
    EXPECT_EQ(cu->cuMemsetD8_v2(ptr, 0x3C, n * dtypeBytes(dtype)), 0);
    buffers.push_back(ptr);
    t.data = ptr;
    return t;
  };
  Launch launch;
  launch.args = {tensorValue(alloc(DType::BF16, {b, s, d})),
                 tensorValue(alloc(DType::BF16, {b, s, d})),
                 tensorValue(alloc(DType::F32, {b, 1, d})),
                 tensorValue(alloc(DType::F32, {d}))};
  launch.results = {alloc(DType::BF16, {b, s, d})};

  LaunchPlan plan;
  status = module->launch("fused_add_gate_norm", launch.args.data(),
                          launch.args.size(), launch.results.data(),
                          launch.results.size(), nullptr, &plan);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(plan.vectorized);
  EXPECT_EQ(cu->cuCtxSynchronize(), 0);

  // Refused before the driver sees them.
  EXPECT_ERROR(module->launch("nope", launch.args.data(), launch.args.size(),
                              launch.results.data(), launch.results.size(),
                              nullptr),
               "no kernel 'nope' in the artifact");
  EXPECT_ERROR(module->launch("fused_add_gate_norm", launch.args.data(), 3,
                              launch.results.data(), launch.results.size(),
                              nullptr),
               "expected 4 arguments, found 3");

  // Through the C API.
  nf_module *handle = nullptr;
  char error[256] = {};
  std::string path = artifactPath("fused");
  ASSERT_EQ(nf_module_load(path.c_str(), &handle, error, sizeof error), 0)
      << error;
  std::vector<nf_value> values(launch.args.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const Tensor &t = launch.args[i].tensor;
    values[i].is_tensor = 1;
    values[i].tensor.data = t.data;
    values[i].tensor.dtype = (int32_t)t.dtype;
    values[i].tensor.rank = t.rank;
    for (int k = 0; k < t.rank; ++k) {
      values[i].tensor.shape[k] = t.shape[k];
      values[i].tensor.strides[k] = t.strides[k];
    }
  }
  nf_tensor out = values[0].tensor;
  out.data = launch.results[0].data;
  EXPECT_EQ(nf_launch(handle, "fused_add_gate_norm", values.data(),
                      values.size(), &out, 1, nullptr, error, sizeof error),
            0)
      << error;
  EXPECT_NE(nf_launch(handle, "fused_add_gate_norm", values.data(), 2, &out, 1,
                      nullptr, error, sizeof error),
            0);
  EXPECT_NE(std::string(error).find("expected 4 arguments, found 2"),
            std::string::npos)
      << error;
  EXPECT_EQ(cu->cuCtxSynchronize(), 0);
  nf_module_unload(handle);
  for (CUdeviceptr ptr : buffers)
    cu->cuMemFree_v2(ptr);
}

TEST(GpuTest, CachedModule) {
  REQUIRE_DRIVER(cu);
  const Module *first = nullptr, *second = nullptr;
  Status status = getCachedModule(artifactPath("select"), first);
  ASSERT_TRUE(status.ok()) << status.message();
  status = getCachedModule(artifactPath("select"), second);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(first, second);
  EXPECT_NE(first->getFunctionInfo("select01_layernorm_modulate", 0), nullptr);
}

} // namespace
