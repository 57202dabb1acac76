//===- QuantizedCasts.h - nf.cast to and from fp8 and int8 ------*- C++ -*-===//
//
// Part of normfuse. The GPU lowering of nf.cast for the quantized row types
// (f8E4M3FN, f8E5M2, i8), on vectors of one chunk: the rounding and
// saturation NfOps.td states, in the instructions each target has.
//
//===----------------------------------------------------------------------===//

#ifndef NF_PASSES_QUANTIZEDCASTS_H
#define NF_PASSES_QUANTIZEDCASTS_H

#include "mlir/IR/Builders.h"

namespace mlir::nf {

/// How elements of a row type are held in the generated code: the fp8
/// types as their i8 bit patterns (nf.cast converts them explicitly), the
/// others as themselves.
Type getStorageType(Type element);

/// nf.cast of an f32 vector to `element` (i8, or fp8 as i8 bits).
Value emitQuantize(OpBuilder &b, Location loc, Value v, Type element,
                   bool hardwareFp8);

/// nf.cast of a vector of `element` (fp8 as i8 bits) to f32; exact.
Value emitDequantize(OpBuilder &b, Location loc, Value v, Type element);

} // namespace mlir::nf

#endif // NF_PASSES_QUANTIZEDCASTS_H
