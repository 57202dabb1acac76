//===- RowPhases.cpp - a register-resident row's phases -------------------===//
//
// Part of normfuse. In -nf-lower-to-gpu: a register-resident row's phases
// once its chunks are loaded (outputs stored before the first exchange, the
// reductions and their exchanges, the epilogue's stores), for one row or
// for the rows a thread holds together; and the L2 prefetch of the
// epilogue's rows. Where the rows are set up and which schedule runs them
// is in LowerRows.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"
#include "passes/QuantizedCasts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::lowering;

/// The variant's `l2_prefetch` (-nf-materialize-variants decides it,
/// nf::prefetchesEpilogueRows): a [B, S, D] input that no reduction reads is
/// loaded after the row's last exchange, so its chunks are prefetched into
/// L2 after the row's own loads, and the epilogue's loads hit L2.
void KernelLowering::prefetchEpilogueRows(const Chain &chain,
                                          ArrayRef<Chunk> chunks,
                                          ArrayRef<ReduceOp> reductions) {
  if (!l2Prefetch)
    return;
  for (LoadOp load : getEpilogueRowLoads(chain, reductions)) {
    auto type = cast<RankedTensorType>(load.getSource().getType());
    Type element = getStorageType(type.getElementType());
    Value ptr = argValue[cast<BlockArgument>(load.getSource()).getArgNumber()];
    Value rowOff = rowOffset(load.getSource(), load.getKind());
    // chunk.base of a chunk past the row is clamped into it: no address
    // outside the tensor.
    for (const Chunk &chunk : chunks)
      NVVM::PrefetchOp::create(
          b, loc,
          NVVM::PrefetchCacheLevelAttr::get(b.getContext(),
                                            NVVM::PrefetchCacheLevel::L2),
          NVVM::CacheEvictionPriorityAttr(),
          gep(ptr, element, add(rowOff, chunk.base)), Value());
  }
}

/// Whether `v` is computed from the result of any reduction, of the row or
/// of a group.
static bool dependsOnReduction(Value v) {
  bool found = false;
  walkDefiningOps(v, [&](Operation *op) {
    found = found || isa<ReduceOp>(op);
    return !found;
  });
  return found;
}

void KernelLowering::emitRow(const Chain &chain, MutableArrayRef<Chunk> chunks,
                             ArrayRef<ReduceOp> reductions,
                             ArrayRef<std::pair<unsigned, Value>> outputs) {
  MutableArrayRef<Chunk> rows[] = {chunks};
  emitRows(chain, rows, {}, reductions, outputs);
}

void KernelLowering::emitRows(const Chain &chain,
                              ArrayRef<MutableArrayRef<Chunk>> rows,
                              MutableArrayRef<RowState> rowStates,
                              ArrayRef<ReduceOp> reductions,
                              ArrayRef<std::pair<unsigned, Value>> outputs) {
  assert((rows.size() == 1 || !hasRope) &&
         "rotary rows are emitted one by one");
  // Runs `fn` on each of the thread's rows with that row's state current
  // (row 0's is; rowStates[g] holds row g's, see emitChain).
  auto forEachRow = [&](function_ref<void(size_t, MutableArrayRef<Chunk>)> fn) {
    for (size_t g = 0; g < rows.size(); ++g) {
      if (g > 0)
        swapRow(rowStates[g]);
      fn(g, rows[g]);
      if (g > 0)
        swapRow(rowStates[g]);
    }
  };
  // An output computed from no reduction's result (fused add + RMSNorm's
  // r = x + residual, the residual stream) is stored before the row's
  // first exchange: its stores leave a phase earlier, and its values are
  // not held across the barrier. Written in place, the loads of the tensor
  // it overwrites are then kept across every reduction (pinnedLoads): a
  // row that rematerialization would read again from memory would read
  // the stored result. Not with rotary embedding, whose partners may be
  // read after another thread's store. Not where it is written in place in
  // a row of a warp or less (reduced by shuffles alone): there fused add +
  // RMSNorm's rows of 3 or 4 chunks in 16 threads ran at 40-46% of a copy
  // wherever a row is not a multiple of 128 bytes, and at 92-95% with the
  // stores after the exchange; outputs to another tensor (seed #1's r) lost
  // up to 10 points stored late (H200, D = 64-1023, docs/benchmarks.md
  // "In-place stores after the exchange in rows of a warp or less").
  bool crossWarpRow = sched.spansWarps();
  auto storedEarly = [&](const std::pair<unsigned, Value> &output) {
    return !dependsOnReduction(output.second) &&
           (crossWarpRow || !kernel.getInPlaceArgument(output.first));
  };
  SmallVector<std::pair<unsigned, Value>> lateOutputs;
  if (!reductions.empty() && !hasRope) {
    // The loads the early outputs need, of every chunk, come first: a load
    // of a tensor written in place cannot move above a store that may alias
    // it, so chunk k + 1's loads would wait for chunk k's store.
    SetVector<Operation *> loads;
    for (const auto &output : outputs) {
      if (!storedEarly(output))
        continue;
      walkDefiningOps(output.second, [&](Operation *op) {
        if (!isa<LoadOp, SelectLoadOp>(op))
          return true;
        loads.insert(op);
        return false;
      });
    }
    forEachRow([&](size_t, MutableArrayRef<Chunk> chunks) {
      for (Chunk &chunk : chunks)
        for (Operation *op : chain.ops)
          if (loads.contains(op))
            evaluate(op->getResult(0), chunk);
    });
    for (const auto &output : outputs) {
      if (!storedEarly(output)) {
        lateOutputs.push_back(output);
        continue;
      }
      if (std::optional<unsigned> arg = kernel.getInPlaceArgument(output.first))
        for (Operation *op : chain.ops)
          if (auto load = dyn_cast<LoadOp>(op))
            if (load.getSource() == kernel.getBody().front().getArgument(*arg))
              pinnedLoads.insert(load.getResult());
      forEachRow([&](size_t, MutableArrayRef<Chunk> chunks) {
        for (Chunk &chunk : chunks)
          storeOutput(output.first, output.second, chunk);
      });
    }
    outputs = lateOutputs;
  }
  // With several reductions, a thread of a 512-thread CTA that holds at most
  // 24 elements recomputes from the narrow row before each reduction after
  // the first and before the epilogue. That puts the widening (and
  // `x - mean`) on the path to the next barrier, which pays only where the
  // registers it frees buy occupancy: two 512-thread CTAs per SM at 64
  // registers, three at 40 (LayerNorm and softmax 512 x 3; H200: D = 12288
  // 77.7 -> 83.3% and 80.6 -> 94.3% of a copy). At 512 x 4 ptxas took 52
  // registers, still two CTAs (LayerNorm 16384 81.8 -> 78.5); smaller CTAs,
  // already four or more per SM, measured 1 to 10 points slower at most D
  // (docs/benchmarks.md, "Recomputing between reductions"). Not where a
  // later reduction reads a broadcast operand (laterReductionReadsBroadcast),
  // except in a cluster, whose schedule was chosen for the registers the
  // first recomputation frees (SelectSchedule.cpp). A staged row always reads
  // its chunks back from shared memory (maybeRematerialize). LayerNorm's
  // 512 x 4 and 512 x 5 rows recompute too, where nf-compile asks ptxas for a
  // third CTA per SM (the variant's `third_cta`, nf::recomputesForThirdCta;
  // the twins of chunks of 4 or 2 do not).
  bool rematerializeAll =
      reductions.size() > 1 &&
      (stagedRows ||
       (sched.recomputesBetweenReductions() &&
        (sched.clusterSize > 1 || !laterReductionReadsBroadcast(reductions))) ||
       thirdCta);
  auto neededFrom = [&](size_t first) {
    SmallVector<Value> needed;
    for (ReduceOp later : reductions.drop_front(first))
      needed.push_back(ReduceOp(later).getInput());
    for (auto &output : outputs)
      needed.push_back(output.second);
    return needed;
  };
  // Consecutive reductions none of which reads another's result share one
  // exchange (one shuffle tree of several values, one barrier): a row's
  // sum of squares and the maximum of |x * w| (nf-factor-row-scalars). So do
  // the rows of a thread where emitChain passes several: every row's partial
  // values are computed before the first shuffle, so that ptxas cannot sink
  // a later row's loads below an earlier row's exchange and stores, and the
  // rows' shuffles are independent of each other.
  for (size_t i = 0; i < reductions.size();) {
    size_t end = i + 1;
    while (end < reductions.size() &&
           !dependsOnAny(ReduceOp(reductions[end]).getInput(),
                         reductions.slice(i, end - i)))
      ++end;
    SmallVector<Value> partials;
    SmallVector<ReduceKind> kinds;
    forEachRow([&](size_t, MutableArrayRef<Chunk> chunks) {
      if (i > 0 && rematerializeAll)
        maybeRematerialize(chunks, neededFrom(i), i - 1);
      for (ReduceOp reduce : reductions.slice(i, end - i)) {
        Value partial;
        for (Chunk &chunk : chunks) {
          Value part = reduceChunk(reduce, chunk);
          partial = partial ? combine(reduce.getKind(), partial, part) : part;
        }
        partials.push_back(partial);
        kinds.push_back(reduce.getKind());
      }
      if (i == 0)
        prefetchEpilogueRows(chain, chunks, reductions);
    });
    SmallVector<Value> totals = allReduce(partials, kinds, reductionSlot);
    reductionSlot += totals.size();
    forEachRow([&](size_t g, MutableArrayRef<Chunk>) {
      for (size_t k = i; k < end; ++k)
        scalars[ReduceOp(reductions[k]).getResult()] =
            totals[g * (end - i) + k - i];
      evaluateReadyScalars(chain);
    });
    i = end;
  }
  forEachRow([&](size_t, MutableArrayRef<Chunk>) {
    storePerRowValues(perRowOutputs);
  });
  // Without rotary partners a chunk's results depend on its own elements
  // only: each chunk is computed and stored before the next one's epilogue
  // operands are loaded, so that they are not all live at once.
  if (!hasRope) {
    forEachRow([&](size_t, MutableArrayRef<Chunk> chunks) {
      if (reductions.size() == 1 || rematerializeAll)
        maybeRematerialize(chunks, neededFrom(reductions.size()),
                           reductions.size() - 1);
      for (Chunk &chunk : chunks)
        for (auto &[r, value] : outputs)
          storeOutput(r, value, chunk);
    });
    return;
  }
  MutableArrayRef<Chunk> chunks = rows.front();
  // The whole row is computed before any of it is stored: an in-place
  // result may overwrite what another chunk still reads (a rotary partner).
  // (Group values are computed here too, into the chunks' caches.)
  SmallVector<SmallVector<Value>> values(chunks.size());
  for (auto [k, chunk] : llvm::enumerate(chunks))
    for (auto &[r, value] : outputs)
      values[k].push_back(
          isa<GroupType>(value.getType()) ? Value() : evaluate(value, chunk));
  for (Chunk &chunk : chunks)
    for (auto &[r, value] : outputs)
      if (isa<GroupType>(value.getType()))
        evaluateGroup(value, chunk);
  // Partners taken from registers (pairs inside a chunk, or a shuffle from
  // the partner's lane) read no memory that a store could overwrite: no
  // barrier, which every row of a CTA would otherwise wait at.
  bool partnerLoaded = llvm::any_of(chain.ops, [&](Operation *op) {
    auto rope = dyn_cast<RopeOp>(op);
    return rope && !ropePartnerInRegisters(rope);
  });
  bool needsBarrier =
      partnerLoaded && llvm::any_of(outputs, [&](auto &output) {
        return kernel.getInPlaceArgument(output.first).has_value();
      });
  if (needsBarrier)
    gpu::BarrierOp::create(b, loc);
  for (auto [k, chunk] : llvm::enumerate(chunks))
    for (auto [o, output] : llvm::enumerate(outputs))
      if (values[k][o])
        storeRow(output.first, values[k][o], chunk);
      else
        storeOutput(output.first, output.second, chunk);
}
