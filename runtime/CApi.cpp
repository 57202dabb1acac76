//===- CApi.cpp - C API of the normfuse runtime ---------------------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "runtime/Runtime.h"
#include "runtime/nf_runtime.h"

#include <cstring>
#include <memory>

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

// A dtype code is cast to DType as it is: the two lists must not drift.
static_assert((int)DType::F32 == NF_F32 && (int)DType::F16 == NF_F16 &&
                  (int)DType::BF16 == NF_BF16 && (int)DType::I8 == NF_I8 &&
                  (int)DType::I32 == NF_I32 && (int)DType::I64 == NF_I64 &&
                  (int)DType::F8E4M3FN == NF_F8E4M3FN &&
                  (int)DType::F8E5M2 == NF_F8E5M2,
              "DType and the C API's dtype codes differ");

/// Whether `code` is one of nf_runtime.h's dtype codes (NF_F8E5M2 is the
/// last).
static bool isDtypeCode(int64_t code) {
  return code >= NF_F32 && code <= NF_F8E5M2;
}

static bool toTensor(const nf_tensor &in, Tensor &out) {
  if (in.rank < 0 || in.rank > kMaxRank || !isDtypeCode(in.dtype))
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
  TuningTable tuning;
  if (int rc = report(readTuning(artifact, path, tuning), error, size))
    return rc;
  auto handle = new nf_module();
  if (int rc = report(Module::load(artifact, handle->module), error, size)) {
    delete handle;
    return rc;
  }
  handle->module->setTuning(std::move(tuning));
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

namespace {
/// Decodes the packed form (see nf_runtime.h) into `values` and `outs`.
Status unpack(const int64_t *packed, size_t size, size_t numArgs,
              size_t numResults, Value *values, Tensor *outs) {
  size_t pos = 0;
  auto take = [&](int64_t &word) {
    if (pos >= size)
      return false;
    word = packed[pos++];
    return true;
  };
  auto truncated = [] {
    return Status::error("packed arguments end early (a caller bug)");
  };
  for (size_t i = 0; i < numArgs + numResults; ++i) {
    bool isResult = i >= numArgs;
    int64_t kind;
    if (!take(kind))
      return truncated();
    if (kind == NF_PACKED_SCALAR) {
      if (isResult)
        return Status::error("result " + std::to_string(i - numArgs) +
                             " must be a tensor");
      values[i].isTensor = false;
      if (!take(values[i].scalar))
        return truncated();
      continue;
    }
    Tensor &t = isResult ? outs[i - numArgs] : values[i].tensor;
    if (!isResult)
      values[i].isTensor = true;
    int64_t rank, data;
    if (!take(rank) || !take(data))
      return truncated();
    if (!isDtypeCode(kind) || rank < 0 || rank > kMaxRank)
      return Status::error(std::string(isResult ? "result " : "argument ") +
                           std::to_string(isResult ? i - numArgs : i) +
                           " has a bad rank (" + std::to_string(rank) +
                           ") or dtype code (" + std::to_string(kind) + ")");
    t.dtype = static_cast<DType>(kind);
    t.rank = static_cast<int>(rank);
    t.data = static_cast<uint64_t>(data);
    for (int d = 0; d < t.rank; ++d)
      if (!take(t.shape[d]))
        return truncated();
    for (int d = 0; d < t.rank; ++d)
      if (!take(t.strides[d]))
        return truncated();
  }
  if (pos != size)
    return Status::error("packed arguments have " + std::to_string(size - pos) +
                         " words too many (a caller bug)");
  return Status();
}

constexpr size_t kMaxValues = 64;
} // namespace

namespace {
/// A packed call decoded: the arguments, the results.
struct Unpacked {
  Value values[kMaxValues];
  Tensor outs[kMaxValues];
};

/// The checks every packed entry point makes before decoding.
Status unpackCall(const char *entry, bool haveHandle, const char *kernel,
                  const int64_t *packed, size_t packedSize, size_t numArgs,
                  size_t numResults, Unpacked &out) {
  if (!haveHandle || !kernel || (packedSize && !packed) ||
      numArgs > kMaxValues || numResults > kMaxValues)
    return Status::error(std::string(entry) + ": null or oversized argument");
  return unpack(packed, packedSize, numArgs, numResults, out.values, out.outs);
}
} // namespace

extern "C" int nf_launch_packed(nf_module *module, const char *kernel,
                                const int64_t *packed, size_t packedSize,
                                size_t numArgs, size_t numResults, void *stream,
                                char *error, size_t size) {
  Unpacked call;
  if (int rc = report(unpackCall("nf_launch_packed", module, kernel, packed,
                                 packedSize, numArgs, numResults, call),
                      error, size))
    return rc;
  return report(module->module->launch(kernel, call.values, numArgs, call.outs,
                                       numResults,
                                       static_cast<CUstream>(stream)),
                error, size);
}

struct nf_artifact {
  Artifact artifact;
  std::string json; ///< describeArtifact, made at read (handles are shared)
};

extern "C" int nf_artifact_read(const char *path, nf_artifact **out,
                                char *error, size_t size) {
  if (!path || !out)
    return report(Status::error("nf_artifact_read: null argument"), error,
                  size);
  auto handle = std::make_unique<nf_artifact>();
  std::string message;
  if (!readArtifactFile(path, handle->artifact, message))
    return report(Status::error(message), error, size);
  handle->json = describeArtifact(handle->artifact);
  *out = handle.release();
  return 0;
}

extern "C" void nf_artifact_free(nf_artifact *artifact) { delete artifact; }

extern "C" int nf_artifact_describe(const nf_artifact *artifact,
                                    const char **json, size_t *length) {
  if (!artifact || !json)
    return 1;
  *json = artifact->json.c_str();
  if (length)
    *length = artifact->json.size();
  return 0;
}

extern "C" int nf_artifact_check(const nf_artifact *artifact,
                                 const char *kernel, const int64_t *packed,
                                 size_t packedSize, size_t numArgs,
                                 size_t numResults, char *error, size_t size) {
  Unpacked call;
  if (int rc = report(unpackCall("nf_artifact_check", artifact, kernel, packed,
                                 packedSize, numArgs, numResults, call),
                      error, size))
    return rc;
  const std::vector<KernelInfo> &kernels = artifact->artifact.kernels;
  size_t index;
  if (int rc = report(selectKernel(kernels, kernel, call.values, numArgs,
                                   call.outs, numResults, index),
                      error, size))
    return rc;
  const KernelInfo *info = &kernels[index];
  LaunchPlan plan;
  return report(
      planLaunch(*info, call.values, numArgs, call.outs, numResults, plan),
      error, size);
}
