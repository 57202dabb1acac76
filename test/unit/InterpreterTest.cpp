//===- InterpreterTest.cpp - op semantics and error paths -----------------===//
//
// Part of normfuse. Small kernels whose results are worked out by hand from
// the op descriptions in NfOps.td, and every way a call can be wrong: each
// must come back as an error message, never a crash.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gtest/gtest.h"

#include <limits>

using namespace mlir::nf;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

HostTensor tensor(ElementKind kind, std::vector<int64_t> shape,
                  std::vector<double> data) {
  HostTensor t(kind, std::move(shape));
  t.data = std::move(data);
  return t;
}

HostTensor f32Tensor(std::vector<int64_t> shape, std::vector<double> data) {
  return tensor(ElementKind::F32, std::move(shape), std::move(data));
}

/// A tensor whose element i is fn(i).
template <typename Fn>
HostTensor filled(ElementKind kind, std::vector<int64_t> shape, Fn fn) {
  HostTensor t(kind, std::move(shape));
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = fn((int64_t)i);
  return t;
}

/// Parses `source` and runs its only kernel.
struct Interpreted {
  Interpreted(llvm::StringRef source, std::vector<HostTensor> args)
      : parsed(source) {
    if (!parsed.ok()) {
      error = "parse error: " + parsed.diagnostics;
      return;
    }
    auto out = interpretKernel(parsed.kernel(), args, error);
    if (succeeded(out))
      results.assign(out->begin(), out->end());
    ok = succeeded(out);
  }
  nf_test::ParsedModule parsed;
  std::vector<HostTensor> results;
  std::string error;
  bool ok = false;
};

//===----------------------------------------------------------------------===//
// Semantics
//===----------------------------------------------------------------------===//

constexpr const char *kBroadcasts = R"(
nf.kernel @bcast(%x: tensor<?x?x?xf32>, %one: tensor<1xf32>,
                 %d: tensor<?xf32>, %bd: tensor<?x?xf32>,
                 %b1d: tensor<?x1x?xf32>, %bsd: tensor<?x?x?xf32>,
                 %bf1d: tensor<?x?x1x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>,
        tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %t0 = nf.load %one [1] : tensor<1xf32>
  %t1 = nf.load %d [D] : tensor<?xf32>
  %t2 = nf.load %bd [B, D] : tensor<?x?xf32>
  %t3 = nf.load %b1d [B, 1, D] : tensor<?x1x?xf32>
  %t4 = nf.load %bsd [B, S, D] : tensor<?x?x?xf32>
  %t5 = nf.load %bf1d [B, F, 1, D] : tensor<?x?x1x?xf32>
  %y0 = nf.add %xr, %t0 : !nf.row<f32>
  %y1 = nf.add %xr, %t1 : !nf.row<f32>
  %y2 = nf.add %xr, %t2 : !nf.row<f32>
  %y3 = nf.add %xr, %t3 : !nf.row<f32>
  %y4 = nf.add %xr, %t4 : !nf.row<f32>
  %y5 = nf.add %xr, %t5 : !nf.row<f32>
  nf.return %y0, %y1, %y2, %y3, %y4, %y5
      : !nf.row<f32>, !nf.row<f32>, !nf.row<f32>, !nf.row<f32>,
        !nf.row<f32>, !nf.row<f32>
}
)";

TEST(Semantics, BroadcastKinds) {
  const int64_t B = 2, S = 6, D = 3, F = 3;
  // Distinct small integers: every sum is exact.
  auto id = [](int64_t i) { return (double)(i + 1) * 1000; };
  std::vector<HostTensor> args = {
      filled(ElementKind::F32, {B, S, D}, [](int64_t i) { return i; }),
      f32Tensor({1}, {0.5}),
      filled(ElementKind::F32, {D}, id),
      filled(ElementKind::F32, {B, D}, id),
      filled(ElementKind::F32, {B, 1, D}, id),
      filled(ElementKind::F32, {B, S, D}, id),
      filled(ElementKind::F32, {B, F, 1, D}, id),
  };
  Interpreted run(kBroadcasts, args);
  ASSERT_TRUE(run.ok) << run.error;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t d = 0; d < D; ++d) {
        int64_t i = (b * S + s) * D + d;
        double x = (double)i;
        EXPECT_EQ(run.results[0].data[i], x + 0.5);
        EXPECT_EQ(run.results[1].data[i], x + id(d));
        EXPECT_EQ(run.results[2].data[i], x + id(b * D + d));
        EXPECT_EQ(run.results[3].data[i], x + id(b * D + d));
        EXPECT_EQ(run.results[4].data[i], x + id(i));
        // Token s of batch b uses frame s / (S / F).
        EXPECT_EQ(run.results[5].data[i], x + id((b * F + s / (S / F)) * D + d))
            << b << " " << s << " " << d;
      }
}

TEST(Semantics, SelectLoadChoosesPerRow) {
  const char *source = R"(
nf.kernel @sel(%x: tensor<?x?x?xf32>, %idx: tensor<?x?xi8>,
               %a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %m = nf.select_load %idx, %a, %b [D] : tensor<?x?xi8>, tensor<?xf32>
  %y = nf.add %xr, %m : !nf.row<f32>
  nf.return %y : !nf.row<f32>
}
)";
  Interpreted run(source, {f32Tensor({1, 3, 2}, {0, 0, 0, 0, 0, 0}),
                           tensor(ElementKind::I8, {1, 3}, {0, 1, -3}),
                           f32Tensor({2}, {1, 2}), f32Tensor({2}, {3, 4})});
  ASSERT_TRUE(run.ok) << run.error;
  // Index 0 picks the first operand, anything else the second.
  EXPECT_EQ(run.results[0].data, (std::vector<double>{1, 2, 3, 4, 3, 4}));
}

TEST(Semantics, ArithmeticRoundsOnceToNearestEven) {
  const char *source = R"(
nf.kernel @h(%a: tensor<?x?x?xf16>, %b: tensor<?x?x?xf16>)
    -> (tensor<?x?x?xf16>, tensor<?x?x?xf16>) {
  %x = nf.load %a [B, S, D] : tensor<?x?x?xf16>
  %y = nf.load %b [B, S, D] : tensor<?x?x?xf16>
  %s = nf.add %x, %y : !nf.row<f16>
  %p = nf.mul %x, %y : !nf.row<f16>
  nf.return %s, %p : !nf.row<f16>, !nf.row<f16>
}
)";
  Interpreted run(
      source, {tensor(ElementKind::F16, {1, 1, 3}, {1.0, 1.0 + 0x1p-10, 60000}),
               tensor(ElementKind::F16, {1, 1, 3}, {0x1p-11, 0x1p-11, 8000})});
  ASSERT_TRUE(run.ok) << run.error;
  // 1 + 2^-11 ties to 1; 1 + 3 * 2^-11 ties to 1 + 2^-9; 68000 overflows.
  EXPECT_EQ(run.results[0].data[0], 1.0);
  EXPECT_EQ(run.results[0].data[1], 1.0 + 0x1p-9);
  EXPECT_EQ(run.results[0].data[2], std::numeric_limits<double>::infinity());
  EXPECT_EQ(run.results[1].data[0], 0x1p-11);
  EXPECT_EQ(run.results[1].data[1], 0x1p-11 + 0x1p-21);
}

TEST(Semantics, ReductionsAndNaN) {
  const char *source = R"(
nf.kernel @r(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>,
        tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %sum = nf.reduce sum %xr : !nf.row<f32>
  %max = nf.reduce max %xr : !nf.row<f32>
  %mean = nf.reduce mean %xr : !nf.row<f32>
  %msq = nf.reduce mean_sq %xr : !nf.row<f32>
  %zero = nf.sub %xr, %xr : !nf.row<f32>
  %y0 = nf.add %zero, %sum : !nf.row<f32>, f32
  %y1 = nf.add %zero, %max : !nf.row<f32>, f32
  %y2 = nf.add %zero, %mean : !nf.row<f32>, f32
  %y3 = nf.add %zero, %msq : !nf.row<f32>, f32
  %c = nf.constant 2.5 : f32
  %y4 = nf.max %xr, %c : !nf.row<f32>, f32
  %y5 = nf.min %xr, %c : !nf.row<f32>, f32
  nf.return %y0, %y1, %y2, %y3, %y4, %y5
      : !nf.row<f32>, !nf.row<f32>, !nf.row<f32>, !nf.row<f32>,
        !nf.row<f32>, !nf.row<f32>
}
)";
  // Row 0: 1, 2, 4, -3; row 1 holds a NaN.
  Interpreted run(source,
                  {f32Tensor({1, 2, 4}, {1, 2, 4, -3, 1, kNaN, 4, -3})});
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(run.results[0].data[0], 4.0);
  EXPECT_EQ(run.results[1].data[0], 4.0);
  EXPECT_EQ(run.results[2].data[0], 1.0);
  EXPECT_EQ(run.results[3].data[0], (1 + 4 + 16 + 9) / 4.0);
  EXPECT_EQ(run.results[4].data[0], 2.5);
  EXPECT_EQ(run.results[4].data[2], 4.0);
  EXPECT_EQ(run.results[5].data[2], 2.5);
  EXPECT_EQ(run.results[5].data[3], -3.0);
  for (int r = 0; r < 4; ++r)
    EXPECT_TRUE(std::isnan(run.results[r].data[4])) << r;
  EXPECT_TRUE(std::isnan(run.results[4].data[5])); // max(NaN, 2.5)
  EXPECT_TRUE(std::isnan(run.results[5].data[5])); // min(NaN, 2.5)
  EXPECT_EQ(run.results[4].data[6], 4.0);
}

TEST(Semantics, UnaryOps) {
  const char *source = R"(
nf.kernel @u(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>,
        tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %a = nf.sigmoid %xr : !nf.row<f32>
  %b = nf.rsqrt %xr : !nf.row<f32>
  %c = nf.exp %xr : !nf.row<f32>
  %n = nf.neg %xr : !nf.row<f32>
  %d = nf.abs %n : !nf.row<f32>
  %e = nf.div %d, %c : !nf.row<f32>
  nf.return %a, %b, %c, %d, %e
      : !nf.row<f32>, !nf.row<f32>, !nf.row<f32>, !nf.row<f32>, !nf.row<f32>
}
)";
  Interpreted run(source, {f32Tensor({1, 1, 2}, {0.25, 4.0})});
  ASSERT_TRUE(run.ok) << run.error;
  for (int i = 0; i < 2; ++i) {
    double x = i == 0 ? 0.25 : 4.0;
    EXPECT_EQ(run.results[0].data[i], (double)(float)(1 / (1 + std::exp(-x))));
    EXPECT_EQ(run.results[1].data[i], (double)(float)(1 / std::sqrt(x)));
    EXPECT_EQ(run.results[2].data[i], (double)(float)std::exp(x));
    EXPECT_EQ(run.results[3].data[i], x);
    // The division sees the rounded exp.
    double e = (double)(float)std::exp(x);
    EXPECT_EQ(run.results[4].data[i], (double)(float)(x / e));
  }
}

TEST(Semantics, CastRoundsToTarget) {
  const char *source = R"(
nf.kernel @c(%x: tensor<?x?x?xf32>) -> (tensor<?x?x?xbf16>, tensor<?x?x?xf16>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %b = nf.cast %xr : !nf.row<f32> to !nf.row<bf16>
  %h = nf.cast %xr : !nf.row<f32> to !nf.row<f16>
  nf.return %b, %h : !nf.row<bf16>, !nf.row<f16>
}
)";
  double tie = 1.0 + 0x1p-8; // a bf16 tie; exact in f16
  Interpreted run(source, {f32Tensor({1, 1, 3}, {tie, 1e5, 0x1p-26})});
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(run.results[0].data[0], 1.0);
  EXPECT_EQ(run.results[1].data[0], tie);
  EXPECT_EQ(run.results[0].data[1], 99840.0); // bf16 nearest to 1e5
  EXPECT_EQ(run.results[1].data[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(run.results[1].data[2], 0.0); // below half the f16 subnormal
  EXPECT_TRUE(std::signbit(run.results[1].data[2]) == false);
}

TEST(Semantics, NormsAreComputedFromTheirFormulas) {
  const char *source = R"(
nf.kernel @n(%x: tensor<?x?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xbf16>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %wr = nf.load %w [D] : tensor<?xf32>
  %br = nf.load %b [D] : tensor<?xf32>
  %ln = nf.layer_norm %xr weight %wr bias %br eps 0.5 : !nf.row<f32>
  %xb = nf.cast %xr : !nf.row<f32> to !nf.row<bf16>
  %rms = nf.rms_norm %xb eps 1.0 : !nf.row<bf16>
  nf.return %ln, %rms : !nf.row<f32>, !nf.row<bf16>
}
)";
  // x = 1, 2, 3, 6: mean 3, variance (4 + 1 + 0 + 9) / 4 = 3.5;
  // (x - 3) / sqrt(3.5 + 0.5) = -1, -0.5, 0, 1.5; mean(x^2) = 12.5.
  Interpreted run(source, {f32Tensor({1, 1, 4}, {1, 2, 3, 6}),
                           f32Tensor({4}, {2, 2, 2, 2}),
                           f32Tensor({4}, {0.25, 0.25, 0.25, 0.25})});
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(run.results[0].data,
            (std::vector<double>{-1.75, -0.75, 0.25, 3.25}));
  const double x[] = {1, 2, 3, 6};
  for (int d = 0; d < 4; ++d)
    EXPECT_EQ(run.results[1].data[d], nf_test::bf16(x[d] / std::sqrt(13.5)))
        << d;
}

TEST(Semantics, ModulateRoundsOnce) {
  const char *source = R"(
nf.kernel @m(%x: tensor<?x?x?xbf16>, %s: tensor<?x?x?xbf16>,
             %t: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %sr = nf.load %s [B, S, D] : tensor<?x?x?xbf16>
  %tr = nf.load %t [B, S, D] : tensor<?x?x?xbf16>
  %y = nf.modulate %xr, %sr, %tr : !nf.row<bf16>
  nf.return %y : !nf.row<bf16>
}
)";
  // 1 * (1 + 2^-8) + 2^-20: rounding 1 + scale to bf16 first would give 1
  // (a tie) and then 1; rounding once gives the next bf16 above 1.
  Interpreted run(source, {tensor(ElementKind::BF16, {1, 1, 1}, {1.0}),
                           tensor(ElementKind::BF16, {1, 1, 1}, {0x1p-8}),
                           tensor(ElementKind::BF16, {1, 1, 1}, {0x1p-20})});
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(run.results[0].data[0], 1.0 + 0x1p-7);
}

constexpr const char *kRope = R"(
nf.kernel @rope(%x: tensor<?x?x?xf32>, %cache: tensor<?x4xf32>,
                %pos: tensor<?xi32>, %off: i32)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %n = nf.rope neox %xr, %cache[%pos + %off] rotary 4
      : !nf.row<f32>, tensor<?x4xf32>, tensor<?xi32>, i32
  %i = nf.rope interleaved %xr, %cache[%pos + %off] rotary 4
      : !nf.row<f32>, tensor<?x4xf32>, tensor<?xi32>, i32
  nf.return %n, %i : !nf.row<f32>, !nf.row<f32>
}
)";

TEST(Semantics, RopeLayoutsAndPassThrough) {
  // One row of D = 6; position 0 + offset 1 selects cache row 1:
  // cos = (0, 0.5), sin = (1, 0.25).
  HostTensor cache = f32Tensor({2, 4}, {9, 9, 9, 9, 0, 0.5, 1, 0.25});
  Interpreted run(kRope, {f32Tensor({1, 1, 6}, {1, 2, 3, 4, 5, 6}), cache,
                          tensor(ElementKind::I32, {1}, {0}),
                          HostTensor::scalar(ElementKind::I32, 1)});
  ASSERT_TRUE(run.ok) << run.error;
  // neox pairs (0, 2), (1, 3): (x1 c - x2 s, x2 c + x1 s).
  EXPECT_EQ(run.results[0].data,
            (std::vector<double>{1 * 0 - 3 * 1, 2 * 0.5 - 4 * 0.25,
                                 3 * 0 + 1 * 1, 4 * 0.5 + 2 * 0.25, 5, 6}));
  // interleaved pairs (0, 1), (2, 3).
  EXPECT_EQ(
      run.results[1].data,
      (std::vector<double>{1 * 0 - 2 * 1, 2 * 0 + 1 * 1, 3 * 0.5 - 4 * 0.25,
                           4 * 0.5 + 3 * 0.25, 5, 6}));
}

TEST(Semantics, ChainsAreSizedSeparately) {
  const char *source = R"(
nf.kernel @qk(%q: tensor<?x?x?xf32>, %k: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %two = nf.constant 2.0 : f32
  %qr = nf.load %q [B, S, D] : tensor<?x?x?xf32>
  %qy = nf.mul %qr, %two : !nf.row<f32>, f32
  %kr = nf.load %k [B, S, D] : tensor<?x?x?xf32>
  %ky = nf.mul %kr, %two : !nf.row<f32>, f32
  nf.return %qy, %ky : !nf.row<f32>, !nf.row<f32>
}
)";
  Interpreted run(
      source,
      {filled(ElementKind::F32, {2, 3, 4}, [](int64_t i) { return i; }),
       filled(ElementKind::F32, {2, 1, 4}, [](int64_t i) { return -i; })});
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(run.results[0].shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(run.results[1].shape, (std::vector<int64_t>{2, 1, 4}));
  EXPECT_EQ(run.results[0].data[23], 46.0);
  EXPECT_EQ(run.results[1].data[7], -14.0);
}

TEST(Semantics, ChainsShareD) {
  const char *source = R"(
nf.kernel @qk(%q: tensor<?x?x?xf32>, %k: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %qr = nf.load %q [B, S, D] : tensor<?x?x?xf32>
  %kr = nf.load %k [B, S, D] : tensor<?x?x?xf32>
  nf.return %qr, %kr : !nf.row<f32>, !nf.row<f32>
}
)";
  Interpreted run(source, {HostTensor(ElementKind::F32, {2, 3, 4}),
                           HostTensor(ElementKind::F32, {2, 3, 5})});
  EXPECT_FALSE(run.ok);
  EXPECT_NE(run.error.find("D mismatch between chains: the chain writing "
                           "result #0 has D = 4, the chain writing result #1 "
                           "has D = 5"),
            std::string::npos)
      << run.error;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

constexpr const char *kGated = R"(
nf.kernel @g(%x: tensor<?x?x4xf32>, %gate: tensor<?x1x?xf32>)
    -> tensor<?x?x4xf32> {
  %xr = nf.load %x [B, S, D] : tensor<?x?x4xf32>
  %g = nf.load %gate [B, 1, D] : tensor<?x1x?xf32>
  %y = nf.mul %xr, %g : !nf.row<f32>
  nf.return %y : !nf.row<f32>
}
)";

HostTensor zeros(std::vector<int64_t> shape,
                 ElementKind kind = ElementKind::F32) {
  return HostTensor(kind, std::move(shape));
}

void expectError(llvm::StringRef source, std::vector<HostTensor> args,
                 llvm::StringRef needle) {
  Interpreted run(source, std::move(args));
  ASSERT_TRUE(run.parsed.ok()) << run.parsed.diagnostics;
  EXPECT_FALSE(run.ok);
  EXPECT_NE(run.error.find(needle.str()), std::string::npos)
      << "error was: " << run.error;
}

TEST(Errors, WrongArgumentCount) {
  expectError(kGated, {zeros({2, 3, 4})}, "expects 2 arguments, got 1");
}

TEST(Errors, WrongRank) {
  expectError(kGated, {zeros({2, 3, 4}), zeros({2, 4})},
              "argument %gate must have rank 3");
}

TEST(Errors, StaticDimensionMismatch) {
  expectError(kGated, {zeros({2, 3, 5}), zeros({2, 1, 5})},
              "argument %x dimension 2 must be 4");
}

TEST(Errors, WrongElementType) {
  expectError(kGated, {zeros({2, 3, 4}, ElementKind::BF16), zeros({2, 1, 4})},
              "must have f32 elements");
}

TEST(Errors, DataSizeMismatch) {
  HostTensor x = zeros({2, 3, 4});
  x.data.pop_back();
  expectError(kGated, {x, zeros({2, 1, 4})}, "24 elements) but 23 values");
}

TEST(Errors, InconsistentRuntimeSizes) {
  expectError(kGated, {zeros({2, 3, 4}), zeros({3, 1, 4})}, "B mismatch");
  expectError(kGated, {zeros({2, 3, 4}), zeros({2, 1, 5})}, "D mismatch");
  expectError(kGated, {zeros({2, 3, 4}), zeros({2, 2, 4})}, "must be 1");
}

TEST(Errors, NegativeSize) {
  expectError(kGated, {zeros({2, -3, 4}), zeros({2, 1, 4})}, "negative size");
}

TEST(Errors, FramesMustDivideS) {
  const char *source = R"(
nf.kernel @f(%x: tensor<?x?x?xf32>, %g: tensor<?x?x1x?xf32>)
    -> tensor<?x?x?xf32> {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %gr = nf.load %g [B, F, 1, D] : tensor<?x?x1x?xf32>
  %y = nf.mul %xr, %gr : !nf.row<f32>
  nf.return %y : !nf.row<f32>
}
)";
  expectError(source, {zeros({1, 5, 4}), zeros({1, 2, 1, 4})},
              "S = 5 is not divisible by F = 2");
}

TEST(Errors, RotaryLargerThanD) {
  const char *source = R"(
nf.kernel @r(%x: tensor<?x?x?xf32>, %cache: tensor<?x?xf32>,
             %pos: tensor<?xi64>) -> tensor<?x?x?xf32> {
  %xr = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %y = nf.rope neox %xr, %cache[%pos] rotary 8
      : !nf.row<f32>, tensor<?x?xf32>, tensor<?xi64>
  nf.return %y : !nf.row<f32>
}
)";
  HostTensor pos = tensor(ElementKind::I64, {1}, {0});
  expectError(source, {zeros({1, 2, 4}), zeros({4, 8}), pos},
              "rotary_dim 8 is larger than the row length D = 4");
  expectError(source, {zeros({1, 2, 8}), zeros({4, 6}), pos},
              "has width 6, but the rope's rotary_dim is 8");
}

TEST(Errors, PositionOutsideTheCache) {
  auto args = [](double position, double offset) {
    return std::vector<HostTensor>{
        zeros({1, 1, 6}), zeros({2, 4}),
        tensor(ElementKind::I32, {1}, {position}),
        HostTensor::scalar(ElementKind::I32, offset)};
  };
  expectError(kRope, args(1, 1), "position of batch row 0 is 2, outside");
  expectError(kRope, args(0, -1), "is -1, outside the cache [0, 2)");
  EXPECT_TRUE(Interpreted(kRope, args(0, 1)).ok);
}

TEST(Errors, ScalarArgument) {
  expectError(kRope,
              {zeros({1, 1, 6}), zeros({2, 4}),
               tensor(ElementKind::I32, {1}, {0}),
               tensor(ElementKind::I32, {1}, {0})},
              "argument %off must have rank 0");
}

//===----------------------------------------------------------------------===//
// Argument shapes for generated inputs
//===----------------------------------------------------------------------===//

TEST(Shapes, FromSizesStaticDimsAndOverrides) {
  nf_test::ParsedModule parsed(kRope);
  ASSERT_TRUE(parsed.ok()) << parsed.diagnostics;
  std::map<DimSymbol, int64_t> sizes = {{DimSymbol::B, 2},
                                        {DimSymbol::S, 3},
                                        {DimSymbol::D, 6},
                                        {DimSymbol::MaxPos, 10}};
  std::string error;
  auto shapes = deriveArgumentShapes(parsed.kernel(), sizes, {}, error);
  ASSERT_TRUE(succeeded(shapes)) << error;
  EXPECT_EQ((*shapes)[0], (std::vector<int64_t>{2, 3, 6}));
  EXPECT_EQ((*shapes)[1], (std::vector<int64_t>{10, 4}));
  EXPECT_EQ((*shapes)[2], (std::vector<int64_t>{2}));
  EXPECT_TRUE((*shapes)[3].empty());

  // An override sizes the rest of its chain.
  llvm::StringMap<std::vector<int64_t>> overrides;
  overrides["x"] = {5, 1, 8};
  shapes = deriveArgumentShapes(parsed.kernel(), sizes, overrides, error);
  ASSERT_TRUE(succeeded(shapes)) << error;
  EXPECT_EQ((*shapes)[2], (std::vector<int64_t>{5}));

  overrides["nope"] = {1};
  EXPECT_TRUE(
      failed(deriveArgumentShapes(parsed.kernel(), sizes, overrides, error)));
  EXPECT_NE(error.find("no argument is named 'nope'"), std::string::npos);

  sizes.erase(DimSymbol::MaxPos);
  EXPECT_TRUE(failed(deriveArgumentShapes(parsed.kernel(), sizes, {}, error)));
  EXPECT_NE(error.find("no size for max_pos"), std::string::npos) << error;
}

TEST(Roles, FromUses) {
  nf_test::ParsedModule parsed(kRope);
  ASSERT_TRUE(parsed.ok());
  auto roles = getArgumentRoles(parsed.kernel());
  EXPECT_EQ(roles, (llvm::SmallVector<ArgumentRole>{
                       ArgumentRole::Data, ArgumentRole::Cache,
                       ArgumentRole::Positions, ArgumentRole::Offset}));
}

} // namespace
