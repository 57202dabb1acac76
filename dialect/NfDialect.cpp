//===- NfDialect.cpp - nf dialect, types and enums ------------------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "dialect/NfDialect.h"
#include "dialect/NfOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;

#include "dialect/NfDialect.cpp.inc"
#include "dialect/NfEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/NfTypes.cpp.inc"

void NfDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/NfOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialect/NfTypes.cpp.inc"
      >();
}

bool mlir::nf::isNfFloat(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

Type mlir::nf::getRowElementType(Type type) {
  if (auto row = dyn_cast<RowType>(type))
    return row.getElementType();
  return type;
}

ArrayRef<StringRef> mlir::nf::getBroadcastShape(BroadcastKind kind) {
  static const StringRef one[] = {"1"};
  static const StringRef d[] = {"D"};
  static const StringRef bd[] = {"B", "D"};
  static const StringRef b1d[] = {"B", "1", "D"};
  static const StringRef bsd[] = {"B", "S", "D"};
  static const StringRef bf1d[] = {"B", "F", "1", "D"};
  switch (kind) {
  case BroadcastKind::One:
    return one;
  case BroadcastKind::D:
    return d;
  case BroadcastKind::BD:
    return bd;
  case BroadcastKind::B1D:
    return b1d;
  case BroadcastKind::BSD:
    return bsd;
  case BroadcastKind::BF1D:
    return bf1d;
  }
  llvm_unreachable("unknown broadcast kind");
}

std::string mlir::nf::formatBroadcastKind(BroadcastKind kind) {
  std::string text = "[";
  llvm::interleave(
      getBroadcastShape(kind), [&](StringRef dim) { text += dim.str(); },
      [&] { text += ", "; });
  return text + "]";
}

LogicalResult RowType::verify(function_ref<InFlightDiagnostic()> emitError,
                              Type elementType) {
  if (!isNfFloat(elementType))
    return emitError() << "row element type must be f32, f16 or bf16, found "
                       << elementType;
  return success();
}
