//===- CApi.cpp - C API of the normfuse runtime ---------------------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "runtime/Runtime.h"
#include "runtime/nf_runtime.h"

#include <cstring>

using namespace nf::rt;

struct nf_module {
  std::unique_ptr<Module> module;
};

static int report(const Status &status, char *error, size_t size) {
  if (status.ok())
    return 0;
  if (error && size) {
    std::strncpy(error, status.message().c_str(), size - 1);
    error[size - 1] = '\0';
  }
  return 1;
}

static bool toTensor(const nf_tensor &in, Tensor &out) {
  if (in.rank < 0 || in.rank > kMaxRank || in.dtype < NF_F32 ||
      in.dtype > NF_I64)
    return false;
  out.data = in.data;
  out.dtype = static_cast<DType>(in.dtype);
  out.rank = in.rank;
  for (int i = 0; i < in.rank; ++i) {
    out.shape[i] = in.shape[i];
    out.strides[i] = in.strides[i];
  }
  return true;
}

extern "C" int nf_module_load(const char *path, nf_module **out, char *error,
                              size_t size) {
  if (!path || !out)
    return report(Status::error("nf_module_load: null argument"), error, size);
  Artifact artifact;
  std::string message;
  if (!readArtifactFile(path, artifact, message))
    return report(Status::error(message), error, size);
  auto handle = new nf_module();
  if (int rc = report(Module::load(artifact, handle->module), error, size)) {
    delete handle;
    return rc;
  }
  *out = handle;
  return 0;
}

extern "C" void nf_module_unload(nf_module *module) { delete module; }

extern "C" int nf_launch(nf_module *module, const char *kernel,
                         const nf_value *args, size_t numArgs,
                         const nf_tensor *results, size_t numResults,
                         void *stream, char *error, size_t size) {
  constexpr size_t kMax = 64;
  if (!module || !kernel || numArgs > kMax || numResults > kMax ||
      (numArgs && !args) || (numResults && !results))
    return report(Status::error("nf_launch: null or oversized argument"), error,
                  size);
  Value values[kMax];
  Tensor outs[kMax];
  for (size_t i = 0; i < numArgs; ++i) {
    values[i].isTensor = args[i].is_tensor != 0;
    values[i].scalar = args[i].scalar;
    if (values[i].isTensor && !toTensor(args[i].tensor, values[i].tensor))
      return report(Status::error("nf_launch: argument " + std::to_string(i) +
                                  " has a bad rank or dtype"),
                    error, size);
  }
  for (size_t r = 0; r < numResults; ++r)
    if (!toTensor(results[r], outs[r]))
      return report(Status::error("nf_launch: result " + std::to_string(r) +
                                  " has a bad rank or dtype"),
                    error, size);
  return report(module->module->launch(kernel, values, numArgs, outs,
                                       numResults,
                                       static_cast<CUstream>(stream)),
                error, size);
}
