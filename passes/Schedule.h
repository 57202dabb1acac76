//===- Schedule.h - how a kernel's rows map onto threads --------*- C++ -*-===//
//
// Part of normfuse.
//
// A schedule says how many threads share one row, how many rows a CTA
// holds, how many elements a thread touches at once (the chunk: 16 bytes of
// the narrowest row type, or 8 for f32 operands along a 16-bit row in one
// schedule, see -nf-select-schedule), and whether the row stays in registers
// (`chunks_per_thread` > 0) or is streamed from memory once per reduction
// (`chunks_per_thread` == 0; any D). -nf-select-schedule stores the
// schedules it chose on the kernel (`nf.schedules`, #nf.schedule
// attributes); -nf-materialize-variants turns them into the kernel's
// variants (`nf.variants`), each of which the lowering emits as one GPU
// function.
//
//===----------------------------------------------------------------------===//

#ifndef NF_PASSES_SCHEDULE_H
#define NF_PASSES_SCHEDULE_H

#include "dialect/NfOps.h"
#include "passes/Target.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::nf {

struct Chain;

/// Most row elements a thread of a CTA of 512+ threads holds when it
/// recomputes from the narrow row between reductions (see
/// `Schedule::recomputesBetweenReductions`).
constexpr int64_t kMaxRecomputedElements = 24;

/// Most 16-byte chunks per thread of a row by default: a one-CTA row below
/// 512 threads of most kernels, and a cluster CTA. Kernels that compute
/// much per byte, and every 512-thread row, take one more
/// (`-nf-select-schedule`).
constexpr int64_t kDefaultMaxChunks = 4;

/// The most threads a register-resident row gets by default: a CTA of 1024
/// threads leaves each at most 64 registers, too few for 4 chunks of row
/// and their operands (ptxas spilled 56 to 180 bytes at D = 24576 and
/// 32768 with 1024 threads); 512 threads keep 128.
constexpr int64_t kMaxRegisterRowThreads = 512;

/// The block of rows shorter than 128 threads: several rows per CTA
/// (-nf-select-schedule's `select`, "Blocks of 128 threads").
constexpr int64_t kRowGroupBlockSize = 128;

struct Schedule {
  int64_t threadsPerRow = 1;
  int64_t rowsPerCta = 1;
  int64_t chunk = 4;
  int64_t chunksPerThread = 0;
  /// Rows each thread group holds at once (register-resident schedules):
  /// a CTA of `rowsPerCta` row groups covers `rowsPerCta * rowsPerThread`
  /// rows, and every row's loads are issued before the first reduction.
  int64_t rowsPerThread = 1;
  /// CTAs of a thread-block cluster that share one row (1: none): each
  /// holds `threadsPerRow * chunksPerThread` of the row's chunks.
  int64_t clusterSize = 1;
  /// A schedule whose CTAs (one row each, alone or in a cluster) hold
  /// their share of the row in shared memory (asynchronous copies) rather
  /// than registers.
  bool staged = false;
  /// A schedule whose vectorized variant launches CTAs that each walk many
  /// rows of one batch entry, holding the operands that do not depend on
  /// the row in registers and copying the next row into shared memory
  /// while computing the current one (docs/Rationale.md, "Persistent
  /// CTAs").
  bool persistent = false;
  /// With `persistent` false: R > 0 gives the schedule's vectorized variant
  /// a persistent twin ahead of it for launches of at most R of its CTAs'
  /// rows (ctaRows) per resident CTA of the twin (short launches;
  /// docs/Rationale.md, "Persistent CTAs for short launches").
  int64_t shortLaunchRows = 0;

  int64_t blockSize() const { return threadsPerRow * rowsPerCta; }
  /// Rows one CTA covers (what the runtime divides the rows by).
  int64_t ctaRows() const { return rowsPerCta * rowsPerThread; }
  bool isRegisterResident() const { return chunksPerThread > 0; }
  /// Whether a row spans more than one warp (its reductions exchange
  /// through shared memory or a cluster, not shuffles alone): where a row
  /// does not, an in-place result is stored after the exchange (emitRow)
  /// and the twins precede the peeled variant (-nf-materialize-variants).
  bool spansWarps() const { return threadsPerRow * clusterSize > 32; }
  /// "multi_row", "warp", "cta", "persistent", "cluster" or "streaming".
  StringRef getKindName() const;

  /// Whether a row program with several reductions recomputes from its
  /// narrow values between them (and may share a row across a cluster):
  /// a CTA of 512 threads whose thread holds at most 24 elements, where the
  /// registers that frees buy a third CTA per SM (docs/Rationale.md,
  /// "Recomputing the epilogue from the row as loaded").
  bool recomputesBetweenReductions() const {
    return isRegisterResident() && threadsPerRow >= 512 &&
           chunksPerThread * chunk <= kMaxRecomputedElements;
  }

  /// Most elements of a row the schedule holds in registers (0: streamed).
  int64_t capacity() const {
    return threadsPerRow * chunksPerThread * chunk * clusterSize;
  }

  /// The schedule that holds the rows of this one in registers, never
  /// persistent, up to its capacity (for its twin, peeled and general
  /// variants): itself unless staged or a row of several chunks per thread
  /// in fewer than 16 threads; a staged one-CTA row's in 512 threads, as
  /// chosen before staging (the lowering stages only whole 16-byte chunks
  /// of rows that start aligned), and such a short row's in up to 16 of the
  /// same capacity. A staged cluster schedule's general variant streams
  /// (MaterializeVariants).
  Schedule unstaged() const;

  ScheduleAttr toAttr(MLIRContext *ctx) const;
  static Schedule fromAttr(ScheduleAttr attr);
};

/// Names of the kernel attributes the passes communicate through.
inline StringRef getSchedulesAttrName() { return "nf.schedules"; }
inline StringRef getVariantsAttrName() { return "nf.variants"; }

/// The variants of `kernel` (`nf.variants`); fails with a diagnostic on the
/// kernel if there are none.
FailureOr<SmallVector<VariantAttr>> getVariants(KernelOp kernel);

/// The GPU function of `variant` of `kernel`: "<kernel>_<variant name>".
std::string getVariantFunctionName(KernelOp kernel, VariantAttr variant);

/// Whether a family may leave `variant` of `kernel` out (nf-compile drops
/// those ptxas spills): a register-resident vectorized variant of a kernel
/// with D dynamic, whose rows the next variant of the family also serves.
bool isDroppableVariant(KernelOp kernel, VariantAttr variant);

/// Elements per chunk: 16 bytes of the narrowest element type the rows of
/// `kernel` load or store.
int64_t computeChunkElements(KernelOp kernel);

/// The fewest threads a row needs so that every group reduction of `kernel`
/// (`nf.reduce ... group G`) spans at most that many chunks of `chunk`
/// elements: 1 without group reductions.
int64_t getGroupLanes(KernelOp kernel, int64_t chunk);

/// The reductions of `chain` over the whole row (not group reductions), in
/// order: those the lowering reduces with an exchange.
SmallVector<ReduceOp> getRowReductions(const Chain &chain);

/// The most reductions over the whole row (not group reductions) one chain
/// of `kernel` has.
int64_t countRowReductions(KernelOp kernel);

/// The most 16-byte chunks per lane of a row that one warp holds in
/// `kernel` (`chunk` elements per chunk), where a rule bounds it below the
/// general one: 2 or 3 in a kernel of two 16-bit [B, S, D] inputs (see
/// Schedule.cpp); std::nullopt otherwise.
std::optional<int64_t> getWarpRowMaxChunks(KernelOp kernel, int64_t chunk);

/// The [B, S, D] tensors `chain` loads.
int64_t countRowLoads(const Chain &chain);

/// Bytes per row element of the operands `kernel` loads that broadcast
/// along the row ([D], [B, 1, D], [B, D], [B, F, 1, D]: every element of
/// the row reads one element of each), summed; 0 if there are none.
int64_t getBroadcastBytesPerElement(KernelOp kernel);

/// Whether a reduction after the first of `reductions` (one chain's, over
/// the row) reads an operand broadcast over rows through f32 values
/// (rmsnorm_quant_fp8's max of |x * rstd * w|); see Schedule.cpp.
bool laterReductionReadsBroadcast(ArrayRef<ReduceOp> reductions);

/// Bytes of shared memory a CTA of the staged schedule `s` holds its share
/// of the row in: 16 per chunk of each thread for each [B, S, D] tensor a
/// chain of `kernel` loads (0 unless `s.staged`).
int64_t getStagedRowBytes(KernelOp kernel, const Schedule &s);

/// Whether every [B, S, D] row `kernel` loads takes a whole number of
/// 16-byte copies per chunk of `chunk` elements: a staged row is copied
/// into shared memory 16 bytes at a time (cp.async.cg). A chunk is 16 bytes
/// of the narrowest float row type, so an 8-bit input (dequantize's fp8
/// beside f32 rows) may take 4.
bool hasWholeStagedChunks(KernelOp kernel, int64_t chunk);

/// Most row elements a thread of a general variant (one element per
/// access) keeps in registers; longer rows are streamed. An element's
/// index is clamped into the row, and each costs registers.
constexpr int64_t kMaxGeneralElements = 8;
/// The same for the general variants `holdsGeneralRowPredicated` selects.
constexpr int64_t kMaxPredicatedElements = 32;
/// Chunks (one element each) a streamed general variant's thread loads per
/// loop iteration (rows of one reduction, LowerRows.cpp), so that 16 bytes
/// of a 16-bit row are in flight per thread, as in a vectorized chunk.
constexpr int64_t kStreamedGeneralUnroll = 8;
/// Most loaded values (loads x kStreamedGeneralUnroll) an unrolled store
/// loop of such a variant issues before its first store: 64 in CTAs of up
/// to 256 threads, 32 in CTAs of 512 or 1024, where more cost occupancy or
/// spilled.
int64_t maxPrefetchedValues(int64_t blockSize);

/// Whether the general schedule `g` (one element per access) of `kernel`
/// holds more than kMaxGeneralElements per thread, loading each element
/// predicated on being in the row from an unclamped index (one base plus a
/// constant, so few registers): only rows of two or more reductions (which
/// a streamed schedule reads once per reduction and again for the
/// epilogue) in CTAs of at most 256 threads, without rotary embedding or
/// group reductions. Measured on odd D in docs/benchmarks.md ("Odd row
/// lengths").
bool holdsGeneralRowPredicated(KernelOp kernel, const Schedule &g);

/// Whether a variant of `kernel` with the schedule `s` recomputes its row
/// between reductions for a third CTA of 512 threads per SM, which
/// nf-compile asks ptxas for (`.minnctapersm 3`, kept where ptxas spills
/// at most 16 bytes): a 16-bit row held by 512 threads in 4 or 5 chunks of
/// 8 elements (32 or 40 per thread, beyond `recomputesBetweenReductions`), of a
/// kernel that loads one [B, S, D] tensor with `nf.load`, reduces it twice
/// or more, reads operands along the row, and whose later reductions read
/// none of them (LayerNorm with its weight and bias at D = 12289-20480).
/// Only where the target holds three CTAs of 512 threads per SM (not sm_75,
/// 1024 threads per SM). See Schedule.cpp.
bool recomputesForThirdCta(KernelOp kernel, const Schedule &s,
                           const TargetInfo &target);

/// Whether the vectorized variant of `kernel` with the schedule `s` has its
/// thread's rows share each exchange (VariantAttr's `joint_rows`): two or
/// more register-resident rows per thread, not persistent, no rotary
/// embedding, and each chain loads after its reductions a [B, S, D] input
/// whose 16-byte chunks are `s.chunk` elements (seed #2's x). See
/// Schedule.cpp.
bool reducesRowsJointly(KernelOp kernel, const Schedule &s, bool vectorized);

/// Whether the variant of `kernel` with the schedule `s` (vectorized or
/// peeled as said; `jointRows` its `joint_rows`) prefetches into L2 the
/// [B, S, D] inputs no reduction reads (VariantAttr's `l2_prefetch`): a
/// target with `prefetch.global.L2`, a register-resident row of one CTA of
/// 32 to 256 threads, or of fewer threads whose rows share their exchanges,
/// not copied a row ahead (staged or persistent). See Schedule.cpp.
bool prefetchesEpilogueRows(KernelOp kernel, const Schedule &s, bool vectorized,
                            bool peeled, bool jointRows,
                            const TargetInfo &target);
/// Threads per row between which prefetchesEpilogueRows holds (below:
/// only where the rows share their exchanges).
constexpr int64_t kMinPrefetchRowThreads = 32;
constexpr int64_t kMaxPrefetchRowThreads = 256;

/// Visits the ops `root` is computed from, each value's once, depth first;
/// `visit` returns whether to go on into the op's operands.
void walkDefiningOps(Value root, function_ref<bool(Operation *)> visit);

/// Whether a reduction over the row of `kernel` reads both another
/// reduction's result and an operand broadcast along the row ([D], [B, D],
/// [B, 1, D]) that the first reduction does not read, once
/// -nf-factor-row-scalars' rewrite is applied (as the lowering does):
/// every row then waits on that operand's loads between two exchanges.
/// -nf-select-schedule makes such kernels' schedules persistent where they may
/// be (mayPersist).
bool reductionWaitsOnOperands(KernelOp kernel);

/// Whether the schedule `s` of `kernel` may be made persistent:
/// register-resident rows, one per thread, one per CTA where a row takes more
/// than a warp (their exchanges would share the CTA's barriers), no cluster,
/// not staged; a kernel of one chain, without select, rotary embedding, group
/// reductions or `[B, F, 1, D]` operands, with at least one operand
/// broadcast along the row (what a persistent CTA loads once) that take at
/// most kMaxPersistentOperandRegisters registers per thread
/// (kMaxWarpRowPersistentOperandRegisters for rows of a warp or less; and 64
/// fewer than a thread of the CTA may have: 64 of 128 at 512 threads), whose
/// `[B, S, D]` inputs take whole 16-byte copies per chunk and whose two
/// staged rows fit in `maxStageBytes`.
bool mayPersist(KernelOp kernel, const Schedule &s, int64_t maxStageBytes);
constexpr int64_t kMaxPersistentOperandRegisters = 96;
/// The same for rows of 32 threads or fewer (no CTA exchange).
constexpr int64_t kMaxWarpRowPersistentOperandRegisters = 128;
/// The bytes of a persistent schedule's slots: two staged rows per row of
/// the CTA.
int64_t getPersistentStageBytes(KernelOp kernel, const Schedule &s);

/// The static row length of the kernel, if every chain's D is static and
/// they agree.
std::optional<int64_t> getStaticRowLength(KernelOp kernel);

/// Whether `kernel` holds an op of one of the types `Ops`: rotary
/// embeddings and `nf.select_load` keep a kernel out of schedules that were
/// not measured with them.
template <typename... Ops> bool containsOp(KernelOp kernel) {
  return kernel
      .walk([](Operation *op) {
        return isa<Ops...>(op) ? WalkResult::interrupt()
                               : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The most [B, S, D] tensors one chain of `kernel` loads.
int64_t countRowInputs(KernelOp kernel);

/// Whether a chain of `kernel` has a reduction over the row after its first
/// that reads an operand broadcast over rows.
bool anyLaterReductionReadsBroadcast(KernelOp kernel);

/// Whether a chain of `kernel` loads a [B, S, D] tensor that no reduction
/// over the row reads (seed #2's `x`, added after the norm): its rows'
/// second trip to memory comes after the exchange.
bool hasEpilogueRowInput(KernelOp kernel);

/// The [B, S, D] loads of `chain`, in its order, whose values none of
/// `reductions` reads: inputs that only the epilogue needs.
SmallVector<LoadOp> getEpilogueRowLoads(const Chain &chain,
                                        ArrayRef<ReduceOp> reductions);

/// Whether `kernel` loads an operand broadcast along the rows ([D],
/// [B, 1, D], ...) of 4-byte elements.
bool hasF32BroadcastOperand(KernelOp kernel);

/// The most 16-byte chunks per thread of a one-CTA row below 512 threads:
/// kDefaultMaxChunks, one more for kernels that compute much per byte
/// (Schedule.cpp).
int64_t getDefaultMaxChunks(KernelOp kernel);

} // namespace mlir::nf

#endif // NF_PASSES_SCHEDULE_H
