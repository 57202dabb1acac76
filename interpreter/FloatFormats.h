//===- FloatFormats.h - rounding to f32, f16 and bf16 -----------*- C++ -*-===//
//
// Part of normfuse.
//
// The interpreter keeps every value in a double and models the element type
// of an op by rounding its exact result once, round to nearest, ties to even.
// These helpers do that rounding directly from double (never through float,
// which would round twice), including subnormals, overflow to infinity and
// NaN, and convert to and from the bit patterns stored in binary files.
//
//===----------------------------------------------------------------------===//

#ifndef NF_INTERPRETER_FLOATFORMATS_H
#define NF_INTERPRETER_FLOATFORMATS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir {
class Type;
namespace nf {

/// The element types a kernel argument or result can have.
enum class ElementKind { F32, F16, BF16, I8, I32, I64, F8E4M3FN, F8E5M2 };

/// "f32", "f16", "bf16", "i8", "i32", "i64", "f8E4M3FN", "f8E5M2" (MLIR's
/// spelling of the types).
llvm::StringRef stringifyElementKind(ElementKind kind);
std::optional<ElementKind> parseElementKind(llvm::StringRef text);
/// The kind of an f32/f16/bf16/f8E4M3FN/f8E5M2/i8/i32/i64 type; nullopt for
/// anything else.
std::optional<ElementKind> getElementKind(Type type);
/// The float kinds, fp8 included (their values are read and printed as
/// floats).
bool isFloatKind(ElementKind kind);
/// Bytes of one element in a binary file.
unsigned getByteWidth(ElementKind kind);

/// `x` rounded to nearest even in the format (NaN stays NaN, values beyond
/// the largest finite number become infinities, signed zeros are kept).
double roundToF32(double x);
double roundToF16(double x);
double roundToBF16(double x);

/// Rounds the exact sum `hi + lo` once, where `hi` is the double nearest to
/// it and `|lo| <= ulp(hi) / 2` (the output of TwoSum). Exact ties of the
/// target format at `hi` are broken by the sign of `lo`, so a sum of two
/// exact products is rounded correctly, not twice.
double roundSumToElement(double hi, double lo, ElementKind kind);

/// `x` rounded to an element kind. f32/f16/bf16 as above. The quantized
/// kinds saturate (nf.cast): f8E4M3FN and f8E5M2 round to nearest even and
/// clamp to +-448 and +-57344 (+-inf too; NaN stays NaN); i8 rounds to the
/// nearest integer, ties to even, clamps to [-128, 127] and maps NaN to 0.
/// i32 and i64 are returned unchanged.
double roundToElement(double x, ElementKind kind);

/// Bit patterns; the `from double` directions round first. NaN encodes as
/// the quiet NaN of the format with the sign of `x`.
uint16_t f16BitsFromDouble(double x);
double doubleFromF16Bits(uint16_t bits);
uint16_t bf16BitsFromDouble(double x);
double doubleFromBF16Bits(uint16_t bits);
/// fp8: NaN encodes as 0x7f with the sign of `x` (f8E4M3FN's only NaN).
uint8_t f8E4M3FNBitsFromDouble(double x);
double doubleFromF8E4M3FNBits(uint8_t bits);
uint8_t f8E5M2BitsFromDouble(double x);
double doubleFromF8E5M2Bits(uint8_t bits);

} // namespace nf
} // namespace mlir

#endif // NF_INTERPRETER_FLOATFORMATS_H
