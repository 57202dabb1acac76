//===- CudaDriver.cpp - libcuda through one dlopen'ed table ---------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "runtime/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace nf::rt;

namespace {
struct DriverState {
  CudaDriver table;
  std::string error;
  bool ok = false;
};
} // namespace

static DriverState &loadDriver() {
  static DriverState state;
  static std::once_flag once;
  std::call_once(once, [] {
    // NF_CUDA_DRIVER lets tests point the runtime at a missing library.
    const char *path = std::getenv("NF_CUDA_DRIVER");
    void *handle = dlopen(path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      state.error = std::string("cannot load the CUDA driver (") +
                    (path ? path : "libcuda.so.1") + "): " + dlerror();
      return;
    }
#define NF_LOAD_SYMBOL(name, ret, args)                                        \
  state.table.name = reinterpret_cast<ret(*) args>(dlsym(handle, #name));      \
  if (!state.table.name) {                                                     \
    state.error = "the CUDA driver has no symbol " #name;                      \
    return;                                                                    \
  }
    NF_CUDA_DRIVER_SYMBOLS(NF_LOAD_SYMBOL)
#undef NF_LOAD_SYMBOL
    CUresult status = state.table.cuInit(0);
    if (status != 0) {
      state.error = "cuInit failed: " + describeCudaError(status);
      return;
    }
    state.ok = true;
  });
  return state;
}

const CudaDriver *nf::rt::getCudaDriver(std::string &error) {
  DriverState &state = loadDriver();
  if (!state.ok) {
    error = state.error;
    return nullptr;
  }
  return &state.table;
}

std::string nf::rt::describeCudaError(CUresult result) {
  DriverState &state = loadDriver();
  const char *name = nullptr;
  if (state.table.cuGetErrorName)
    state.table.cuGetErrorName(result, &name);
  return std::string(name ? name : "CUDA error") + " (" +
         std::to_string(result) + ")";
}
