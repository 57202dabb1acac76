//===- KernelLowering.h - the state of -nf-lower-to-gpu --------*- C++ -*-===//
//
// Part of normfuse. The class that lowers one variant of one nf.kernel to a
// gpu.func, shared by the files that implement it: LowerToGPU.cpp (the
// kernel), LowerRows.cpp (rows), RowPhases.cpp (a register-resident row's
// phases), PersistentRows.cpp, LowerChunks.cpp (chunks), LowerReductions.cpp
// (reductions over the row, stores), Rematerialize.cpp and
// GroupReductions.cpp (group values). Not a public interface.
//
//===----------------------------------------------------------------------===//

#ifndef NF_PASSES_KERNELLOWERING_H
#define NF_PASSES_KERNELLOWERING_H

#include "dialect/Chains.h"
#include "passes/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::nf::lowering {

/// Elements of a row that one evaluation covers.
struct Chunk {
  /// Index of the first element (vectorized variant; always in bounds).
  Value base;
  /// General variant: the index of each element, clamped into [0, D).
  SmallVector<Value> elements;
  /// Vectorized: i1, the chunk is part of the row. General: one i1 per
  /// element. Out-of-row elements are loaded from a clamped address and
  /// masked out of reductions and stores. Peeled: empty (see `full`).
  SmallVector<Value> valid;
  /// Peeled: i1, every element of the chunk is in the row; and the index
  /// of its first element (negative in a row's first chunk), where `base`
  /// is that of the chunk it is read from (clamped into the row's chunks).
  /// Elements outside the row are masked out of reductions and stores;
  /// `elements` holds the chunk's indices clamped into the row, for the
  /// operands loaded element by element.
  Value full, first;
  /// Values computed for the chunk. Insertion-ordered: rematerialization
  /// walks it, and the IR it emits must not depend on where values are
  /// allocated.
  llvm::MapVector<Value, Value> cache;
  /// Staged rows (KernelLowering::stagedRows): the shared-memory address
  /// each [B, S, D] load of the chunk was copied to.
  DenseMap<Value, Value> staged;
  /// Group values: the chunk's max(1, chunk / G) values (GroupReductions.cpp).
  DenseMap<Value, SmallVector<Value>> groups;
};

class KernelLowering {
public:
  KernelLowering(KernelOp kernel, VariantAttr variant, bool hardwareFp8,
                 OpBuilder &builder)
      : kernel(kernel), chains(kernel),
        sched(Schedule::fromAttr(variant.getSchedule())),
        vectorized(variant.getVectorized()), peeled(variant.getPeeled()),
        hardwareFp8(hardwareFp8), l2Prefetch(variant.getL2Prefetch()),
        jointRows(variant.getJointRows()), thirdCta(variant.getThirdCta()),
        b(builder), loc(kernel.getLoc()) {
    kernel.walk([&](RopeOp) { hasRope = true; });
    inPlaceRope = hasRope && kernel.hasInPlaceResult();
    predicated = !vectorized && holdsGeneralRowPredicated(kernel, sched);
  }

  LogicalResult emit(StringRef name);

private:
  // Constants and small helpers.
  Value i64c(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); }
  Value trueValue() { return arith::ConstantIntOp::create(b, loc, 1, 1); }
  Value f32c(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat((float)v));
  }
  Value idxToI64(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value minI(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  VectorType vecOf(Type element) {
    return VectorType::get({sched.chunk}, element);
  }
  Value splat(Value scalar) {
    return vector::BroadcastOp::create(b, loc, vecOf(scalar.getType()), scalar);
  }
  Value gep(Value base, Type element, Value offset) {
    return LLVM::GEPOp::create(b, loc, base.getType(), element, base,
                               ValueRange{offset});
  }

  // Kernel structure.
  LogicalResult checkSupported();
  void bindParameters(gpu::GPUFuncOp func);
  LogicalResult emitChain(unsigned chainIndex, Value localCta);

  // Per-row state.
  Value rowOffset(Value tensor, BroadcastKind kind);
  // Prefetches into L2 the chunks of the [B, S, D] inputs no reduction
  // reads, loaded after the row's last exchange (RowPhases.cpp).
  void prefetchEpilogueRows(const Chain &chain, ArrayRef<Chunk> chunks,
                            ArrayRef<ReduceOp> reductions);
  SmallVector<Value> stridesOf(Value tensor);
  void evaluateReadyScalars(const Chain &chain);
  void emitReciprocals(const Chain &chain);
  Value exp2Approx(Value x);
  Value scalarOf(Value v);

  // Chunk evaluation.
  Value evaluate(Value v, Chunk &chunk);
  Value loadRow(Value ptr, Type element, Value rowOff, Chunk &chunk,
                bool invariant, BroadcastKind kind);
  /// A peeled variant's load: 16-byte accesses for a row tensor, element
  /// by element for one broadcast along the rows.
  Value loadPeeled(Value ptr, Type element, Value rowOff, Chunk &chunk,
                   bool invariant, BroadcastKind kind);
  /// Whether a peeled variant loads an operand broadcast along the rows of
  /// `bytes` per element from aligned 16-byte granules (loadShifted).
  bool shiftsBroadcast(unsigned bytes) const;
  /// A peeled chunk of an operand broadcast along the rows, from the
  /// aligned 16-byte granules that hold it, shifted into place.
  Value loadShifted(Value ptr, Type element, Value rowOff, Chunk &chunk,
                    bool invariant);
  /// Whether each element of a peeled chunk is in the row.
  SmallVector<Value> peeledValid(Chunk &chunk);
  Value evaluateRope(RopeOp rope, Chunk &chunk);
  /// Whether evaluateRope takes `rope`'s partner elements from registers
  /// (a swap inside the chunk, or a shuffle from the partner's lane) rather
  /// than loading them from memory, where an in-place store of another
  /// thread could overwrite them first.
  bool ropePartnerInRegisters(RopeOp rope);
  Value emitElementwise(Operation *op, ArrayRef<Value> operands);
  Value toF32(Value v);
  Value fromF32(Value v, Type element);
  Value mapScalars(Value v, function_ref<Value(Value)> fn);
  Value sqrtRn(Value x);
  Value rsqrtRefined(Value x);
  Value callF32(StringRef intrinsic, Value e);
  Chunk makeChunk(Value chunkIndex, Value numChunks);
  /// A general variant's chunk of one element known to be in the row: its
  /// index unclamped, its mask true (the streamed loop's full iterations).
  Chunk makeInRowChunk(Value chunkIndex);
  /// A general variant whose elements are loaded predicated on being in
  /// the row, from unclamped indices (holdsGeneralRowPredicated).
  bool predicatedElements() const { return predicated; }
  Chunk makeShiftedChunk(Chunk &of, function_ref<Value(Value)> index);

  // Reductions and stores.
  Value reduceChunk(ReduceOp op, Chunk &chunk);
  Value reduceLanes(Value v, ReduceKind kind, int64_t begin, int64_t count);
  Value combine(ReduceKind kind, Value x, Value y);
  Value allReduce(Value partial, ReduceKind kind, unsigned slot);
  /// Several reductions of the row at once, in slots firstSlot, firstSlot +
  /// 1, ...: one nfgpu.row_reduce (one shuffle tree of several values, one
  /// CTA barrier; -nf-lower-row-reductions), then the means.
  /// With `expSum`, partials[1] is a sum of exponentials relative to the
  /// maximum partials[0] (an nfgpu exp_sum).
  SmallVector<Value> allReduce(ArrayRef<Value> partials,
                               ArrayRef<ReduceKind> kinds, unsigned firstSlot,
                               bool expSum = false);
  /// A thread's running maximum and sum of e^(x - maximum) (-inf and 0
  /// before its first chunk), updated with `chunk`.
  std::pair<Value, Value> expSumStep(ReduceOp max, ReduceOp sum, Chunk &chunk,
                                     Value m, Value s);
  void storeRow(unsigned result, Value value, Chunk &chunk);
  void storePerRowValues(ArrayRef<std::pair<unsigned, Value>> outputs);
  /// The chain's [B, S] results and the per-row values they store.
  SmallVector<std::pair<unsigned, Value>> perRowOutputs;

  // Group values (GroupReductions.cpp).
  LogicalResult checkGroups();
  SmallVector<Value> evaluateGroup(Value v, Chunk &chunk);
  Value expandGroup(ArrayRef<Value> values, int64_t group);
  SmallVector<Value> reduceGroups(ReduceOp op, Chunk &chunk);
  Value segmentReduce(Value partial, ReduceKind kind, int64_t lanes);
  Value divideByGroup(DivOp op, Chunk &chunk);
  void storeGroups(unsigned result, ArrayRef<Value> values, int64_t group,
                   Chunk &chunk);
  /// Stores result `result`, a row or group value, from `chunk`.
  void storeOutput(unsigned result, Value value, Chunk &chunk);

  // Recomputing from narrow values after the reduction (maybeRematerialize,
  // Rematerialize.cpp).
  unsigned liveBits(Chunk &chunk, ArrayRef<Value> needed, bool keepAll);
  void maybeRematerialize(MutableArrayRef<Chunk> chunks, ArrayRef<Value> needed,
                          unsigned index);
  Value opaque(Value v, Value zero);
  /// Values kept across every reduction: the loads of a tensor a result
  /// overwrites in place before the row's first exchange (emitRow), and a
  /// persistent CTA's row-invariant values (getRowInvariantValues).
  DenseSet<Value> pinnedLoads;
  unsigned chainIndex = 0;

  KernelOp kernel;
  ChainAnalysis chains;
  Schedule sched;
  bool vectorized;
  /// A peeled variant (#nf.variant's `peeled`): chunks of `sched.chunk`
  /// elements aligned in memory rather than in the row, so a row's first
  /// and last chunk are partly outside it.
  bool peeled;
  /// The target converts f32 pairs to fp8 in one instruction (sm_90 on).
  bool hardwareFp8;
  /// The variant's flags (#nf.variant; -nf-materialize-variants sets them):
  /// the epilogue's [B, S, D] inputs are prefetched into L2 before the
  /// first exchange (prefetchEpilogueRows); a thread's rows share each
  /// exchange (emitChain); the row is recomputed between reductions for a
  /// third CTA per SM (emitRows).
  bool l2Prefetch, jointRows, thirdCta;
  /// The kernel applies rotary embedding; and also writes a result in place
  /// (partners are then read where other chunks store).
  bool hasRope = false, inPlaceRope = false;
  bool predicated = false;
  OpBuilder &b;
  Location loc;

  // Parameters.
  DenseMap<unsigned, Value> argValue; // pointer or scalar
  DenseMap<unsigned, Value> resultPtr;
  DenseMap<unsigned, SmallVector<Value>> argStrides, resultStrides;
  DenseMap<unsigned, Value> cacheRows;
  SmallVector<Value> chainRows, chainS, chainF, chainSDivisor;
  Value rowLength;

  // Thread coordinates. `lane` is the thread's index among its row's
  // threads; `warpLane` (i32) its lane in the hardware warp.
  Value lane, rowInCta, warpLane;

  // Cluster schedules (sched.clusterSize > 1): the CTA's rank in its
  // cluster, and whether the cluster barrier arrived on at the row's start
  // (nfgpu.cluster_arrive) still needs its wait, which the next exchange
  // does before it writes into another CTA's shared memory.
  Value clusterRank;
  bool clusterWaitPending = false;

  // Staged rows: a staged variant copies its chunks of every [B, S, D]
  // load into shared memory (cp.async) and reads them back from there in
  // each pass, so that no row element is live in registers across a
  // reduction (LowerRows.cpp, stageRow).
  bool stagedRows = false;
  /// The most f32 values a thread of a staged row holds across a reduction
  /// (maybeRematerialize): with 32, ptxas kept softmax's CTAs of 256
  /// threads at 64 registers, four per SM, in every cluster size; with 40,
  /// at 64 in clusters of 4 but 80 in clusters of 8.
  static constexpr unsigned kMaxHeldStagedValues = 32;
  std::string stageBuffer;
  void stageRow(const Chain &chain, MutableArrayRef<Chunk> chunks);
  // Where each chunk of the chain's [B, S, D] inputs lies in the stage
  // buffer, `slotOffset` bytes in (Chunk::staged), and the copies of the
  // current row's chunks there: the layout stageRow and a persistent CTA's
  // slots share.
  void placeStagedChunks(const Chain &chain, MutableArrayRef<Chunk> chunks,
                         Value slotOffset);
  void copyStagedChunks(const Chain &chain, ArrayRef<Chunk> chunks);

  // Persistent CTAs (PersistentRows.cpp): the vectorized variant of a
  // persistent schedule walks rows of one batch entry, its row-invariant
  // operands loaded once (pinnedLoads), its rows staged in two slots of
  // the stage buffer one row ahead.
  bool persistentRows = false;
  void emitPersistentRows(unsigned chainIndex, Value localCta,
                          ArrayRef<ReduceOp> reductions,
                          ArrayRef<std::pair<unsigned, Value>> outputs,
                          Value numChunks);

  // Row state, reset per row. `rowHead` (peeled variants): how many
  // elements past an aligned address the row starts, in [0, chunk).
  Value rowB, rowS, rowFrame, rowValid, rowHead;
  DenseMap<Value, Value> scalars;
  DenseMap<Value, Value> rowOffsets;
  DenseMap<Operation *, Value> selectTaken;
  DenseMap<Operation *, std::pair<Value, Value>> ropePosition;
  /// Per `nf.div` of a row by a per-row scalar s: (k, 1/(s*k)), the row's
  /// quotient being (x*k) * (1/(s*k)), k null for 1; see emitReciprocals.
  DenseMap<Operation *, std::pair<Value, Value>> reciprocals;
  unsigned reductionSlot = 0;

  /// The row state of one of a thread's rows while another is emitted.
  struct RowState {
    Value rowB, rowS, rowFrame, rowValid, rowHead;
    DenseMap<Value, Value> scalars, rowOffsets;
    DenseMap<Operation *, Value> selectTaken;
    DenseMap<Operation *, std::pair<Value, Value>> ropePosition;
    DenseMap<Operation *, std::pair<Value, Value>> reciprocals;
  };
  void swapRow(RowState &other) {
    std::swap(rowB, other.rowB);
    std::swap(rowS, other.rowS);
    std::swap(rowFrame, other.rowFrame);
    std::swap(rowValid, other.rowValid);
    std::swap(rowHead, other.rowHead);
    std::swap(scalars, other.scalars);
    std::swap(rowOffsets, other.rowOffsets);
    std::swap(selectTaken, other.selectTaken);
    std::swap(ropePosition, other.ropePosition);
    std::swap(reciprocals, other.reciprocals);
  }
  /// Sets up row `row` of chain `chainIndex` (B * S rows): its batch entry
  /// and token, validity, operand offsets. A caller that knows the entry and
  /// token passes them (`row` is then unused) and no division is emitted.
  void setUpRow(unsigned chainIndex, Value row, Value batch = {},
                Value token = {});
  /// n / S of chain `chainIndex` for an i32 n < 2^31, from the runtime's
  /// multiplier and shift (runtime/Divisor.h): three instructions where a
  /// 32-bit division by S is about 25.
  Value divideByS(unsigned chainIndex, Value n32);
  /// B of chain `chainIndex` (its rows / S), as i64.
  Value batchCount(unsigned chainIndex);

  /// Reduces, computes and stores the current row from `chunks`.
  void emitRow(const Chain &chain, MutableArrayRef<Chunk> chunks,
               ArrayRef<ReduceOp> reductions,
               ArrayRef<std::pair<unsigned, Value>> outputs);
  /// Reduces, computes and stores the thread's rows (each row's chunks;
  /// row 0's state current, row g's in rowStates[g]) phase by phase: one
  /// exchange per reduction for all of them. Rows without rotary partners.
  void emitRows(const Chain &chain, ArrayRef<MutableArrayRef<Chunk>> rows,
                MutableArrayRef<RowState> rowStates,
                ArrayRef<ReduceOp> reductions,
                ArrayRef<std::pair<unsigned, Value>> outputs);

  /// Emits the streaming passes of the thread's rows.
  void emitStreamedRows(unsigned chainIndex, int64_t group,
                        MutableArrayRef<RowState> rowStates,
                        ArrayRef<ReduceOp> reductions,
                        ArrayRef<std::pair<unsigned, Value>> outputs,
                        Value numChunks);
  /// Chunks per iteration of the streamed loops (chunkLoop).
  int64_t streamedUnroll();
  scf::ForOp
  chunkLoop(Value numChunks, ValueRange init,
            function_ref<SmallVector<Value>(Chunk &, ValueRange)> body,
            function_ref<void(Chunk &)> prefetch = nullptr);
};

/// Whether a per-row scalar or group value is known to be at least the
/// smallest normal f32 in magnitude, or NaN (its reciprocal is finite).
bool isNormalOrNaN(Value v);

/// Whether `v` is computed from the result of one of `reductions`.
bool dependsOnAny(Value v, ArrayRef<ReduceOp> reductions);

} // namespace mlir::nf::lowering

#endif // NF_PASSES_KERNELLOWERING_H
