//===- CudaDriver.h - libcuda through one dlopen'ed table -------*- C++ -*-===//
//
// Part of normfuse. The runtime never links libcuda: it is opened at first
// use, so the library builds and its CPU tests run where no driver exists,
// and a missing driver is an error status, not a loader failure.
//
//===----------------------------------------------------------------------===//

#ifndef NF_RUNTIME_CUDADRIVER_H
#define NF_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace nf::rt {

// The few driver types the runtime needs, as the driver ABI defines them.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;

// CUfunction_attribute values.
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// CUdevice_attribute values.
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;

#define NF_CUDA_DRIVER_SYMBOLS(X)                                              \
  X(cuInit, CUresult, (unsigned))                                              \
  X(cuGetErrorName, CUresult, (CUresult, const char **))                       \
  X(cuDeviceGet, CUresult, (CUdevice *, int))                                  \
  X(cuCtxGetCurrent, CUresult, (CUcontext *))                                  \
  X(cuCtxSetCurrent, CUresult, (CUcontext))                                    \
  X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice))               \
  X(cuModuleLoadData, CUresult, (CUmodule *, const void *))                    \
  X(cuModuleUnload, CUresult, (CUmodule))                                      \
  X(cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *))     \
  X(cuFuncGetAttribute, CUresult, (int *, int, CUfunction))                    \
  X(cuLaunchKernel, CUresult,                                                  \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X(cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t))                          \
  X(cuMemFree_v2, CUresult, (CUdeviceptr))                                     \
  X(cuMemcpyHtoD_v2, CUresult, (CUdeviceptr, const void *, size_t))            \
  X(cuMemcpyDtoH_v2, CUresult, (void *, CUdeviceptr, size_t))                  \
  X(cuMemcpyDtoDAsync_v2, CUresult,                                            \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                              \
  X(cuMemsetD8_v2, CUresult, (CUdeviceptr, unsigned char, size_t))             \
  X(cuCtxSynchronize, CUresult, ())                                            \
  X(cuEventCreate, CUresult, (CUevent *, unsigned))                            \
  X(cuEventRecord, CUresult, (CUevent, CUstream))                              \
  X(cuEventSynchronize, CUresult, (CUevent))                                   \
  X(cuEventElapsedTime, CUresult, (float *, CUevent, CUevent))                 \
  X(cuEventDestroy_v2, CUresult, (CUevent))                                    \
  X(cuStreamCreate, CUresult, (CUstream *, unsigned))                          \
  X(cuStreamDestroy_v2, CUresult, (CUstream))                                  \
  X(cuStreamSynchronize, CUresult, (CUstream))                                 \
  X(cuStreamBeginCapture_v2, CUresult, (CUstream, int))                        \
  X(cuStreamEndCapture, CUresult, (CUstream, void **))                         \
  X(cuGraphInstantiateWithFlags, CUresult,                                     \
    (void **, void *, unsigned long long))                                     \
  X(cuGraphLaunch, CUresult, (void *, CUstream))                               \
  X(cuGraphExecDestroy, CUresult, (void *))                                    \
  X(cuGraphDestroy, CUresult, (void *))                                        \
  /* Appended, so that the members above keep their offsets for code built     \
     against an older header (nf-run's copy floor: the SM count). */           \
  X(cuDeviceGetAttribute, CUresult, (int *, int, CUdevice))                    \
  /* Appended likewise (persistent variants: CTAs resident at once). */        \
  X(cuCtxGetDevice, CUresult, (CUdevice *))                                    \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, CUresult,                     \
    (int *, CUfunction, int, size_t))                                          \
  /* Appended likewise (dynamic shared memory past 48 KB). */                  \
  X(cuFuncSetAttribute, CUresult, (CUfunction, int, int))

/// The driver's entry points, filled by dlsym.
struct CudaDriver {
#define NF_DECLARE_SYMBOL(name, ret, args) ret(*name) args = nullptr;
  NF_CUDA_DRIVER_SYMBOLS(NF_DECLARE_SYMBOL)
#undef NF_DECLARE_SYMBOL
};

/// The process-wide driver table, opened (and cuInit'ed) on first call.
/// Returns nullptr and sets `error` when libcuda.so.1 cannot be opened, a
/// symbol is missing, or cuInit fails (e.g. no GPU). Thread-safe.
const CudaDriver *getCudaDriver(std::string &error);

/// "CUDA_ERROR_INVALID_VALUE (1)" for a driver status.
std::string describeCudaError(CUresult result);

} // namespace nf::rt

#endif // NF_RUNTIME_CUDADRIVER_H
