//===- launch.cpp - load an artifact and launch it from C++ ---------------===//
//
// Part of normfuse. The smallest program against the installed runtime
// (find_package(normfuse), normfuse::runtime): loads an artifact of
// examples/rmsnorm.mlir with the C API, launches `rmsnorm` on a stream of
// its own over device buffers, and checks the result.
//
//   nf-compile examples/rmsnorm.mlir --sm sm_90 -o rmsnorm.nfa
//   nf-launch-example rmsnorm.nfa
//
// The runtime launches but never allocates, so the buffers and the stream
// come from the CUDA driver, opened here with dlopen as the runtime opens
// it: the program builds without the CUDA toolkit. Without a driver or a
// GPU, nf_module_load fails and its message is printed.
//
//===----------------------------------------------------------------------===//

#include "runtime/nf_runtime.h"

#include <cstdint>
#include <cstdio>
#include <dlfcn.h>
#include <vector>

namespace {

// The driver types and entry points used here, as cuda.h declares them.
using CUresult = int;
using CUdeviceptr = unsigned long long;
using CUstream = void *;
CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
CUresult (*cuStreamCreate)(CUstream *, unsigned);
CUresult (*cuStreamSynchronize)(CUstream);

template <typename F> bool getSymbol(void *library, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(library, name));
  return fn != nullptr;
}

int fail(const char *message) {
  std::fprintf(stderr, "error: %s\n", message);
  return 1; // The process exit releases the module, buffers and stream.
}

// A contiguous bf16 tensor: strides in elements, the last one 1.
nf_tensor bf16Tensor(CUdeviceptr data, int rank, const int64_t *shape) {
  nf_tensor t = {};
  t.data = data;
  t.dtype = NF_BF16;
  t.rank = rank;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    t.shape[i] = shape[i];
    t.strides[i] = stride;
    stride *= shape[i];
  }
  return t;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s RMSNORM_ARTIFACT\n", argv[0]);
    return 2;
  }
  // Loading first: it opens the driver and, when this thread has no
  // context, makes device 0's primary context current, which the
  // allocations below then use.
  char error[1024];
  nf_module *module = nullptr;
  if (nf_module_load(argv[1], &module, error, sizeof(error)))
    return fail(error);

  // Already loaded by the runtime: this only takes another reference.
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cuda || !getSymbol(cuda, "cuMemAlloc_v2", cuMemAlloc) ||
      !getSymbol(cuda, "cuMemcpyHtoD_v2", cuMemcpyHtoD) ||
      !getSymbol(cuda, "cuMemcpyDtoH_v2", cuMemcpyDtoH) ||
      !getSymbol(cuda, "cuStreamCreate", cuStreamCreate) ||
      !getSymbol(cuda, "cuStreamSynchronize", cuStreamSynchronize))
    return fail("cannot find the CUDA driver's memory and stream functions");

  // x [B, S, D] all 2.0 and weight [D] all 1.0: y = RMSNorm(x) * weight is
  // 1.0 everywhere (bf16 1.0 is 0x3f80, 2.0 is 0x4000).
  const int64_t shape[3] = {2, 4, 1024};
  const size_t n = shape[0] * shape[1] * shape[2];
  std::vector<uint16_t> x(n, 0x4000), weight(shape[2], 0x3f80), y(n, 0);
  CUdeviceptr dx, dweight, dy;
  CUstream stream;
  if (cuMemAlloc(&dx, n * 2) || cuMemAlloc(&dweight, shape[2] * 2) ||
      cuMemAlloc(&dy, n * 2) || cuMemcpyHtoD(dx, x.data(), n * 2) ||
      cuMemcpyHtoD(dweight, weight.data(), shape[2] * 2) ||
      cuStreamCreate(&stream, 0))
    return fail("allocating or copying device memory failed");

  // The launch is checked against the artifact's metadata (dtypes, ranks,
  // sizes, alignment) and is asynchronous on `stream`.
  nf_value args[2] = {{1, bf16Tensor(dx, 3, shape), 0},
                      {1, bf16Tensor(dweight, 1, &shape[2]), 0}};
  nf_tensor result = bf16Tensor(dy, 3, shape);
  if (nf_launch(module, "rmsnorm", args, 2, &result, 1, stream, error,
                sizeof(error)))
    return fail(error);
  if (cuStreamSynchronize(stream) || cuMemcpyDtoH(y.data(), dy, n * 2))
    return fail("the kernel or the copy back failed");

  for (size_t i = 0; i < n; ++i)
    if (y[i] != 0x3f80)
      return fail("rmsnorm: an element differs from 1.0");
  std::printf("ok: rmsnorm of %zu rows of %lld on a stream, every element "
              "1.0\n",
              n / shape[2], static_cast<long long>(shape[2]));
  nf_module_unload(module);
  return 0;
}
