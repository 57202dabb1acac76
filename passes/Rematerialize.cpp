//===- Rematerialize.cpp - recomputing across a reduction -----------------===//
//
// Part of normfuse. In -nf-lower-to-gpu's register-resident rows: which
// values a thread keeps across a reduction's barrier and which it
// recomputes from the narrow row as loaded after it (fewer registers live
// at the barrier, more CTAs per SM), and where that pays.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::lowering;

/// Whether `v` (cached as `value`), computed before the reduction, stays in
/// registers across it when the thread rematerializes: narrow values (a row
/// as loaded, or rounded to bf16 / f16) pass through an opaque copy, values
/// that take more than a few instructions to recompute (a transcendental, a
/// square root, a division by a row) are kept; the rest is recomputed.
static bool isKeptAcrossReduction(Value v, Value value) {
  Operation *op = v.getDefiningOp();
  if (getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth() < 32)
    return true;
  return isa_and_nonnull<ExpOp, TanhOp, SigmoidOp, SqrtOp, RsqrtOp>(op) ||
         (isa_and_nonnull<DivOp>(op) &&
          isa<RowType>(op->getOperand(1).getType()));
}

/// Bits per element the thread holds across the reduction to compute
/// `needed` from what `chunk` has cached: every cached value it depends on
/// (`keepAll`), or only those rematerialization keeps. Operands not cached
/// are loaded after the reduction and cost no register across it.
unsigned KernelLowering::liveBits(Chunk &chunk, ArrayRef<Value> needed,
                                  bool keepAll) {
  DenseSet<Value> seen;
  SmallVector<Value> stack(needed);
  unsigned bits = 0;
  while (!stack.empty()) {
    Value v = stack.pop_back_val();
    if (!isa<RowType>(v.getType()) || !seen.insert(v).second)
      continue;
    auto cached = chunk.cache.find(v);
    // A cached load that rematerialization drops is loaded again: counted
    // too, for the latency and the registers its reload takes.
    if (cached != chunk.cache.end() &&
        (keepAll || isKeptAcrossReduction(v, cached->second) ||
         isa_and_nonnull<LoadOp, SelectLoadOp>(v.getDefiningOp()))) {
      bits += getElementTypeOrSelf(cached->second.getType())
                  .getIntOrFloatBitWidth();
      continue;
    }
    Operation *op = v.getDefiningOp();
    if (!op || isa<LoadOp, SelectLoadOp>(op))
      continue;
    llvm::append_range(stack, op->getOperands());
  }
  return bits;
}

/// Before the epilogue of a row program with one reduction (and, where
/// Schedule::recomputesBetweenReductions, before each reduction after the first
/// and the epilogue of one with several), which needs `needed`: when
/// recomputing from narrow values holds at most half the bits per element
/// that keeping what was computed does (a bf16 row instead of its f32
/// widening), forgets every value of each chunk that isKeptAcrossReduction
/// does not keep. ptxas, sm_90: RMSNorm 256 x 4 63 -> 40 registers, fused
/// add + RMSNorm 80 -> 52, seed #2 59 -> 42. `index` numbers the
/// rematerializations of a row: each hides its narrow values behind a
/// different zero, so that a second XOR cannot cancel the first (LLVM folds
/// `(x ^ z) ^ z` to `x`, which merged the epilogue's widening with the one
/// before the second reduction: LayerNorm 512 x 3 stayed at 62 registers).
/// Kernels with rotary embedding keep everything (partners are read from
/// other chunks).
void KernelLowering::maybeRematerialize(MutableArrayRef<Chunk> chunks,
                                        ArrayRef<Value> needed,
                                        unsigned index) {
  // A staged row recomputes every value from the chunks read back from
  // shared memory, except the f32 results of transcendentals (softmax's
  // e^(x - max), which its epilogue would otherwise compute again) while a
  // thread holds at most kMaxHeldStagedValues of them: the exponential,
  // MUFU.EX2, gives 16 results per cycle per SM (f32 multiplications: 128)
  // and shares the MIO queue with the shared-memory reads (ncu at 65536:
  // 8% of the warps' stall samples at the exponentials, half of them on
  // that queue; docs/benchmarks.md). Held in every staged schedule,
  // softmax f16 gained 3.1 / 3.7 where ptxas stayed at 64 registers (32
  // and 40 values: four CTAs of 256 threads per SM); where it took 80 or
  // 99 (three or two CTAs) it lost up to 8.9 and gained up to 2.5
  // (docs/benchmarks.md, "Staged softmax rows hold their exponentials").
  if (stagedRows) {
    unsigned held = 0;
    SmallVector<llvm::MapVector<Value, Value>> kept(chunks.size());
    for (auto [chunk, keep] : llvm::zip(chunks, kept))
      for (auto &[v, value] : chunk.cache)
        if (getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth() ==
                32 &&
            isKeptAcrossReduction(v, value)) {
          keep[v] = value;
          auto type = dyn_cast<VectorType>(value.getType());
          held += type ? type.getNumElements() : 1;
        }
    for (auto [chunk, keep] : llvm::zip(chunks, kept)) {
      chunk.cache.clear();
      if (held <= kMaxHeldStagedValues)
        chunk.cache = std::move(keep);
    }
    return;
  }
  if (!(vectorized || peeled) || hasRope || !sched.isRegisterResident() ||
      chunks.empty() ||
      2 * liveBits(chunks.front(), needed, /*keepAll=*/false) >
          liveBits(chunks.front(), needed, /*keepAll=*/true))
    return;
  // The kept narrow values pass through an XOR with a zero that neither
  // LLVM nor ptxas can prove is zero, the chain's row count shifted right
  // by 32 + index (the runtime refuses 2^31 rows or more), so that what is
  // computed from them cannot be merged (CSE) with what was computed before the
  // reduction: the f32 values then die at the reduction. (A copy, mov or
  // inline assembly, is propagated away by ptxas, which then merges the
  // conversions again.)
  Value zero = arith::TruncIOp::create(
      b, loc, b.getI32Type(),
      arith::ShRUIOp::create(b, loc, chainRows[chainIndex], i64c(32 + index)));
  for (Chunk &chunk : chunks) {
    llvm::MapVector<Value, Value> kept;
    for (auto &[v, value] : chunk.cache) {
      if (!isKeptAcrossReduction(v, value) && !pinnedLoads.contains(v))
        continue;
      bool narrow =
          getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth() < 32;
      kept[v] = narrow ? opaque(value, zero) : value;
    }
    chunk.cache = std::move(kept);
  }
}

Value KernelLowering::opaque(Value v, Value zero) {
  auto type = cast<VectorType>(v.getType());
  int64_t bits = type.getNumElements() * type.getElementTypeBitWidth();
  auto words = VectorType::get({bits / 32}, b.getI32Type());
  Value packed = vector::BitCastOp::create(b, loc, words, v);
  Value hidden = arith::XOrIOp::create(
      b, loc, packed, vector::BroadcastOp::create(b, loc, words, zero));
  return vector::BitCastOp::create(b, loc, type, hidden);
}
