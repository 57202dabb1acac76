//===- ExamplesTest.cpp - every example against an independent reference --===//
//
// Part of normfuse. Each file of examples/ is interpreted on small random
// inputs and compared with the pattern's math written out below as plain
// loops. The references round exactly where the example's IR rounds: an f32
// op is a float operation, a composite (norm, modulate, rope) is computed in
// double and rounded once.
//
// To cover a new example, add an entry to kExamples: the file's name, the
// sizes to run it at, its arguments' shapes and a reference function.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace mlir::nf;
using nf_test::bf16;
using nf_test::f16;
using nf_test::f32;

namespace {

using Tensors = std::map<std::string, HostTensor>;

struct Sizes {
  int64_t B = 2, S = 3, D = 8, F = 1, P = 16;
  int64_t offset = 0; ///< value of a scalar rotary offset argument
};

struct ExampleCase {
  /// File name in examples/ without ".mlir"; also the kernel's name.
  std::string name;
  Sizes sizes;
  /// Shape of every argument, as space-separated sizes: B, S, D, F, P or a
  /// number ("B 1 D", "P 64").
  std::map<std::string, std::string> shapes;
  /// The expected results, computed from the inputs.
  std::function<std::vector<HostTensor>(const Tensors &, const Sizes &)>
      reference;
};

/// gtest prints a parameter with this instead of its bytes.
void PrintTo(const ExampleCase &example, std::ostream *os) {
  *os << example.name;
}

//===----------------------------------------------------------------------===//
// Building blocks of the references, written from the formulas
//===----------------------------------------------------------------------===//

constexpr double kEps = (double)1.0e-6f; // eps is an f32 attribute

/// Element of a row-major tensor.
double at(const HostTensor &t, std::vector<int64_t> index) {
  size_t offset = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    EXPECT_LT(index[i], t.shape[i]);
    offset = offset * t.shape[i] + index[i];
  }
  return t.data[offset];
}

double &at(HostTensor &t, std::vector<int64_t> index) {
  size_t offset = 0;
  for (size_t i = 0; i < index.size(); ++i)
    offset = offset * t.shape[i] + index[i];
  return t.data[offset];
}

/// Row (b, s) of a [B, S, D] tensor.
std::vector<double> rowOf(const HostTensor &t, int64_t b, int64_t s,
                          int64_t D) {
  std::vector<double> row(D);
  for (int64_t d = 0; d < D; ++d)
    row[d] = at(t, {b, s, d});
  return row;
}

/// (x - mean) / sqrt(var + eps), variance of the centred row; unrounded.
std::vector<double> layerNorm(const std::vector<double> &x) {
  double mean = 0, var = 0;
  for (double v : x)
    mean += v;
  mean /= x.size();
  for (double v : x)
    var += (v - mean) * (v - mean);
  var /= x.size();
  std::vector<double> y;
  for (double v : x)
    y.push_back((v - mean) / std::sqrt(var + kEps));
  return y;
}

/// x / sqrt(mean(x^2) + eps); unrounded.
std::vector<double> rmsNorm(const std::vector<double> &x) {
  double ms = 0;
  for (double v : x)
    ms += v * v;
  ms /= x.size();
  std::vector<double> y;
  for (double v : x)
    y.push_back(v / std::sqrt(ms + kEps));
  return y;
}

HostTensor output(ElementKind kind, const Sizes &z) {
  return HostTensor(kind, {z.B, z.S, z.D});
}

/// r = residual + gate * x in f32 ops; gate(b, s, d) gives the gate.
template <typename Gate>
std::vector<double> residualRow(const Tensors &in, int64_t b, int64_t s,
                                int64_t D, Gate gate) {
  std::vector<double> r(D);
  for (int64_t d = 0; d < D; ++d) {
    float gx = (float)gate(d) * (float)at(in.at("x"), {b, s, d});
    r[d] = (float)at(in.at("residual"), {b, s, d}) + gx;
  }
  return r;
}

/// The ScaleResidualNormScaleShift family: r = residual + gate * x;
/// y = (norm(r) * weight + bias) * (1 + scale) + shift; outputs (y, r).
/// `frame` maps (b, s) to the index of the modulation operands' row.
std::vector<HostTensor> scaleResidualNormScaleShift(
    const Tensors &in, const Sizes &z, bool layer, ElementKind io,
    std::function<double(const Tensors &, int64_t, int64_t, int64_t,
                         const char *)>
        modulation,
    bool affineWeight, bool affineBias) {
  HostTensor y = output(io, z), rOut = output(io, z);
  for (int64_t b = 0; b < z.B; ++b)
    for (int64_t s = 0; s < z.S; ++s) {
      std::vector<double> r = residualRow(in, b, s, z.D, [&](int64_t d) {
        return modulation(in, b, s, d, "gate");
      });
      std::vector<double> n = layer ? layerNorm(r) : rmsNorm(r);
      for (int64_t d = 0; d < z.D; ++d) {
        double nd = n[d];
        if (affineWeight)
          nd *= at(in.at("weight"), {d});
        if (affineBias)
          nd += at(in.at("bias"), {d});
        nd = f32(nd);
        double sc = modulation(in, b, s, d, "scale");
        double sh = modulation(in, b, s, d, "shift");
        double yd = f32(nd * (1.0 + sc) + sh);
        at(y, {b, s, d}) = nf_test::roundTo(io, yd);
        at(rOut, {b, s, d}) = nf_test::roundTo(io, r[d]);
      }
    }
  return {y, rOut};
}

double perBatch(const Tensors &in, int64_t b, int64_t, int64_t d,
                const char *name) {
  return at(in.at(name), {b, 0, d});
}

/// QK RMSNorm + RoPE: per chain (q, k) rmsnorm(x) * w, then the rotation of
/// the first `rotary` elements, rounded to bf16 once.
std::vector<HostTensor> qkNormRope(const Tensors &in, const Sizes &z,
                                   bool interleaved, int64_t rotary) {
  std::vector<HostTensor> outputs;
  for (const char *which : {"q", "k"}) {
    const HostTensor &x = in.at(which);
    const HostTensor &w = in.at(std::string("w") + which);
    const HostTensor &cache = in.at("cos_sin");
    int64_t B = x.shape[0], S = x.shape[1], D = x.shape[2];
    HostTensor out(ElementKind::BF16, {B, S, D});
    for (int64_t b = 0; b < B; ++b) {
      auto p = (int64_t)at(in.at("positions"), {b});
      if (in.count("offset"))
        p += (int64_t)in.at("offset").data[0];
      for (int64_t s = 0; s < S; ++s) {
        std::vector<double> row(D);
        for (int64_t d = 0; d < D; ++d)
          row[d] = at(x, {b, s, d});
        std::vector<double> n = rmsNorm(row);
        for (int64_t d = 0; d < D; ++d)
          n[d] = f32(n[d] * at(w, {d}));
        std::vector<double> y = n;
        int64_t half = rotary / 2;
        for (int64_t i = 0; i < half; ++i) {
          int64_t i1 = interleaved ? 2 * i : i;
          int64_t i2 = interleaved ? 2 * i + 1 : i + half;
          double c = at(cache, {p, i}), sn = at(cache, {p, half + i});
          y[i1] = f32(n[i1] * c - n[i2] * sn);
          y[i2] = f32(n[i2] * c + n[i1] * sn);
        }
        for (int64_t d = 0; d < D; ++d)
          at(out, {b, s, d}) = bf16(y[d]);
      }
    }
    outputs.push_back(out);
  }
  return outputs;
}

/// select01: LayerNorm(r) * (1 + scale_k) + shift_k with k = index[b, s];
/// r is x, or residual + residual_gate * x; gate_out = gate_k.
std::vector<HostTensor> select01(const Tensors &in, const Sizes &z,
                                 bool residual) {
  HostTensor y = output(ElementKind::BF16, z), rOut = y, gate = y;
  for (int64_t b = 0; b < z.B; ++b)
    for (int64_t s = 0; s < z.S; ++s) {
      std::string k = at(in.at("index"), {b, s}) == 0 ? "0" : "1";
      std::vector<double> r(z.D);
      for (int64_t d = 0; d < z.D; ++d)
        r[d] = at(in.at("x"), {b, s, d});
      if (residual)
        r = residualRow(in, b, s, z.D, [&](int64_t d) {
          return at(in.at("residual_gate"), {b, s, d});
        });
      std::vector<double> n = layerNorm(r);
      for (int64_t d = 0; d < z.D; ++d) {
        double sc = at(in.at("scale" + k), {b, d});
        double sh = at(in.at("shift" + k), {b, d});
        at(y, {b, s, d}) = bf16(f32(f32(n[d]) * (1.0 + sc) + sh));
        at(rOut, {b, s, d}) = bf16(r[d]);
        at(gate, {b, s, d}) = at(in.at("gate" + k), {b, d});
      }
    }
  if (residual)
    return {y, rOut, gate};
  return {y, gate};
}

/// RMSNorm(x) * weight, gated by tanh(gate), added to residual (f32 ops).
std::vector<double> normTanhMulAddRow(const Tensors &in, int64_t b, int64_t s,
                                      int64_t D, const char *weight) {
  std::vector<double> x = rowOf(in.at("x"), b, s, D);
  std::vector<double> n = rmsNorm(x);
  std::vector<double> r(D);
  for (int64_t d = 0; d < D; ++d) {
    float nd = (float)(n[d] * at(in.at(weight), {d}));
    float tg = (float)std::tanh(at(in.at("gate"), {b, 0, d}));
    float tn = tg * nd;
    r[d] = (float)at(in.at("residual"), {b, s, d}) + tn;
  }
  return r;
}

/// The fp8 value nearest to `v` (ties to the even code), saturated to the
/// largest finite value, found by trying every code: independent of the
/// interpreter's arithmetic rounding.
double nearestFp8(double v, bool e4m3) {
  int fraction = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  double maxFinite = e4m3 ? 448.0 : 57344.0;
  double a = std::min(std::fabs(v), maxFinite);
  double best = 0;
  for (int code = 0; code < 128; ++code) {
    int exponent = code >> fraction, mantissa = code & ((1 << fraction) - 1);
    double value = exponent == 0 ? std::ldexp(mantissa, 1 - bias - fraction)
                                 : std::ldexp((1 << fraction) + mantissa,
                                              exponent - bias - fraction);
    if (value > maxFinite)
      break;
    double d = std::fabs(value - a), bestD = std::fabs(best - a);
    if (code == 0 || d < bestD || (d == bestD && code % 2 == 0))
      best = value;
  }
  return std::copysign(best, v);
}

/// Per-token quantization of a row `y` (f32 values) as the quantizing
/// examples do it: scale = max(max|y| / qmax, minScale) in f32 ops, then
/// each y / scale rounded to f32 and quantized by `quantize`. Returns the
/// scale and fills `q`.
template <typename Quantize>
double quantizeRow(const std::vector<double> &y, double qmax, float minScale,
                   std::vector<double> &q, Quantize quantize) {
  double amax = 0;
  for (double v : y)
    amax = std::max(amax, std::fabs(v));
  double scale = std::max(f32(amax / qmax), (double)minScale);
  q.resize(y.size());
  for (size_t d = 0; d < y.size(); ++d)
    q[d] = quantize(f32(y[d] / scale));
  return scale;
}

double toE4M3(double v) { return nearestFp8(v, /*e4m3=*/true); }
double toI8(double v) { return std::clamp(std::nearbyint(v), -128.0, 127.0); }

//===----------------------------------------------------------------------===//
// The examples
//===----------------------------------------------------------------------===//

const std::map<std::string, std::string> kSrnssShapes = {
    {"x", "B S D"},     {"residual", "B S D"}, {"gate", "B 1 D"},
    {"scale", "B 1 D"}, {"shift", "B 1 D"},
};

std::map<std::string, std::string>
withShapes(std::map<std::string, std::string> base,
           std::map<std::string, std::string> extra) {
  for (auto &[name, shape] : extra)
    base[name] = shape;
  return base;
}

const std::map<std::string, std::string> kQkShapes = {
    // K has fewer heads than Q: the chains are sized separately.
    {"q", "B S D"}, {"k", "B 2 D"},     {"wq", "D"},
    {"wk", "D"},    {"positions", "B"},
};

const std::vector<ExampleCase> kExamples = {
    {"scale_residual_layernorm_scale_shift",
     {},
     kSrnssShapes,
     [](const Tensors &in, const Sizes &z) {
       return scaleResidualNormScaleShift(
           in, z, /*layer=*/true, ElementKind::BF16, perBatch, false, false);
     }},
    {"scale_residual_layernorm_scale_shift_frames",
     {2, 6, 8, 3},
     {{"x", "B S D"},
      {"residual", "B S D"},
      {"gate", "B F 1 D"},
      {"scale", "B F 1 D"},
      {"shift", "B F 1 D"}},
     [](const Tensors &in, const Sizes &z) {
       auto frame = [](const Tensors &in, int64_t b, int64_t s, int64_t d,
                       const char *name) {
         const HostTensor &t = in.at(name);
         int64_t S = in.at("x").shape[1], F = t.shape[1];
         return at(t, {b, s / (S / F), 0, d});
       };
       return scaleResidualNormScaleShift(in, z, true, ElementKind::BF16, frame,
                                          false, false);
     }},
    {"scale_residual_layernorm_affine_scale_shift",
     {2, 3, 7},
     withShapes(kSrnssShapes, {{"gate", "D"}, {"weight", "D"}, {"bias", "D"}}),
     [](const Tensors &in, const Sizes &z) {
       auto modulation = [](const Tensors &in, int64_t b, int64_t s, int64_t d,
                            const char *name) {
         return std::string(name) == "gate" ? at(in.at(name), {d})
                                            : perBatch(in, b, s, d, name);
       };
       return scaleResidualNormScaleShift(in, z, true, ElementKind::F32,
                                          modulation, true, true);
     }},
    {"scale_residual_rmsnorm_scale_shift",
     {},
     kSrnssShapes,
     [](const Tensors &in, const Sizes &z) {
       return scaleResidualNormScaleShift(
           in, z, /*layer=*/false, ElementKind::BF16, perBatch, false, false);
     }},
    {"scale_residual_rmsnorm_affine_scale_shift",
     {2, 3, 9},
     withShapes(kSrnssShapes, {{"weight", "D"}}),
     [](const Tensors &in, const Sizes &z) {
       return scaleResidualNormScaleShift(in, z, false, ElementKind::F16,
                                          perBatch, true, false);
     }},
    {"fused_add_gate_norm",
     {},
     {{"x", "B S D"},
      {"residual", "B S D"},
      {"gate", "B 1 D"},
      {"weight", "D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor out = output(ElementKind::BF16, z);
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           std::vector<double> res(z.D);
           for (int64_t d = 0; d < z.D; ++d)
             res[d] = at(in.at("residual"), {b, s, d});
           std::vector<double> n = rmsNorm(res);
           for (int64_t d = 0; d < z.D; ++d) {
             float nd = (float)(n[d] * at(in.at("weight"), {d}));
             float gn = (float)at(in.at("gate"), {b, 0, d}) * nd;
             float o = (float)at(in.at("x"), {b, s, d}) + gn;
             at(out, {b, s, d}) = bf16(o);
           }
         }
       return std::vector<HostTensor>{out};
     }},
    {"norm_tanh_mul_add",
     {},
     {{"x", "B S D"},
      {"residual", "B S D"},
      {"gate", "B 1 D"},
      {"weight", "D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor out = output(ElementKind::BF16, z);
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           std::vector<double> r = normTanhMulAddRow(in, b, s, z.D, "weight");
           for (int64_t d = 0; d < z.D; ++d)
             at(out, {b, s, d}) = bf16(r[d]);
         }
       return std::vector<HostTensor>{out};
     }},
    {"norm_tanh_mul_add_norm_scale",
     {},
     {{"x", "B S D"},
      {"residual", "B S D"},
      {"gate", "B 1 D"},
      {"weight1", "D"},
      {"weight2", "D"},
      {"scale", "B 1 D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor y = output(ElementKind::BF16, z), rOut = y;
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           std::vector<double> r = normTanhMulAddRow(in, b, s, z.D, "weight1");
           for (double &v : r)
             v = bf16(v); // the stored r is what the second norm sees
           std::vector<double> n2 = rmsNorm(r);
           for (int64_t d = 0; d < z.D; ++d) {
             float nd = (float)(n2[d] * at(in.at("weight2"), {d}));
             float sc1 = (float)at(in.at("scale"), {b, 0, d}) + 1.0f;
             at(y, {b, s, d}) = bf16(nd * sc1);
             at(rOut, {b, s, d}) = r[d];
           }
         }
       return std::vector<HostTensor>{y, rOut};
     }},
    {"qk_rmsnorm_rope_neox",
     {3, 3, 128},
     withShapes(kQkShapes, {{"cos_sin", "P 128"}}),
     [](const Tensors &in, const Sizes &z) {
       return qkNormRope(in, z, /*interleaved=*/false, 128);
     }},
    {"qk_rmsnorm_rope_neox_partial",
     {3, 3, 128, 1, 16, /*offset=*/5},
     withShapes(kQkShapes, {{"cos_sin", "P 64"}}),
     [](const Tensors &in, const Sizes &z) {
       return qkNormRope(in, z, false, 64);
     }},
    {"qk_rmsnorm_rope_interleaved",
     {3, 3, 128, 1, 16, /*offset=*/7},
     withShapes(kQkShapes, {{"cos_sin", "P 128"}}),
     [](const Tensors &in, const Sizes &z) {
       return qkNormRope(in, z, /*interleaved=*/true, 128);
     }},
    {"qk_rmsnorm_rope_interleaved_partial",
     {3, 3, 128},
     withShapes(kQkShapes, {{"cos_sin", "P 64"}}),
     [](const Tensors &in, const Sizes &z) {
       return qkNormRope(in, z, true, 64);
     }},
    {"select01_layernorm_modulate",
     {2, 5, 8},
     {{"x", "B S D"},
      {"index", "B S"},
      {"scale0", "B D"},
      {"shift0", "B D"},
      {"gate0", "B D"},
      {"scale1", "B D"},
      {"shift1", "B D"},
      {"gate1", "B D"}},
     [](const Tensors &in, const Sizes &z) {
       return select01(in, z, /*residual=*/false);
     }},
    {"select01_residual_layernorm_modulate",
     {2, 5, 8},
     {{"x", "B S D"},
      {"residual", "B S D"},
      {"residual_gate", "B S D"},
      {"index", "B S"},
      {"scale0", "B D"},
      {"shift0", "B D"},
      {"gate0", "B D"},
      {"scale1", "B D"},
      {"shift1", "B D"},
      {"gate1", "B D"}},
     [](const Tensors &in, const Sizes &z) {
       return select01(in, z, /*residual=*/true);
     }},
    // The plain kernels of the roofline benchmark (bench/roofline.py).
    {"rmsnorm",
     {2, 3, 9},
     {{"x", "B S D"}, {"weight", "D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor y = output(ElementKind::BF16, z);
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           std::vector<double> n = rmsNorm(rowOf(in.at("x"), b, s, z.D));
           for (int64_t d = 0; d < z.D; ++d)
             at(y, {b, s, d}) = bf16(f32(n[d] * at(in.at("weight"), {d})));
         }
       return std::vector<HostTensor>{y};
     }},
    {"layernorm",
     {2, 3, 9},
     {{"x", "B S D"}, {"weight", "D"}, {"bias", "D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor y = output(ElementKind::BF16, z);
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           std::vector<double> n = layerNorm(rowOf(in.at("x"), b, s, z.D));
           for (int64_t d = 0; d < z.D; ++d)
             at(y, {b, s, d}) = bf16(
                 f32(n[d] * at(in.at("weight"), {d}) + at(in.at("bias"), {d})));
         }
       return std::vector<HostTensor>{y};
     }},
    {"fused_add_rmsnorm",
     {},
     {{"x", "B S D"}, {"residual", "B S D"}, {"weight", "D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor y = output(ElementKind::BF16, z), rOut = y;
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           // r = x + residual in f32, stored as bf16; the norm reads the
           // stored value.
           std::vector<double> r(z.D);
           for (int64_t d = 0; d < z.D; ++d)
             r[d] = bf16((float)at(in.at("x"), {b, s, d}) +
                         (float)at(in.at("residual"), {b, s, d}));
           std::vector<double> n = rmsNorm(r);
           for (int64_t d = 0; d < z.D; ++d) {
             at(y, {b, s, d}) = bf16(f32(n[d] * at(in.at("weight"), {d})));
             at(rOut, {b, s, d}) = r[d];
           }
         }
       return std::vector<HostTensor>{y, rOut};
     }},
    {"softmax",
     {2, 3, 9},
     {{"x", "B S D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor y = output(ElementKind::F16, z);
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           double m = -INFINITY;
           for (int64_t d = 0; d < z.D; ++d)
             m = std::max(m, at(in.at("x"), {b, s, d}));
           // f32 ops: x - m, exp, the sum (exact, rounded once), e / sum.
           std::vector<double> e(z.D);
           double sum = 0;
           for (int64_t d = 0; d < z.D; ++d) {
             e[d] = f32(std::exp(f32(at(in.at("x"), {b, s, d}) - m)));
             sum += e[d];
           }
           sum = f32(sum);
           for (int64_t d = 0; d < z.D; ++d)
             at(y, {b, s, d}) = f16(f32(e[d] / sum));
         }
       return std::vector<HostTensor>{y};
     }},
    // Quantized outputs: the row quantized per token, and its scale.
    {"rmsnorm_quant_fp8",
     {2, 3, 40},
     {{"x", "B S D"}, {"weight", "D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor q(ElementKind::F8E4M3FN, {z.B, z.S, z.D});
       HostTensor scale(ElementKind::F32, {z.B, z.S});
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           std::vector<double> n = rmsNorm(rowOf(in.at("x"), b, s, z.D)), row;
           for (int64_t d = 0; d < z.D; ++d)
             n[d] = f32(n[d] * at(in.at("weight"), {d}));
           at(scale, {b, s}) = quantizeRow(n, 448.0, 4.35965e-06f, row, toE4M3);
           for (int64_t d = 0; d < z.D; ++d)
             at(q, {b, s, d}) = row[d];
         }
       return std::vector<HostTensor>{q, scale};
     }},
    {"rmsnorm_quant_fp8_group128",
     {2, 3, 384},
     {{"x", "B S D"}, {"weight", "D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor q(ElementKind::F8E4M3FN, {z.B, z.S, z.D});
       HostTensor scale(ElementKind::F32, {z.B, z.S, z.D / 128});
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           std::vector<double> n = rmsNorm(rowOf(in.at("x"), b, s, z.D));
           for (int64_t d = 0; d < z.D; ++d)
             n[d] = f32(n[d] * at(in.at("weight"), {d}));
           // Each block of 128 is quantized as a row of its own.
           for (int64_t g = 0; g < z.D / 128; ++g) {
             std::vector<double> block(n.begin() + g * 128,
                                       n.begin() + (g + 1) * 128),
                 row;
             at(scale, {b, s, g}) =
                 quantizeRow(block, 448.0, 4.35965e-06f, row, toE4M3);
             for (int64_t d = 0; d < 128; ++d)
               at(q, {b, s, g * 128 + d}) = row[d];
           }
         }
       return std::vector<HostTensor>{q, scale};
     }},
    {"fused_add_rmsnorm_quant_i8",
     {2, 3, 40},
     {{"x", "B S D"}, {"residual", "B S D"}, {"weight", "D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor q(ElementKind::I8, {z.B, z.S, z.D});
       HostTensor rOut = output(ElementKind::BF16, z);
       HostTensor scale(ElementKind::F32, {z.B, z.S});
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           std::vector<double> r(z.D), row;
           for (int64_t d = 0; d < z.D; ++d)
             r[d] = bf16((float)at(in.at("x"), {b, s, d}) +
                         (float)at(in.at("residual"), {b, s, d}));
           std::vector<double> n = rmsNorm(r);
           for (int64_t d = 0; d < z.D; ++d)
             n[d] = f32(n[d] * at(in.at("weight"), {d}));
           at(scale, {b, s}) = quantizeRow(n, 127.0, 1.53789e-05f, row, toI8);
           for (int64_t d = 0; d < z.D; ++d) {
             at(q, {b, s, d}) = row[d];
             at(rOut, {b, s, d}) = r[d];
           }
         }
       return std::vector<HostTensor>{q, rOut, scale};
     }},
    {"layernorm_modulate_quant_fp8",
     {2, 3, 40},
     {{"x", "B S D"}, {"scale", "B 1 D"}, {"shift", "B 1 D"}},
     [](const Tensors &in, const Sizes &z) {
       HostTensor q(ElementKind::F8E4M3FN, {z.B, z.S, z.D});
       HostTensor scale(ElementKind::F32, {z.B, z.S});
       for (int64_t b = 0; b < z.B; ++b)
         for (int64_t s = 0; s < z.S; ++s) {
           std::vector<double> n = layerNorm(rowOf(in.at("x"), b, s, z.D)), row;
           // The norm rounds to f32; the modulation (a composite) computes
           // exactly and rounds once.
           for (int64_t d = 0; d < z.D; ++d)
             n[d] = f32(f32(n[d]) * (1.0 + at(in.at("scale"), {b, 0, d})) +
                        at(in.at("shift"), {b, 0, d}));
           at(scale, {b, s}) = quantizeRow(n, 448.0, 4.35965e-06f, row, toE4M3);
           for (int64_t d = 0; d < z.D; ++d)
             at(q, {b, s, d}) = row[d];
         }
       return std::vector<HostTensor>{q, scale};
     }},
};

//===----------------------------------------------------------------------===//
// The harness
//===----------------------------------------------------------------------===//

const std::string kExamplesDir = std::string(NF_SOURCE_DIR) + "/examples";

std::string examplePath(const std::string &name) {
  return kExamplesDir + "/" + name + ".mlir";
}

std::vector<int64_t> parseShape(const std::string &text, const Sizes &z) {
  std::vector<int64_t> shape;
  std::istringstream is(text);
  std::string token;
  while (is >> token) {
    if (token == "B")
      shape.push_back(z.B);
    else if (token == "S")
      shape.push_back(z.S);
    else if (token == "D")
      shape.push_back(z.D);
    else if (token == "F")
      shape.push_back(z.F);
    else if (token == "P")
      shape.push_back(z.P);
    else
      shape.push_back(std::stoll(token));
  }
  return shape;
}

/// Random inputs for `kernel`: floats uniform in [-1, 1) rounded to their
/// type; [B, S] integer tensors 0 or 1; [B] integer tensors positions that
/// stay in the cache with the offset; scalars the offset.
Tensors makeInputs(KernelOp kernel, const ExampleCase &example,
                   std::vector<HostTensor> &args) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const Sizes &z = example.sizes;
  Tensors byName;
  auto types = kernel.getArgumentTypes();
  for (unsigned i = 0; i < types.size(); ++i) {
    std::string name = kernel.getArgumentName(i);
    auto tensorType = llvm::dyn_cast<mlir::RankedTensorType>(types[i]);
    mlir::Type element = tensorType ? tensorType.getElementType() : types[i];
    ElementKind kind = *getElementKind(element);
    HostTensor t;
    if (!tensorType) {
      t = HostTensor::scalar(kind, (double)z.offset);
    } else {
      auto it = example.shapes.find(name);
      EXPECT_NE(it, example.shapes.end()) << "no shape for %" << name;
      if (it == example.shapes.end())
        return {};
      t = HostTensor(kind, parseShape(it->second, z));
      for (double &v : t.data) {
        if (isFloatKind(kind))
          v = nf_test::roundTo(kind, uniform(rng));
        else if (tensorType.getRank() == 2)
          v = (double)(rng() % 2);
        else
          v = (double)(rng() % (uint64_t)(z.P - z.offset));
      }
    }
    byName[name] = t;
    args.push_back(t);
  }
  return byName;
}

/// One ulp of `kind` relative to magnitude 1: the tests allow the result of
/// a composite computed in another order in double to round to a neighbour,
/// nothing more (and only rarely, see the exact-match count).
double ulp(ElementKind kind) {
  switch (kind) {
  case ElementKind::F16:
    return 0x1p-10;
  case ElementKind::BF16:
    return 0x1p-7;
  default:
    return 0x1p-23;
  }
}

class ExampleTest : public testing::TestWithParam<ExampleCase> {};

TEST_P(ExampleTest, MatchesIndependentReference) {
  const ExampleCase &example = GetParam();
  auto buffer = llvm::MemoryBuffer::getFile(examplePath(example.name));
  ASSERT_TRUE(buffer) << "cannot read " << examplePath(example.name);
  nf_test::ParsedModule parsed((*buffer)->getBuffer());
  ASSERT_TRUE(parsed.ok()) << parsed.diagnostics;
  KernelOp kernel = parsed.kernel(example.name);
  ASSERT_TRUE(kernel) << "no kernel @" << example.name;

  std::vector<HostTensor> args;
  Tensors inputs = makeInputs(kernel, example, args);
  ASSERT_EQ(args.size(), kernel.getArgumentTypes().size());
  std::string error;
  auto results = interpretKernel(kernel, args, error);
  ASSERT_TRUE(succeeded(results)) << error;
  std::vector<HostTensor> expected = example.reference(inputs, example.sizes);
  ASSERT_EQ(results->size(), expected.size());

  for (size_t r = 0; r < expected.size(); ++r) {
    const HostTensor &got = (*results)[r], &want = expected[r];
    ASSERT_EQ(got.elementType, want.elementType) << "result #" << r;
    ASSERT_EQ(got.shape, want.shape) << "result #" << r;
    size_t exact = 0;
    for (size_t i = 0; i < want.data.size(); ++i) {
      double a = got.data[i], e = want.data[i];
      ASSERT_FALSE(std::isnan(a) || std::isnan(e))
          << "result #" << r << " element " << i;
      exact += a == e;
      ASSERT_LE(std::fabs(a - e),
                2 * ulp(want.elementType) * (std::fabs(e) + 1))
          << "result #" << r << " element " << i << ": got " << a
          << ", expected " << e;
    }
    // Neighbours only where the double results straddle a rounding boundary.
    EXPECT_GE(exact, want.data.size() * 99 / 100)
        << "result #" << r << ": only " << exact << " of " << want.data.size()
        << " elements match exactly";
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest, testing::ValuesIn(kExamples),
                         [](const testing::TestParamInfo<ExampleCase> &info) {
                           return info.param.name;
                         });

/// Every file in examples/ must have a reference above, and RUN lines in
/// the lit test that checks -nf-decompose against the composites.
TEST(Examples, EveryExampleHasAReference) {
  std::set<std::string> covered;
  for (const ExampleCase &example : kExamples)
    covered.insert(example.name);
  std::string litTest =
      std::string(NF_SOURCE_DIR) + "/test/Interpreter/decompose-agrees.mlir";
  auto lit = llvm::MemoryBuffer::getFile(litTest);
  ASSERT_TRUE(lit) << "cannot read " << litTest;
  std::error_code ec;
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(kExamplesDir, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef path = it->path();
    if (llvm::sys::path::extension(path) != ".mlir")
      continue;
    ++files;
    std::string stem = llvm::sys::path::stem(path).str();
    EXPECT_TRUE(covered.count(stem))
        << "examples/" << stem
        << ".mlir has no reference: add it to kExamples in "
           "test/unit/ExamplesTest.cpp";
    EXPECT_TRUE((*lit)->getBuffer().contains("%examples/" + stem + ".mlir"))
        << "examples/" << stem
        << ".mlir is not run by test/Interpreter/decompose-agrees.mlir";
  }
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_GT(files, 0);
}

} // namespace
