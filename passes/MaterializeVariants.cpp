//===- MaterializeVariants.cpp - -nf-materialize-variants -----------------===//
//
// Part of normfuse. Turns the schedules -nf-select-schedule chose
// (`nf.schedules`) into the kernel's variants (`nf.variants`): for each
// schedule a vectorized variant where 16-byte accesses are possible (and
// one with 8-byte accesses for rows of a multiple of half a chunk), and the
// general variants that serve any alignment, each with the guard the
// runtime tests at launch; and, for rows of any length whose tensors share
// their alignment, peeled variants (16-byte accesses for each row's body).
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialect/Chains.h"
#include "passes/Passes.h"
#include "passes/QuantizedCasts.h"
#include "passes/Schedule.h"

#include "mlir/IR/Builders.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFMATERIALIZEVARIANTS
#include "passes/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

/// Most bytes per element of the operands broadcast along the rows that a
/// kernel with peeled variants loads element by element (see `anchored`
/// below).
static constexpr int64_t kMaxPeeledBroadcastBytes = 2;

/// Bytes per row element of the operands broadcast along the rows that a
/// peeled variant loads element by element (those narrower than 4 bytes),
/// summed. A peeled variant loads operands of 4 bytes or more from the
/// aligned 16-byte granules that hold a chunk, shifted into place
/// (KernelLowering::loadShifted), so they do not count. Measured on the
/// H200 at odd D against the general variant: LayerNorm's f32 [D] weight
/// and bias, and the seeds' f32 [B, 1, D] modulation, up to +40 points of
/// a copy; a few points lose (docs/benchmarks.md, "Peeled rows with f32
/// weight and bias" and "Peeled rows with f32 modulation").
static int64_t getNarrowBroadcastBytesPerElement(KernelOp kernel) {
  int64_t bytes = 0;
  auto add = [&](Value source, BroadcastKind kind) {
    if (kind == BroadcastKind::BSD || kind == BroadcastKind::One)
      return;
    int64_t width =
        getStorageType(
            cast<RankedTensorType>(source.getType()).getElementType())
            .getIntOrFloatBitWidth() /
        8;
    if (width < 4)
      bytes += width;
  };
  kernel.walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op))
      add(load.getSource(), load.getKind());
    else if (auto select = dyn_cast<SelectLoadOp>(op))
      add(select.getFirst(), select.getKind());
  });
  return bytes;
}

/// Whether 16-byte accesses can exist at all for this kernel: D (if
/// static) a multiple of the chunk, and rotary halves made of whole chunks.
static bool canVectorize(KernelOp kernel, int64_t chunk) {
  if (std::optional<int64_t> d = getStaticRowLength(kernel))
    if (*d % chunk != 0)
      return false;
  bool ok = true;
  kernel.walk([&](RopeOp rope) {
    if ((rope.getRotaryDim() / 2) % chunk != 0)
      ok = false;
  });
  return ok;
}

/// "cta128x3", "warp32x1", "streaming1024": the schedule in a name.
static std::string describe(const Schedule &s) {
  std::string name = s.getKindName().str() + std::to_string(s.threadsPerRow);
  if (s.isRegisterResident())
    name += "x" + std::to_string(s.chunksPerThread);
  if (s.clusterSize > 1)
    name += "c" + std::to_string(s.clusterSize);
  return name;
}

namespace {
struct NfMaterializeVariantsPass
    : nf::impl::NfMaterializeVariantsBase<NfMaterializeVariantsPass> {
  using NfMaterializeVariantsBase::NfMaterializeVariantsBase;

  void runOnOperation() override {
    if (!chip.empty() && !llvm::is_contained(getSupportedChips(), chip)) {
      mlir::emitError(getOperation()->getLoc(),
                      getUnsupportedChipMessage(chip));
      return signalPassFailure();
    }
    getOperation()->walk([&](KernelOp kernel) {
      if (failed(materialize(kernel)))
        signalPassFailure();
    });
  }

  LogicalResult materialize(KernelOp kernel) {
    auto array = kernel->getAttrOfType<ArrayAttr>(getSchedulesAttrName());
    SmallVector<Schedule> schedules;
    if (array)
      for (Attribute a : array)
        if (auto attr = dyn_cast<ScheduleAttr>(a))
          schedules.push_back(Schedule::fromAttr(attr));
    if (!array || schedules.empty() || schedules.size() != array.size())
      return kernel.emitOpError("needs a non-empty ")
             << getSchedulesAttrName()
             << " array of #nf.schedule; run -nf-select-schedule first";

    TargetInfo target = getTargetInfo(chip);
    bool rope = containsOp<RopeOp>(kernel);
    bool inPlace = kernel.hasInPlaceResult();
    // Fused add + RMSNorm (getWarpRowMaxChunks 2): see its twins below.
    bool warpTwins =
        getWarpRowMaxChunks(kernel, computeChunkElements(kernel)) == 2;
    // Rows of two [B, S, D] inputs and one reduction: see the twins below.
    bool oneRowTwins =
        countRowInputs(kernel) == 2 && countRowReductions(kernel) == 1;
    // In place + rotary: an element's partner is read while other threads
    // store the row, so only a register-resident row (all of it computed
    // before any store) is correct.
    bool needsWholeRow = rope && inPlace;
    std::optional<int64_t> staticD = getStaticRowLength(kernel);

    struct Entry {
      Schedule schedule;
      bool vectorized;
      int64_t maxD;
      bool peeled = false;
      /// A short launch's persistent twin: its most rows per resident CTA.
      int64_t maxRowsPerCta = 0;
      /// Where it goes in the order: its bound, but a peeled variant's
      /// schedule's capacity (it goes with its schedule's variants).
      int64_t orderBound() const { return peeled ? schedule.capacity() : maxD; }
    };
    SmallVector<Entry> vectorized, general;
    // Peeled variants need, in every chain, a [B, S, D] load whose row
    // start gives each row's offset within a chunk (the lowering's anchor;
    // the runtime checks that every row tensor shares it), and chunks of
    // whole elements that the lowering can mask one by one: no rotary
    // embedding (its partner chunks), no group reductions (groups aligned
    // with the chunks). And operands broadcast along the rows ([D],
    // [B, 1, D], ...) narrower than 4 bytes of at most 2 bytes per element
    // in all: such an operand is misaligned with the row and loaded element
    // by element, a warp instruction per element that touches several cache
    // lines. Measured on the H200 at odd D against the general variant:
    // fused add + RMSNorm (a bf16 weight) +7 to +24, RMSNorm and softmax up
    // to +17 / +28; loaded that way, LayerNorm's f32 weight and bias lost 9
    // to 35 and seed #1's three f32 operands up to 32 (docs/benchmarks.md,
    // "Peeled rows"), hence the granules for operands of 4 bytes or more.
    ChainAnalysis chainAnalysis(kernel);
    bool anchored =
        llvm::all_of(
            chainAnalysis.getChains(),
            [](const Chain &chain) { return countRowLoads(chain) > 0; }) &&
        getNarrowBroadcastBytesPerElement(kernel) <= kMaxPeeledBroadcastBytes;
    // A guard on D only where a schedule is register-resident (its
    // capacity), and only where D is not static (then it is checked once,
    // when the kernel is verified and launched).
    auto guard = [&](const Schedule &s) -> int64_t {
      return s.isRegisterResident() ? s.capacity() : 0;
    };
    for (auto [index, s] : llvm::enumerate(schedules)) {
      if (s.isRegisterResident() && staticD && *staticD > s.capacity())
        return kernel.emitOpError("schedule holds ")
               << s.capacity()
               << " elements per row, fewer than D = " << *staticD;
      // A group reduction spans G / chunk lanes: at most a warp, and
      // threads of the row (the lowering reduces it with shuffles).
      auto groupsFit = [&](const Schedule &v) {
        int64_t lanes = getGroupLanes(kernel, v.chunk);
        return lanes <= 32 && lanes <= v.threadsPerRow;
      };
      bool groups = getGroupLanes(kernel, 1) > 1;
      if (canVectorize(kernel, s.chunk) && groupsFit(s)) {
        // A short launch's persistent twin goes first: the runtime takes
        // it for launches of at most `shortLaunchRows` rows per CTA of it
        // that fit on the device, the schedule's own variant otherwise.
        Schedule one = s;
        one.shortLaunchRows = 0;
        if (s.shortLaunchRows > 0) {
          Schedule twin = one;
          twin.persistent = true;
          vectorized.push_back({twin, true, guard(s), false,
                                s.shortLaunchRows * twin.ctaRows()});
        }
        vectorized.push_back({one, true, guard(s)});
      }
      // Rows whose length is a multiple of half or a quarter of a chunk
      // only (D = 100 or 1030 in bf16, 1028 with 1-byte results): twins with
      // 8- or 4-byte accesses of the narrowest type (at least two elements
      // each), more chunks per thread, the same threads and capacity.
      // Without them such rows take the general variant, one element per
      // access (RMSNorm D = 100: 46% of a copy, 79% with the 8-byte twin).
      // A static D gets the widest that divides it.
      // Not for cluster schedules: such long rows are rarely not a multiple
      // of the chunk, and the general variant streams them. A staged
      // schedule's twins, peeled and general variants hold the row in
      // registers (Schedule::unstaged), serving no longer rows than it.
      Schedule held = s.unstaged();
      // Consecutive staged schedules can hold their rows in the same
      // registers (softmax's 256 x 7 and 256 x 8 both in 512 x 4): their
      // twins and peeled variants would be the same functions twice, so
      // only the last, whose bound covers the others' rows, has them. The
      // runtime picks the same function for every row as with both.
      bool heldByNext =
          s.staged && index + 1 < schedules.size() &&
          schedules[index + 1].unstaged().toAttr(kernel.getContext()) ==
              held.toAttr(kernel.getContext());
      // The peeled variant: the same threads and chunks, for rows that
      // are not a multiple of the chunk or do not start aligned (odd D, a
      // row slice), whose tensors all start at the same offset within a
      // chunk. A row that starts C - 1 elements past an aligned address
      // spans one more chunk, hence the smaller bound; rows just under the
      // capacity take the schedule's general variant, or the next
      // schedule's peeled one where that general variant is streamed and
      // merged with the next schedules' (ordered by the merged bound). For
      // a static D only where D is not a multiple of the chunk.
      // Not for schedules of fewer than 16 chunks per row (bf16: rows of
      // up to 64 elements, which the general variant holds in registers
      // too, at most 8 elements per thread).
      std::optional<Entry> peeled;
      if (anchored && !rope && !groups && !heldByNext &&
          s.isRegisterResident() && s.clusterSize == 1 && s.chunk > 1 &&
          s.capacity() >= 16 * s.chunk &&
          (!staticD ||
           (*staticD % s.chunk != 0 && *staticD <= s.capacity() - s.chunk + 1)))
        peeled = Entry{held, false, s.capacity() - s.chunk + 1, true};
      // Where a kernel writes a [B, S, D] result in place and a thread
      // holds 3 or more chunks, the peeled variant goes before the twins:
      // rows of a multiple of half or a quarter of a chunk take it, with
      // 16-byte accesses for the body, rather than the twins' 8- or 4-byte
      // ones. H200, % of a copy, peeled / 8-byte twin: fused add + RMSNorm
      // at D = 300-14004 (4 or 6 mod 8) 85.9-94.4 / 53.6-89.5; its int8 form
      // 69.8-93.8 / 29.2-85.1, but 70.9 / 84.0 at 2100 and 3.5-3.7 behind
      // at 2500 and 5100. Twins stay first for rows of 1 or 2 chunks per
      // thread (10 to 39 points ahead) and for kernels without an in-place
      // result (RMSNorm, its fp8 form, softmax: 13 to 29 ahead at 13 of 15
      // points). docs/benchmarks.md, "Peeled rows before twins where a
      // result is written in place". Not in rows of a warp or less, where
      // the in-place result is stored after the exchange (emitRow): there
      // the twins led the int8 kernel by 17 to 25 points (D = 300, 500,
      // 700) and were level for fused add + RMSNorm at 300 (docs/
      // benchmarks.md, "In-place stores after the exchange in rows of a
      // warp or less").
      bool peeledFirst =
          peeled && inPlace && held.chunksPerThread >= 3 && held.spansWarps();
      if (peeledFirst)
        vectorized.push_back(*peeled);
      for (int64_t narrow = s.chunk / 2;
           s.isRegisterResident() && s.clusterSize == 1 && !heldByNext &&
           narrow >= 2;
           narrow /= 2) {
        if (!canVectorize(kernel, narrow) ||
            (staticD && *staticD % (2 * narrow) == 0))
          continue;
        Schedule twin = held;
        twin.chunk = narrow;
        twin.chunksPerThread *= s.chunk / narrow;
        // Fused add + RMSNorm's rows that getWarpRowMaxChunks takes from a
        // warp to 64 threads keep their 8-byte twin in the warp, at the
        // same capacity: in 64 threads it lost 16 to 18 points of a copy
        // on the H200 (D = 700-1020, docs/benchmarks.md "Rows of two
        // inputs in 64 threads"), where the other kernels' twins gained.
        if (narrow == 4 && held.threadsPerRow == 64 && held.rowsPerCta == 2 &&
            held.chunksPerThread == 2 && warpTwins) {
          twin.threadsPerRow = 32;
          twin.rowsPerCta = 4;
          twin.chunksPerThread *= 2;
        }
        // A schedule of one chunk per thread holds two rows per thread
        // (rows of up to 128 16-bit elements); its 8-byte twin holds two
        // chunks of each. In kernels of two [B, S, D] inputs and one
        // reduction it holds one row per thread. H200, % of a copy, two
        // rows / one, D = 36 / 60 / 68 / 100 / 124: fused add + RMSNorm
        // 78.7 / 86.8 / 66.2 / 84.9 / 88.4 -> 83.0 / 89.2 / 82.4 / 91.5 /
        // 92.9, seed #2 67.1 / 84.8 / 63.9 / 72.6 / 78.0 -> 67.8 / 91.7 /
        // 64.1 / 84.1 / 89.5, seed #1 with RMSNorm 77.6 / 87.0 / 75.3 /
        // 88.4 / 89.7 -> 76.6 / 89.4 / 72.9 / 92.5 / 93.9, its f32 affine
        // form +0.3 to +6.1, norm_tanh_mul_add -4.5 to +4.1. Not the 4-byte
        // twins (D = 98 / 126: seed #2 -8.0 / -10.1), nor kernels of two
        // reductions (LayerNorm seeds, norm_tanh_mul_add_norm_scale, the
        // int8 kernel: -8.4 to +4.3, mostly losses) or of one input
        // (RMSNorm, LayerNorm, softmax: up to -11.7). In every two-input
        // kernel the twin went from 48-64 registers to 29-40, winners and
        // losers alike, so registers alone do not decide it.
        // docs/benchmarks.md, "One row per thread in the 8-byte twins of
        // short rows of two inputs".
        if (oneRowTwins && s.chunk == 8 && narrow == 4 &&
            twin.rowsPerThread == 2)
          twin.rowsPerThread = 1;
        if (groupsFit(twin))
          vectorized.push_back({twin, true, std::min(guard(twin), guard(s))});
      }
      if (peeled && !peeledFirst)
        vectorized.push_back(*peeled);
      // The general variant: the same threads, one element per access. With
      // group reductions a thread keeps chunks of consecutive elements
      // (loaded one by one), so that a group spans as few lanes as in the
      // vectorized variant.
      Schedule g = held;
      // A cluster schedule's general variant streams its rows with one CTA
      // of 1024 threads, as the streamed tier after it (the two merge).
      if (s.clusterSize > 1) {
        g.clusterSize = 1;
        g.threadsPerRow = 1024;
        g.chunksPerThread = 0;
      }
      if (!groups) {
        g.chunksPerThread *= g.chunk;
        g.chunk = 1;
      }
      // Clamped indices cost registers (rows of more than
      // kMaxGeneralElements per thread spilled): longer rows are streamed,
      // unless their elements are loaded predicated (Schedule.h).
      if (g.chunksPerThread * g.chunk > kMaxGeneralElements && !needsWholeRow &&
          !holdsGeneralRowPredicated(kernel, g))
        g.chunksPerThread = 0;
      if (needsWholeRow && !g.isRegisterResident())
        return kernel.emitOpError(
            "writes in place and applies rotary embedding, which needs a "
            "register-resident schedule: fix D (nf-compile --dim D=<n>) or "
            "leave the schedule to -nf-select-schedule");
      // The streamed general variant of a 5-chunk schedule whose next
      // schedule holds its rows in one CTA too is left out: the rows it
      // would serve (misaligned, or past the peeled bound) take the next
      // schedule's peeled or general variant, as before 5-chunk schedules
      // existed (40 elements per thread stream where 3 and 4 chunks are
      // held predicated). H200, softmax at D = 1279 / 2559 / 5119 / 10239:
      // 53 / 53 / 54 / 53% of a copy through the streamed variant, 79 /
      // 87 / 74 / 66 through the next schedule's (docs/benchmarks.md,
      // "Five chunks per thread"). The 512 x 5 schedule keeps its own:
      // after it come clusters, whose general variant streams with 1024
      // threads.
      if (!g.isRegisterResident() && s.isRegisterResident() &&
          s.clusterSize == 1 && held.chunksPerThread > kDefaultMaxChunks &&
          index + 1 < schedules.size() &&
          schedules[index + 1].isRegisterResident() &&
          schedules[index + 1].clusterSize == 1)
        continue;
      // A streamed general variant serves the rows of its schedule's
      // tier (any D where the schedule itself streams).
      Entry e{g, false,
              g.isRegisterResident() ? std::min(guard(g), guard(s)) : guard(s)};
      // Streamed general variants of consecutive tiers with the same
      // threads are one function, serving both tiers.
      if (!g.isRegisterResident() && !general.empty() &&
          !general.back().schedule.isRegisterResident() &&
          general.back().schedule.threadsPerRow == g.threadsPerRow &&
          general.back().schedule.rowsPerCta == g.rowsPerCta &&
          general.back().schedule.rowsPerThread == g.rowsPerThread) {
        general.back().maxD = e.maxD;
        continue;
      }
      general.push_back(e);
    }
    // Order: by the D they serve, a schedule's vectorized variants before
    // its peeled one and both before the general one of the same bound;
    // the runtime takes the first whose guard holds.
    SmallVector<Entry> all;
    size_t vi = 0, gi = 0;
    auto bound = [](const Entry &e) {
      int64_t b = e.orderBound();
      return b == 0 ? std::numeric_limits<int64_t>::max() : b;
    };
    while (vi < vectorized.size() || gi < general.size()) {
      if (gi == general.size() || (vi < vectorized.size() &&
                                   bound(vectorized[vi]) <= bound(general[gi])))
        all.push_back(vectorized[vi++]);
      else
        all.push_back(general[gi++]);
    }
    SmallVector<Attribute> attrs;
    MLIRContext *ctx = kernel.getContext();
    int64_t i = 0;
    for (const Entry &e : all) {
      // Named before any is dropped, so that names stay put. A short
      // launch's twin takes the number of the variant after it (its
      // schedule's own; the names differ in the schedule's kind), so that
      // the other variants keep the names they had without twins.
      std::string name = (e.vectorized ? "v"
                          : e.peeled   ? "p"
                                       : "g") +
                         std::to_string(i) + "_" + describe(e.schedule);
      if (e.maxRowsPerCta == 0)
        ++i;
      // How the lowering emits the variant's rows, where the schedule
      // alone does not say (see the rules' measurements in Schedule.cpp).
      bool jointRows = reducesRowsJointly(kernel, e.schedule, e.vectorized);
      bool l2Prefetch = prefetchesEpilogueRows(kernel, e.schedule, e.vectorized,
                                               e.peeled, jointRows, target);
      bool thirdCta =
          e.vectorized && recomputesForThirdCta(kernel, e.schedule, target);
      auto variant = VariantAttr::getChecked(
          [&] { return kernel.emitOpError(); }, ctx, StringRef(name),
          e.vectorized, e.maxD, e.schedule.toAttr(ctx), e.peeled,
          e.maxRowsPerCta, l2Prefetch, jointRows, thirdCta);
      if (!variant)
        return failure();
      if (isDroppableVariant(kernel, variant) &&
          llvm::is_contained(drop, getVariantFunctionName(kernel, variant)))
        continue;
      attrs.push_back(variant);
    }
    kernel->setAttr(getVariantsAttrName(), ArrayAttr::get(ctx, attrs));
    kernel->removeAttr(getSchedulesAttrName());
    return success();
  }
};
} // namespace
