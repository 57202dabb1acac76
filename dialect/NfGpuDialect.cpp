//===- NfGpuDialect.cpp - nfgpu dialect and ops ---------------------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "dialect/NfGpuDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nfgpu;

#include "dialect/NfGpuDialect.cpp.inc"
#include "dialect/NfGpuEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/NfGpuAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "dialect/NfGpuOps.cpp.inc"

void NfGpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/NfGpuOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/NfGpuAttrs.cpp.inc"
      >();
}

LogicalResult RowReduceOp::verify() {
  size_t n = getPartials().size();
  if (n == 0)
    return emitOpError("needs at least one partial value");
  if (getKinds().size() != n)
    return emitOpError("has ")
           << n << " partial values but " << getKinds().size()
           << " combining kinds; expected one kind per value";
  // An exp_sum is rescaled by the maximum it follows.
  for (size_t i = 0; i < n; ++i) {
    auto kind = cast<CombiningKindAttr>(getKinds()[i]).getValue();
    if (kind == CombiningKind::ExpSum &&
        (i == 0 || cast<CombiningKindAttr>(getKinds()[i - 1]).getValue() !=
                       CombiningKind::Max))
      return emitOpError("value ")
             << i << " is an exp_sum, which must follow a max value";
  }
  // Signed: the I64Attr getters return them unsigned.
  int64_t threads = getThreadsPerRowAttr().getInt();
  if (threads < 1 || threads > 1024 || !llvm::isPowerOf2_64(threads))
    return emitOpError("threads_per_row must be a power of two from 1 to "
                       "1024, got ")
           << threads;
  int64_t rows = getRowsPerCtaAttr().getInt();
  if (rows < 1 || threads * rows > 1024)
    return emitOpError("rows_per_cta must be at least 1 and "
                       "threads_per_row * rows_per_cta at most 1024, got ")
           << rows << " rows of " << threads << " threads";
  int64_t cluster = getClusterSizeAttr().getInt();
  if (cluster < 1 || cluster > 16 || !llvm::isPowerOf2_64(cluster))
    return emitOpError("cluster_size must be a power of two from 1 to 16, "
                       "got ")
           << cluster;
  if ((cluster > 1) != (getRank() != nullptr))
    return emitOpError(cluster > 1 ? "spans a cluster and needs the CTA's "
                                     "`rank` in it"
                                   : "takes a `rank` only with cluster_size "
                                     "> 1");
  if (getClusterWait() && cluster == 1)
    return emitOpError("has cluster_wait but cluster_size is 1");
  if (getSlotAttr().getInt() < 0)
    return emitOpError("slot must be non-negative, got ")
           << getSlotAttr().getInt();
  return success();
}

LogicalResult GroupReduceOp::verify() {
  int64_t lanes = getLanes();
  if (lanes < 2 || lanes > 32 || !llvm::isPowerOf2_64(lanes))
    return emitOpError("lanes must be a power of two from 2 to 32, found ")
           << lanes;
  if (getKind() == CombiningKind::ExpSum)
    return emitOpError("combines sums or maxima, not exp_sum");
  return success();
}
