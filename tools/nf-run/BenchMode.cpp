//===- BenchMode.cpp - nf-run --bench: a kernel against a copy floor ------===//
//
// Part of normfuse. Times a kernel with CUDA events over rotating input
// sets, and the floor it is measured against: an SM copy kernel (PTX below,
// launched through the driver) moving the same bytes in the same run.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "NfRun.h"

#include <algorithm>
#include <cstdio>
#include <functional>

using namespace nf::rt;

namespace nfrun {
namespace {

/// Microseconds per call of `launch(it)`, it = 0 .. iters - 1, all enqueued
/// on `stream` between two CUDA events; `what` names a failure.
double timeIterations(const CudaDriver *cu, CUstream stream, int iters,
                      const char *what,
                      const std::function<void(int)> &launch) {
  CUevent start, stop;
  cu->cuEventCreate(&start, 0);
  cu->cuEventCreate(&stop, 0);
  cu->cuEventRecord(start, stream);
  for (int it = 0; it < iters; ++it)
    launch(it);
  cu->cuEventRecord(stop, stream);
  checkCuda(cu, cu->cuEventSynchronize(stop), what);
  float ms;
  cu->cuEventElapsedTime(&ms, start, stop);
  cu->cuEventDestroy_v2(start);
  cu->cuEventDestroy_v2(stop);
  return ms * 1000.0 / iters;
}

/// The copy floor's kernel. nf_copy16(dst, src, n) copies the n 16-byte
/// vectors of src to dst (both 16-byte aligned; 64-bit addressing) with
/// ld.global.v4.u32 / st.global.v4.u32. The vectors are cut into chunks of
/// 2 x ntid; block b copies chunks b, b + nctaid, ... (a grid-stride loop),
/// thread t of a chunk the vectors t and t + ntid of it, both loaded before
/// either is stored. PTX 7.8 for sm_80: the driver JIT-compiles it for the
/// GPU at hand (sm_80 and newer). Conditional branches are plain `bra`, not
/// `bra.uni`: the lanes of a warp diverge at the end of the vectors.
const char *const kCopyPtx = R"ptx(
.version 7.8
.target sm_80
.address_size 64

.visible .entry nf_copy16(
  .param .u64 nf_copy16_dst,
  .param .u64 nf_copy16_src,
  .param .u64 nf_copy16_n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<13>;
  .reg .b64 %rd<16>;

  ld.param.u64 %rd1, [nf_copy16_dst];
  ld.param.u64 %rd2, [nf_copy16_src];
  ld.param.u64 %rd3, [nf_copy16_n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd5, %r2, 2;      // chunk = 2 * ntid vectors
  cvt.u64.u32 %rd6, %r1;
  mul.lo.u64 %rd4, %rd6, %rd5;
  cvt.u64.u32 %rd6, %r3;
  add.u64 %rd4, %rd4, %rd6;       // i = ctaid * chunk + tid
  cvt.u64.u32 %rd6, %r4;
  mul.lo.u64 %rd7, %rd6, %rd5;    // step = nctaid * chunk
  cvt.u64.u32 %rd8, %r2;          // the second vector: i + ntid
  shl.b64 %rd9, %rd8, 4;          // ntid * 16 bytes

TWO:
  add.u64 %rd10, %rd4, %rd8;
  setp.ge.u64 %p1, %rd10, %rd3;   // i + ntid >= n: i at most, then done
  @%p1 bra ONE;
  shl.b64 %rd11, %rd4, 4;
  add.u64 %rd12, %rd2, %rd11;
  add.u64 %rd13, %rd1, %rd11;
  add.u64 %rd14, %rd12, %rd9;
  add.u64 %rd15, %rd13, %rd9;
  ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd12];
  ld.global.v4.u32 {%r9, %r10, %r11, %r12}, [%rd14];
  st.global.v4.u32 [%rd13], {%r5, %r6, %r7, %r8};
  st.global.v4.u32 [%rd15], {%r9, %r10, %r11, %r12};
  add.u64 %rd4, %rd4, %rd7;
  bra.uni TWO;

ONE:
  setp.ge.u64 %p2, %rd4, %rd3;
  @%p2 bra DONE;
  shl.b64 %rd11, %rd4, 4;
  add.u64 %rd12, %rd2, %rd11;
  add.u64 %rd13, %rd1, %rd11;
  ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd12];
  st.global.v4.u32 [%rd13], {%r5, %r6, %r7, %r8};

DONE:
  ret;
}
)ptx";

/// The copy kernel's launch: blocks of kCopyThreads threads, one per chunk
/// of 2 x kCopyThreads vectors (4 KiB), but at most kCopyBlocksPerSM per SM
/// (the SM count from cuDeviceGetAttribute), the grid-stride loop doing the
/// rest. Many short blocks, handed to SMs as they free up, copy faster than
/// a grid of one wave looping over the vectors. On an H200, 402.6 MB (201
/// MB each way): 4.10-4.13 TB/s; with at most 8 blocks per SM 3.78, with
/// 128 4.05; one wave of 4 blocks of 256 threads per SM looping over 4
/// vectors a thread 3.78; cuMemcpyDtoDAsync 4.03.
constexpr unsigned kCopyThreads = 128;
constexpr unsigned long long kCopyBlocksPerSM = 1024;

/// The copy floor: nf_copy16 moving half of the kernel's bytes
/// (BenchInputs::bytes) from one buffer to another, so half read and half
/// written, rounded down to a multiple of 16 bytes; rotating buffers the
/// same way. Microseconds per copy.
double timeCopy(const CudaDriver *cu, const BenchInputs &in, CUstream stream,
                int iters) {
  CUmodule module;
  checkCuda(cu, cu->cuModuleLoadData(&module, kCopyPtx),
            "loading the copy kernel (cuModuleLoadData)");
  CUfunction copy;
  checkCuda(cu, cu->cuModuleGetFunction(&copy, module, "nf_copy16"),
            "finding the copy kernel (cuModuleGetFunction)");
  // nf-run starts without a context: Module::load made device 0's primary
  // context current, and every buffer is on device 0.
  CUdevice device;
  checkCuda(cu, cu->cuDeviceGet(&device, 0), "cuDeviceGet");
  int sms = 0;
  checkCuda(cu,
            cu->cuDeviceGetAttribute(
                &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
            "cuDeviceGetAttribute");

  int sets = in.args.size();
  unsigned long long vectors = (unsigned long long)(in.bytes / 2) / 16;
  size_t half = vectors * 16;
  unsigned long long chunks =
      (vectors + 2 * kCopyThreads - 1) / (2 * kCopyThreads);
  unsigned blocks = (unsigned)std::max<unsigned long long>(
      1, std::min(chunks, std::max(sms, 1) * kCopyBlocksPerSM));
  // At least one vector allocated: cuMemAlloc refuses 0 bytes.
  size_t allocBytes = std::max<size_t>(half, 16);
  std::vector<CUdeviceptr> src(sets), dst(sets);
  auto launch = [&](int s) {
    void *params[] = {&dst[s], &src[s], &vectors};
    checkCuda(cu,
              cu->cuLaunchKernel(copy, blocks, 1, 1, kCopyThreads, 1, 1, 0,
                                 stream, params, nullptr),
              "launching the copy kernel (cuLaunchKernel)");
  };
  for (int s = 0; s < sets; ++s) {
    checkCuda(cu, cu->cuMemAlloc_v2(&src[s], allocBytes), "cuMemAlloc");
    checkCuda(cu, cu->cuMemAlloc_v2(&dst[s], allocBytes), "cuMemAlloc");
    launch(s);
  }
  double us = timeIterations(cu, stream, iters, "copy timing",
                             [&](int it) { launch(it % sets); });
  for (int s = 0; s < sets; ++s) {
    cu->cuMemFree_v2(src[s]);
    cu->cuMemFree_v2(dst[s]);
  }
  cu->cuModuleUnload(module);
  return us;
}

} // namespace

double timeLaunches(const CudaDriver *cu, const Module &module,
                    const KernelInfo &k, const BenchInputs &in, CUstream stream,
                    int iters, int variant, LaunchPlan *plan) {
  int sets = in.args.size();
  for (int s = 0; s < sets; ++s)
    if (Status st = module.launch(k.name.c_str(), in.args[s].data(),
                                  in.args[s].size(), in.results[s].data(),
                                  in.results[s].size(), stream, plan, variant);
        !st)
      die(st.message());
  return timeIterations(cu, stream, iters, "kernel timing", [&](int it) {
    int s = it % sets;
    module.launch(k.name.c_str(), in.args[s].data(), in.args[s].size(),
                  in.results[s].data(), in.results[s].size(), stream, nullptr,
                  variant);
  });
}

int runBench(const CudaDriver *cu, const Module &module, const KernelInfo &k,
             const BenchInputs &in, const std::string &dimsText, int iters) {
  CUstream stream;
  checkCuda(cu, cu->cuStreamCreate(&stream, 0), "cuStreamCreate");
  LaunchPlan plan;
  double kernelUs = timeLaunches(cu, module, k, in, stream, iters, -1, &plan);
  double copyUs = timeCopy(cu, in, stream, iters);
  // bytes: what the kernel must move; copy_TBps: those bytes over the
  // copy's time (the copy moved them rounded down to a multiple of 32
  // bytes); floor_pct: the copy's time over the kernel's, in percent.
  std::printf("BENCH %s dims=%s variant=%s bytes=%.0f kernel_us=%.2f "
              "copy_us=%.2f copy_TBps=%.3f floor_pct=%.1f\n",
              k.name.c_str(), dimsText.c_str(),
              k.variants[plan.variant].function.c_str(), in.bytes, kernelUs,
              copyUs, in.bytes / copyUs / 1e6, 100.0 * copyUs / kernelUs);
  return 0;
}

} // namespace nfrun
