//===- PersistentRows.cpp - persistent CTAs in -nf-lower-to-gpu -----------===//
//
// Part of normfuse. The vectorized variant of a persistent schedule
// (Schedule::persistent): the runtime launches P CTAs per batch entry (P at
// most S, as many as fit on the GPU at once), and CTA p of entry b computes
// its rows s = p, p + P, ... < S one after the other.
//
// Why: the operands broadcast along the row ([D], [B, 1, D], [1]) are the
// same for every row of a batch entry. One CTA per row reads them again for
// every row from L1/L2 between the statistics and the epilogue, which
// lengthens every row's chain of dependent phases; a CTA that walks rows
// loads them once and holds them in registers. Holding them costs
// registers, so the row itself is not held across rows: its [B, S, D]
// inputs are copied into shared memory (cp.async, two slots of dynamic
// shared memory, LowerToGPU.cpp) one row ahead, and each row reads its
// chunks back from there once, as if loaded from global memory (a staged
// row re-reads them in every pass, which was slower here). A hand-written
// prototype of layernorm_modulate_quant_fp8 measured the three pieces
// apart (bench/prototypes/staged_rows.cu; docs/benchmarks.md, "Persistent
// CTAs").
//
//===----------------------------------------------------------------------===//

#include "dialect/NfGpuDialect.h"
#include "passes/KernelLowering.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::lowering;

/// Whether a load of this kind reads the same values for every row of a
/// batch entry.
static bool isRowInvariant(BroadcastKind kind) {
  return kind == BroadcastKind::One || kind == BroadcastKind::D ||
         kind == BroadcastKind::BD || kind == BroadcastKind::B1D;
}

void KernelLowering::emitPersistentRows(
    unsigned c, Value localCta, ArrayRef<ReduceOp> reductions,
    ArrayRef<std::pair<unsigned, Value>> outputs, Value numChunks) {
  const Chain &chain = chains.getChains()[c];
  chainIndex = c;
  Value s = chainS[c];
  // rows = B * S. The launch has B * P CTAs, P <= S (the runtime; a launch
  // of one CTA per row is P = S).
  Value batches = div(chainRows[c], s);
  Value grid = idxToI64(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  Value perBatch = div(grid, batches);
  Value batch = div(localCta, perBatch);
  Value firstS = rem(localCta, perBatch);
  // Rows are set up from (batch, token): no division per row.
  auto setUp = [&](Value token) { setUpRow(c, Value(), batch, token); };

  // The chunks, and the row-invariant operands loaded into them once.
  setUp(firstS);
  SmallVector<Chunk> proto;
  for (int64_t k = 0; k < sched.chunksPerThread; ++k)
    proto.push_back(
        makeChunk(add(i64c(k * sched.threadsPerRow), lane), numChunks));
  for (Operation *op : chain.ops)
    if (auto load = dyn_cast<LoadOp>(op);
        load && isRowInvariant(load.getKind())) {
      for (Chunk &chunk : proto)
        evaluate(load.getResult(), chunk);
      // Kept across every reduction (maybeRematerialize).
      pinnedLoads.insert(load.getResult());
    }

  // Two slots of the CTA's share of the row's [B, S, D] inputs. Copies
  // row `row`'s chunks into `slot` (then commits the group, copies or not,
  // so that "all but the newest group" is the row before).
  Schedule staged = sched;
  staged.staged = true;
  Value slotBytes = i64c(getStagedRowBytes(kernel, staged));
  auto stage = [&](Value token, Value slot, Value copy) {
    setUp(token);
    SmallVector<Chunk> chunks(proto);
    placeStagedChunks(chain, chunks, mul(slot, slotBytes));
    auto ifOp = scf::IfOp::create(b, loc, copy, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      copyStagedChunks(chain, chunks);
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  };

  // The first row (firstS < P <= S: every CTA has one).
  stage(firstS, i64c(0), trueValue());
  auto loop =
      scf::ForOp::create(b, loc, firstS, s, perBatch, ValueRange{i64c(0)});
  OpBuilder::InsertionGuard guard(b);
  // The builder adds an empty yield when there are no iteration values.
  if (!loop.getBody()->empty() &&
      loop.getBody()->back().hasTrait<OpTrait::IsTerminator>())
    loop.getBody()->getTerminator()->erase();
  b.setInsertionPointToEnd(loop.getBody());
  Value current = loop.getInductionVar();
  Value slot = loop.getRegionIterArgs()[0];
  Value nextSlot = sub(i64c(1), slot);
  Value next = add(current, perBatch);
  stage(next, nextSlot, lt(next, s));
  // Every group but the newest (the next row's) is complete: this row.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 1);

  setUp(current);
  SmallVector<Chunk> chunks(proto);
  placeStagedChunks(chain, chunks, mul(slot, slotBytes));
  reductionSlot = 0;
  emitRow(chain, chunks, reductions, outputs);
  // The next row's first exchange writes the slots this row's read. With
  // two exchanges or more a thread reaches it only past a later barrier of
  // this row, which every thread reaches after reading the earlier slots;
  // with one, a barrier here.
  unsigned exchanges = 0;
  loop.getBody()->walk([&](nfgpu::RowReduceOp) { ++exchanges; });
  if (exchanges == 1 && sched.threadsPerRow > 32)
    gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, ValueRange{nextSlot});
}
