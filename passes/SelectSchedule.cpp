//===- SelectSchedule.cpp - -nf-select-schedule -------------------------===//
//
// Part of normfuse. The pass that chooses each kernel's schedules: for a
// static D one, for a dynamic D the family (one per distinct choice over
// every row length), from the rules of this file and the kernel queries of
// Schedule.cpp. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialect/Chains.h"
#include "passes/Passes.h"
#include "passes/QuantizedCasts.h"
#include "passes/Schedule.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFSELECTSCHEDULE
#include "passes/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

/// The most chunks per thread of a 512-thread CTA that holds a row alone,
/// for every kernel: one CTA of 512 x 5 rather than a cluster of two for
/// bf16 rows of 16385 to 20480. H200, against the cluster (staged for one
/// input): RMSNorm +6.3 to +14.2 points at 16392-20480, seed #1 +22.5 to
/// +24.9, fused add + RMSNorm +1.1 to +3.9, seed #2 +1.3 to +2.1, fused
/// add + RMSNorm + int8 -2.0 to -2.5 (docs/benchmarks.md, "Five chunks per
/// thread"). Rows that the 1024-thread rule takes keep it.
static constexpr int64_t kLongRowMaxChunks = kDefaultMaxChunks + 1;

/// Whether a row of `kernel` may be staged in shared memory: one
/// [B, S, D] tensor per chain, read by `nf.load` (what stageRow copies), no
/// rotary embedding and no group reductions (a chunk is read back by the
/// thread that copied it), a reduction to hold the row across (without one
/// nothing is read twice) and whole 16-byte copies per chunk
/// (hasWholeStagedChunks: dequantize's 4-byte fp8 chunks were copied 16
/// bytes at a time into misaligned slots). Not with `nf.select_load`
/// either: select01's kernels were not measured staged.
static bool isStageable(KernelOp kernel, int64_t chunk) {
  bool unmeasured = containsOp<SelectLoadOp, RopeOp>(kernel);
  return countRowInputs(kernel) == 1 && countRowReductions(kernel) >= 1 &&
         !unmeasured && getGroupLanes(kernel, chunk) == 1 &&
         hasWholeStagedChunks(kernel, chunk);
}

/// The threads of a CTA that holds a row of two or more reductions too long
/// for kMaxRegisterRowThreads (see `select`), and the most row elements
/// each holds: 16 f32 values and their operands fit in the 64 registers
/// such a CTA leaves each thread.
static constexpr int64_t kWideRowThreads = 1024;
static constexpr int64_t kMaxWideRowElements = 16;

/// The threads of a staged cluster CTA (see `select`): its share of the row
/// is in shared memory, so a thread may hold up to twice the chunks of a
/// 512-thread CTA in registers (8: 32 KB of one [B, S, D] tensor per CTA).
static constexpr int64_t kStagedRowThreads = 256;
static constexpr int64_t kMaxStagedRowBytes = 32 * 1024;

namespace {
struct NfSelectSchedulePass
    : nf::impl::NfSelectScheduleBase<NfSelectSchedulePass> {
  using NfSelectScheduleBase::NfSelectScheduleBase;

  /// Of the kernel being scheduled: whether a reduction waits on operands
  /// along the row (reductionWaitsOnOperands); whether a reduction after
  /// its first reads such an operand (anyLaterReductionReadsBroadcast);
  /// whether it has one (two) [B, S, D] inputs and two reductions or more;
  /// whether it has a [B, S, D] input that no reduction reads
  /// (hasEpilogueRowInput); the most chunks per lane of its warp rows
  /// (getWarpRowMaxChunks).
  bool waits = false;
  bool laterReadsOperand = false;
  bool oneInputTwoReductions = false;
  bool twoInputsTwoReductions = false;
  bool epilogueRowInput = false;
  std::optional<int64_t> warpRowChunks;

  void runOnOperation() override {
    getOperation()->walk([&](KernelOp kernel) {
      if (persistent != "auto" && persistent != "all" && persistent != "none") {
        kernel.emitOpError("persistent must be auto, all or none, found '")
            << persistent << "'";
        signalPassFailure();
        return;
      }
      waits = reductionWaitsOnOperands(kernel);
      laterReadsOperand = anyLaterReductionReadsBroadcast(kernel);
      oneInputTwoReductions =
          countRowInputs(kernel) == 1 && countRowReductions(kernel) >= 2;
      twoInputsTwoReductions =
          countRowInputs(kernel) == 2 && countRowReductions(kernel) >= 2;
      epilogueRowInput = hasEpilogueRowInput(kernel);
      warpRowChunks = getWarpRowMaxChunks(kernel, computeChunkElements(kernel));
      FailureOr<SmallVector<Schedule>> family = selectFamily(kernel);
      if (failed(family)) {
        signalPassFailure();
        return;
      }
      MLIRContext *ctx = kernel.getContext();
      SmallVector<Attribute> attrs;
      for (Schedule &s : *family) {
        s.persistent = isPersistent(kernel, s);
        s.shortLaunchRows = getShortLaunchRows(kernel, s);
        attrs.push_back(s.toAttr(ctx));
      }
      kernel->setAttr(getSchedulesAttrName(), ArrayAttr::get(ctx, attrs));
    });
  }

  /// The rows per resident CTA up to which a schedule that may be
  /// persistent but is not gets a persistent twin for short launches
  /// (Schedule::shortLaunchRows), 0 for none. One row per CTA leaves a
  /// short launch's last rows to a few SMs, which a CTA walking a few rows
  /// does not, where on long launches one row per CTA, with more warps per
  /// SM, is faster. H200, B = 1, % of a copy, one row per CTA -> persistent,
  /// S = 2048 / 4096 / 8192 / 16384 (docs/benchmarks.md, "Persistent CTAs
  /// for short launches"): RMSNorm 4096 95.0 / 93.2 / 98.0 / 97.8 -> 97.1 /
  /// 97.5 / 92.0 / 89.6, LayerNorm 4096 73.9 / 87.0 / 92.3 / 95.5 -> 92.8 /
  /// 95.0 / 90.1 / 87.8, seed #2 3840 86.9 / 89.5 / 96.0 / 98.7 -> 97.5 /
  /// 98.4 / 99.5 / 95.8, seed #1 3072 84.3 / 92.2 / 95.4 / 98.3 -> 95.5 /
  /// 95.3 / 91.0 / 91.2; the crossing at 4 to 93 rows per resident
  /// persistent CTA, fused add + RMSNorm's lowest (+6.0 at 3.9, -0.8 at
  /// 5.8), seed #2's highest (3840: +3.5 at 20.7, -0.8 at 31; 8192: +1.1 at
  /// 62, -1.0 at 93). Only rows of a CTA
  /// of 128 or 256 threads: D-dynamic families, D = 3072 to 8192, where a
  /// twin served, -2.9 to +19.6 points, the losses fused add + RMSNorm's at
  /// S = 4096 (-1.0 to -1.9) and RMSNorm's at S = 1024 (-2.9 at 3072, -0.6
  /// and -0.9 at 6144 and 8192); rows of 512 threads lost
  /// up to 13.5 (fused add + RMSNorm, 12288, S = 1024), rows of a warp or
  /// less (D = 256-1024) gained up to 22 and lost up to 21 (seed #1, 256,
  /// S = 4096).
  /// A kernel with a [B, S, D] input that no reduction reads (seed #2's x,
  /// norm_tanh_mul_add's) loads it after the exchange, a second trip to
  /// memory on every row's path that a persistent CTA, copying the next row
  /// while this one reduces, does not wait for: its persistent rows win to
  /// about twice the rows per CTA. H200, B = 1, both kernels, D = 2560 to
  /// 6144, % of a copy, one row per CTA -> persistent: +1.2 to +12.0 at 8,
  /// 12 and 16 rows per resident CTA, -1.6 to +5.3 at 24, -5.9 to +0.8 at
  /// 32 (docs/benchmarks.md, "Short launches of kernels with an
  /// epilogue-only row input").
  int64_t getShortLaunchRows(KernelOp kernel, const Schedule &s) const {
    if (s.persistent || !asyncCopy || persistent != "auto" ||
        s.threadsPerRow < kMinShortLaunchRowThreads ||
        s.threadsPerRow > kMaxShortLaunchRowThreads ||
        !mayPersist(kernel, s, maxPersistentStageKB * 1024))
      return 0;
    return epilogueRowInput ? kEpilogueRowShortLaunchRowsPerCta
                            : kShortLaunchRowsPerCta;
  }
  static constexpr int64_t kMinShortLaunchRowThreads = 128;
  static constexpr int64_t kMaxShortLaunchRowThreads = 256;
  static constexpr int64_t kShortLaunchRowsPerCta = 8;
  static constexpr int64_t kEpilogueRowShortLaunchRowsPerCta = 16;

  /// Whether the schedule `s` of `kernel` is persistent (docs/Rationale.md,
  /// "Persistent CTAs"; docs/benchmarks.md, "Where a persistent CTA wins").
  bool isPersistent(KernelOp kernel, const Schedule &s) const {
    if (!asyncCopy || persistent == "none" ||
        !mayPersist(kernel, s, maxPersistentStageKB * 1024))
      return false;
    // Where a reduction waits on operands along the row
    // (layernorm_modulate_quant_fp8's row maximum of the modulated row), at
    // every schedule. H200, D = 3072 / 4096 / 6144 / 8192 / 10240: 75.3 /
    // 77.6 / 65.5 / 72.7 / 67.9% of a copy -> 86.8 / 92.7 / 77.0 / 86.0 /
    // 71.0.
    if (persistent == "all" || waits)
      return true;
    // Otherwise only rows of one 16-bit [B, S, D] input and two or more
    // reductions, where measured faster. H200, every D from 1024 to 20480
    // in steps of 512, % of a copy against one row per CTA
    // (docs/benchmarks.md, "Chunks past the row copy nothing"): 512 x 4
    // rows, LayerNorm +8.2 to +9.0 at 12800-14848 and 0 to -1.4 above,
    // rmsnorm_quant_fp8 +1.8 to +3.8 and -1.2 to +1.0; and where a later
    // reduction reads an operand along the row (rmsnorm_quant_fp8's
    // maximum reads the weight), rows of five chunks and of four chunks in
    // 256 threads (the first map, "Where a persistent CTA wins": 128 x 5 and
    // 256 x 5 +2.7 to +8.8, 512 x 5 +3.7 to +16.3, the last two -1.6 /
    // -1.4 at their first 512 elements; 256 x 4 +8.8 to +19.7). Not 128 x 4
    // (second map -2.8 / -5.5) nor three chunks (-2.0 to -16.2, but +2.4 at 256
    // x 3, D = 5632). f32 rows lost (LayerNorm 512 x 4: -9.9 to -15.3), and so
    // did RMSNorm and fused add + RMSNorm at every schedule.
    // Rows of two 16-bit [B, S, D] inputs and two or more reductions, a
    // later one reading an operand along the row (measured on
    // fused_add_rmsnorm_quant_i8 only, whose maximum reads the weight), at
    // 512 x 3, 512 x 4 and 512 x 5: one row per CTA held two CTAs of 512
    // threads (50, 64 and 64 registers, the last with 40 bytes of spill) per
    // SM, and rows that fill their chunks partly left too few bytes in
    // flight. H200, every D from 8704 to 16384 in steps of
    // 512, % of a copy, one row per CTA -> persistent, two runs: 512 x 3
    // 79.8-85.6 -> 92.8-95.1 at 8704-10752, 88.8 -> 90.1-92.6 at 11264, 92.1
    // -> 88.7-91.9 at 11776, 95.1-95.3 -> 90.4-92.8 at 12288; 512 x 4 (two
    // slots of 64 KB: sm_90 and sm_100 only) 80.8-87.7 -> 88.0-93.5
    // (docs/benchmarks.md, "Persistent rows of two inputs"); 512 x 5 (two
    // slots of 80 KB; ptxas keeps 4 bytes of spill, which nf-compile allows
    // a persistent variant) 86.6-87.5 -> 90.6-91.7 at 16896-20480
    // (docs/benchmarks.md, "Group butterflies over the whole warp; persistent
    // 512 x 5 rows of two inputs").
    if (s.chunk == 8 && twoInputsTwoReductions && laterReadsOperand &&
        s.threadsPerRow == kMaxRegisterRowThreads && s.chunksPerThread >= 3 &&
        s.chunksPerThread <= 5)
      return true;
    // (Measured on rows of 64 threads or more only.)
    if (s.chunk != 8 || !oneInputTwoReductions || s.threadsPerRow < 64)
      return false;
    if (s.threadsPerRow == kMaxRegisterRowThreads && s.chunksPerThread == 4)
      return true;
    return laterReadsOperand &&
           (s.chunksPerThread == 5 ||
            (s.chunksPerThread == 4 && s.threadsPerRow >= 256));
  }

  /// Whether an option fixes the schedule: then a dynamic D gets the one
  /// schedule the options describe (as a static D does), not a family.
  bool forced() const {
    return threadsPerRow > 0 || rowsPerCta > 0 || rowsPerThread > 0 ||
           forceStreaming;
  }

  /// The schedules of `kernel`, by the rows they hold in registers,
  /// smallest first. A static D (or a forced schedule) gets one. A dynamic
  /// D gets what a static D would get, for every distinct choice over the
  /// row lengths registers hold (each serves rows up to its capacity),
  /// then a streamed schedule for longer rows: one artifact runs every D
  /// with the schedule a specialization would have (docs/Rationale.md,
  /// "One artifact for every D").
  FailureOr<SmallVector<Schedule>> selectFamily(KernelOp kernel) {
    if (maxChunks < 0 || maxChunks > 16)
      return kernel.emitOpError("max-chunks must be 0 to 16, found ")
             << (int64_t)maxChunks;
    if (!llvm::isPowerOf2_64(maxCluster) || maxCluster > 8)
      return kernel.emitOpError("max-cluster must be 1, 2, 4 or 8, found ")
             << (int64_t)maxCluster;
    std::optional<int64_t> d = getStaticRowLength(kernel);
    if (d || forced()) {
      FailureOr<Schedule> s = select(kernel, d);
      if (failed(s))
        return failure();
      return SmallVector<Schedule>{*s};
    }
    SmallVector<Schedule> family;
    int64_t chunk = computeChunkElements(kernel);
    // The rule's choice grows with the chunk count, so the next distinct
    // schedule is the one for one chunk past the last one's capacity. No
    // register-resident schedule holds more than a cluster of 512-thread
    // CTAs or one 1024-thread CTA (at their most chunks), so the loop ends at
    // the first streamed schedule, and the one after the loop streams.
    int64_t mostChunks =
        std::max(kMaxRegisterRowThreads * maxCluster, kWideRowThreads) *
        std::max(rowMaxChunks(kernel), clusterMaxChunks());
    for (int64_t v = 1; v <= mostChunks;
         v = family.back().capacity() / chunk + 1) {
      FailureOr<Schedule> s = select(kernel, v * chunk);
      if (failed(s))
        return failure();
      if (!s->isRegisterResident())
        break;
      family.push_back(*s);
    }
    // Longer rows: streamed by 1024 threads (measured faster than 256 at
    // D = 49152 / 65536, docs/benchmarks.md). Not for an in-place rotary
    // result, which needs the whole row before it stores: the runtime then
    // refuses longer rows.
    bool rope = containsOp<RopeOp>(kernel);
    if (!(rope && kernel.hasInPlaceResult())) {
      FailureOr<Schedule> s =
          select(kernel, family.empty() ? 1 : family.back().capacity() + 1);
      if (failed(s))
        return failure();
      family.push_back(*s);
    }
    return family;
  }

  /// The most chunks per thread of a one-CTA row, and of a cluster CTA.
  int64_t rowMaxChunks(KernelOp kernel) const {
    return maxChunks > 0 ? (int64_t)maxChunks : getDefaultMaxChunks(kernel);
  }
  int64_t clusterMaxChunks() const {
    // The measurements behind the cluster rules were taken at four.
    return maxChunks > 0 ? (int64_t)maxChunks : kDefaultMaxChunks;
  }

  /// The fewest threads a row of `vectors` chunks starts from: 16, but 4
  /// for 16-bit rows of at most 24 chunks (D <= 192) of a kernel of one
  /// [B, S, D] input and two or more reductions, whose per-row exchanges
  /// then cover two to four chunks per thread in two or three shuffle
  /// steps. H200, % of a copy, from 16 -> from 4, D = 64 / 128 / 192:
  /// rmsnorm_quant_fp8 79.1 / 77.4 / 76.9 -> 96.4 / 98.3 / 99.8, LayerNorm
  /// 95.7 / 90.0 / 87.3 -> 99.4 / 96.5 / 96.7, softmax 94.4 / 93.6 / 92.6
  /// -> 101.1 / 98.9 / 98.8. Not at 256 (LayerNorm -2.3, softmax -2.1),
  /// nor for kernels of two inputs (fused add + RMSNorm at 128: 99.0 ->
  /// 36.4) or one reduction (RMSNorm at 128: -3.6), nor rotary ones (their
  /// partner chunks); docs/benchmarks.md, "Fewer threads for short
  /// persistent rows" and "Short rows of one input from 4 threads".
  int64_t shortRowThreads(KernelOp kernel, const Schedule &s,
                          int64_t vectors) const {
    return oneInputTwoReductions && s.chunk == 8 && vectors <= 24 &&
                   !containsOp<RopeOp>(kernel)
               ? 4
               : 16;
  }

  /// Where a reduction waits on operands along the row, a row of 16
  /// threads or fewer is held by the fewest threads (at least
  /// kMinPersistentRowThreads) that keep it in at most `rowChunks` chunks
  /// each while it stays persistent (the CTA keeps its 128 threads, so it
  /// walks more rows per step). Each row then pays its exchanges and its
  /// per-row scalars over more elements per thread, in fewer shuffle
  /// steps. H200, % of a copy, from 16 threads -> by this rule:
  /// layernorm_modulate_quant_fp8 D = 96 48.1 -> 96.1 (4 x 3), 128 62.1
  /// -> 91.5 (4 x 4), 160 57.0 -> 93.0 (4 x 5), 192 67.4 -> 96.1 (8 x 3),
  /// 256 87.0 -> 97.8 (8 x 4), 320 83.5 -> 98.0 (8 x 5); seed #3 128 85.2
  /// -> 89.3-92.1, 192 88.1 -> 91.0, 256 89.5 -> 88.3
  /// (docs/benchmarks.md, "Fewer threads for short persistent rows").
  /// Rows of one or two threads lost: layernorm_modulate_quant_fp8 at
  /// D = 16 / 32 (1 x 2, 1 x 4) 71.2 / 67.3 -> 61.6 / 50.3, seed #3 at 64
  /// (2 x 4) 85.8 -> 75.0 (each thread's copies and stores then stride
  /// whole rows apart).
  static constexpr int64_t kMinPersistentRowThreads = 4;

  /// `s` with its row of `d` elements spread over `threads` threads, one
  /// row per thread: a block of kRowGroupBlockSize threads of such rows,
  /// or a CTA per row from 64 threads (so that it may be persistent).
  static Schedule spreadOver(Schedule s, int64_t threads, int64_t d) {
    s.threadsPerRow = threads;
    s.chunksPerThread = llvm::divideCeil(llvm::divideCeil(d, s.chunk), threads);
    s.rowsPerThread = 1;
    s.rowsPerCta = threads >= 64 ? 1 : kRowGroupBlockSize / threads;
    return s;
  }

  Schedule fewestPersistentThreads(KernelOp kernel, Schedule s, int64_t d,
                                   int64_t rowChunks) const {
    if (s.clusterSize != 1 || s.staged || s.threadsPerRow > 16)
      return s;
    while (s.threadsPerRow > kMinPersistentRowThreads) {
      Schedule fewer = spreadOver(s, s.threadsPerRow / 2, d);
      if (fewer.chunksPerThread > rowChunks || !isPersistent(kernel, fewer))
        break;
      s = fewer;
    }
    return s;
  }

  /// Where a reduction waits on operands along the row, a one-CTA row whose
  /// schedule may not be persistent because its threads would hold too many
  /// operand registers (mayPersist: seed #3's four f32 operands at 4 chunks
  /// per thread hold 128) is spread over the fewest more threads (at most
  /// 512) that hold fewer chunks each and may be: 64 x 4 -> 128 x 2, 128 x
  /// 4 -> 256 x 2, 256 x 4 -> 512 x 2. The persistent CTA reads those
  /// operands once per batch entry instead of once per row.
  Schedule morePersistentThreads(KernelOp kernel, Schedule s, int64_t d) const {
    if (s.clusterSize != 1 || s.staged || s.threadsPerRow < 64 ||
        isPersistent(kernel, s))
      return s;
    for (int64_t threads = 2 * s.threadsPerRow;
         threads <= kMaxRegisterRowThreads; threads *= 2) {
      Schedule more = spreadOver(s, threads, d);
      if (isPersistent(kernel, more))
        return more;
    }
    return s;
  }

  /// Where a reduction waits on operands along the row, a one-CTA row of
  /// three chunks per thread in 256 threads goes to 128, six chunks each,
  /// where those may be persistent (operands of 8 bytes per element: 96
  /// held registers; seed #3's 16 may not). H200,
  /// layernorm_modulate_quant_fp8, D dynamic, % of a copy: D = 5632 / 6144
  /// 77.8 / 82.4 -> 81.4 / 83.9, odd 6137 (peeled) 34.1 -> 39.4. Not 512 x
  /// 3 -> 256 x 6: +5.0 at 11264 and 12288, but its peeled variant (151
  /// registers, not persistent) lost 12.4 at 12281; nor 128 x 3 -> 64 x 6
  /// (3072: 94.8 -> 86.0). docs/benchmarks.md, "Six chunks per thread
  /// where a reduction waits on operands".
  Schedule fewerPersistentThreads(KernelOp kernel, Schedule s,
                                  int64_t d) const {
    if (s.clusterSize != 1 || s.staged || s.chunk != 8 ||
        s.threadsPerRow != 256 || s.chunksPerThread != 3)
      return s;
    Schedule fewer = spreadOver(s, s.threadsPerRow / 2, d);
    return isPersistent(kernel, fewer) ? fewer : s;
  }

  /// The schedule for rows of `d` elements (std::nullopt: any D).
  FailureOr<Schedule> select(KernelOp kernel, std::optional<int64_t> d) {
    int64_t rowChunks = rowMaxChunks(kernel);
    int64_t clusterChunks = clusterMaxChunks();
    Schedule s;
    s.chunk = computeChunkElements(kernel);
    bool streaming = forceStreaming || !d;
    bool tooLong = false;
    if (!streaming) {
      int64_t vectors = llvm::divideCeil(*d, s.chunk);
      if (threadsPerRow > 0) {
        s.threadsPerRow = threadsPerRow;
      } else {
        // Fewest threads that keep at most rowChunks chunks per thread:
        // the row lives in registers and a reduction needs few shuffles.
        // At least 16 threads (or one per chunk): short rows such as a
        // 128-wide attention head then take one chunk per thread and
        // several rows share a warp. At least 4 for the short 16-bit rows
        // of a kernel of one [B, S, D] input and two or more reductions
        // (shortRowThreads).
        s.threadsPerRow = std::min<int64_t>(shortRowThreads(kernel, s, vectors),
                                            llvm::PowerOf2Ceil(vectors));
        while (s.threadsPerRow < kMaxRegisterRowThreads &&
               (int64_t)llvm::divideCeil(vectors, s.threadsPerRow) > rowChunks)
          s.threadsPerRow *= 2;
        // Kernels of two 16-bit [B, S, D] inputs (getWarpRowMaxChunks) that
        // write a result in place hold rows of 4 chunks per thread of 16
        // threads (D = 385-512) in a warp instead, and rows longer than the
        // warp's cap in 64 threads (below). H200, % of a copy, 16 x 4 ->
        // warp 32 x 2 with the in-place result stored after the exchange:
        // fused add + RMSNorm at D = 392-504 92.0-94.6 -> 96.1-97.2, its
        // int8 form 88.6-95.2 -> 97.0-98.6; at D = 4 (mod 8) the int8
        // kernel 59.0 / 70.6 -> 95.5 / 96.9 at 396 / 500, fused add +
        // RMSNorm 91.5 / 93.2 -> 87.7 / 91.6 (docs/benchmarks.md, "In-place
        // stores after the exchange in rows of a warp or less").
        if (s.threadsPerRow == 16 && warpRowChunks && maxChunks == 0 &&
            kernel.hasInPlaceResult() &&
            (int64_t)llvm::divideCeil(vectors, 16) > 3)
          s.threadsPerRow = 32;
        if (s.threadsPerRow == 32 && warpRowChunks && maxChunks == 0 &&
            (int64_t)llvm::divideCeil(vectors, 32) > *warpRowChunks)
          s.threadsPerRow = 64;
      }
      // A group of G elements is reduced across the G / chunk lanes that
      // hold it, which must be threads of the row.
      if (threadsPerRow == 0)
        s.threadsPerRow =
            std::max(s.threadsPerRow, getGroupLanes(kernel, s.chunk));
      s.chunksPerThread = llvm::divideCeil(vectors, s.threadsPerRow);
      // A row of two or more reductions too long for 512 threads, that
      // 1024 threads hold in at most kMaxWideRowElements elements each (f32
      // rows of 8193 to 16384): one CTA of 1024 threads rather than a
      // cluster or a streamed row. ptxas keeps every two-reduction example
      // in f32 within 64 registers without spilling (one CTA per SM), and on
      // the H200 seed #1 in f32 ran at 85.0 / 84.2% of a copy at D = 12288 /
      // 16384 against 82.2 (cluster of two) / 54.9 (streamed). Narrower
      // rows never get here (512 threads hold 16384 bf16 elements); bf16
      // rows of 24 or 32 elements per thread lost or spilled at 1024
      // threads (docs/benchmarks.md, "1024-thread register-resident rows in
      // f32" and the 2026-11-23 trial).
      int64_t wideChunks = llvm::divideCeil(vectors, kWideRowThreads);
      if (s.chunksPerThread > rowChunks && threadsPerRow == 0 &&
          countRowReductions(kernel) >= 2 && wideChunks <= clusterChunks &&
          wideChunks * s.chunk <= kMaxWideRowElements &&
          getGroupLanes(kernel, s.chunk) <= kWideRowThreads) {
        s.threadsPerRow = kWideRowThreads;
        s.chunksPerThread = wideChunks;
      }
      // Too long a row for one CTA's registers: share it among the CTAs of
      // a cluster, each holding as much as the longest one-CTA schedule,
      // or stream it. A kernel with two or more reductions over the row
      // (LayerNorm, softmax, seed #1) takes the fewest CTAs that hold it in
      // chunks its threads recompute from between the reductions (512 x 3
      // in bf16: ptxas gives LayerNorm and softmax 40 registers, three CTAs
      // per SM; 512 x 4: 52, two per SM, and slower than streaming on the
      // H200), and more than two only where the streamed schedule would
      // re-read much per pass: two or more [B, S, D] tensors, or an operand
      // along the row that a later reduction reads (the quantizing kernels'
      // maximum), or where no operand broadcasts along the row. With the
      // mbarrier exchange, clusters of 4 and 8 gained 6 to 17 points on seed
      // #1 and 0 to 27 on softmax at 32768-98304, rmsnorm_quant_fp8 and
      // layernorm_modulate_quant_fp8 +1.9 to +7.1 at 28672-65536
      // (docs/benchmarks.md, "Quantizing kernels in clusters of 4 and 8"),
      // but LayerNorm in registers (f32 weight and bias, 8 bytes per
      // element from L1/L2; now staged, above) lost 8 and 10 at 32768 and
      // 65536 (2 chunks per thread), and a family stops at its first
      // streamed schedule (docs/benchmarks.md, "Two reductions in clusters
      // of 4 and 8"). Clusters of 3, 5, 6 or 7 CTAs (3 chunks per thread at
      // every D) measured slower than 2, 4 and 8 at 14 of 18 points. Not for
      // rotary embedding, whose partner chunks must be in the same CTA.
      // A row that 512 threads hold in kLongRowMaxChunks chunks stays in
      // one CTA for every kernel (below).
      int64_t oneCtaChunks =
          s.threadsPerRow == kMaxRegisterRowThreads && maxChunks == 0
              ? std::max(rowChunks, kLongRowMaxChunks)
              : rowChunks;
      // A row of one reduction and one [B, S, D] input (RMSNorm) too long
      // for 512 threads, that 1024 threads hold in at most
      // kDefaultMaxChunks chunks each: one CTA of 1024 threads rather than
      // a cluster. ptxas keeps RMSNorm's 1024 x 4 at 32 registers (two
      // CTAs, every warp slot of an SM) and no row crosses CTAs; H200, bf16
      // at 32768: 93.6% of a copy against 86.3 for the staged pair
      // (docs/benchmarks.md, "One CTA of 1024 threads for long RMSNorm
      // rows"). Kernels of two reductions or two inputs lost or spilled
      // there (LayerNorm 62.1 against 73.8, seed #1 spilled, fused add +
      // RMSNorm -1.7 at 59 registers).
      bool rope = containsOp<RopeOp>(kernel);
      if (s.chunksPerThread > oneCtaChunks && threadsPerRow == 0 &&
          maxChunks == 0 && !rope && countRowReductions(kernel) == 1 &&
          countRowInputs(kernel) == 1 && getGroupLanes(kernel, 1) == 1 &&
          wideChunks <= kDefaultMaxChunks) {
        s.threadsPerRow = kWideRowThreads;
        s.chunksPerThread = wideChunks;
      }
      if (s.chunksPerThread > oneCtaChunks && threadsPerRow == 0) {
        bool several = countRowReductions(kernel) > 1;
        int64_t perThread =
            several
                ? std::min<int64_t>(
                      clusterChunks,
                      std::max<int64_t>(1, kMaxRecomputedElements / s.chunk))
                : clusterChunks;
        int64_t cluster = llvm::PowerOf2Ceil(
            llvm::divideCeil(vectors, s.threadsPerRow * perThread));
        Schedule shared = s;
        shared.clusterSize = cluster;
        shared.chunksPerThread =
            llvm::divideCeil(vectors, s.threadsPerRow * cluster);
        // Staged: a kernel that reads one [B, S, D] tensor and whose later
        // reductions read no operand along the row (RMSNorm, LayerNorm,
        // softmax) holds the cluster's row in shared memory, in CTAs of 256
        // threads of twice the chunks (32 KB at most): 32 registers, so
        // occupancy is bounded by shared memory, and no row element is held
        // across a reduction. H200, against 512-thread CTAs in registers
        // (or LayerNorm's streamed rows past 24576): softmax +1.1 to +17.0
        // points at 20480-98304, LayerNorm +2.2 to +15.1, RMSNorm +0.4 to
        // +10.6 at 7 of 9 points from 20480 to 131072, -2.9 and -0.3 at
        // 24576 and 98304 (docs/benchmarks.md, "Cluster rows staged in
        // shared memory"; staging the 512-thread CTAs instead was mixed).
        // The quantizing kernels, whose second reduction reads the weight,
        // took 55-64 registers staged and spilled.
        bool staged = asyncCopy && isStageable(kernel, s.chunk) &&
                      !anyLaterReductionReadsBroadcast(kernel);
        if (staged) {
          Schedule candidate = shared;
          candidate.staged = true;
          candidate.threadsPerRow = kStagedRowThreads;
          candidate.chunksPerThread =
              llvm::divideCeil(vectors, kStagedRowThreads * cluster);
          // Measured up to 32 KB per CTA (six CTAs per SM); an f32 input
          // of a kernel with 16-bit results would take 64.
          staged = getStagedRowBytes(kernel, candidate) <= kMaxStagedRowBytes;
          // The CTA count above is what registers hold (at most 24 elements
          // per thread between two reductions); shared memory holds more. A
          // pair of CTAs where theirs fit rather than four (16-bit rows of
          // 24577 to 32768): softmax +20.5 / +11.0 and LayerNorm +12.6 /
          // +3.1 at 28672 / 32768 on the H200; four rather than eight lost
          // 3.5 on LayerNorm at 65536, whose f32 weight and bias then share
          // L1 with 32 KB of row per CTA (docs/benchmarks.md, "Staged pairs
          // of CTAs").
          if (staged && candidate.clusterSize == 4) {
            Schedule pair = candidate;
            pair.clusterSize = 2;
            pair.chunksPerThread =
                llvm::divideCeil(vectors, kStagedRowThreads * 2);
            if (getStagedRowBytes(kernel, pair) <= kMaxStagedRowBytes)
              candidate = pair;
          }
          if (staged) {
            shared = candidate;
            cluster = candidate.clusterSize;
          }
        }
        if (cluster <= maxCluster && !rope && rowsPerCta <= 1 &&
            rowsPerThread <= 1 &&
            (!several || staged ||
             (shared.recomputesBetweenReductions() &&
              (cluster == 2 || countRowInputs(kernel) >= 2 ||
               getBroadcastBytesPerElement(kernel) == 0 ||
               anyLaterReductionReadsBroadcast(kernel))))) {
          s = shared;
        } else {
          streaming = tooLong = true;
        }
      }
      // A one-CTA row that 512 threads hold in 32 or more elements each
      // (ptxas: 64 registers, two CTAs per SM) of a kernel that reads one
      // [B, S, D] tensor, reduces it twice or more and reads no operand
      // along the row (softmax; 16-bit rows of 12289 to 16384): staged in
      // 256 threads, as a cluster CTA is (above), 32-40 registers and up to
      // seven CTAs per SM. H200, against 512 x 4 in registers: softmax +9.3
      // / +9.4 / +3.0 / +3.0 points at 13312 / 14336 / 15000 / 16384
      // (docs/benchmarks.md, "One-CTA rows staged in shared memory"). Not
      // where it lost: at 512 x 3 and below (24 elements, 40 registers;
      // softmax -2 to -4 at 6144-12288), at 512 x 5 (40 KB; -2.8 / -3.4 at
      // 18432 / 20480), nor for kernels with a [D] or [B, 1, D] operand:
      // LayerNorm (f32 weight and bias) lost 2.6 at 16384 and 4 at
      // 6144-10240: the shared buffers take the L1 that held the operands
      // (ncu at 16384: L1 hit rate 77.9 -> 39.6%, their reads go to L2).
      if (!streaming && s.clusterSize == 1 && threadsPerRow == 0 &&
          maxChunks == 0 && rowsPerCta <= 1 && rowsPerThread <= 1 &&
          s.threadsPerRow == kMaxRegisterRowThreads &&
          s.chunksPerThread * s.chunk >= 32 &&
          getBroadcastBytesPerElement(kernel) == 0 &&
          countRowReductions(kernel) >= 2 && asyncCopy &&
          isStageable(kernel, s.chunk)) {
        Schedule staged = s;
        staged.staged = true;
        staged.threadsPerRow = kStagedRowThreads;
        staged.chunksPerThread = llvm::divideCeil(vectors, kStagedRowThreads);
        if (getStagedRowBytes(kernel, staged) <= kMaxStagedRowBytes)
          s = staged;
      }
    }
    // Half chunks: a 16-bit row held by 512 threads in 3 chunks of 8
    // elements, of a kernel that reads f32 operands along it (LayerNorm's
    // weight and bias, layernorm_modulate_quant_fp8's scale and shift), is
    // held in 6 chunks of 4 instead. A thread's 16-byte f32 accesses then
    // cover consecutive addresses across the warp (with 8 elements a thread
    // reads 32 bytes per operand and chunk, in two loads that each use half
    // of every sector the warp touches), and ptxas kept LayerNorm at 32
    // registers instead of 40 (four CTAs per SM, not three). H200, D =
    // 11264 / 12288: LayerNorm +4.9 / +5.8, layernorm_modulate_quant_fp8
    // +2.1 / +3.0. Not for kernels of two [B, S, D] inputs or one
    // reduction, nor rows without such operands, which lost: seed #1 -14,
    // softmax -12, fused add + RMSNorm + int8 -14 to -18, RMSNorm -2,
    // rmsnorm_quant_fp8 -3, seed #2 -3; nor at 512 x 4, where both took 64
    // registers (LayerNorm 13312-16384 -0.3 to +2.1). docs/benchmarks.md,
    // "What the operands along the row cost; half chunks for f32 operands".
    // Nor for a persistent CTA, which reads its operands once and copies
    // its row in whole 16-byte chunks.
    if (!streaming && s.clusterSize == 1 && !s.staged && threadsPerRow == 0 &&
        maxChunks == 0 && rowsPerCta <= 1 && rowsPerThread <= 1 &&
        s.threadsPerRow == kMaxRegisterRowThreads && s.chunk == 8 &&
        s.chunksPerThread == 3 && getGroupLanes(kernel, 1) == 1 &&
        oneInputTwoReductions && hasF32BroadcastOperand(kernel) &&
        !isPersistent(kernel, s)) {
      s.chunk = 4;
      s.chunksPerThread = 6;
    }
    // Streamed rows: 256 threads, measured best for a dynamic D at
    // D = 3072 on an H100 (77% of the copy floor against 66% with 512 and
    // 35% with 1024); 1024 for a static D too long for registers
    // (D = 49152 / 65536: 61 / 75% against 44 / 69% with 256;
    // docs/benchmarks.md).
    if (streaming) {
      s.threadsPerRow = threadsPerRow > 0 ? (int64_t)threadsPerRow
                        : tooLong         ? 1024
                                          : 256;
      s.chunksPerThread = 0;
    }
    // Several rows per thread only where the rows live in registers (a
    // streamed row is re-read per reduction anyway). By default two for
    // rows of one chunk per thread shorter than a warp: a 128-wide head is
    // one 16-byte chunk per thread, so the second row's loads cost few
    // registers and overlap the first row's shuffles; on an H100
    // QK-norm+RoPE (T=4096, H=24/32) went from 75.5/73.3% to 85.3/87.7% of
    // the copy floor. Rows of 2-4 chunks per thread measured slower with
    // two (register pressure; H200, D = 256, 16 threads x 2 chunks: seed #1
    // 88.9 -> 98.3% with one, seed #2 87.2 -> 100.7, LayerNorm 91.8 ->
    // 96.3; docs/benchmarks.md).
    if (streaming)
      s.rowsPerThread = 1;
    else if (rowsPerThread > 0)
      s.rowsPerThread = rowsPerThread;
    else
      s.rowsPerThread = s.threadsPerRow < 32 && s.chunksPerThread == 1 ? 2 : 1;
    // Blocks of 128 threads: on an H100 this beat 256 for D = 3072 rows
    // (92.7% against 88.5% of the copy floor, docs/Results.md), more
    // resident CTAs hiding more of each row's reduction latency.
    s.rowsPerCta =
        rowsPerCta > 0
            ? (int64_t)rowsPerCta
            : std::max<int64_t>(1, kRowGroupBlockSize / s.threadsPerRow);
    // Where a reduction waits on operands along the row, a row of 64
    // threads gets a CTA of its own, so that it may be persistent (two rows
    // per CTA may not). H200, layernorm_modulate_quant_fp8, % of a copy,
    // two rows per CTA -> one, persistent: D = 1536 72.1 -> 97.0, 2048
    // 74.6 -> 97.2, 2560 69.5 -> 95.0, 2048 with B = 4 66.9 -> 97.0
    // (docs/benchmarks.md, "Persistent rows of 64 threads").
    if (rowsPerCta <= 0 && s.threadsPerRow == 64 && waits) {
      Schedule one = s;
      one.rowsPerCta = 1;
      if (isPersistent(kernel, one))
        s.rowsPerCta = 1;
    }
    if (!streaming && !forced() && maxChunks == 0 && waits) {
      s = fewestPersistentThreads(kernel, s, *d, rowChunks);
      s = morePersistentThreads(kernel, s, *d);
      s = fewerPersistentThreads(kernel, s, *d);
    }
    if (rowsPerThread < 0 || rowsPerThread > 8)
      return kernel.emitOpError("rows-per-thread must be 1 to 8, found ")
             << rowsPerThread;
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
