//===- NfDialect.cpp - nf dialect, types and enums ------------------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "dialect/NfDialect.h"
#include "dialect/NfOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nf;

#include "dialect/NfDialect.cpp.inc"
#include "dialect/NfEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/NfTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/NfAttrs.cpp.inc"

void NfDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/NfOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialect/NfTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/NfAttrs.cpp.inc"
      >();
}

bool mlir::nf::isNfFloat(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

bool mlir::nf::isNfQuantized(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type) ||
         type.isSignlessInteger(8);
}

bool mlir::nf::isNfRowElement(Type type) {
  return isNfFloat(type) || isNfQuantized(type);
}

Type mlir::nf::getRowElementType(Type type) {
  if (auto row = dyn_cast<RowType>(type))
    return row.getElementType();
  if (auto group = dyn_cast<GroupType>(type))
    return group.getElementType();
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
  if (!isNfRowElement(elementType))
    return emitError() << "row element type must be f32, f16, bf16, "
                          "f8E4M3FN, f8E5M2 or i8, found "
                       << elementType;
  return success();
}

LogicalResult GroupType::verify(function_ref<InFlightDiagnostic()> emitError,
                                Type elementType, int64_t size) {
  if (!elementType.isF32())
    return emitError() << "group values are f32, found " << elementType;
  if (size < 1 || !llvm::isPowerOf2_64(size))
    return emitError() << "group size must be a power of two, found " << size;
  return success();
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t threadsPerRow, int64_t rowsPerCta,
                                   int64_t chunk, int64_t chunksPerThread,
                                   int64_t rowsPerThread, int64_t clusterSize,
                                   bool staged, bool persistent,
                                   int64_t shortLaunchRows) {
  if (!llvm::isPowerOf2_64(threadsPerRow) || threadsPerRow > 1024 ||
      (threadsPerRow > 32 && threadsPerRow % 32 != 0))
    return emitError() << "threads_per_row must be a power of two <= 1024, "
                          "found "
                       << threadsPerRow;
  if (rowsPerCta < 1 || threadsPerRow * rowsPerCta > 1024)
    return emitError() << "a CTA of threads_per_row * rows_per_cta = "
                       << threadsPerRow << " * " << rowsPerCta
                       << " threads exceeds 1024 (or rows_per_cta < 1)";
  if (!llvm::isPowerOf2_64(chunk) || chunk > 16)
    return emitError() << "chunk must be a power of two <= 16, found " << chunk;
  if (chunksPerThread < 0)
    return emitError() << "chunks_per_thread must be >= 0 (0: streamed), "
                          "found "
                       << chunksPerThread;
  if (rowsPerThread < 1 || rowsPerThread > 8)
    return emitError() << "rows_per_thread must be 1 to 8, found "
                       << rowsPerThread;
  // 8 is the most CTAs a cluster may portably have.
  if (!llvm::isPowerOf2_64(clusterSize) || clusterSize > 8)
    return emitError() << "cluster_size must be 1, 2, 4 or 8, found "
                       << clusterSize;
  if (clusterSize > 1 &&
      (chunksPerThread == 0 || rowsPerCta != 1 || rowsPerThread != 1))
    return emitError() << "a cluster schedule (cluster_size = " << clusterSize
                       << ") holds one register-resident row per CTA: it "
                          "needs chunks_per_thread > 0 and rows_per_cta = "
                          "rows_per_thread = 1";
  if (staged && (chunksPerThread == 0 || rowsPerCta != 1 || rowsPerThread != 1))
    return emitError() << "a staged schedule holds one row per CTA in shared "
                          "memory: it needs chunks_per_thread > 0 and "
                          "rows_per_cta = rows_per_thread = 1";
  if (persistent &&
      (chunksPerThread == 0 || (rowsPerCta != 1 && threadsPerRow > 32) ||
       rowsPerThread != 1 || clusterSize != 1 || staged))
    return emitError() << "a persistent schedule walks one register-resident "
                          "row per row group at a time: it needs "
                          "chunks_per_thread > 0, rows_per_thread = "
                          "cluster_size = 1, no staged, and rows_per_cta = 1 "
                          "for rows of more than 32 threads";
  if (shortLaunchRows < 0)
    return emitError() << "short_launch_rows must be >= 0 (0: no persistent "
                          "twin), found "
                       << shortLaunchRows;
  if (shortLaunchRows > 0 && (persistent || chunksPerThread == 0 ||
                              (rowsPerCta != 1 && threadsPerRow > 32) ||
                              rowsPerThread != 1 || clusterSize != 1 || staged))
    return emitError() << "short_launch_rows gives a schedule that is not "
                          "persistent a persistent twin: it needs "
                          "persistent = false and a schedule that could be "
                          "persistent";
  return success();
}

int64_t ScheduleAttr::getCapacity() const {
  return getThreadsPerRow() * getChunksPerThread() * getChunk() *
         getClusterSize();
}

LogicalResult VariantAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef name, bool vectorized, int64_t maxD,
                                  ScheduleAttr schedule, bool peeled,
                                  int64_t maxRowsPerCta, bool l2Prefetch,
                                  bool jointRows, bool thirdCta) {
  if (name.empty() ||
      !llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return emitError() << "variant name must be letters, digits and '_', "
                          "found '"
                       << name << "'";
  if (maxD < 0)
    return emitError() << "max_d must be >= 0 (0: any D), found " << maxD;
  if (!schedule)
    return emitError() << "a variant needs a schedule";
  int64_t capacity = schedule.getCapacity();
  if (capacity > 0 && (maxD == 0 || maxD > capacity))
    return emitError() << "variant '" << name
                       << "' keeps rows in registers, at most " << capacity
                       << " elements, so max_d must be 1 to " << capacity
                       << ", found " << maxD;
  if (peeled && (vectorized || capacity == 0 || schedule.getChunk() < 2 ||
                 schedule.getClusterSize() != 1))
    return emitError() << "variant '" << name
                       << "' is peeled, which needs vectorized = false and a "
                          "register-resident schedule of chunks of two or "
                          "more elements, without a cluster";
  // A peeled row may start chunk - 1 elements past an aligned address and
  // then spans that many elements more.
  if (peeled && maxD > capacity - schedule.getChunk() + 1)
    return emitError() << "variant '" << name << "' is peeled: a row may start "
                       << schedule.getChunk() - 1
                       << " elements into a chunk, so max_d must be at most "
                       << capacity - schedule.getChunk() + 1 << ", found "
                       << maxD;
  if (maxRowsPerCta < 0)
    return emitError() << "max_rows_per_cta must be >= 0 (0: any launch), "
                          "found "
                       << maxRowsPerCta;
  if (maxRowsPerCta > 0 && (!vectorized || !schedule.getPersistent()))
    return emitError() << "variant '" << name
                       << "' has max_rows_per_cta, which only a vectorized "
                          "variant of a persistent schedule may have (its "
                          "CTAs walk the rows)";
  // The flags for the lowering (see the attribute's description): each
  // where the variant's rows are held in the registers the flag is about.
  bool copiedAhead =
      vectorized && (schedule.getStaged() || schedule.getPersistent());
  if (l2Prefetch && (!(vectorized || peeled) || capacity == 0 ||
                     schedule.getClusterSize() != 1 || copiedAhead))
    return emitError() << "variant '" << name
                       << "' has l2_prefetch, which only a vectorized or "
                          "peeled variant of a register-resident schedule "
                          "without a cluster may have, not a vectorized "
                          "variant of a staged or persistent one";
  if (jointRows &&
      (!vectorized || capacity == 0 || schedule.getRowsPerThread() < 2 ||
       schedule.getPersistent()))
    return emitError() << "variant '" << name
                       << "' has joint_rows, which only a vectorized variant "
                          "of a register-resident schedule of two or more "
                          "rows per thread, not persistent, may have";
  if (thirdCta &&
      (!vectorized || capacity == 0 || schedule.getThreadsPerRow() != 512 ||
       schedule.getRowsPerThread() != 1 || schedule.getClusterSize() != 1 ||
       schedule.getStaged()))
    return emitError() << "variant '" << name
                       << "' has third_cta, which only a vectorized variant "
                          "of a register-resident schedule of 512 threads "
                          "and one row per thread, neither staged nor in a "
                          "cluster, may have";
  return success();
}
