//===- nf-run.cpp - run generated kernels on a GPU ------------------------===//
//
// Part of normfuse. MLIR-free (it builds with the runtime on the GPU
// machine). Two modes:
//
//   nf-run ARTIFACT --case DIR [--misalign] [--pad N] [--graph]
//     Runs the kernel on the inputs nf-interp wrote to DIR and compares
//     every output with the interpreter's: ||out - ref|| / ||ref|| <= 1e-5
//     (f32) or 1e-2 (f16, bf16), NaN never passes. Outputs are poisoned
//     with NaN before the launch and must be fully written; guard bytes
//     around every buffer, and the gaps of padded rows, must be untouched.
//     --misalign offsets every base pointer by one element (never 16-byte
//     aligned); --pad N pads rows by N elements; --graph also replays the
//     launch from a CUDA graph and requires identical results.
//
//   nf-run ARTIFACT --bench --dims B=1,S=32760,D=1536[,F=..,P=..] [--iters N]
//     Times the kernel (CUDA events, rotating input sets) against a
//     device-to-device copy measured in the same run, and prints bytes
//     moved, time, and the fraction of the copy floor.
//
//   nf-run ARTIFACT --tune --dims B=..,S=..,D=..[,..] [--iters N]
//     Times every variant whose guard holds for those shapes (each first
//     checked against the default variant's results on varied data; one
//     that differs is reported as MISMATCH and the exit status is 1) and
//     records the fastest for that D in ARTIFACT.tune, where the runtime
//     finds it (docs/Artifact.md, "Tune files").
//
// Reference data is computed on the CPU machine (nf-interp needs MLIR) and
// carried here: the GPU machine has no MLIR.
//
//===----------------------------------------------------------------------===//

#include "runtime/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

using namespace nf::rt;

namespace {

int failures = 0;

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "nf-run: error: %s\n", message.c_str());
  std::exit(2);
}

void checkCuda(const CudaDriver *cu, CUresult r, const char *what) {
  if (r != 0)
    die(std::string(what) + ": " + describeCudaError(r));
}

double toDouble(const unsigned char *p, DType dtype) {
  switch (dtype) {
  case DType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    double v;
    if (exp == 0)
      v = std::ldexp(man, -24);
    else if (exp == 31)
      v = man ? NAN : INFINITY;
    else
      v = std::ldexp(man + 1024, exp - 25);
    return sign ? -v : v;
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    uint32_t bits = (uint32_t)h << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case DType::I8:
    return (int8_t)p[0];
  case DType::F8E4M3FN:
  case DType::F8E5M2: {
    // Sign, exponent field, fraction field; e4m3fn's 0x7f is NaN and it has
    // no infinity, e5m2 is IEEE-like.
    bool e4m3 = dtype == DType::F8E4M3FN;
    int fraction = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    int magnitude = p[0] & 0x7f;
    int exp = magnitude >> fraction, man = magnitude & ((1 << fraction) - 1);
    double v;
    if (e4m3 ? magnitude == 0x7f : exp == 31)
      v = (e4m3 || man) ? NAN : INFINITY;
    else if (exp == 0)
      v = std::ldexp(man, 1 - bias - fraction);
    else
      v = std::ldexp(man + (1 << fraction), exp - bias - fraction);
    return (p[0] & 0x80) ? -v : v;
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return (double)v;
  }
  }
  return 0;
}

int64_t elementsOf(const Shape &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

int64_t countElements(const Tensor &t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i)
    n *= t.shape[i];
  return n;
}

/// A device buffer laid out with guard bytes and optional row padding.
struct Buffer {
  CUdeviceptr alloc = 0;
  size_t allocBytes = 0;
  Tensor tensor;
  std::vector<unsigned char> expected; ///< the whole allocation as staged
};

constexpr size_t kGuard = 256;

Buffer makeBuffer(const CudaDriver *cu, DType dtype, const Shape &shape,
                  const std::vector<unsigned char> *data, int64_t pad,
                  bool misalign) {
  Buffer buf;
  Tensor &t = buf.tensor;
  t.dtype = dtype;
  t.rank = shape.size();
  int64_t stride = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    t.shape[i] = shape[i];
    t.strides[i] = stride;
    int64_t extent = shape[i] + (i == t.rank - 1 && t.rank >= 2 ? pad : 0);
    stride *= std::max<int64_t>(extent, 1);
  }
  int bytes = dtypeBytes(dtype);
  size_t span = (size_t)stride * bytes;
  size_t offset = kGuard + (misalign ? bytes : 0);
  buf.allocBytes = span + offset + kGuard;
  checkCuda(cu, cu->cuMemAlloc_v2(&buf.alloc, buf.allocBytes), "cuMemAlloc");
  buf.expected.assign(buf.allocBytes, 0xFF); // NaN in every float type
  t.data = buf.alloc + offset;
  if (data) {
    // Scatter the dense host data into the (padded) layout.
    int64_t count = 1;
    for (int64_t s : shape)
      count *= s;
    for (int64_t e = 0; e < count; ++e) {
      int64_t rem = e, off = 0;
      for (int i = t.rank - 1; i >= 0; --i) {
        off += (rem % t.shape[i]) * t.strides[i];
        rem /= t.shape[i];
      }
      std::memcpy(&buf.expected[offset + off * bytes], &(*data)[e * bytes],
                  bytes);
    }
  }
  checkCuda(cu,
            cu->cuMemcpyHtoD_v2(buf.alloc, buf.expected.data(), buf.allocBytes),
            "cuMemcpyHtoD");
  return buf;
}

std::vector<unsigned char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    die("cannot read '" + path + "'");
  return std::vector<unsigned char>((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
}

Shape parseShapeText(const std::string &text) {
  Shape shape;
  if (text == "scalar")
    return shape;
  std::stringstream ss(text);
  for (std::string d; std::getline(ss, d, 'x');)
    shape.push_back(std::stoll(d));
  return shape;
}

struct ManifestEntry {
  std::string kernel, direction, name, dtype, shape, file;
};

std::vector<ManifestEntry> readManifest(const std::string &dir) {
  std::ifstream in(dir + "/manifest.txt");
  if (!in)
    die("no manifest.txt in '" + dir + "'");
  std::vector<ManifestEntry> entries;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ss(line);
    ManifestEntry e;
    if (ss >> e.kernel >> e.direction >> e.name >> e.dtype >> e.shape >> e.file)
      entries.push_back(e);
  }
  return entries;
}

/// Compares one output with the reference and checks its guards/padding.
void checkOutput(const CudaDriver *cu, const std::string &label, Buffer &buf,
                 const std::vector<unsigned char> &ref) {
  std::vector<unsigned char> got(buf.allocBytes);
  checkCuda(cu, cu->cuMemcpyDtoH_v2(got.data(), buf.alloc, buf.allocBytes),
            "cuMemcpyDtoH");
  const Tensor &t = buf.tensor;
  int bytes = dtypeBytes(t.dtype);
  size_t base = t.data - buf.alloc;
  int64_t count = countElements(t);
  double diff = 0, norm = 0;
  int64_t unwritten = 0;
  std::vector<char> isElement(buf.allocBytes, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t rem = e, off = 0;
    for (int i = t.rank - 1; i >= 0; --i) {
      off += (rem % t.shape[i]) * t.strides[i];
      rem /= t.shape[i];
    }
    size_t at = base + off * bytes;
    std::memset(&isElement[at], 1, bytes);
    double g = toDouble(&got[at], t.dtype);
    double r = toDouble(&ref[e * bytes], t.dtype);
    if (std::isnan(g) && !std::isnan(r))
      ++unwritten;
    diff += (g - r) * (g - r);
    norm += r * r;
  }
  int64_t stray = 0;
  for (size_t i = 0; i < buf.allocBytes; ++i)
    if (!isElement[i] && got[i] != buf.expected[i])
      ++stray;
  double err = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  double tol = t.dtype == DType::F32 ? 1e-5 : 1e-2;
  bool ok = !std::isnan(err) && err <= tol && unwritten == 0 && stray == 0;
  if (!ok)
    ++failures;
  std::printf("%s %s %s err=%.3e tol=%.0e unwritten=%lld stray_bytes=%lld\n",
              ok ? "PASS" : "FAIL", label.c_str(), dtypeName(t.dtype), err, tol,
              (long long)unwritten, (long long)stray);
}

/// A non-negative integer option value, or a clear error.
int64_t parseCount(const std::string &option, const std::string &text) {
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used);
    if (used == text.size() && v >= 0)
      return v;
  } catch (...) {
  }
  die(option + " expects a non-negative integer, found '" + text + "'");
}

std::map<std::string, std::string> parseDims(const std::string &text) {
  std::map<std::string, std::string> dims;
  std::stringstream ss(text);
  for (std::string kv; std::getline(ss, kv, ',');) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos)
      die("bad --dims entry '" + kv + "'");
    dims[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return dims;
}

/// Shapes of every argument and result from symbolic sizes (bench mode).
void shapesFromDims(const KernelInfo &k,
                    std::map<std::string, std::string> dims,
                    std::vector<Shape> &argShapes,
                    std::vector<Shape> &resultShapes) {
  auto size = [&](const std::string &letter) -> int64_t {
    if (letter == "1")
      return 1;
    auto it = dims.find(letter);
    if (it == dims.end())
      die("--dims needs " + letter);
    return parseCount("--dims " + letter, it->second);
  };
  for (const ArgumentInfo &a : k.args) {
    Shape s;
    const char *const *l = nullptr;
    int rank = getDimLetters(a, l);
    for (size_t i = 0; i < a.shape.size(); ++i) {
      if (a.shape[i] < 0 && (int)i >= rank)
        die("cannot size dynamic dimension " + std::to_string(i) +
            " of unused argument '" + a.name + "'");
      s.push_back(a.shape[i] >= 0 ? a.shape[i] : size(l[i]));
    }
    argShapes.push_back(s);
  }
  // [B, S, D] rows, [B, S] per-row values or [B, S, D / G] group values (a
  // D that is not a multiple of G is the launch's to refuse).
  static const char *bsd[] = {"B", "S", "D"};
  for (const ResultInfo &r : k.results) {
    Shape s;
    for (size_t i = 0; i < r.shape.size() && i < 3; ++i) {
      int64_t n = r.shape[i] >= 0 ? r.shape[i] : size(bsd[i]);
      s.push_back(i == 2 && r.group && r.shape[i] < 0 ? n / r.group : n);
    }
    resultShapes.push_back(s);
  }
}

/// Rotating input sets for timing: enough of them to cycle through more
/// than the L2 cache. With `varied`, set 0 holds varied finite values
/// (tuning compares every candidate's results on it), the others a constant.
struct BenchInputs {
  std::vector<std::vector<Value>> args;
  std::vector<std::vector<Tensor>> results;
  /// Set 0's buffers (args, then results not written in place), as staged.
  std::vector<Buffer> first;
  /// Bytes that must move: every tensor read once, every result written
  /// once (an in-place result is read and written).
  double bytes = 0;
};

/// Finite values of magnitude 2^-8 to 1 with random signs and fractions,
/// built from the bits of each float type; zero for the other types.
std::vector<unsigned char> variedData(DType dtype, int64_t count,
                                      uint64_t &seed) {
  int bytes = dtypeBytes(dtype);
  std::vector<unsigned char> data((size_t)count * bytes, 0);
  for (int64_t e = 0; e < count; ++e) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t r = (uint32_t)(seed >> 32);
    uint32_t sign = r & 1, exp = (r >> 1) & 7, frac = r >> 4;
    unsigned char *p = &data[(size_t)e * bytes];
    if (dtype == DType::F32) {
      uint32_t v = sign << 31 | (120 + exp) << 23 | (frac & 0x7fffff);
      std::memcpy(p, &v, 4);
    } else if (dtype == DType::BF16) {
      uint16_t v = (uint16_t)(sign << 15 | (120 + exp) << 7 | (frac & 0x7f));
      std::memcpy(p, &v, 2);
    } else if (dtype == DType::F16) {
      uint16_t v = (uint16_t)(sign << 15 | (8 + exp) << 10 | (frac & 0x3ff));
      std::memcpy(p, &v, 2);
    }
  }
  return data;
}

BenchInputs makeBenchInputs(const CudaDriver *cu, const KernelInfo &k,
                            const std::map<std::string, std::string> &dims,
                            bool varied) {
  BenchInputs in;
  std::vector<Shape> argShapes, resultShapes;
  shapesFromDims(k, dims, argShapes, resultShapes);
  size_t setBytes = 0;
  for (size_t i = 0; i < k.args.size(); ++i)
    if (k.args[i].isTensor)
      setBytes += elementsOf(argShapes[i]) * dtypeBytes(k.args[i].dtype);
  for (size_t r = 0; r < k.results.size(); ++r)
    if (k.results[r].inPlace < 0)
      setBytes += elementsOf(resultShapes[r]) * dtypeBytes(k.results[r].dtype);
  int sets = std::max<int>(
      2, std::min<int>(8, (256 << 20) / std::max<size_t>(setBytes, 1) + 1));
  in.args.resize(sets);
  in.results.resize(sets);
  uint64_t seed = 1;
  for (int s = 0; s < sets; ++s) {
    for (size_t i = 0; i < k.args.size(); ++i) {
      Value v;
      v.isTensor = k.args[i].isTensor;
      if (v.isTensor) {
        bool keep = varied && s == 0;
        std::vector<unsigned char> data;
        if (keep)
          data = variedData(k.args[i].dtype, elementsOf(argShapes[i]), seed);
        Buffer b = makeBuffer(cu, k.args[i].dtype, argShapes[i],
                              keep ? &data : nullptr, 0, false);
        if (!keep) {
          // Finite data for floats (0x3C3C...), zero for integers.
          bool isInt = k.args[i].dtype == DType::I8 ||
                       k.args[i].dtype == DType::I32 ||
                       k.args[i].dtype == DType::I64;
          cu->cuMemsetD8_v2(b.alloc, isInt ? 0 : 0x3C, b.allocBytes);
        }
        v.tensor = b.tensor;
        if (s == 0)
          in.first.push_back(std::move(b));
      }
      in.args[s].push_back(v);
    }
    for (size_t r = 0; r < k.results.size(); ++r) {
      if (k.results[r].inPlace >= 0) {
        in.results[s].push_back(in.args[s][k.results[r].inPlace].tensor);
        continue;
      }
      Buffer b = makeBuffer(cu, k.results[r].dtype, resultShapes[r], nullptr, 0,
                            false);
      in.results[s].push_back(b.tensor);
      if (s == 0)
        in.first.push_back(std::move(b));
    }
  }
  for (size_t i = 0; i < k.args.size(); ++i)
    if (k.args[i].isTensor)
      in.bytes +=
          (double)elementsOf(argShapes[i]) * dtypeBytes(k.args[i].dtype);
  for (size_t r = 0; r < k.results.size(); ++r)
    in.bytes +=
        (double)elementsOf(resultShapes[r]) * dtypeBytes(k.results[r].dtype);
  return in;
}

/// Microseconds per launch of `k` (variant `variant`, or the runtime's
/// choice at -1) over the rotating sets, after one warm-up launch per set.
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
  CUevent start, stop;
  cu->cuEventCreate(&start, 0);
  cu->cuEventCreate(&stop, 0);
  cu->cuEventRecord(start, stream);
  for (int it = 0; it < iters; ++it) {
    int s = it % sets;
    module.launch(k.name.c_str(), in.args[s].data(), in.args[s].size(),
                  in.results[s].data(), in.results[s].size(), stream, nullptr,
                  variant);
  }
  cu->cuEventRecord(stop, stream);
  checkCuda(cu, cu->cuEventSynchronize(stop), "kernel timing");
  float ms;
  cu->cuEventElapsedTime(&ms, start, stop);
  cu->cuEventDestroy_v2(start);
  cu->cuEventDestroy_v2(stop);
  return ms * 1000.0 / iters;
}

/// The copy floor: a device-to-device copy of the same number of bytes
/// (half read, half written), rotating buffers the same way.
double timeCopy(const CudaDriver *cu, const BenchInputs &in, CUstream stream,
                int iters) {
  int sets = in.args.size();
  size_t half = (size_t)(in.bytes / 2);
  std::vector<CUdeviceptr> src(sets), dst(sets);
  for (int s = 0; s < sets; ++s) {
    checkCuda(cu, cu->cuMemAlloc_v2(&src[s], half), "cuMemAlloc");
    checkCuda(cu, cu->cuMemAlloc_v2(&dst[s], half), "cuMemAlloc");
    cu->cuMemcpyDtoDAsync_v2(dst[s], src[s], half, stream);
  }
  CUevent start, stop;
  cu->cuEventCreate(&start, 0);
  cu->cuEventCreate(&stop, 0);
  cu->cuEventRecord(start, stream);
  for (int it = 0; it < iters; ++it)
    cu->cuMemcpyDtoDAsync_v2(dst[it % sets], src[it % sets], half, stream);
  cu->cuEventRecord(stop, stream);
  checkCuda(cu, cu->cuEventSynchronize(stop), "copy timing");
  float ms;
  cu->cuEventElapsedTime(&ms, start, stop);
  for (int s = 0; s < sets; ++s) {
    cu->cuMemFree_v2(src[s]);
    cu->cuMemFree_v2(dst[s]);
  }
  return ms * 1000.0 / iters;
}

/// The bytes of set 0's buffers (BenchInputs::first) after one launch of
/// variant `variant` on set 0 as staged (inputs restored, results poisoned
/// with NaN first).
std::vector<std::vector<unsigned char>>
runOnFirstSet(const CudaDriver *cu, const Module &module, const KernelInfo &k,
              BenchInputs &in, int variant) {
  for (Buffer &b : in.first)
    cu->cuMemcpyHtoD_v2(b.alloc, b.expected.data(), b.allocBytes);
  if (Status st =
          module.launch(k.name.c_str(), in.args[0].data(), in.args[0].size(),
                        in.results[0].data(), in.results[0].size(), nullptr,
                        nullptr, variant);
      !st)
    die(st.message());
  checkCuda(cu, cu->cuCtxSynchronize(), "kernel execution");
  std::vector<std::vector<unsigned char>> out;
  for (Buffer &b : in.first) {
    out.emplace_back(b.allocBytes);
    cu->cuMemcpyDtoH_v2(out.back().data(), b.alloc, b.allocBytes);
  }
  return out;
}

/// The relative L2 difference of two copies of a buffer's elements, NaN
/// where `got` has a NaN that `ref` has not.
double relativeDifference(const Buffer &b,
                          const std::vector<unsigned char> &got,
                          const std::vector<unsigned char> &ref) {
  const Tensor &t = b.tensor;
  int bytes = dtypeBytes(t.dtype);
  size_t base = t.data - b.alloc;
  int64_t count = countElements(t);
  double diff = 0, norm = 0;
  for (int64_t e = 0; e < count; ++e) {
    double g = toDouble(&got[base + e * bytes], t.dtype);
    double r = toDouble(&ref[base + e * bytes], t.dtype);
    if (std::isnan(g) != std::isnan(r))
      return NAN;
    if (std::isnan(r))
      continue;
    diff += (g - r) * (g - r);
    norm += r * r;
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

/// nf-run --tune: times every variant of `k` whose guard holds for the
/// shapes of `in`, keeps those whose results on `check` (the same D, a few
/// rows of varied data) match the default variant's,
/// and records the fastest in the artifact's tune file (the default where
/// no other is at least kTuneMargin faster). Returns the exit status.
constexpr double kTuneMargin = 0.01;
constexpr int kTuneRounds = 3;
int tuneKernel(const CudaDriver *cu, const std::string &artifactPath,
               const Artifact &artifact, const Module &module,
               const KernelInfo &k, BenchInputs &in, BenchInputs &check,
               const std::string &dimsText, int iters) {
  LaunchPlan plan;
  if (Status st = planLaunch(k, in.args[0].data(), in.args[0].size(),
                             in.results[0].data(), in.results[0].size(), plan);
      !st)
    die(st.message());
  int defaultVariant = plan.variant;
  int64_t d = plan.rowLength;
  std::vector<std::vector<unsigned char>> ref =
      runOnFirstSet(cu, module, k, check, defaultVariant);
  bool f32 = true;
  for (const ResultInfo &r : k.results)
    f32 &= r.dtype == DType::F32;
  double tol = f32 ? 1e-5 : 1e-2;
  std::vector<int> candidates;
  int mismatches = 0;
  for (size_t v = 0; v < k.variants.size(); ++v) {
    LaunchPlan p;
    if (!planLaunch(k, in.args[0].data(), in.args[0].size(),
                    in.results[0].data(), in.results[0].size(), p, (int)v))
      continue;
    std::vector<std::vector<unsigned char>> got =
        runOnFirstSet(cu, module, k, check, (int)v);
    double worst = 0;
    for (size_t b = 0; b < check.first.size(); ++b) {
      double e = relativeDifference(check.first[b], got[b], ref[b]);
      worst = std::isnan(e) ? e : std::max(worst, e);
      if (std::isnan(worst))
        break;
    }
    if (std::isnan(worst) || worst > tol) {
      ++mismatches;
      std::printf("MISMATCH %s D=%lld %s: results differ from %s's "
                  "(relative error %.3e)\n",
                  k.name.c_str(), (long long)d, k.variants[v].function.c_str(),
                  k.variants[defaultVariant].function.c_str(), worst);
      continue;
    }
    candidates.push_back((int)v);
  }
  CUstream stream;
  checkCuda(cu, cu->cuStreamCreate(&stream, 0), "cuStreamCreate");
  std::vector<double> best(candidates.size(), INFINITY);
  for (int round = 0; round < kTuneRounds; ++round)
    for (size_t c = 0; c < candidates.size(); ++c)
      best[c] = std::min(best[c], timeLaunches(cu, module, k, in, stream, iters,
                                               candidates[c], nullptr));
  double defaultUs = INFINITY;
  size_t fastest = 0;
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (candidates[c] == defaultVariant)
      defaultUs = best[c];
    if (best[c] < best[fastest])
      fastest = c;
  }
  int chosen = best[fastest] < defaultUs * (1 - kTuneMargin)
                   ? candidates[fastest]
                   : defaultVariant;
  for (size_t c = 0; c < candidates.size(); ++c)
    // Times only: what ranks the candidates (bench/roofline.py gives the
    // fraction of an SM copy kernel).
    std::printf(
        "TUNE %s dims=%s variant=%s kernel_us=%.2f vs_default=%.3f%s%s\n",
        k.name.c_str(), dimsText.c_str(),
        k.variants[candidates[c]].function.c_str(), best[c],
        defaultUs / best[c], candidates[c] == defaultVariant ? " default" : "",
        candidates[c] == chosen ? " chosen" : "");
  // Record the choice, keeping the file's other entries for this build.
  TuningTable table;
  if (Status st = readTuning(artifact, artifactPath, table); !st)
    die(st.message());
  size_t index = &k - artifact.kernels.data();
  table.set(index, d, chosen);
  std::string path = getTuneFilePath(artifactPath);
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << formatTuning(artifact, table);
    if (!out.flush())
      die("cannot write '" + temporary + "'");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    die("cannot replace '" + path + "'");
  std::printf("TUNED %s D=%lld -> %s (%.2f us, default %.2f us), in %s\n",
              k.name.c_str(), (long long)d, k.variants[chosen].function.c_str(),
              best[std::find(candidates.begin(), candidates.end(), chosen) -
                   candidates.begin()],
              defaultUs, path.c_str());
  return mismatches ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string artifactPath, caseDir, dimsText, kernelName;
  bool misalign = false, graph = false, bench = false, tune = false;
  int64_t pad = 0;
  int iters = 50;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--case")
      caseDir = value();
    else if (a == "--misalign")
      misalign = true;
    else if (a == "--pad")
      pad = parseCount(a, value());
    else if (a == "--graph")
      graph = true;
    else if (a == "--bench")
      bench = true;
    else if (a == "--tune")
      tune = true;
    else if (a == "--dims")
      dimsText = value();
    else if (a == "--iters")
      iters = std::max<int64_t>(1, parseCount(a, value()));
    else if (a == "--kernel")
      kernelName = value();
    else if (a == "--help" || a == "-h") {
      std::printf("usage: nf-run ARTIFACT --case DIR [--misalign] [--pad N] "
                  "[--graph]\n       nf-run ARTIFACT --bench --dims "
                  "B=..,S=..,D=..[,F=..,P=..] [--iters N] [--kernel K]\n"
                  "       nf-run ARTIFACT --tune --dims "
                  "B=..,S=..,D=..[,F=..,P=..] [--iters N] [--kernel K]\n"
                  "--tune times every variant that serves the shapes, checks "
                  "its results against the default variant's, and records "
                  "the fastest for that D in ARTIFACT.tune, which the "
                  "runtime reads when it loads the artifact\n");
      return 0;
    } else if (artifactPath.empty())
      artifactPath = a;
    else
      die("unexpected argument '" + a + "'");
  }
  if (artifactPath.empty() || (caseDir.empty() && !bench && !tune))
    die("usage: nf-run ARTIFACT (--case DIR | --bench --dims ... | --tune "
        "--dims ...)");
  if (bench && tune)
    die("--bench and --tune are two modes: give one");

  Artifact artifact;
  std::string error;
  if (!readArtifactFile(artifactPath, artifact, error))
    die(error);
  // The tune file is read first: a damaged one is refused even without a
  // GPU. --case checks the default variants; --bench times what the
  // runtime launches (the tuned variant where there is one).
  TuningTable tuning;
  if (Status s = readTuning(artifact, artifactPath, tuning); !s)
    die(s.message());
  std::unique_ptr<Module> module;
  if (Status s = Module::load(artifact, module); !s)
    die(s.message());
  if (bench)
    module->setTuning(std::move(tuning));
  const CudaDriver *cu = getCudaDriver(error);

  if (bench || tune) {
    if (artifact.kernels.empty())
      die("the artifact has no kernel");
    const KernelInfo *found = kernelName.empty()
                                  ? &artifact.kernels.front()
                                  : artifact.findKernel(kernelName);
    if (!found)
      die("the artifact has no kernel '" + kernelName + "'");
    std::map<std::string, std::string> dims = parseDims(dimsText);
    BenchInputs in = makeBenchInputs(cu, *found, dims, false);
    if (tune) {
      // The candidates' results are compared on a few rows of varied data
      // (same D): comparing every row of the timed sets, for every
      // candidate, would take longer than the timing.
      std::map<std::string, std::string> few = dims;
      few["B"] = "1";
      int64_t f = few.count("F") ? parseCount("--dims F", few["F"]) : 1;
      few["S"] = std::to_string(std::max<int64_t>(f, 1) * 16);
      BenchInputs check = makeBenchInputs(cu, *found, few, true);
      return tuneKernel(cu, artifactPath, artifact, *module, *found, in, check,
                        dimsText, iters);
    }
    const KernelInfo &k = *found;
    CUstream stream;
    checkCuda(cu, cu->cuStreamCreate(&stream, 0), "cuStreamCreate");
    LaunchPlan plan;
    double kernelUs =
        timeLaunches(cu, *module, k, in, stream, iters, -1, &plan);
    double copyUs = timeCopy(cu, in, stream, iters);
    std::printf("BENCH %s dims=%s variant=%s bytes=%.0f kernel_us=%.2f "
                "copy_us=%.2f copy_TBps=%.3f floor_pct=%.1f\n",
                k.name.c_str(), dimsText.c_str(),
                k.variants[plan.variant].function.c_str(), in.bytes, kernelUs,
                copyUs, in.bytes / copyUs / 1e6, 100.0 * copyUs / kernelUs);
    return 0;
  }

  // Correctness mode.
  std::vector<ManifestEntry> manifest = readManifest(caseDir);
  if (manifest.empty())
    die("empty manifest in '" + caseDir + "'");
  std::string kname = manifest[0].kernel;
  const KernelInfo *k = artifact.findKernel(kname);
  if (!k)
    die("artifact has no kernel '" + kname + "'");
  std::map<std::string, const ManifestEntry *> inputs;
  std::vector<const ManifestEntry *> outputs(k->results.size(), nullptr);
  for (const ManifestEntry &e : manifest) {
    if (e.kernel != kname)
      continue;
    if (e.direction == "input")
      inputs[e.name] = &e;
    else {
      size_t r = std::stoul(e.name);
      if (r < outputs.size())
        outputs[r] = &e;
    }
  }
  std::vector<Buffer> argBuffers(k->args.size());
  std::vector<Value> args(k->args.size());
  for (size_t i = 0; i < k->args.size(); ++i) {
    const ArgumentInfo &info = k->args[i];
    auto it = inputs.find(info.name);
    if (it == inputs.end())
      die("case has no input '" + info.name + "'");
    std::vector<unsigned char> data =
        readFile(caseDir + "/" + it->second->file);
    args[i].isTensor = info.isTensor;
    if (!info.isTensor) {
      args[i].scalar = (int64_t)toDouble(data.data(), info.dtype);
      continue;
    }
    argBuffers[i] =
        makeBuffer(cu, info.dtype, parseShapeText(it->second->shape), &data,
                   pad, misalign);
    args[i].tensor = argBuffers[i].tensor;
  }
  std::vector<Buffer> resultBuffers(k->results.size());
  std::vector<Tensor> results(k->results.size());
  for (size_t r = 0; r < k->results.size(); ++r) {
    if (!outputs[r])
      die("case has no output " + std::to_string(r));
    if (k->results[r].inPlace >= 0) {
      results[r] = args[k->results[r].inPlace].tensor;
      continue;
    }
    resultBuffers[r] =
        makeBuffer(cu, k->results[r].dtype, parseShapeText(outputs[r]->shape),
                   nullptr, pad, misalign);
    results[r] = resultBuffers[r].tensor;
  }
  LaunchPlan plan;
  if (Status s = module->launch(kname.c_str(), args.data(), args.size(),
                                results.data(), results.size(), nullptr, &plan);
      !s)
    die(s.message());
  checkCuda(cu, cu->cuCtxSynchronize(), "kernel execution");
  std::string label = kname + " case=" + caseDir +
                      " variant=" + k->variants[plan.variant].function +
                      (misalign ? " misaligned" : "") +
                      (pad ? " pad=" + std::to_string(pad) : "");
  for (size_t r = 0; r < k->results.size(); ++r) {
    std::vector<unsigned char> ref = readFile(caseDir + "/" + outputs[r]->file);
    Buffer &buf = k->results[r].inPlace >= 0 ? argBuffers[k->results[r].inPlace]
                                             : resultBuffers[r];
    checkOutput(cu, label + " out" + std::to_string(r), buf, ref);
  }
  // Inputs not written in place must be unchanged, byte for byte.
  for (size_t i = 0; i < k->args.size(); ++i) {
    if (!k->args[i].isTensor)
      continue;
    bool written = false;
    for (const ResultInfo &r : k->results)
      written |= r.inPlace == (int)i;
    if (written)
      continue;
    std::vector<unsigned char> got(argBuffers[i].allocBytes);
    cu->cuMemcpyDtoH_v2(got.data(), argBuffers[i].alloc, got.size());
    if (got != argBuffers[i].expected) {
      ++failures;
      std::printf("FAIL %s input '%s' was modified\n", label.c_str(),
                  k->args[i].name.c_str());
    }
  }
  if (graph) {
    bool inPlace = false;
    for (const ResultInfo &r : k->results)
      inPlace |= r.inPlace >= 0;
    if (!inPlace) {
      // Capture two launches, replay, and require the same bytes.
      std::vector<std::vector<unsigned char>> before;
      for (Buffer &b : resultBuffers) {
        before.emplace_back(b.allocBytes);
        cu->cuMemcpyDtoH_v2(before.back().data(), b.alloc, b.allocBytes);
      }
      // Poison the outputs again so the replay has to write them.
      for (Buffer &b : resultBuffers)
        cu->cuMemcpyHtoD_v2(b.alloc, b.expected.data(), b.allocBytes);
      CUstream stream;
      checkCuda(cu, cu->cuStreamCreate(&stream, 0), "cuStreamCreate");
      checkCuda(cu, cu->cuStreamBeginCapture_v2(stream, 0), "begin capture");
      for (int rep = 0; rep < 2; ++rep)
        if (Status s = module->launch(kname.c_str(), args.data(), args.size(),
                                      results.data(), results.size(), stream);
            !s)
          die("launch during capture: " + s.message());
      void *g = nullptr, *exec = nullptr;
      checkCuda(cu, cu->cuStreamEndCapture(stream, &g), "end capture");
      checkCuda(cu, cu->cuGraphInstantiateWithFlags(&exec, g, 0),
                "graph instantiate");
      checkCuda(cu, cu->cuGraphLaunch(exec, stream), "graph launch");
      checkCuda(cu, cu->cuStreamSynchronize(stream), "graph replay");
      bool same = true;
      for (size_t r = 0; r < resultBuffers.size(); ++r) {
        std::vector<unsigned char> after(resultBuffers[r].allocBytes);
        cu->cuMemcpyDtoH_v2(after.data(), resultBuffers[r].alloc, after.size());
        same &= after == before[r];
      }
      if (!same)
        ++failures;
      std::printf("%s %s graph replay identical\n", same ? "PASS" : "FAIL",
                  label.c_str());
      cu->cuGraphExecDestroy(exec);
      cu->cuGraphDestroy(g);
      cu->cuStreamDestroy_v2(stream);
    }
  }
  for (Buffer &b : argBuffers)
    if (b.alloc)
      cu->cuMemFree_v2(b.alloc);
  for (Buffer &b : resultBuffers)
    if (b.alloc)
      cu->cuMemFree_v2(b.alloc);
  return failures ? 1 : 0;
}
