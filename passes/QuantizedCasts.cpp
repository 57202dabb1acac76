//===- QuantizedCasts.cpp - nf.cast to and from fp8 and int8 --------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "passes/QuantizedCasts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::nf;

Type mlir::nf::getStorageType(Type element) {
  if (isa<Float8E4M3FNType, Float8E5M2Type>(element))
    return IntegerType::get(element.getContext(), 8);
  return element;
}

namespace {
/// Builds the casts of one vector of `n` elements (a chunk).
class CastEmitter {
public:
  CastEmitter(OpBuilder &b, Location loc, int64_t n, bool hardwareFp8)
      : b(b), loc(loc), n(n), hardwareFp8(hardwareFp8) {}

  Value quantize(Value v, Type element);
  Value dequantize(Value v, Type element);

private:
  Value quantizeFp8Bits(Value x, Type element);

  VectorType vecOf(Type element) { return VectorType::get({n}, element); }
  Value splat(Value scalar) {
    return vector::BroadcastOp::create(b, loc, vecOf(scalar.getType()), scalar);
  }
  Value f32c(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat((float)v));
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }

  OpBuilder &b;
  Location loc;
  int64_t n;
  bool hardwareFp8;
};
} // namespace

/// nf.cast of an f32 vector to a quantized type (NfOps.td: round to nearest
/// even, saturate to the finite range; NaN is 0 for i8 and NaN for fp8).
Value CastEmitter::quantize(Value v, Type element) {
  auto type = cast<VectorType>(v.getType());
  int64_t n = type.getNumElements();
  Type i8 = b.getI8Type(), i16 = b.getI16Type(), i32 = b.getI32Type();
  auto elementAt = [&](int64_t i) -> Value {
    return vector::ExtractOp::create(b, loc, v, i);
  };
  if (element.isSignlessInteger(8)) {
    // f2i.rn is cvt.rni.s32.f32: ties to even, NaN to 0, saturating.
    SmallVector<Value> bytes;
    for (int64_t i = 0; i < n; ++i) {
      Value q = LLVM::CallIntrinsicOp::create(
                    b, loc, i32, b.getStringAttr("llvm.nvvm.f2i.rn"),
                    ValueRange{elementAt(i)})
                    .getResult(0);
      q = arith::MaxSIOp::create(
          b, loc, q, arith::ConstantIntOp::create(b, loc, -128, 32));
      q = arith::MinSIOp::create(b, loc, q,
                                 arith::ConstantIntOp::create(b, loc, 127, 32));
      bytes.push_back(arith::TruncIOp::create(b, loc, i8, q));
    }
    return vector::FromElementsOp::create(b, loc, vecOf(i8), bytes);
  }
  if (!hardwareFp8) {
    SmallVector<Value> bytes;
    for (int64_t i = 0; i < n; ++i)
      bytes.push_back(quantizeFp8Bits(elementAt(i), element));
    return vector::FromElementsOp::create(b, loc, vecOf(i8), bytes);
  }
  // cvt.rn.satfinite.{e4m3,e5m2}x2.f32 converts a pair: the first operand
  // goes to the high byte, so element 2k is the second.
  StringRef intrinsic = isa<Float8E4M3FNType>(element)
                            ? "llvm.nvvm.ff.to.e4m3x2.rn"
                            : "llvm.nvvm.ff.to.e5m2x2.rn";
  auto pair = [&](Value lo, Value hi) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, i16, b.getStringAttr(intrinsic), ValueRange{hi, lo})
        .getResult(0);
  };
  if (n % 2 != 0) {
    SmallVector<Value> bytes;
    for (int64_t i = 0; i < n; ++i)
      bytes.push_back(
          arith::TruncIOp::create(b, loc, i8, pair(elementAt(i), f32c(0.0))));
    return vector::FromElementsOp::create(b, loc, vecOf(i8), bytes);
  }
  SmallVector<Value> pairs;
  for (int64_t i = 0; i < n; i += 2)
    pairs.push_back(pair(elementAt(i), elementAt(i + 1)));
  Value packed = vector::FromElementsOp::create(
      b, loc, VectorType::get({n / 2}, i16), pairs);
  return vector::BitCastOp::create(b, loc, vecOf(i8), packed);
}

/// The fp8 bits of one f32 with integer arithmetic, for targets without the
/// conversion instruction; the same results as cvt.rn.satfinite. |x| is
/// clamped to the largest finite value on its bits (positive floats order as
/// integers), rounded to 3 (e4m3) or 2 (e5m2) fraction bits by adding half
/// an ulp minus one plus the kept lsb (ties to even) and rebiased; below the
/// smallest normal, the subnormal step divides |x| exactly and cvt.rni
/// rounds the quotient (it reaches the smallest normal's code when it
/// rounds up).
Value CastEmitter::quantizeFp8Bits(Value x, Type element) {
  bool e4m3 = isa<Float8E4M3FNType>(element);
  int fraction = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  int64_t maxBits = e4m3 ? 0x43E00000 : 0x47600000;       // 448, 57344
  int64_t minNormalBits = e4m3 ? 0x3C800000 : 0x38800000; // 2^-6, 2^-14
  double subnormalScale = e4m3 ? 512.0 : 65536.0;         // 2^9, 2^16
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(24)), c(0x80));
  Value magnitude = arith::AndIOp::create(b, loc, bits, c(0x7FFFFFFF));
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      magnitude, c(0x7F800000));
  magnitude = arith::MinUIOp::create(b, loc, magnitude, c(maxBits));
  int shift = 23 - fraction;
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, magnitude, c(shift)), c(1));
  Value rounded = add(add(magnitude, c((1 << (shift - 1)) - 1)), lsb);
  Value normal = arith::SubIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, rounded, c(shift)),
      c((127 - bias) << fraction));
  Value scaled = arith::MulFOp::create(
      b, loc, arith::BitcastOp::create(b, loc, b.getF32Type(), magnitude),
      f32c(subnormalScale));
  Value subnormal =
      LLVM::CallIntrinsicOp::create(
          b, loc, i32, b.getStringAttr("llvm.nvvm.f2i.rn"), ValueRange{scaled})
          .getResult(0);
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            magnitude, c(minNormalBits));
  Value code = select(isSubnormal, subnormal, normal);
  code = select(isNaN, c(0x7F), code);
  code = arith::OrIOp::create(b, loc, code, sign);
  return arith::TruncIOp::create(b, loc, b.getI8Type(), code);
}

/// nf.cast of a quantized vector (its bits, for fp8) to f32; exact.
Value CastEmitter::dequantize(Value v, Type element) {
  Type f32 = b.getF32Type(), f16 = b.getF16Type(), i16 = b.getI16Type();
  if (element.isSignlessInteger(8))
    return arith::SIToFPOp::create(b, loc, vecOf(f32), v);
  auto splatI16 = [&](int64_t value) {
    return splat(arith::ConstantIntOp::create(b, loc, value, 16));
  };
  Value wide = arith::ExtUIOp::create(b, loc, vecOf(i16), v);
  if (isa<Float8E5M2Type>(element)) {
    // e5m2 is the high byte of an f16: NaN, inf and subnormals included.
    Value half = arith::BitcastOp::create(
        b, loc, vecOf(f16), arith::ShLIOp::create(b, loc, wide, splatI16(8)));
    return arith::ExtFOp::create(b, loc, vecOf(f32), half);
  }
  // e4m3's exponent and fraction fields placed in an f16 give the value
  // times 2^-8 (biases 7 and 15), subnormals too; 0x7f is NaN.
  Value magnitude = arith::AndIOp::create(b, loc, wide, splatI16(0x7F));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, wide, splatI16(0x80)), splatI16(8));
  Value half = arith::BitcastOp::create(
      b, loc, vecOf(f16),
      arith::OrIOp::create(
          b, loc, sign, arith::ShLIOp::create(b, loc, magnitude, splatI16(7))));
  Value value = arith::MulFOp::create(
      b, loc, arith::ExtFOp::create(b, loc, vecOf(f32), half),
      splat(f32c(256.0)));
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      magnitude, splatI16(0x7F));
  return select(isNaN, splat(f32c(std::numeric_limits<double>::quiet_NaN())),
                value);
}

Value mlir::nf::emitQuantize(OpBuilder &b, Location loc, Value v, Type element,
                             bool hardwareFp8) {
  int64_t n = cast<VectorType>(v.getType()).getNumElements();
  return CastEmitter(b, loc, n, hardwareFp8).quantize(v, element);
}

Value mlir::nf::emitDequantize(OpBuilder &b, Location loc, Value v,
                               Type element) {
  int64_t n = cast<VectorType>(v.getType()).getNumElements();
  return CastEmitter(b, loc, n, false).dequantize(v, element);
}
