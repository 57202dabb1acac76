//===- Runtime.cpp - loading and launching normfuse kernels ---------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "runtime/Runtime.h"
#include "runtime/Divisor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>

using namespace nf::rt;

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

namespace {
/// The symbolic sizes of each chain, bound from the tensors as they come.
struct Sizes {
  static constexpr int kMaxChains = 8;
  int64_t b[kMaxChains], s[kMaxChains], f[kMaxChains];
  int64_t d = -1;
  Sizes() {
    for (int i = 0; i < kMaxChains; ++i)
      b[i] = s[i] = f[i] = -1;
  }
};

std::string describeShape(const Tensor &t) {
  std::string text = "[";
  for (int i = 0; i < t.rank; ++i)
    text += (i ? ", " : "") + std::to_string(t.shape[i]);
  return text + "]";
}

} // namespace

int nf::rt::getDimLetters(const ArgumentInfo &arg,
                          const char *const *&letters) {
  static const char
      *const one[] = {"1"},
             *const d[] = {"D"}, *const bd[] = {"B", "D"},
             *const b1d[] = {"B", "1", "D"}, *const bsd[] = {"B", "S", "D"},
             *const bf1d[] = {"B", "F", "1", "D"}, *const bs[] = {"B", "S"},
             *const b[] = {"B"}, *const cache[] = {"P", "R"};
  struct Entry {
    const char *role, *bcast;
    const char *const *letters;
    int rank;
  };
  static const Entry table[] = {{"data", "One", one, 1},
                                {"data", "D", d, 1},
                                {"data", "BD", bd, 2},
                                {"data", "B1D", b1d, 3},
                                {"data", "BSD", bsd, 3},
                                {"data", "BF1D", bf1d, 4},
                                {"select_index", nullptr, bs, 2},
                                {"rope_positions", nullptr, b, 1},
                                {"rope_cache", nullptr, cache, 2}};
  for (const Entry &e : table)
    if (arg.role == e.role && (!e.bcast || arg.bcast == e.bcast)) {
      letters = e.letters;
      return e.rank;
    }
  letters = nullptr;
  return 0;
}

namespace {

/// Whether accesses of `align` bytes (a power of two) at element offsets
/// that are multiples of align / bytes can start every row of `t`.
bool isAligned(const Tensor &t, int64_t bytes, int64_t align) {
  if (t.data % align != 0)
    return false;
  for (int i = 0; i + 1 < t.rank; ++i)
    if ((t.strides[i] * bytes) % align != 0)
      return false;
  return true;
}

int64_t numElements(const Tensor &t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i)
    n *= t.shape[i];
  return n;
}

/// [first byte, one past the last byte] a tensor can touch; empty for a
/// tensor without elements. Strides may be negative.
std::pair<uint64_t, uint64_t> extent(const Tensor &t) {
  if (numElements(t) == 0)
    return {t.data, t.data};
  int64_t first = 0, last = 0;
  for (int i = 0; i < t.rank; ++i) {
    int64_t span = (t.shape[i] - 1) * t.strides[i];
    (span < 0 ? first : last) += span;
  }
  int64_t bytes = dtypeBytes(t.dtype);
  return {t.data + (uint64_t)(first * bytes),
          t.data + (uint64_t)((last + 1) * bytes)};
}
} // namespace

Status nf::rt::planLaunch(const KernelInfo &kernel, const Value *args,
                          size_t numArgs, const Tensor *results,
                          size_t numResults, LaunchPlan &plan, int variant,
                          const TunedVariants *tuned,
                          const int64_t *residentCtas) {
  plan = LaunchPlan();
  // Messages are built only on failure: a valid launch allocates nothing.
  auto where = [&]() { return "kernel '" + kernel.name + "': "; };
  if (numArgs != kernel.args.size())
    return Status::error(where() + "expected " +
                         std::to_string(kernel.args.size()) +
                         " arguments, found " + std::to_string(numArgs));
  if (numResults != kernel.results.size())
    return Status::error(where() + "expected " +
                         std::to_string(kernel.results.size()) +
                         " results, found " + std::to_string(numResults));
  if (kernel.numChains > Sizes::kMaxChains)
    return Status::error(where() + "too many chains");

  Sizes sizes;
  auto bind = [&](const char *letter, int chain, int64_t value,
                  const auto &what) -> Status {
    int64_t *slot = nullptr;
    const char *name = letter;
    if (std::strcmp(name, "1") == 0) {
      if (value != 1)
        return Status::error(where() + what() + " must have size 1, found " +
                             std::to_string(value));
      return Status();
    }
    if (std::strcmp(name, "D") == 0)
      slot = &sizes.d;
    else if (std::strcmp(name, "B") == 0)
      slot = &sizes.b[chain];
    else if (std::strcmp(name, "S") == 0)
      slot = &sizes.s[chain];
    else if (std::strcmp(name, "F") == 0)
      slot = &sizes.f[chain];
    else
      return Status(); // P, R: sizes of the cache alone
    if (*slot < 0) {
      *slot = value;
      return Status();
    }
    if (*slot != value)
      return Status::error(where() + what() + " gives " + std::string(name) +
                           " = " + std::to_string(value) + ", expected " +
                           std::to_string(*slot) + " from earlier operands");
    return Status();
  };
  auto checkTensor = [&](const Tensor &t, DType dtype, const Shape &shape,
                         const auto &what) -> Status {
    if (t.dtype != dtype)
      return Status::error(where() + what() + " must be " + dtypeName(dtype) +
                           ", found " + dtypeName(t.dtype));
    if (t.rank < 0 || t.rank > kMaxRank || t.rank != (int)shape.size())
      return Status::error(where() + what() + " must have rank " +
                           std::to_string(shape.size()) + ", found rank " +
                           std::to_string(t.rank));
    for (int i = 0; i < t.rank; ++i) {
      if (t.shape[i] < 0 || (shape[i] >= 0 && shape[i] != t.shape[i]))
        return Status::error(where() + what() + " dimension " +
                             std::to_string(i) + " must be " +
                             (shape[i] >= 0 ? std::to_string(shape[i])
                                            : std::string("non-negative")) +
                             ", found " + std::to_string(t.shape[i]));
    }
    if (t.rank > 0 && t.strides[t.rank - 1] != 1)
      return Status::error(where() + what() +
                           ": the last dimension must be contiguous (stride "
                           "1), found stride " +
                           std::to_string(t.strides[t.rank - 1]));
    // A tensor without elements (no rows to do) may be null.
    if (!t.data && numElements(t) != 0)
      return Status::error(where() + what() + " is a null pointer");
    return Status();
  };

  for (size_t i = 0; i < numArgs; ++i) {
    const ArgumentInfo &info = kernel.args[i];
    auto what = [&]() { return "argument '" + info.name + "'"; };
    if (info.isTensor != args[i].isTensor)
      return Status::error(where() + what() + " must be a " +
                           (info.isTensor ? "tensor" : "scalar"));
    if (!info.isTensor)
      continue;
    const Tensor &t = args[i].tensor;
    if (Status s = checkTensor(t, info.dtype, info.shape, what); !s)
      return s;
    const char *const *letters = nullptr;
    int n = getDimLetters(info, letters);
    if (n && n != t.rank)
      return Status::error(where() + what() + " has rank " +
                           std::to_string(t.rank) + " but is used as " +
                           std::to_string(n) + "-d");
    for (int chain : info.chains)
      for (int d = 0; d < n; ++d)
        if (Status s = bind(letters[d], chain, t.shape[d],
                            [&] { return what() + " " + describeShape(t); });
            !s)
          return s;
  }
  for (size_t r = 0; r < numResults; ++r) {
    const ResultInfo &info = kernel.results[r];
    auto what = [&]() { return "result " + std::to_string(r); };
    const Tensor &t = results[r];
    if (Status s = checkTensor(t, info.dtype, info.shape, what); !s)
      return s;
    // [B, S, D], or [B, S] (one value per row): checkTensor has checked
    // the rank against the metadata's, 3 or 2 (checkKernel). The last size
    // of a [B, S, D / G] result (group values) is checked once D is known.
    static const char *bsd[] = {"B", "S", "D"};
    for (int d = 0; d < t.rank && d < (info.group ? 2 : 3); ++d)
      if (Status s = bind(bsd[d], info.chain, t.shape[d],
                          [&] { return what() + " " + describeShape(t); });
          !s)
        return s;
    if (info.inPlace >= 0) {
      const Tensor &a = args[info.inPlace].tensor;
      if (a.data != t.data || a.rank != t.rank ||
          std::memcmp(a.shape, t.shape, t.rank * sizeof *a.shape) ||
          std::memcmp(a.strides, t.strides, t.rank * sizeof *a.strides))
        return Status::error(where() + what() + " is written in place into '" +
                             kernel.args[info.inPlace].name +
                             "': pass that tensor as the result");
      continue;
    }
    // A result must not overlap anything else: rows are read and written
    // by different threads.
    auto [lo, hi] = extent(t);
    auto overlaps = [&](const Tensor &o) {
      auto [olo, ohi] = extent(o);
      return lo < hi && olo < ohi && lo < ohi && olo < hi;
    };
    for (size_t i = 0; i < numArgs; ++i)
      if (args[i].isTensor && overlaps(args[i].tensor))
        return Status::error(where() + what() + " overlaps argument '" +
                             kernel.args[i].name + "'");
    for (size_t o = 0; o < numResults; ++o)
      if (o != r && overlaps(results[o]))
        return Status::error(where() + what() + " overlaps result " +
                             std::to_string(o));
  }

  if (sizes.d < 1)
    return Status::error(where() + "row length D must be at least 1, found " +
                         std::to_string(sizes.d));
  if (kernel.rowLength >= 0 && sizes.d != kernel.rowLength)
    return Status::error(
        where() + "compiled for D = " + std::to_string(kernel.rowLength) +
        ", found D = " + std::to_string(sizes.d));
  // Group reductions: D a multiple of their group sizes; a group result
  // has D / G values per row.
  if (sizes.d % kernel.rowMultiple != 0)
    return Status::error(where() + "row length D = " + std::to_string(sizes.d) +
                         " is not a multiple of " +
                         std::to_string(kernel.rowMultiple) +
                         ", the group size of the kernel's group reductions");
  for (size_t r = 0; r < numResults; ++r) {
    int64_t g = kernel.results[r].group;
    if (!g)
      continue;
    if (results[r].shape[2] != sizes.d / g)
      return Status::error(where() + "result " + std::to_string(r) +
                           " dimension 2 must be D / " + std::to_string(g) +
                           " = " + std::to_string(sizes.d / g) + ", found " +
                           std::to_string(results[r].shape[2]));
  }
  uint64_t totalCtas = 0;
  int64_t rows[Sizes::kMaxChains];
  for (int c = 0; c < kernel.numChains; ++c) {
    if (sizes.b[c] < 0 || sizes.s[c] < 0)
      return Status::error(where() + "chain " + std::to_string(c) +
                           " has no [B, S, D] tensor to size it");
    if (sizes.f[c] < 0)
      sizes.f[c] = 1;
    if (sizes.f[c] == 0 || sizes.s[c] % sizes.f[c] != 0)
      return Status::error(where() + "S = " + std::to_string(sizes.s[c]) +
                           " is not divisible by the frame count F = " +
                           std::to_string(sizes.f[c]));
    // The kernels index rows with 32-bit arithmetic.
    if (sizes.b[c] >= (int64_t(1) << 31) || sizes.s[c] >= (int64_t(1) << 31) ||
        sizes.b[c] * sizes.s[c] >= (int64_t(1) << 31))
      return Status::error(where() + "chain " + std::to_string(c) + " has " +
                           std::to_string(sizes.b[c]) + " x " +
                           std::to_string(sizes.s[c]) +
                           " rows; at most 2^31 - 1 rows per launch");
    rows[c] = sizes.b[c] * sizes.s[c];
  }

  // A rotary pair must lie within the row: with D dynamic only the launch
  // can check that the cache's width (rotary_dim) fits.
  for (size_t i = 0; i < numArgs; ++i)
    if (kernel.args[i].role == "rope_cache" && args[i].tensor.rank == 2 &&
        args[i].tensor.shape[1] > sizes.d)
      return Status::error(
          where() + "argument '" + kernel.args[i].name + "' has rotary width " +
          std::to_string(args[i].tensor.shape[1]) +
          ", more than the row length D = " + std::to_string(sizes.d));

  // Variant: the first whose guard holds. A vectorized variant accesses
  // `chunk` elements of the narrowest type at once, so each tensor's
  // accesses are chunk * its element size bytes wide (up to 16, the
  // widest access the lowering emits) and must be aligned to that.
  auto alignedFor = [&](int64_t chunk) {
    auto ok = [&](const Tensor &t, int64_t bytes) {
      return isAligned(t, bytes, std::min<int64_t>(16, chunk * bytes));
    };
    for (size_t i = 0; i < numArgs; ++i) {
      const ArgumentInfo &info = kernel.args[i];
      if ((info.role == "data" || info.role == "rope_cache") &&
          !ok(args[i].tensor, dtypeBytes(info.dtype)))
        return false;
    }
    // A [B, S] result holds one value per row, and a [B, S, D / G] one a
    // value per group, which the kernel stores with scalar stores: their
    // alignment does not matter.
    for (size_t r = 0; r < numResults; ++r)
      if (kernel.results[r].shape.size() != 2 && !kernel.results[r].group &&
          !ok(results[r], dtypeBytes(results[r].dtype)))
        return false;
    return true;
  };
  // A peeled variant accesses each row's body in chunks aligned in memory,
  // from where the first [B, S, D] load's row starts: every [B, S, D]
  // tensor must start at the same element offset modulo the chunk and
  // step by strides equal modulo the chunk (a stride of a dimension of
  // size 1 is never used), so that all rows share their offset.
  // (A dimension of size 1 never steps, so its stride does not count.)
  auto granulesAligned = [](const Tensor &t, int64_t bytes) {
    if (t.data % 16 != 0)
      return false;
    for (int i = 0; i + 1 < t.rank; ++i)
      if (t.shape[i] > 1 && (t.strides[i] * bytes) % 16 != 0)
        return false;
    return true;
  };
  auto peeledFor = [&](int64_t chunk) {
    bool first = true;
    int64_t offset = 0, stride[2] = {0, 0};
    auto same = [&](const Tensor &t, int64_t bytes) {
      if (t.rank != 3 || t.data % bytes != 0)
        return false;
      int64_t o = int64_t((t.data / bytes) % chunk), st[2];
      for (int i = 0; i < 2; ++i)
        st[i] = t.shape[i] > 1 ? ((t.strides[i] % chunk) + chunk) % chunk : -1;
      if (first) {
        first = false;
        offset = o;
        stride[0] = st[0];
        stride[1] = st[1];
      }
      for (int i = 0; i < 2; ++i) {
        if (stride[i] < 0)
          stride[i] = st[i];
        if (st[i] >= 0 && st[i] != stride[i])
          return false;
      }
      return o == offset;
    };
    for (size_t i = 0; i < numArgs; ++i) {
      const ArgumentInfo &info = kernel.args[i];
      if (info.role != "data")
        continue;
      int64_t bytes = dtypeBytes(info.dtype);
      if (info.bcast == "BSD" && !same(args[i].tensor, bytes))
        return false;
      // An operand broadcast along the rows with elements of 4 bytes or
      // more is read in aligned 16-byte granules, shifted to each row's
      // offset (the lowering's loadShifted).
      if (info.bcast != "BSD" && info.bcast != "One" && bytes >= 4 &&
          !granulesAligned(args[i].tensor, bytes))
        return false;
    }
    for (size_t r = 0; r < numResults; ++r)
      if (kernel.results[r].shape.size() == 3 && !kernel.results[r].group &&
          !same(results[r], dtypeBytes(results[r].dtype)))
        return false;
    return !first;
  };
  // Variants alternate between the 16-byte chunk and its 8-byte twin: the
  // answer per chunk is computed once per launch (-1: not yet).
  int8_t alignedByChunk[17], peeledByChunk[17];
  std::fill(std::begin(alignedByChunk), std::end(alignedByChunk), -1);
  std::fill(std::begin(peeledByChunk), std::end(peeledByChunk), -1);
  if (variant >= (int)kernel.variants.size())
    return Status::error(where() + "no variant " + std::to_string(variant) +
                         " (the kernel has " +
                         std::to_string(kernel.variants.size()) + ")");
  auto holds = [&](const VariantInfo &candidate) {
    if (candidate.maxD > 0 && sizes.d > candidate.maxD)
      return false;
    // A short launch's persistent twin: at most maxRowsPerCta rows per CTA
    // of it that fits on the device (one chain: persistent kernels have
    // one).
    if (candidate.maxRowsPerCta > 0) {
      int64_t resident =
          residentCtas ? residentCtas[&candidate - kernel.variants.data()] : 0;
      if (resident <= 0 || kernel.numChains != 1 ||
          (rows[0] + resident - 1) / resident > candidate.maxRowsPerCta)
        return false;
    }
    if (candidate.peeled) {
      int8_t known =
          candidate.chunk <= 16 ? peeledByChunk[candidate.chunk] : -1;
      if (known < 0) {
        known = peeledFor(candidate.chunk);
        if (candidate.chunk <= 16)
          peeledByChunk[candidate.chunk] = known;
      }
      if (!known)
        return false;
    }
    if (candidate.vectorized) {
      if (sizes.d % candidate.chunk != 0)
        return false;
      if (candidate.chunk > 16)
        return alignedFor(candidate.chunk);
      int8_t &known = alignedByChunk[candidate.chunk];
      if (known < 0)
        known = alignedFor(candidate.chunk);
      return known != 0;
    }
    return true;
  };
  int chosen = -1;
  if (variant >= 0) {
    if (holds(kernel.variants[variant]))
      chosen = variant;
  } else {
    // The variant tuned for this D, where its guard holds for the call too
    // (a tune made with aligned tensors does not apply to misaligned ones).
    int preferred = tuned ? lookupTuned(*tuned, sizes.d) : -1;
    if (preferred >= 0 && preferred < (int)kernel.variants.size() &&
        holds(kernel.variants[preferred]))
      chosen = preferred;
    for (size_t v = 0; v < kernel.variants.size() && chosen < 0; ++v)
      if (holds(kernel.variants[v]))
        chosen = (int)v;
  }
  if (chosen < 0 && variant >= 0)
    return Status::error(
        where() + "variant '" + kernel.variants[variant].function +
        "' does not serve this call (its guard does not hold "
        "for D = " +
        std::to_string(sizes.d) + " and these tensors' alignment)");
  if (chosen < 0) {
    int64_t most = 0;
    for (const VariantInfo &v : kernel.variants)
      most = std::max(most, v.maxD);
    return Status::error(
        where() + "no variant serves rows of D = " + std::to_string(sizes.d) +
        " (the longest served is " + std::to_string(most) + ")");
  }
  const VariantInfo &launched = kernel.variants[chosen];
  bool vectorized = launched.vectorized;
  for (int c = 0; c < kernel.numChains; ++c)
    totalCtas += (rows[c] + launched.rowsPerCta - 1) / launched.rowsPerCta *
                 launched.clusterSize;
  if (totalCtas > 0x7fffffffu)
    return Status::error(where() + "too many rows for one launch");

  // Parameters, in the order of the artifact.
  if (kernel.params.size() > (size_t)kMaxParams)
    return Status::error(where() + "too many parameters");
  for (size_t p = 0; p < kernel.params.size(); ++p) {
    const ParamInfo &param = kernel.params[p];
    uint64_t value = 0;
    const std::string &k = param.kind;
    if (k == "arg_ptr") {
      value = args[param.index].tensor.data;
    } else if (k == "arg_scalar") {
      int64_t v = args[param.index].scalar;
      if (param.type == "i32") {
        if (v < INT32_MIN || v > INT32_MAX)
          return Status::error(where() + "scalar '" + param.name +
                               "' does not fit in i32");
        int32_t v32 = (int32_t)v;
        std::memcpy(&value, &v32, sizeof v32);
      } else {
        std::memcpy(&value, &v, sizeof v);
      }
    } else if (k == "result_ptr") {
      value = results[param.index].data;
    } else if (k == "chain_rows") {
      value = rows[param.index];
    } else if (k == "chain_s") {
      value = sizes.s[param.index];
    } else if (k == "chain_f") {
      value = sizes.f[param.index];
    } else if (k == "chain_s_divisor") {
      value = sDivisor(sizes.s[param.index]);
    } else if (k == "row_length") {
      value = sizes.d;
    } else if (k == "arg_stride") {
      value = args[param.index].tensor.strides[param.dim];
    } else if (k == "result_stride") {
      value = results[param.index].strides[param.dim];
    } else if (k == "cache_rows") {
      value = args[param.index].tensor.shape[0];
    } else {
      return Status::error(where() + "unknown parameter kind '" + k + "'");
    }
    plan.params[p] = value;
  }
  plan.numParams = kernel.params.size();
  plan.variant = chosen;
  plan.vectorized = vectorized;
  plan.grid = totalCtas;
  plan.batches = plan.rowsPerBatch = 0;
  plan.ctasPerBatch = 0;
  if (launched.schedule == "persistent" && kernel.numChains == 1 &&
      sizes.s[0] > 0) {
    plan.rowsPerBatch = sizes.s[0];
    plan.batches = rows[0] / sizes.s[0];
    // A CTA's rows are consecutive tokens of one entry: B * ceil(S / R)
    // CTAs cover every row (B * S / R, rounded up, may not be a multiple
    // of B).
    plan.ctasPerBatch =
        (plan.rowsPerBatch + launched.rowsPerCta - 1) / launched.rowsPerCta;
    plan.grid = (unsigned)(plan.batches * plan.ctasPerBatch);
  }
  plan.block = launched.blockSize;
  plan.rowLength = sizes.d;
  return Status();
}

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

static Status check(CUresult result, const std::string &what) {
  if (result == 0)
    return Status();
  return Status::error(what + " failed: " + describeCudaError(result));
}

Status Module::load(const Artifact &artifact, std::unique_ptr<Module> &out) {
  std::string error;
  const CudaDriver *driver = getCudaDriver(error);
  if (!driver)
    return Status::error(error);
  CUcontext ctx = nullptr;
  if (Status s = check(driver->cuCtxGetCurrent(&ctx), "cuCtxGetCurrent"); !s)
    return s;
  if (!ctx) {
    CUdevice device;
    if (Status s = check(driver->cuDeviceGet(&device, 0), "cuDeviceGet"); !s)
      return s;
    if (Status s = check(driver->cuDevicePrimaryCtxRetain(&ctx, device),
                         "cuDevicePrimaryCtxRetain");
        !s)
      return s;
    if (Status s = check(driver->cuCtxSetCurrent(ctx), "cuCtxSetCurrent"); !s)
      return s;
  }
  std::unique_ptr<Module> module(new Module());
  module->artifact = artifact;
  module->driver = driver;
  module->context = ctx;
  const std::string &image =
      artifact.cubin.empty() ? module->artifact.ptx : module->artifact.cubin;
  if (Status s = check(driver->cuModuleLoadData(&module->module, image.c_str()),
                       "loading the kernels (cuModuleLoadData)");
      !s)
    return s;
  for (const KernelInfo &info : module->artifact.kernels) {
    Entry entry{&info, {}, {}};
    entry.variants.resize(info.variants.size());
    for (size_t v = 0; v < info.variants.size(); ++v) {
      const VariantInfo &variant = info.variants[v];
      FunctionInfo &fn = entry.variants[v];
      const std::string &name = variant.function;
      if (Status s = check(driver->cuModuleGetFunction(
                               &fn.function, module->module, name.c_str()),
                           "finding function '" + name + "'");
          !s)
        return s;
      driver->cuFuncGetAttribute(&fn.registers, CU_FUNC_ATTRIBUTE_NUM_REGS,
                                 fn.function);
      driver->cuFuncGetAttribute(
          &fn.localBytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn.function);
      driver->cuFuncGetAttribute(
          &fn.sharedBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn.function);
      driver->cuFuncGetAttribute(
          &fn.maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn.function);
      // Past 48 KB a function gets dynamic shared memory only where it has
      // asked for it; a device that has less refuses here, not at launch.
      if (variant.dynamicSharedBytes > 0)
        if (Status s =
                check(driver->cuFuncSetAttribute(
                          fn.function,
                          CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                          variant.dynamicSharedBytes),
                      "function '" + name + "' needs " +
                          std::to_string(variant.dynamicSharedBytes) +
                          " bytes of dynamic shared memory, which this device "
                          "does not give (cuFuncSetAttribute)");
            !s)
          return s;
      // Persistent CTAs: as many as fit at once (at least one per SM).
      // (Every entry point of the table is there: getCudaDriver fails
      // without one.)
      if (variant.schedule == "persistent") {
        CUdevice device;
        int perSm = 0, sms = 0;
        if (driver->cuCtxGetDevice(&device) == 0 &&
            driver->cuDeviceGetAttribute(
                &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device) == 0 &&
            driver->cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &perSm, fn.function, variant.blockSize,
                variant.dynamicSharedBytes) == 0)
          fn.residentCtas = (int64_t)std::max(perSm, 1) * sms;
        // For checking the row loop: launch as if this many CTAs fitted
        // (1: one CTA walks every row of a batch entry), where the
        // device's count would give most CTAs one row of a small case.
        if (const char *forced = std::getenv("NF_PERSISTENT_CTAS"))
          if (int64_t n = std::atoll(forced); n > 0)
            fn.residentCtas = n;
      }
      if (fn.maxThreads < variant.blockSize)
        return Status::error("function '" + name + "' runs at most " +
                             std::to_string(fn.maxThreads) +
                             " threads per block, its schedule needs " +
                             std::to_string(variant.blockSize) + " (" +
                             std::to_string(fn.registers) + " registers)");
    }
    for (const FunctionInfo &fn : entry.variants)
      entry.residentCtas.push_back(fn.residentCtas);
    module->entries.push_back(std::move(entry));
  }
  out = std::move(module);
  return Status();
}

bool nf::rt::matchesDtypes(const KernelInfo &kernel, const Value *args,
                           size_t numArgs, const Tensor *results,
                           size_t numResults) {
  for (size_t i = 0; i < numArgs && i < kernel.args.size(); ++i)
    if (kernel.args[i].isTensor && args[i].isTensor &&
        args[i].tensor.dtype != kernel.args[i].dtype)
      return false;
  for (size_t r = 0; r < numResults && r < kernel.results.size(); ++r)
    if (results[r].dtype != kernel.results[r].dtype)
      return false;
  return true;
}

Status nf::rt::selectKernel(const std::vector<KernelInfo> &kernels,
                            const char *name, const Value *args, size_t numArgs,
                            const Tensor *results, size_t numResults,
                            size_t &index) {
  size_t found = 0, first = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].name != name)
      continue;
    if (found++ == 0)
      first = k;
    if (kernels[k].types.empty() ||
        matchesDtypes(kernels[k], args, numArgs, results, numResults)) {
      index = k;
      return Status();
    }
  }
  if (found == 0)
    return Status::error(std::string("no kernel '") + name +
                         "' in the artifact");
  // Built for other dtypes: say which, and what the call has.
  const KernelInfo &kernel = kernels[first];
  std::string built, call;
  for (const KernelInfo &k : kernels)
    if (k.name == name)
      built += (built.empty() ? "" : "; ") + k.types;
  for (size_t i = 0; i < numArgs && i < kernel.args.size(); ++i)
    if (args[i].isTensor)
      call += (call.empty() ? "" : ", ") + kernel.args[i].name + ": " +
              dtypeName(args[i].tensor.dtype);
  for (size_t r = 0; r < numResults; ++r)
    call += (call.empty() ? "" : ", ") + std::string("result ") +
            std::to_string(r) + ": " + dtypeName(results[r].dtype);
  return Status::error("kernel '" + std::string(name) +
                       "' was not built for the dtypes of this call (" + call +
                       "); it was built for " + built +
                       " (nf-compile --types)");
}

Module::~Module() {
  if (module && driver)
    driver->cuModuleUnload(module);
}

const FunctionInfo *Module::getFunctionInfo(const std::string &kernel,
                                            int variant) const {
  for (const Entry &entry : entries)
    if (entry.info->name == kernel)
      return variant >= 0 && variant < (int)entry.variants.size()
                 ? &entry.variants[variant]
                 : nullptr;
  return nullptr;
}

Status Module::launch(const char *kernel, const Value *args, size_t numArgs,
                      const Tensor *results, size_t numResults, CUstream stream,
                      LaunchPlan *planOut, int variant) const {
  size_t index;
  if (Status s = selectKernel(artifact.kernels, kernel, args, numArgs, results,
                              numResults, index);
      !s)
    return s;
  const Entry *entry = &entries[index];
  LaunchPlan local;
  LaunchPlan &plan = planOut ? *planOut : local;
  const TunedVariants *tuned =
      index < tuning.entries.size() && !tuning.entries[index].empty()
          ? &tuning.entries[index]
          : nullptr;
  if (Status s = planLaunch(*entry->info, args, numArgs, results, numResults,
                            plan, variant, tuned, entry->residentCtas.data());
      !s)
    return s;
  if (plan.grid == 0)
    return Status();
  void *params[kMaxParams];
  for (int p = 0; p < plan.numParams; ++p)
    params[p] = &plan.params[p];
  const FunctionInfo &fn = entry->variants[plan.variant];
  unsigned grid = plan.grid;
  if (plan.batches > 0 && fn.residentCtas > 0) {
    // At most the resident CTAs in all: those past them would walk their
    // rows after the others (H200, layernorm_modulate_quant_fp8, D = 12288,
    // B = 8: ceil(132 / 8) = 17 per entry, 136 CTAs, 38.2% of a copy; 16
    // per entry, 68.2).
    int64_t perBatch = fn.residentCtas / plan.batches;
    perBatch = std::min(std::max<int64_t>(perBatch, 1), plan.ctasPerBatch);
    grid = (unsigned)(plan.batches * perBatch);
  }
  // The functions belong to the context the module was loaded in; a caller
  // whose current context is another device's (a process launching on two
  // GPUs) gets it switched for the launch and back.
  CUcontext current = nullptr;
  if (Status s = check(driver->cuCtxGetCurrent(&current), "cuCtxGetCurrent");
      !s)
    return s;
  if (current != context)
    if (Status s = check(driver->cuCtxSetCurrent(context), "cuCtxSetCurrent");
        !s)
      return s;
  CUresult result = driver->cuLaunchKernel(
      fn.function, grid, 1, 1, plan.block, 1, 1,
      entry->info->variants[plan.variant].dynamicSharedBytes, stream, params,
      nullptr);
  if (current != context)
    driver->cuCtxSetCurrent(current);
  if (result != 0)
    return check(result, std::string("launching '") + kernel + "'");
  return Status();
}

Status nf::rt::getCachedModule(const std::string &path, const Module *&out) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Module>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(path);
  if (it != cache.end()) {
    out = it->second.get();
    return Status();
  }
  Artifact artifact;
  std::string error;
  if (!readArtifactFile(path, artifact, error))
    return Status::error(error);
  TuningTable tuning;
  if (Status s = readTuning(artifact, path, tuning); !s)
    return s;
  std::unique_ptr<Module> module;
  if (Status s = Module::load(artifact, module); !s)
    return s;
  module->setTuning(std::move(tuning));
  out = module.get();
  cache[path] = std::move(module);
  return Status();
}
