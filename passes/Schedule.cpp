//===- Schedule.cpp - the schedule attribute and the kernel queries ------===//
//
// Part of normfuse. Schedule's conversions to and from #nf.schedule, and
// what the passes ask of a kernel and a schedule (chunk size, row inputs
// and reductions, staging and persistence bounds). The rules that choose
// schedules are -nf-select-schedule's (SelectSchedule.cpp).
//
//===----------------------------------------------------------------------===//

#include "passes/Schedule.h"
#include "dialect/Chains.h"
#include "passes/Passes.h"
#include "passes/QuantizedCasts.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::nf;

StringRef Schedule::getKindName() const {
  if (!isRegisterResident())
    return "streaming";
  if (clusterSize > 1)
    return "cluster";
  // Before the row's width: the runtime launches a persistent variant by
  // its kind (fewer CTAs than rows).
  if (persistent)
    return "persistent";
  if (threadsPerRow < 32)
    return "multi_row";
  if (threadsPerRow == 32)
    return "warp";
  return "cta";
}

ScheduleAttr Schedule::toAttr(MLIRContext *ctx) const {
  return ScheduleAttr::get(ctx, threadsPerRow, rowsPerCta, chunk,
                           chunksPerThread, rowsPerThread, clusterSize, staged,
                           persistent, shortLaunchRows);
}

Schedule Schedule::fromAttr(ScheduleAttr attr) {
  Schedule s;
  s.threadsPerRow = attr.getThreadsPerRow();
  s.rowsPerCta = attr.getRowsPerCta();
  s.chunk = attr.getChunk();
  s.chunksPerThread = attr.getChunksPerThread();
  s.rowsPerThread = attr.getRowsPerThread();
  s.clusterSize = attr.getClusterSize();
  s.staged = attr.getStaged();
  s.persistent = attr.getPersistent();
  s.shortLaunchRows = attr.getShortLaunchRows();
  return s;
}

FailureOr<SmallVector<VariantAttr>> mlir::nf::getVariants(KernelOp kernel) {
  auto array = kernel->getAttrOfType<ArrayAttr>(getVariantsAttrName());
  SmallVector<VariantAttr> variants;
  if (array)
    for (Attribute a : array)
      if (auto v = dyn_cast<VariantAttr>(a))
        variants.push_back(v);
  if (!array || array.empty() || variants.size() != array.size())
    return kernel.emitOpError("needs a non-empty ")
           << getVariantsAttrName()
           << " array of #nf.variant; run -nf-select-schedule and "
              "-nf-materialize-variants first";
  return variants;
}

std::string mlir::nf::getVariantFunctionName(KernelOp kernel,
                                             VariantAttr variant) {
  return (kernel.getSymName() + "_" + variant.getName()).str();
}

bool mlir::nf::isDroppableVariant(KernelOp kernel, VariantAttr variant) {
  // A short launch's persistent twin: the variant after it serves every
  // launch it does.
  if (variant.getMaxRowsPerCta() > 0)
    return true;
  return (variant.getVectorized() || variant.getPeeled()) &&
         variant.getSchedule().isRegisterResident() &&
         !getStaticRowLength(kernel);
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

int64_t mlir::nf::getGroupLanes(KernelOp kernel, int64_t chunk) {
  int64_t lanes = 1;
  kernel.walk([&](ReduceOp reduce) {
    if (std::optional<uint64_t> group = reduce.getGroup())
      lanes = std::max<int64_t>(lanes, (int64_t)*group / chunk);
  });
  return lanes;
}

SmallVector<ReduceOp> mlir::nf::getRowReductions(const Chain &chain) {
  SmallVector<ReduceOp> reductions;
  for (Operation *op : chain.ops)
    if (auto reduce = dyn_cast<ReduceOp>(op); reduce && !reduce.getGroup())
      reductions.push_back(reduce);
  return reductions;
}

int64_t mlir::nf::countRowReductions(KernelOp kernel) {
  ChainAnalysis chains(kernel);
  int64_t most = 0;
  for (const Chain &chain : chains.getChains())
    most = std::max<int64_t>(most, getRowReductions(chain).size());
  return most;
}

int64_t mlir::nf::countRowLoads(const Chain &chain) {
  return llvm::count_if(chain.ops, [](Operation *op) {
    auto load = dyn_cast<LoadOp>(op);
    return load && load.getKind() == BroadcastKind::BSD;
  });
}

/// Bytes per element of the storage type of a tensor.
static int64_t getElementBytes(Type tensor) {
  return getStorageType(cast<RankedTensorType>(tensor).getElementType())
             .getIntOrFloatBitWidth() /
         8;
}

/// Bytes per row element of the tensors `kernel` loads (`nf.load`, and
/// `nf.select_load` by its first operand) with a broadcast kind `keep`
/// accepts.
static int64_t
getLoadBytesPerElement(KernelOp kernel,
                       llvm::function_ref<bool(BroadcastKind)> keep) {
  int64_t bytes = 0;
  kernel.walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      if (keep(load.getKind()))
        bytes += getElementBytes(load.getSource().getType());
    } else if (auto select = dyn_cast<SelectLoadOp>(op)) {
      if (keep(select.getKind()))
        bytes += getElementBytes(select.getFirst().getType());
    }
  });
  return bytes;
}

/// Whether a load of broadcast kind `kind` reads an operand along the row
/// ([D], [B, 1, D], [B, D], [B, F, 1, D]): one element per row element.
static bool isAlongRow(BroadcastKind kind) {
  return kind != BroadcastKind::BSD && kind != BroadcastKind::One;
}

int64_t mlir::nf::getBroadcastBytesPerElement(KernelOp kernel) {
  return getLoadBytesPerElement(kernel, isAlongRow);
}

/// Bytes of [B, S, D] tensors per row element that `kernel` reads and
/// writes: its row loads and its row results (an in-place result counts as
/// read and written).
static int64_t getRowBytesPerElement(KernelOp kernel) {
  int64_t bytes = getLoadBytesPerElement(
      kernel, [](BroadcastKind kind) { return kind == BroadcastKind::BSD; });
  Operation *ret = kernel.getReturn();
  for (auto [value, type] :
       llvm::zip(ret->getOperands(), kernel.getResultTypes()))
    if (isa<RowType>(value.getType()))
      bytes += getElementBytes(type);
  return bytes;
}

/// The most chunks per thread of a one-CTA row when the option leaves it to
/// the compiler. Four, or five for a kernel of at least one reduction (over
/// the row or its groups) per two bytes of [B, S, D] traffic per element:
/// such a kernel is bound by its instructions and its reductions' latency
/// rather than by DRAM, so a row that fills 5 chunks of fewer threads runs
/// faster than one that fills 3 of 4 chunks of twice the threads (the
/// steps of 4 and 3 chunks leave up to a third of the threads' slots
/// empty). H200, 5 against 4 at D = 1152 to 20480 (docs/benchmarks.md,
/// "Five chunks per thread"): the per-group FP8 kernel +14 to +23 points,
/// layernorm_modulate_quant_fp8 +2 to +18, LayerNorm +3 to +9, softmax +2
/// to +12 where 4 chunks left slots empty (-1 at 640, 1280 and 2560),
/// rmsnorm_quant_fp8 +2 to +17 (-1.8 at 2240). Kernels at the copy floor
/// that move more bytes per reduction lost: RMSNorm, fused add + RMSNorm
/// and seed #2 up to 3.5 points, fused add + RMSNorm + int8 up to 8.5
/// (72-90 registers: fewer CTAs per SM).
int64_t mlir::nf::getDefaultMaxChunks(KernelOp kernel) {
  int64_t reductions = 0;
  kernel.walk([&](ReduceOp) { ++reductions; });
  return 2 * reductions >= getRowBytesPerElement(kernel) ? kDefaultMaxChunks + 1
                                                         : kDefaultMaxChunks;
}

bool mlir::nf::hasF32BroadcastOperand(KernelOp kernel) {
  bool found = false;
  kernel.walk([&](LoadOp load) {
    found |= isAlongRow(load.getKind()) &&
             getElementBytes(load.getSource().getType()) == 4;
  });
  return found;
}

int64_t mlir::nf::countRowInputs(KernelOp kernel) {
  ChainAnalysis chains(kernel);
  int64_t most = 0;
  for (const Chain &chain : chains.getChains())
    most = std::max(most, countRowLoads(chain));
  return most;
}

/// The most 16-byte chunks per lane of a row that one warp holds in a
/// kernel of two [B, S, D] inputs; a longer row takes a CTA of 64 threads
/// (two rows per CTA), which holds it in at most 2 chunks each: rows of
/// 513 to 1024 16-bit elements where the kernel also writes a [B, S, D]
/// result in place and has one reduction (fused add + RMSNorm), of 769
/// to 1024 otherwise. H200, % of a copy, warp -> 64 threads, the families
/// of the examples: fused add + RMSNorm at D = 520-760 55.4-85.4 -> 95.6-
/// 97.3 where rows are not a multiple of 128 bytes (640 / 768 98.2 / 98.0
/// -> 99.3 / 99.2), 800 / 1000 / 1024 92.6 / 92.4 / 97.4 -> 97.7 / 96.5 /
/// 98.8; fused_add_rmsnorm_quant_i8 800 / 1000 66.9 / 72.7 -> 95.4 /
/// 95.6; seeds #1, #2 and scale_residual_rmsnorm_scale_shift at 800-1024
/// +0.5 to +8.5. Not for 3-chunk rows of the others (`--dim` builds: seed
/// #2 -5 to -8, the int8 kernel -1 to -12, seed #1 at 520-680 -1 to -11),
/// nor for three inputs (select01_residual_layernorm_modulate at 800 / 900
/// -3.5 / -3.8) or one (LayerNorm -2 to -9, RMSNorm at 800 -2.7). Fused
/// add + RMSNorm's 8-byte twins (rows of 4 (mod 8) elements) lost in 64
/// threads (D = 700-1020 80.5-88.8 -> 64.0-71.9) and stay in the warp
/// (-nf-materialize-variants; 86.9-92.1). docs/benchmarks.md, "Rows of two
/// inputs in 64 threads". The in-place kernels' warp rows collapsed where
/// rows are not a multiple of 128 bytes because their residual was stored
/// before the exchange (emitRow now stores it after, in rows of a warp or
/// less); stored after, the warp still ran 2.2 to 4.6 points behind 64
/// threads (fused add + RMSNorm 600 / 1000 92.1 / 93.7 against 96.7 /
/// 96.7, the int8 kernel 1000 93.3 against 95.5; docs/benchmarks.md,
/// "In-place stores after the exchange in rows of a warp or less").
std::optional<int64_t> mlir::nf::getWarpRowMaxChunks(KernelOp kernel,
                                                     int64_t chunk) {
  if (chunk != 8 || countRowInputs(kernel) != 2)
    return std::nullopt;
  return kernel.hasInPlaceResult() && countRowReductions(kernel) == 1 ? 2 : 3;
}

/// Whether a reduction after the first reads an operand broadcast over rows
/// (a weight, a [B, 1, D] modulation) through f32 values: rmsnorm_quant_fp8's
/// max of |x * rstd * w|. What such a reduction computes is held in f32
/// across the next barrier whether the row is recomputed before it or not
/// (recomputing it after that barrier would load the operand again, measured
/// slower), so recomputing between reductions frees no register at the peak
/// and only adds work. A value rounded to 16 bits (seed #1's residual sum,
/// stored in bf16) is held narrow: the walk stops there.
bool mlir::nf::laterReductionReadsBroadcast(ArrayRef<ReduceOp> reductions) {
  if (reductions.size() < 2)
    return false;
  SmallVector<Value> stack;
  for (ReduceOp reduce : reductions.drop_front())
    stack.push_back(ReduceOp(reduce).getInput());
  DenseSet<Value> seen;
  while (!stack.empty()) {
    Value v = stack.pop_back_val();
    auto row = dyn_cast<RowType>(v.getType());
    if (!row || !seen.insert(v).second)
      continue;
    Operation *op = v.getDefiningOp();
    if (!op)
      continue;
    // Loads and select_loads alike: by how their operand maps onto rows.
    if (isa<LoadOp, SelectLoadOp>(op)) {
      BroadcastKind kind = isa<LoadOp>(op) ? cast<LoadOp>(op).getKind()
                                           : cast<SelectLoadOp>(op).getKind();
      if (kind != BroadcastKind::BSD)
        return true;
      continue;
    }
    if (row.getElementType().getIntOrFloatBitWidth() < 32)
      continue;
    llvm::append_range(stack, op->getOperands());
  }
  return false;
}

int64_t mlir::nf::getStagedRowBytes(KernelOp kernel, const Schedule &s) {
  if (!s.staged)
    return 0;
  ChainAnalysis chains(kernel);
  int64_t most = 0;
  for (const Chain &chain : chains.getChains()) {
    int64_t bytes = 0;
    for (Operation *op : chain.ops)
      if (auto load = dyn_cast<LoadOp>(op);
          load && load.getKind() == BroadcastKind::BSD)
        bytes +=
            getStorageType(cast<RankedTensorType>(load.getSource().getType())
                               .getElementType())
                .getIntOrFloatBitWidth() /
            8;
    most = std::max(most, bytes);
  }
  return most * s.chunk * s.chunksPerThread * s.threadsPerRow;
}

bool mlir::nf::hasWholeStagedChunks(KernelOp kernel, int64_t chunk) {
  bool whole = true;
  kernel.walk([&](LoadOp load) {
    if (load.getKind() != BroadcastKind::BSD)
      return;
    int64_t bits =
        getStorageType(
            cast<RankedTensorType>(load.getSource().getType()).getElementType())
            .getIntOrFloatBitWidth();
    whole &= (bits / 8 * chunk) % 16 == 0;
  });
  return whole;
}

bool mlir::nf::anyLaterReductionReadsBroadcast(KernelOp kernel) {
  ChainAnalysis chains(kernel);
  for (const Chain &chain : chains.getChains())
    if (laterReductionReadsBroadcast(getRowReductions(chain)))
      return true;
  return false;
}

bool mlir::nf::hasEpilogueRowInput(KernelOp kernel) {
  ChainAnalysis chains(kernel);
  for (const Chain &chain : chains.getChains()) {
    SmallVector<ReduceOp> reductions;
    for (Operation *op : chain.ops)
      if (auto reduce = dyn_cast<ReduceOp>(op))
        reductions.push_back(reduce);
    if (!getEpilogueRowLoads(chain, reductions).empty())
      return true;
  }
  return false;
}

SmallVector<LoadOp>
mlir::nf::getEpilogueRowLoads(const Chain &chain,
                              ArrayRef<ReduceOp> reductions) {
  SmallPtrSet<Operation *, 4> reduced;
  for (ReduceOp reduce : reductions)
    walkDefiningOps(reduce.getInput(), [&](Operation *def) {
      if (isa<LoadOp>(def))
        reduced.insert(def);
      return !isa<LoadOp>(def);
    });
  SmallVector<LoadOp> loads;
  for (Operation *op : chain.ops)
    if (auto load = dyn_cast<LoadOp>(op);
        load && load.getKind() == BroadcastKind::BSD && !reduced.contains(op))
      loads.push_back(load);
  return loads;
}

int64_t mlir::nf::maxPrefetchedValues(int64_t blockSize) {
  // Measured (docs/benchmarks.md, "Loads before stores, within a register
  // budget"): five loads (40 values) at 128 and 256 threads took 72-95
  // registers and gained up to 19 points on an H200; at 512 threads 97
  // registers, one CTA per SM, and lost 5.5; six loads at 1024 threads
  // spilled. Four (32 values) gained at 512 threads ("Streamed odd rows").
  return blockSize >= 512 ? 32 : 64;
}

bool mlir::nf::holdsGeneralRowPredicated(KernelOp kernel, const Schedule &g) {
  if (!g.isRegisterResident() || g.chunk != 1 || g.clusterSize != 1 ||
      g.chunksPerThread <= kMaxGeneralElements ||
      g.chunksPerThread > kMaxPredicatedElements || g.threadsPerRow > 256 ||
      getGroupLanes(kernel, 1) > 1)
    return false;
  bool rope = containsOp<RopeOp>(kernel);
  return !rope && countRowReductions(kernel) >= 2;
}

/// recomputesForThirdCta. LayerNorm (f32 weight and bias) in 512 x 4 took
/// 64 registers keeping `x - mean` in f32 across the second reduction, two
/// CTAs per SM; recomputing it from the bf16 row took 52, still two (and
/// was slower: 81.2 -> 78.6% of a copy at 16384), and with three CTAs asked
/// for ptxas fits 40 with 12 bytes of spill. H200, against 512 x 4 as it
/// was: +3.9 / +4.0 / +3.9 / +3.5 / +2.7 at D = 12800 / 13312 / 14336 /
/// 15360 / 16384; four CTAs (32 registers, 40 bytes of spill) lost 3 to 5
/// (docs/benchmarks.md, "A third CTA for LayerNorm's 512 x 4 rows"). The
/// twins (chunks of 4 or 2) are left as they were; held in 8 chunks of 4
/// and three CTAs, LayerNorm gained 5.6-7.0 at 12800-14336 but lost 6.5 at
/// 15360-16384, and layernorm_modulate_quant_fp8 (whose later reduction
/// reads its scale and shift) lost 17. At 512 x 5 (D = 16385-20480; 64
/// registers and 4 bytes of spill at two CTAs) likewise 40 registers, 8
/// bytes of spill: +6.8 / +6.9 / +6.2 / +4.7 / +3.8 at D = 16896 / 17408 /
/// 18432 / 19456 / 20480 (docs/benchmarks.md, "A third CTA for LayerNorm's
/// 512 x 5 rows too"). Not measured on other kernels: `nf.select_load` and
/// rotary kernels, two [B, S, D] inputs.
bool mlir::nf::recomputesForThirdCta(KernelOp kernel, const Schedule &s,
                                     const TargetInfo &target) {
  if (target.maxThreadsPerSm < 3 * kMaxRegisterRowThreads ||
      !s.isRegisterResident() || s.staged || s.clusterSize != 1 ||
      s.threadsPerRow != kMaxRegisterRowThreads || s.rowsPerThread != 1 ||
      s.chunk != 8 || (s.chunksPerThread != 4 && s.chunksPerThread != 5))
    return false;
  bool unmeasured = containsOp<SelectLoadOp, RopeOp>(kernel);
  return !unmeasured && countRowInputs(kernel) == 1 &&
         countRowReductions(kernel) >= 2 &&
         getBroadcastBytesPerElement(kernel) > 0 &&
         !anyLaterReductionReadsBroadcast(kernel);
}

/// reducesRowsJointly. Where a [B, S, D] input is read only after the
/// reductions (seed #2's x), ptxas issued a later row's loads only after
/// the earlier row's stores when each row went through its phases in
/// turn. H200, % of a copy, rows one after the other / together:
/// fused_add_gate_norm 95.6 / 100.5, 86.6 / 91.3, 95.5 / 100.5 at D = 64 /
/// 96 / 128 (16-byte chunks, two rows per thread; 8- and 4-byte twins not
/// measured). Not elsewhere: RMSNorm, LayerNorm and seed #1 lost up to 8.4
/// at D = 16-124 (ptxas: 32 -> 38-40 registers in the 8-byte twins, fewer
/// CTAs per SM), and the general variants lost 2.7 to 4.7 at D = 101
/// (docs/benchmarks.md, "Two rows of a thread in one exchange"). Not rotary
/// rows, each computed whole before it is stored.
bool mlir::nf::reducesRowsJointly(KernelOp kernel, const Schedule &s,
                                  bool vectorized) {
  if (!vectorized || !s.isRegisterResident() || s.rowsPerThread < 2 ||
      s.persistent || containsOp<RopeOp>(kernel))
    return false;
  ChainAnalysis chains(kernel);
  return llvm::all_of(chains.getChains(), [&](const Chain &chain) {
    SmallVector<LoadOp> loads =
        getEpilogueRowLoads(chain, getRowReductions(chain));
    if (loads.empty())
      return false;
    auto type = cast<RankedTensorType>(loads.front().getSource().getType());
    return s.chunk *
               getStorageType(type.getElementType()).getIntOrFloatBitWidth() ==
           128;
  });
}

/// prefetchesEpilogueRows. A [B, S, D] input that no reduction reads (seed
/// #2's x, added after the norm) is loaded after the row's last exchange,
/// where held across it it would cost registers: a second round trip to
/// DRAM on every row's path. Prefetched into L2 just before the first
/// exchange, after the row's own loads, the epilogue's loads hit L2. H200,
/// % of a copy, D-dynamic families, S = 4096 / 16384 (docs/benchmarks.md,
/// "L2 prefetch of the epilogue's rows"): seed #2 at D = 1024-8192
/// -2.8..+1.5 / +0.3..+3.3, norm_tanh_mul_add +0.3..+6.2 / +0.3..+5.6;
/// their peeled variants at odd D = 1001-4089 +1.5..+4.3 / +3.0..+6.4 and
/// +1.4..+3.9 / +2.0..+6.5; warp rows (D = 640, 768; S = 4096 / 32768)
/// -0.3..+4.1 / +0.5..+2.7. Rows of 512 threads lost (D = 12288: -4.0 /
/// -0.5 and -3.8 / -3.6), and so did seed #2's rows of 16 threads on long
/// launches (D = 256-512, S = 32768: -0.5..-2.8). Rows of fewer than 32
/// threads are prefetched where a thread's rows share their exchanges
/// (reducesRowsJointly): there ptxas may sink a later row's epilogue load
/// below the first row's store, a second DRAM trip per thread. It did once
/// the row index no longer took a division (seed #2 at D = 24-128:
/// -5.3..-6.5 points; with the prefetch within 0.9 of before, +6.4 at
/// D = 16). A persistent or staged row copies every input one row ahead
/// already.
bool mlir::nf::prefetchesEpilogueRows(KernelOp kernel, const Schedule &s,
                                      bool vectorized, bool peeled,
                                      bool jointRows,
                                      const TargetInfo &target) {
  bool copiedAhead = vectorized && (s.persistent || s.staged);
  if (!target.hasL2Prefetch() || !(vectorized || peeled) ||
      !s.isRegisterResident() || copiedAhead || s.clusterSize > 1 ||
      (s.threadsPerRow < kMinPrefetchRowThreads && !jointRows) ||
      s.threadsPerRow > kMaxPrefetchRowThreads)
    return false;
  ChainAnalysis chains(kernel);
  return llvm::any_of(chains.getChains(), [](const Chain &chain) {
    return !getEpilogueRowLoads(chain, getRowReductions(chain)).empty();
  });
}

void mlir::nf::walkDefiningOps(Value root,
                               function_ref<bool(Operation *)> visit) {
  SmallVector<Value> stack{root};
  DenseSet<Value> seen;
  while (!stack.empty()) {
    Value v = stack.pop_back_val();
    Operation *op = v.getDefiningOp();
    if (op && seen.insert(v).second && visit(op))
      llvm::append_range(stack, op->getOperands());
  }
}

bool mlir::nf::reductionWaitsOnOperands(KernelOp kernel) {
  // The lowering factors per-row scalars out of max-|x| reductions where it
  // can (rmsnorm_quant_fp8's max |x * rstd * w| becomes rstd * max |x * w|,
  // which no longer waits on the first exchange): judged on that form.
  Operation *factored = kernel->clone();
  factorRowScalars(factored);
  // The operands along the row a reduction's input reads, and whether it
  // reads another reduction's result.
  auto reads = [](ReduceOp reduce, SmallPtrSetImpl<Operation *> &operands) {
    bool reduced = false;
    walkDefiningOps(reduce.getInput(), [&](Operation *op) {
      if (isa<ReduceOp>(op)) {
        reduced = true;
        return false;
      }
      auto load = dyn_cast<LoadOp>(op);
      if (!load)
        return true;
      if (load.getKind() != BroadcastKind::BSD &&
          load.getKind() != BroadcastKind::One)
        operands.insert(op);
      return false;
    });
    return reduced;
  };
  SmallVector<ReduceOp> reductions;
  factored->walk([&](ReduceOp reduce) {
    if (!reduce.getGroup())
      reductions.push_back(reduce);
  });
  // Operands the first reduction reads are loaded with the row, before any
  // exchange (seed #1's gate); the others wait for one.
  bool waits = false;
  SmallPtrSet<Operation *, 4> early;
  if (!reductions.empty())
    reads(reductions.front(), early);
  for (size_t i = 1; i < reductions.size(); ++i) {
    ReduceOp reduce = reductions[i];
    SmallPtrSet<Operation *, 4> operands;
    bool reduced = reads(reduce, operands);
    waits |= reduced && llvm::any_of(operands, [&](Operation *op) {
               return !early.contains(op);
             });
  }
  factored->erase();
  return waits;
}

bool mlir::nf::mayPersist(KernelOp kernel, const Schedule &s,
                          int64_t maxStageBytes) {
  if (!s.isRegisterResident() || s.clusterSize != 1 || s.staged ||
      s.rowsPerThread != 1 || (s.rowsPerCta != 1 && s.threadsPerRow > 32))
    return false;
  if (ChainAnalysis(kernel).getChains().size() != 1 ||
      containsOp<SelectLoadOp, RopeOp>(kernel) ||
      getGroupLanes(kernel, 1) > 1 ||
      getBroadcastBytesPerElement(kernel) == 0 ||
      !hasWholeStagedChunks(kernel, s.chunk))
    return false;
  bool frames = false;
  kernel.walk(
      [&](LoadOp load) { frames |= load.getKind() == BroadcastKind::BF1D; });
  // The operands a thread holds across rows, in 4-byte registers: at most
  // 96. Seed #3's four f32 operands at 32 elements per thread (128) took
  // ptxas to 255 registers and 80 bytes of spill, and nf-compile dropped the
  // variant for its 8-byte twin (H200, D = 4096: 75.4 -> 59.7% of a copy);
  // at 24 elements (96) it gained (D = 3072: 83.5 -> 93.6). A CTA of 512
  // threads has 128 registers per thread, and leaves 64 to the rest:
  // layernorm_modulate_quant_fp8's 512 x 4 (64 held) took 128 without
  // spill, its 512 x 5 (80 held) spilled 76 bytes.
  int64_t heldRegisters =
      s.chunksPerThread * s.chunk * getBroadcastBytesPerElement(kernel) / 4;
  // Rows of a warp or less have no CTA exchange: seed #3 at 16 x 4 and 32 x
  // 4 (128 held) took 254 registers without spill, and ran at 89.5 / 89.3%
  // of a copy against 77.2 / 79.4 unpersistent (H200, D = 512 / 1024).
  int64_t maxHeld = s.threadsPerRow <= 32
                        ? kMaxWarpRowPersistentOperandRegisters
                        : kMaxPersistentOperandRegisters;
  int64_t threadRegisters = std::min<int64_t>(255, 65536 / s.blockSize());
  if (frames || heldRegisters > maxHeld || heldRegisters > threadRegisters - 64)
    return false;
  return getPersistentStageBytes(kernel, s) <= maxStageBytes;
}

int64_t mlir::nf::getPersistentStageBytes(KernelOp kernel, const Schedule &s) {
  Schedule one = s;
  one.staged = true;
  return 2 * s.rowsPerCta * getStagedRowBytes(kernel, one);
}

Schedule Schedule::unstaged() const {
  Schedule s = *this;
  s.staged = false;
  s.persistent = false;
  s.shortLaunchRows = 0;
  if (staged && clusterSize == 1) {
    s.threadsPerRow = kMaxRegisterRowThreads;
    s.chunksPerThread =
        llvm::divideCeil(chunksPerThread * threadsPerRow, s.threadsPerRow);
  }
  // A row of several chunks per thread in fewer than 16 threads (the short
  // rows of NfSelectSchedule's fewestPersistentThreads and shortRowThreads,
  // or a forced thread count) is held in up to 16 threads of the same
  // capacity: where the capacity allows, the schedule the general rule
  // gave before those rules (two rows per thread where that is one chunk),
  // so that its twins (the same threads and capacity in narrower chunks)
  // and its peeled and general variants are the functions measured before.
  // Twins in 4 threads lost, H200, D = 100, 16 x 2 -> 4 x 8 chunks of 4:
  // seed #3 70.3 -> 46.7% of a copy, LayerNorm 76.8 -> 60.3, softmax 76.4
  // -> 68.4 (rmsnorm_quant_fp8 58.3 -> 63.7, layernorm_modulate_quant_fp8
  // 46.0 -> 60.3).
  if (clusterSize == 1 && threadsPerRow < 16 && chunksPerThread > 1 &&
      rowsPerCta > 1) {
    int64_t row = threadsPerRow * chunksPerThread;
    int64_t threads = threadsPerRow;
    while (threads < 16 && row % (2 * threads) == 0)
      threads *= 2;
    s.threadsPerRow = threads;
    s.chunksPerThread = row / threads;
    s.rowsPerCta = kRowGroupBlockSize / threads;
    s.rowsPerThread = s.chunksPerThread == 1 ? 2 : 1;
  }
  return s;
}
