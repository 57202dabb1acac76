//===- FloatFormats.cpp - rounding to f32, f16 and bf16 -------------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "interpreter/FloatFormats.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::nf;

namespace {
/// A binary floating-point format with round to nearest even.
struct FloatFormat {
  int fractionBits; ///< stored mantissa bits (precision - 1)
  int minExponent;  ///< exponent of the smallest normal number
  int maxExponent;  ///< exponent of the largest finite number
};
} // namespace

static constexpr FloatFormat kF32{23, -126, 127};
static constexpr FloatFormat kF16{10, -14, 15};
static constexpr FloatFormat kBF16{7, -126, 127};
static constexpr FloatFormat kF8E4M3{3, -6, 8};
static constexpr FloatFormat kF8E5M2{2, -14, 15};
/// The largest finite values: e4m3fn gives its top encoding to NaN, so its
/// largest is 1.75 * 2^8, not the 1.875 * 2^8 of the pattern.
static constexpr double kF8E4M3Max = 448.0;
static constexpr double kF8E5M2Max = 57344.0;

/// Rounds hi + lo (see roundSumToElement) to `format`. Works on the integer
/// significand: `hi` scaled by the quantum of its binade (an exact power-of-
/// two scaling) is rounded to an integer, ties to even.
static double roundToFormat(double hi, double lo, const FloatFormat &format) {
  if (std::isnan(hi))
    return std::copysign(std::numeric_limits<double>::quiet_NaN(), hi);
  if (std::isinf(hi) || hi == 0)
    return hi;
  // Below the smallest normal the quantum stays that of the subnormals.
  int exponent = std::max(std::ilogb(hi), format.minExponent);
  int quantumExponent = exponent - format.fractionBits;
  double scaled = std::ldexp(hi, -quantumExponent);
  double rounded = std::nearbyint(scaled); // the default mode: ties to even
  if (lo != 0 && scaled - std::floor(scaled) == 0.5)
    rounded = lo > 0 ? std::ceil(scaled) : std::floor(scaled);
  double result = std::ldexp(rounded, quantumExponent);
  double maxFinite = std::ldexp(2.0 - std::ldexp(1.0, -format.fractionBits),
                                format.maxExponent);
  if (std::fabs(result) > maxFinite)
    return std::copysign(std::numeric_limits<double>::infinity(), hi);
  return result;
}

/// The hot case, by the hardware: double to float rounds to nearest even,
/// with the same subnormals, overflow and NaN as roundToFormat.
static double roundSumToF32(double hi, double lo) {
  auto rounded = (float)hi;
  if (lo == 0 || (double)rounded == hi)
    return rounded;
  // Only an exact tie at hi needs lo (roundToFormat breaks it); a tie is
  // halfway to the next float beyond hi. Both differences are exact.
  if (std::isfinite(rounded)) {
    float other = std::nextafter(rounded, hi > rounded ? INFINITY : -INFINITY);
    if (hi - (double)rounded != (double)other - hi)
      return rounded;
  }
  return roundToFormat(hi, lo, kF32);
}

/// Clamps a rounded value to +-max (infinities included; NaN stays NaN).
static double saturate(double x, double max) {
  if (std::isnan(x))
    return x;
  return std::clamp(x, -max, max);
}

StringRef mlir::nf::stringifyElementKind(ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return "f32";
  case ElementKind::F16:
    return "f16";
  case ElementKind::BF16:
    return "bf16";
  case ElementKind::I8:
    return "i8";
  case ElementKind::I32:
    return "i32";
  case ElementKind::I64:
    return "i64";
  case ElementKind::F8E4M3FN:
    return "f8E4M3FN";
  case ElementKind::F8E5M2:
    return "f8E5M2";
  }
  return "?";
}

std::optional<ElementKind> mlir::nf::parseElementKind(StringRef text) {
  return llvm::StringSwitch<std::optional<ElementKind>>(text)
      .Case("f32", ElementKind::F32)
      .Case("f16", ElementKind::F16)
      .Case("bf16", ElementKind::BF16)
      .Case("i8", ElementKind::I8)
      .Case("i32", ElementKind::I32)
      .Case("i64", ElementKind::I64)
      .Case("f8E4M3FN", ElementKind::F8E4M3FN)
      .Case("f8E5M2", ElementKind::F8E5M2)
      .Default(std::nullopt);
}

std::optional<ElementKind> mlir::nf::getElementKind(Type type) {
  if (type.isF32())
    return ElementKind::F32;
  if (type.isF16())
    return ElementKind::F16;
  if (type.isBF16())
    return ElementKind::BF16;
  if (isa<Float8E4M3FNType>(type))
    return ElementKind::F8E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return ElementKind::F8E5M2;
  if (type.isSignlessInteger(8))
    return ElementKind::I8;
  if (type.isSignlessInteger(32))
    return ElementKind::I32;
  if (type.isSignlessInteger(64))
    return ElementKind::I64;
  return std::nullopt;
}

bool mlir::nf::isFloatKind(ElementKind kind) {
  return kind == ElementKind::F32 || kind == ElementKind::F16 ||
         kind == ElementKind::BF16 || kind == ElementKind::F8E4M3FN ||
         kind == ElementKind::F8E5M2;
}

unsigned mlir::nf::getByteWidth(ElementKind kind) {
  switch (kind) {
  case ElementKind::I8:
  case ElementKind::F8E4M3FN:
  case ElementKind::F8E5M2:
    return 1;
  case ElementKind::F16:
  case ElementKind::BF16:
    return 2;
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::I64:
    return 8;
  }
  return 0;
}

double mlir::nf::roundToF32(double x) { return roundSumToF32(x, 0); }
double mlir::nf::roundToF16(double x) { return roundToFormat(x, 0, kF16); }
double mlir::nf::roundToBF16(double x) { return roundToFormat(x, 0, kBF16); }

double mlir::nf::roundSumToElement(double hi, double lo, ElementKind kind) {
  switch (kind) {
  case ElementKind::F32:
    return roundSumToF32(hi, lo);
  case ElementKind::F16:
    return roundToFormat(hi, lo, kF16);
  case ElementKind::BF16:
    return roundToFormat(hi, lo, kBF16);
  case ElementKind::F8E4M3FN:
    return saturate(roundToFormat(hi, lo, kF8E4M3), kF8E4M3Max);
  case ElementKind::F8E5M2:
    return saturate(roundToFormat(hi, lo, kF8E5M2), kF8E5M2Max);
  case ElementKind::I8: {
    if (std::isnan(hi))
      return 0;
    double rounded = std::nearbyint(hi); // ties to even
    // lo breaks an exact tie at hi, as in roundToFormat.
    if (lo != 0 && std::fabs(hi - std::trunc(hi)) == 0.5)
      rounded = lo > 0 ? std::ceil(hi) : std::floor(hi);
    return std::clamp(rounded, -128.0, 127.0);
  }
  case ElementKind::I32:
  case ElementKind::I64:
    break;
  }
  return hi;
}

double mlir::nf::roundToElement(double x, ElementKind kind) {
  return roundSumToElement(x, 0, kind);
}

uint16_t mlir::nf::f16BitsFromDouble(double x) {
  double r = roundToF16(x);
  uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  if (std::isnan(r))
    return sign | 0x7e00;
  if (std::isinf(r))
    return sign | 0x7c00;
  double a = std::fabs(r);
  if (a < std::ldexp(1.0, kF16.minExponent)) // subnormal or zero: m * 2^-24
    return sign | (uint16_t)std::ldexp(a, 24);
  int exponent = std::ilogb(a);
  auto significand = (uint16_t)std::ldexp(a, 10 - exponent); // 1024 + m
  return sign | (uint16_t)((exponent + 15) << 10) | (significand - 1024);
}

double mlir::nf::doubleFromF16Bits(uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int exponent = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  if (exponent == 0x1f)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

uint16_t mlir::nf::bf16BitsFromDouble(double x) {
  double r = roundToBF16(x);
  if (std::isnan(r))
    return (std::signbit(r) ? 0x8000 : 0) | 0x7fc0;
  // bf16 is the upper half of an f32, and r is exactly representable.
  auto f = (float)r;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return (uint16_t)(bits >> 16);
}

double mlir::nf::doubleFromBF16Bits(uint16_t bits) {
  uint32_t wide = (uint32_t)bits << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

/// The bits of `x` rounded to an fp8 format (the bias is 1 - minExponent):
/// subnormals are multiples of 2^(minExponent - fractionBits); NaN is 0x7f
/// with the sign of `x`.
static uint8_t f8BitsFromDouble(double x, ElementKind kind,
                                const FloatFormat &format) {
  double r = roundToElement(x, kind);
  uint8_t sign = std::signbit(r) ? 0x80 : 0;
  if (std::isnan(r))
    return sign | 0x7f;
  double a = std::fabs(r);
  if (a < std::ldexp(1.0, format.minExponent))
    return sign |
           (uint8_t)std::ldexp(a, format.fractionBits - format.minExponent);
  int exponent = std::ilogb(a);
  auto significand = (int)std::ldexp(a, format.fractionBits - exponent);
  return sign | (uint8_t)(((exponent + 1 - format.minExponent)
                           << format.fractionBits) |
                          (significand - (1 << format.fractionBits)));
}

/// The value of the magnitude bits (sign cleared) of a finite fp8 number.
static double f8Magnitude(uint8_t bits, const FloatFormat &format) {
  int exponent = bits >> format.fractionBits;
  int mantissa = bits & ((1 << format.fractionBits) - 1);
  if (exponent == 0)
    return std::ldexp(mantissa, format.minExponent - format.fractionBits);
  return std::ldexp((1 << format.fractionBits) + mantissa,
                    exponent + format.minExponent - 1 - format.fractionBits);
}

uint8_t mlir::nf::f8E4M3FNBitsFromDouble(double x) {
  return f8BitsFromDouble(x, ElementKind::F8E4M3FN, kF8E4M3);
}

double mlir::nf::doubleFromF8E4M3FNBits(uint8_t bits) {
  double sign = (bits & 0x80) ? -1.0 : 1.0;
  if ((bits & 0x7f) == 0x7f) // e4m3fn's only NaN; it has no infinity
    return std::numeric_limits<double>::quiet_NaN();
  return sign * f8Magnitude(bits & 0x7f, kF8E4M3);
}

uint8_t mlir::nf::f8E5M2BitsFromDouble(double x) {
  return f8BitsFromDouble(x, ElementKind::F8E5M2, kF8E5M2);
}

double mlir::nf::doubleFromF8E5M2Bits(uint8_t bits) {
  double sign = (bits & 0x80) ? -1.0 : 1.0;
  int exponent = (bits >> 2) & 0x1f;
  if (exponent == 0x1f)
    return (bits & 3) ? std::numeric_limits<double>::quiet_NaN()
                      : sign * std::numeric_limits<double>::infinity();
  return sign * f8Magnitude(bits & 0x7f, kF8E5M2);
}
