//===- NfDialect.h - nf dialect, types and enums ----------------*- C++ -*-===//
//
// Part of normfuse. Include this for the dialect, `!nf.row` and the enums;
// include NfOps.h for the operations.
//
//===----------------------------------------------------------------------===//

#ifndef NF_DIALECT_NFDIALECT_H
#define NF_DIALECT_NFDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "dialect/NfDialect.h.inc"
#include "dialect/NfEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/NfTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/NfAttrs.h.inc"

namespace mlir::nf {

/// True for the element types of arithmetic rows and scalars: f32, f16,
/// bf16.
bool isNfFloat(Type type);

/// True for the quantized row element types: f8E4M3FN, f8E5M2, i8. Rows of
/// them are loaded, stored and cast to or from f32 only.
bool isNfQuantized(Type type);

/// True for every row element type: a float or a quantized one.
bool isNfRowElement(Type type);

/// The element type of a row or a group value, or the type itself for a
/// per-row scalar.
Type getRowElementType(Type type);

/// The shape a broadcast kind expects of its tensor, as dimension letters
/// ("B", "S", "F", "D", or "1"), e.g. {"B", "1", "D"} for B1D.
ArrayRef<StringRef> getBroadcastShape(BroadcastKind kind);

/// "[B, 1, D]" for B1D: the spelling the IR uses.
std::string formatBroadcastKind(BroadcastKind kind);

} // namespace mlir::nf

#endif // NF_DIALECT_NFDIALECT_H
