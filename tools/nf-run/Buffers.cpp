//===- Buffers.cpp - nf-run's device buffers and input sets ---------------===//
//
// Part of normfuse. See Buffers.h.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "NfRun.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace nf::rt;

namespace nfrun {
namespace {

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

} // namespace

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

BenchInputs makeBenchInputs(const CudaDriver *cu, const KernelInfo &k,
                            const std::map<std::string, std::string> &dims,
                            bool varied, int64_t pad) {
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
                              keep ? &data : nullptr, pad, false);
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
      Buffer b = makeBuffer(cu, k.results[r].dtype, resultShapes[r], nullptr,
                            pad, false);
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

} // namespace nfrun
