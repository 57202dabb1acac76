//===- Schedule.cpp - -nf-select-schedule and the schedule attribute ------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "passes/Schedule.h"
#include "dialect/Chains.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFSELECTSCHEDULE
#include "passes/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

StringRef Schedule::getKindName() const {
  if (!isRegisterResident())
    return stageRows ? "staged" : "streaming";
  if (threadsPerRow < 32)
    return "multi_row";
  if (threadsPerRow == 32)
    return "warp";
  return clusterSize > 1 ? "cluster" : "cta";
}

DictionaryAttr Schedule::toAttr(MLIRContext *ctx) const {
  Builder b(ctx);
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("kind", b.getStringAttr(getKindName())),
      b.getNamedAttr("threads_per_row", b.getI64IntegerAttr(threadsPerRow)),
      b.getNamedAttr("rows_per_cta", b.getI64IntegerAttr(rowsPerCta)),
      b.getNamedAttr("chunk", b.getI64IntegerAttr(chunk)),
      b.getNamedAttr("chunks_per_thread", b.getI64IntegerAttr(chunksPerThread)),
  };
  if (asyncCopy)
    attrs.push_back(b.getNamedAttr("async_copy", b.getBoolAttr(true)));
  if (stageRows)
    attrs.push_back(b.getNamedAttr("stage_rows", b.getBoolAttr(true)));
  if (clusterSize != 1)
    attrs.push_back(
        b.getNamedAttr("cluster_size", b.getI64IntegerAttr(clusterSize)));
  // Absent means 1.
  if (rowsPerThread != 1)
    attrs.push_back(
        b.getNamedAttr("rows_per_thread", b.getI64IntegerAttr(rowsPerThread)));
  return b.getDictionaryAttr(attrs);
}

FailureOr<Schedule> Schedule::fromKernel(KernelOp kernel) {
  auto dict = kernel->getAttrOfType<DictionaryAttr>(getAttrName());
  if (!dict)
    return kernel.emitOpError("has no ")
           << getAttrName() << " attribute; run -nf-select-schedule first";
  Schedule s;
  auto get = [&](StringRef name, int64_t &out) {
    auto attr = dict.getAs<IntegerAttr>(name);
    if (!attr)
      return false;
    out = attr.getInt();
    return true;
  };
  if (!get("threads_per_row", s.threadsPerRow) ||
      !get("rows_per_cta", s.rowsPerCta) || !get("chunk", s.chunk) ||
      !get("chunks_per_thread", s.chunksPerThread))
    return kernel.emitOpError("malformed ") << getAttrName() << ": " << dict;
  if ((dict.get("rows_per_thread") &&
       !get("rows_per_thread", s.rowsPerThread)) ||
      (dict.get("cluster_size") && !get("cluster_size", s.clusterSize)))
    return kernel.emitOpError("malformed ") << getAttrName() << ": " << dict;
  for (auto [name, field] :
       {std::pair<StringRef, bool *>{"async_copy", &s.asyncCopy},
        {"stage_rows", &s.stageRows}}) {
    Attribute attr = dict.get(name);
    if (!attr)
      continue;
    auto flag = dyn_cast<BoolAttr>(attr);
    if (!flag)
      return kernel.emitOpError("malformed ") << getAttrName() << ": " << dict;
    *field = flag.getValue();
  }
  if (!llvm::isPowerOf2_64(s.threadsPerRow) || s.threadsPerRow > 1024 ||
      s.rowsPerCta < 1 || s.blockSize() > 1024 ||
      (s.threadsPerRow > 32 && s.threadsPerRow % 32 != 0) ||
      !llvm::isPowerOf2_64(s.chunk) || s.chunksPerThread < 0 ||
      s.rowsPerThread < 1 || s.rowsPerThread > 8 ||
      (s.stageRows && s.isRegisterResident()) ||
      !llvm::isPowerOf2_64(s.clusterSize) || s.clusterSize > 8 ||
      (s.clusterSize > 1 &&
       (!s.isRegisterResident() || s.threadsPerRow < 32 || s.rowsPerCta != 1 ||
        s.rowsPerThread != 1 || s.asyncCopy)))
    return kernel.emitOpError("invalid ")
           << getAttrName() << " " << dict
           << ": threads_per_row must be a power of two <= 1024, the block "
              "(threads_per_row * rows_per_cta) at most 1024 threads, "
              "rows_per_thread 1 to 8, stage_rows only on a streaming "
              "schedule, cluster_size a power of two <= 8 and only for one "
              "register-resident row of at least a warp per CTA";
  return s;
}

int64_t mlir::nf::computeChunkElements(KernelOp kernel) {
  unsigned narrowest = 4;
  auto consider = [&](Type type) {
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      if (isNfFloat(tensor.getElementType()))
        narrowest = std::min(narrowest, tensor.getElementTypeBitWidth() / 8);
  };
  kernel.walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op))
      consider(load.getSource().getType());
    else if (auto select = dyn_cast<SelectLoadOp>(op))
      consider(select.getFirst().getType());
  });
  for (Type type : kernel.getResultTypes())
    consider(type);
  return 16 / narrowest;
}

SmallVector<Value> mlir::nf::getStagedRowTensors(const Chain &chain) {
  // Everything a reduction reads, transitively, within the chain.
  llvm::SmallPtrSet<Operation *, 16> feeds;
  SmallVector<Operation *> work;
  for (Operation *op : chain.ops)
    if (isa<ReduceOp>(op))
      work.push_back(op);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!feeds.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
  }
  SmallVector<Value> tensors;
  for (Operation *op : chain.ops)
    if (auto load = dyn_cast<LoadOp>(op))
      if (load.getKind() == BroadcastKind::BSD && feeds.contains(op) &&
          !llvm::is_contained(tensors, load.getSource()))
        tensors.push_back(load.getSource());
  return tensors;
}

int64_t mlir::nf::getStageBytesPerElement(KernelOp kernel,
                                          const Schedule &schedule) {
  if (!schedule.stageRows)
    return 0;
  ChainAnalysis chains(kernel);
  int64_t most = 0;
  for (const Chain &chain : chains.getChains()) {
    int64_t bytes = 0;
    for (Value tensor : getStagedRowTensors(chain))
      bytes +=
          cast<RankedTensorType>(tensor.getType()).getElementTypeBitWidth() / 8;
    most = std::max(most, bytes);
  }
  return most;
}

std::optional<int64_t> mlir::nf::getStaticRowLength(KernelOp kernel) {
  ChainAnalysis chains(kernel);
  std::optional<int64_t> length;
  for (const Chain &chain : chains.getChains()) {
    std::optional<int64_t> chainLength;
    for (const DimUse &use : chain.dims)
      if (use.symbol == DimSymbol::D && !use.type.isDynamicDim(use.dim))
        chainLength = use.type.getDimSize(use.dim);
    if (!chainLength || (length && *length != *chainLength))
      return std::nullopt;
    length = chainLength;
  }
  return length;
}

/// The most threads a register-resident row gets by default: a CTA of 1024
/// threads leaves each at most 64 registers, too few for 4 chunks of row
/// and their operands (ptxas spilled 56 to 180 bytes at D = 24576 and
/// 32768 with 1024 threads); 512 threads keep 128.
static constexpr int64_t kMaxRegisterRowThreads = 512;

namespace {
struct NfSelectSchedulePass
    : nf::impl::NfSelectScheduleBase<NfSelectSchedulePass> {
  using NfSelectScheduleBase::NfSelectScheduleBase;

  void runOnOperation() override {
    getOperation()->walk([&](KernelOp kernel) {
      FailureOr<Schedule> schedule = select(kernel);
      if (failed(schedule)) {
        signalPassFailure();
        return;
      }
      kernel->setAttr(Schedule::getAttrName(),
                      schedule->toAttr(kernel.getContext()));
    });
  }

  FailureOr<Schedule> select(KernelOp kernel) {
    Schedule s;
    s.chunk = computeChunkElements(kernel);
    std::optional<int64_t> d = getStaticRowLength(kernel);
    bool streaming = forceStreaming || !d;
    bool tooLong = false;
    if (!streaming) {
      int64_t vectors = llvm::divideCeil(*d, s.chunk);
      if (threadsPerRow > 0) {
        s.threadsPerRow = threadsPerRow;
      } else {
        // Fewest threads that keep at most maxChunks chunks per thread:
        // the row lives in registers and a reduction needs few shuffles.
        // At least 16 threads (or one per chunk): short rows such as a
        // 128-wide attention head then take one chunk per thread and
        // several rows share a warp.
        s.threadsPerRow = std::min<int64_t>(16, llvm::PowerOf2Ceil(vectors));
        while (s.threadsPerRow < kMaxRegisterRowThreads &&
               (int64_t)llvm::divideCeil(vectors, s.threadsPerRow) > maxChunks)
          s.threadsPerRow *= 2;
      }
      s.chunksPerThread = llvm::divideCeil(vectors, s.threadsPerRow);
      // Too long a row for one CTA's registers: share it among the CTAs of
      // a cluster where the target has them, else stream it.
      // Not with rotary embedding: a partner element may live in another
      // CTA, and an in-place result would race with its read.
      bool rope = false;
      kernel.walk([&](RopeOp) { rope = true; });
      int64_t clusterLimit = rope ? 1 : maxCluster;
      // Cluster CTAs of 256 threads: with 512, the cluster's own
      // registers (rank, remote addresses) on top of 4 chunks passed the
      // 128 a 512-thread CTA allows (ptxas spilled 28 bytes).
      if (s.chunksPerThread > maxChunks && threadsPerRow == 0) {
        const int64_t ctaThreads = 256;
        auto chunksWith = [&](int64_t cluster) {
          return (int64_t)llvm::divideCeil(vectors, ctaThreads * cluster);
        };
        int64_t cluster = 2;
        while (cluster < clusterLimit && chunksWith(cluster) > maxChunks)
          cluster *= 2;
        if (cluster <= clusterLimit && chunksWith(cluster) <= maxChunks) {
          s.threadsPerRow = ctaThreads;
          s.clusterSize = cluster;
          s.chunksPerThread = chunksWith(cluster);
        } else {
          streaming = tooLong = true;
        }
      }
    }
    // Streamed rows: 256 threads, measured best for a dynamic D at
    // D = 3072 on an H100 (77% of the copy floor against 66% with 512 and
    // 35% with 1024); 1024 for a static D too long for registers
    // (D = 49152 / 65536: 61 / 75% against 44 / 69% with 256;
    // docs/benchmarks.md).
    if (streaming) {
      s.clusterSize = 1;
      s.threadsPerRow = threadsPerRow > 0 ? (int64_t)threadsPerRow
                        : tooLong         ? 1024
                                          : 256;
      s.chunksPerThread = 0;
    }
    // Several rows per thread only where the rows live in registers (a
    // streamed row is re-read per reduction anyway). By default two for
    // rows shorter than a warp: a 128-wide head is one 16-byte chunk per
    // thread, so the second row's loads cost few registers and overlap the
    // first row's shuffles; on an H100 QK-norm+RoPE (T=4096, H=24/32) went
    // from 75.5/73.3% to 85.3/87.7% of the copy floor. Longer rows hold
    // 2-4 chunks per thread already; there it measured slower (register
    // pressure; docs/benchmarks.md).
    if (streaming)
      s.rowsPerThread = 1;
    else if (rowsPerThread > 0)
      s.rowsPerThread = rowsPerThread;
    else if (asyncCopy)
      s.rowsPerThread = 4;
    else
      s.rowsPerThread = s.threadsPerRow < 32 ? 2 : 1;
    s.asyncCopy = asyncCopy && !streaming;
    // Staging only where a reduction reads [B, S, D] rows.
    s.stageRows = stageRows && streaming;
    if (s.stageRows && getStageBytesPerElement(kernel, s) == 0)
      s.stageRows = false;
    // Blocks of 128 threads: on an H100 this beat 256 for D = 3072 rows
    // (92.7% against 88.5% of the copy floor, docs/Results.md), more
    // resident CTAs hiding more of each row's reduction latency.
    s.rowsPerCta = rowsPerCta > 0 ? (int64_t)rowsPerCta
                                  : std::max<int64_t>(1, 128 / s.threadsPerRow);
    // A cluster shares one row per CTA; forced options that ask otherwise
    // get the streaming schedule instead.
    if (s.clusterSize > 1 &&
        (s.rowsPerThread != 1 || s.asyncCopy || s.rowsPerCta != 1)) {
      s.clusterSize = 1;
      s.chunksPerThread = 0;
      s.threadsPerRow = 1024;
      s.rowsPerThread = 1;
      s.asyncCopy = false;
      s.rowsPerCta = rowsPerCta > 0 ? (int64_t)rowsPerCta : 1;
    }
    if (rowsPerThread < 0 || rowsPerThread > 8)
      return kernel.emitOpError("rows-per-thread must be 1 to 8, found ")
             << rowsPerThread;
    if (maxCluster < 1 || maxCluster > 8 || !llvm::isPowerOf2_64(maxCluster))
      return kernel.emitOpError("max-cluster must be 1, 2, 4 or 8, found ")
             << maxCluster;
    if (!llvm::isPowerOf2_64(s.threadsPerRow) || s.threadsPerRow > 1024 ||
        s.blockSize() > 1024)
      return kernel.emitOpError("schedule of ")
             << s.threadsPerRow << " threads per row x " << s.rowsPerCta
             << " rows per CTA is not a power-of-two row group in a block of "
                "at most 1024 threads";
    return s;
  }
};
} // namespace
