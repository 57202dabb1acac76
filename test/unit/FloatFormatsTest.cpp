//===- FloatFormatsTest.cpp - rounding to f32, f16, bf16 ------------------===//
//
// Part of normfuse. Known bit patterns first, then the helpers against the
// compiler's conversions on many random values.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gtest/gtest.h"

#include <limits>
#include <random>

using namespace mlir::nf;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

uint16_t f16(double x) { return f16BitsFromDouble(x); }
uint16_t bf16(double x) { return bf16BitsFromDouble(x); }

TEST(F16, ExactValues) {
  EXPECT_EQ(f16(0.0), 0x0000);
  EXPECT_EQ(f16(-0.0), 0x8000);
  EXPECT_EQ(f16(1.0), 0x3c00);
  EXPECT_EQ(f16(-2.0), 0xc000);
  EXPECT_EQ(f16(0.5), 0x3800);
  EXPECT_EQ(f16(65504.0), 0x7bff);   // largest finite
  EXPECT_EQ(f16(0x1p-14), 0x0400);   // smallest normal
  EXPECT_EQ(f16(0x1p-24), 0x0001);   // smallest subnormal
  EXPECT_EQ(f16(0x3ffp-24), 0x03ff); // largest subnormal
}

TEST(F16, TiesToEven) {
  // ulp(1) = 2^-10: 1 + 2^-11 is halfway between 1 (even) and 1 + 2^-10.
  EXPECT_EQ(f16(1.0 + 0x1p-11), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(f16(1.0 + 3 * 0x1p-11), 0x3c02);
  // Just above the tie rounds up.
  EXPECT_EQ(f16(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
  EXPECT_EQ(f16(-(1.0 + 0x1p-11)), 0xbc00);
}

TEST(F16, Subnormals) {
  EXPECT_EQ(f16(0x1p-25), 0x0000); // tie between 0 and 2^-24: even 0
  EXPECT_EQ(f16(0x1p-25 + 0x1p-60), 0x0001);
  EXPECT_EQ(f16(3 * 0x1p-25), 0x0002); // 1.5 ulp ties to 2 (even)
  EXPECT_EQ(f16(5 * 0x1p-25), 0x0002); // 2.5 ulp ties to 2 (even)
  EXPECT_EQ(f16(-0x1p-26), 0x8000);    // rounds to -0
  EXPECT_EQ(f16(0x7ffp-25), 0x0400);   // rounds up into the normals
}

TEST(F16, Overflow) {
  EXPECT_EQ(f16(65519.0), 0x7bff); // below the midpoint 65520
  EXPECT_EQ(f16(65520.0), 0x7c00); // the midpoint ties to "even" 2^16 = inf
  EXPECT_EQ(f16(1e10), 0x7c00);
  EXPECT_EQ(f16(-1e10), 0xfc00);
  EXPECT_EQ(f16(kInf), 0x7c00);
  EXPECT_EQ(f16(-kInf), 0xfc00);
}

TEST(F16, NaN) {
  EXPECT_EQ(f16(std::nan("")) & 0x7fff, 0x7e00);
  EXPECT_TRUE(std::isnan(roundToF16(std::nan(""))));
  EXPECT_TRUE(std::isnan(doubleFromF16Bits(0x7e00)));
  EXPECT_TRUE(std::isnan(doubleFromF16Bits(0xfc01)));
}

TEST(F16, Decode) {
  EXPECT_EQ(doubleFromF16Bits(0x3c00), 1.0);
  EXPECT_EQ(doubleFromF16Bits(0x0001), 0x1p-24);
  EXPECT_EQ(doubleFromF16Bits(0x7bff), 65504.0);
  EXPECT_EQ(doubleFromF16Bits(0x7c00), kInf);
  EXPECT_EQ(doubleFromF16Bits(0xfc00), -kInf);
  EXPECT_TRUE(std::signbit(doubleFromF16Bits(0x8000)));
}

TEST(F16, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    double value = doubleFromF16Bits((uint16_t)bits);
    if (std::isnan(value))
      continue;
    ASSERT_EQ(f16(value), bits) << "0x" << std::hex << bits;
    ASSERT_EQ(roundToF16(value), value);
  }
}

TEST(BF16, KnownPatterns) {
  EXPECT_EQ(bf16(1.0), 0x3f80);
  EXPECT_EQ(bf16(-0.0), 0x8000);
  EXPECT_EQ(bf16(1.0 + 0x1p-8), 0x3f80);           // tie to even (down)
  EXPECT_EQ(bf16(1.0 + 3 * 0x1p-8), 0x3f82);       // tie to even (up)
  EXPECT_EQ(bf16(1.0 + 0x1p-8 + 0x1p-40), 0x3f81); // above the tie
  EXPECT_EQ(bf16(0x1p-133), 0x0001);               // smallest subnormal
  EXPECT_EQ(bf16(0x1p-134), 0x0000);               // tie to even 0
  EXPECT_EQ(bf16(0x1.fep127), 0x7f7f);             // largest finite
  EXPECT_EQ(bf16(0x1.ffp127), 0x7f80);             // midpoint to 2^128 -> inf
  EXPECT_EQ(bf16(-1e300), 0xff80);
  EXPECT_EQ(bf16(std::nan("")) & 0x7fff, 0x7fc0);
  EXPECT_EQ(doubleFromBF16Bits(0x3f80), 1.0);
  EXPECT_EQ(doubleFromBF16Bits(0xff80), -kInf);
}

TEST(BF16, DirectFromDoubleAvoidsDoubleRounding) {
  // 1 + 2^-8 + 2^-30: rounding to f32 first gives 1 + 2^-8 exactly (the
  // 2^-30 is below f32's half ulp), a tie that then rounds down to 1. The
  // correctly rounded bf16 is 1 + 2^-7.
  EXPECT_EQ(bf16(1.0 + 0x1p-8 + 0x1p-30), 0x3f81);
}

TEST(F32, KnownValues) {
  EXPECT_EQ(roundToF32(1.0 + 0x1p-24), 1.0);               // tie, even
  EXPECT_EQ(roundToF32(1.0 + 3 * 0x1p-24), 1.0 + 0x1p-22); // tie, even
  EXPECT_EQ(roundToF32(0x1p-150), 0.0);                    // tie to 0
  EXPECT_EQ(roundToF32(0x1.8p-150), 0x1p-149);
  EXPECT_EQ(roundToF32(0x1.ffffffp127), kInf);
  EXPECT_EQ(roundToF32(0x1.fffffep127), 0x1.fffffep127);
}

TEST(RoundSum, TieBrokenByTheLowPart) {
  // hi is an f32 tie; lo decides.
  double hi = 1.0 + 0x1p-24;
  EXPECT_EQ(roundSumToElement(hi, 0.0, ElementKind::F32), 1.0);
  EXPECT_EQ(roundSumToElement(hi, 0x1p-80, ElementKind::F32), 1.0 + 0x1p-23);
  EXPECT_EQ(roundSumToElement(hi, -0x1p-80, ElementKind::F32), 1.0);
  EXPECT_EQ(roundSumToElement(-hi, 0x1p-80, ElementKind::F32), -1.0);
  EXPECT_EQ(roundSumToElement(-hi, -0x1p-80, ElementKind::F32),
            -(1.0 + 0x1p-23));
  // Not a tie: lo cannot change the rounding.
  EXPECT_EQ(roundSumToElement(hi + 0x1p-52, -0x1p-106, ElementKind::F32),
            1.0 + 0x1p-23);
  // The overflow threshold of f32 is a tie too.
  double overflow = 0x1.ffffffp127;
  EXPECT_EQ(roundSumToElement(overflow, 0.0, ElementKind::F32), kInf);
  EXPECT_EQ(roundSumToElement(overflow, -0x1p60, ElementKind::F32),
            0x1.fffffep127);
  EXPECT_EQ(roundSumToElement(0x1p-150, 0x1p-200, ElementKind::F32), 0x1p-149);
  EXPECT_EQ(roundSumToElement(0x1p-150, -0x1p-200, ElementKind::F32), 0.0);
  double tie16 = 1.0 + 3 * 0x1p-11;
  EXPECT_EQ(roundSumToElement(tie16, -0x1p-70, ElementKind::F16),
            1.0 + 0x1p-10);
}

uint8_t e4m3(double x) { return f8E4M3FNBitsFromDouble(x); }
uint8_t e5m2(double x) { return f8E5M2BitsFromDouble(x); }

TEST(F8E4M3FN, ExactValuesAndSaturation) {
  EXPECT_EQ(e4m3(0.0), 0x00);
  EXPECT_EQ(e4m3(-0.0), 0x80);
  EXPECT_EQ(e4m3(1.0), 0x38);
  EXPECT_EQ(e4m3(-2.0), 0xc0);
  EXPECT_EQ(e4m3(448.0), 0x7e);  // largest finite
  EXPECT_EQ(e4m3(0x1p-6), 0x08); // smallest normal
  EXPECT_EQ(e4m3(0x1p-9), 0x01); // smallest subnormal
  EXPECT_EQ(e4m3(0x7p-9), 0x07); // largest subnormal
  // Beyond the largest finite value, infinities included: saturated.
  EXPECT_EQ(e4m3(470.0), 0x7e);
  EXPECT_EQ(e4m3(1e9), 0x7e);
  EXPECT_EQ(e4m3(-kInf), 0xfe);
  EXPECT_EQ(e4m3(std::numeric_limits<double>::quiet_NaN()), 0x7f);
  EXPECT_TRUE(std::isnan(doubleFromF8E4M3FNBits(0xff)));
  // Ties to even: 1 + 2^-4 lies between 1 (0x38) and 1 + 2^-3 (0x39).
  EXPECT_EQ(e4m3(1.0 + 0x1p-4), 0x38);
  EXPECT_EQ(e4m3(1.0 + 3 * 0x1p-4), 0x3a);
  // Half the smallest subnormal rounds to 0 (even); 1.5 of it to 2.
  EXPECT_EQ(e4m3(0x1p-10), 0x00);
  EXPECT_EQ(e4m3(0x3p-10), 0x02);
  // Just below the smallest normal rounds up into it.
  EXPECT_EQ(e4m3(0x1p-6 - 0x1p-12), 0x08);
}

TEST(F8E5M2, ExactValuesAndSaturation) {
  EXPECT_EQ(e5m2(1.0), 0x3c);
  EXPECT_EQ(e5m2(57344.0), 0x7b); // largest finite
  EXPECT_EQ(e5m2(0x1p-14), 0x04); // smallest normal
  EXPECT_EQ(e5m2(0x1p-16), 0x01); // smallest subnormal
  EXPECT_EQ(e5m2(kInf), 0x7b);
  EXPECT_EQ(e5m2(-70000.0), 0xfb);
  EXPECT_EQ(e5m2(std::numeric_limits<double>::quiet_NaN()), 0x7f);
  EXPECT_EQ(doubleFromF8E5M2Bits(0x7c), kInf); // the format has infinities
  EXPECT_EQ(e5m2(1.0 + 0x1p-3), 0x3c);         // tie to even
}

TEST(F8, EveryCodeRoundTrips) {
  for (int code = 0; code < 256; ++code) {
    double v = doubleFromF8E4M3FNBits((uint8_t)code);
    if (!std::isnan(v)) {
      EXPECT_EQ(e4m3(v), code) << code;
    }
    double w = doubleFromF8E5M2Bits((uint8_t)code);
    if (!std::isnan(w) && !std::isinf(w)) {
      EXPECT_EQ(e5m2(w), code) << code;
    }
  }
}

TEST(I8, RoundsToEvenSaturatesAndZeroesNaN) {
  EXPECT_EQ(roundToElement(2.5, ElementKind::I8), 2.0);
  EXPECT_EQ(roundToElement(3.5, ElementKind::I8), 4.0);
  EXPECT_EQ(roundToElement(-2.5, ElementKind::I8), -2.0);
  EXPECT_EQ(roundToElement(127.5, ElementKind::I8), 127.0);
  EXPECT_EQ(roundToElement(-1e9, ElementKind::I8), -128.0);
  EXPECT_EQ(roundToElement(kInf, ElementKind::I8), 127.0);
  EXPECT_EQ(
      roundToElement(std::numeric_limits<double>::quiet_NaN(), ElementKind::I8),
      0.0);
}

/// The helpers against the hardware and the compiler on random doubles
/// spread over all binades of the formats, subnormals and overflow included.
TEST(Formats, AgreeWithCompilerConversions) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> exponent(-160, 135);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 200000; ++i) {
    double x = std::ldexp(mantissa(rng), exponent(rng));
    if (rng() & 1)
      x = -x;
    ASSERT_EQ(roundToF32(x), (double)(float)x) << x;
    // A low part too small to matter gives the same result, through the
    // tie-breaking path.
    ASSERT_EQ(roundSumToElement(x, std::ldexp(x, -70), ElementKind::F32),
              (double)(float)x)
        << x;
    double h = (double)(_Float16)x;
    double r = roundToF16(x);
    ASSERT_TRUE(r == h && std::signbit(r) == std::signbit(h)) << x;
    // bf16 from an f32 value: the bit trick is exact (no double rounding).
    double f = (double)(float)x;
    ASSERT_EQ(roundToBF16(f), nf_test::bf16(f)) << f;
  }
}

} // namespace
