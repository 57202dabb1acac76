//===- PersistentRows.cpp - persistent CTAs in -nf-lower-to-gpu -----------===//
//
// Part of normfuse. The vectorized variant of a persistent schedule
// (Schedule::persistent): the runtime launches P CTAs per batch entry (as
// many as fit on the GPU at once, at most one per rows_per_cta tokens), and
// CTA p of entry b computes its rows s = p, p + P, ... < S one after the
// other (with R rows per CTA, rows of 32 threads or fewer: the tokens
// (p + kP) * R + r, row r of the CTA taking the r-th).
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

/// The values of `chain` a persistent CTA computes once, before its row
/// loop: the loads that read the same values for every row of a batch
/// entry, and the row values computed from those and constants alone (a
/// modulation's `1 + scale`), which would otherwise be recomputed for
/// every row, where holding one takes no more registers than holding what
/// it is computed from (each of its row operands is used by it alone, and
/// it is no wider than the widest). Not divisions (a row divided by a
/// scalar multiplies by a per-row reciprocal).
static SmallVector<Value> getRowInvariantValues(const Chain &chain) {
  DenseSet<Value> invariant;
  SmallVector<Value> values;
  auto bits = [](Value v) {
    return getRowElementType(v.getType()).getIntOrFloatBitWidth();
  };
  for (Operation *op : chain.ops) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      if (isRowInvariant(load.getKind())) {
        invariant.insert(load.getResult());
        values.push_back(load.getResult());
      }
      continue;
    }
    if (op->getNumResults() != 1 || !isa<RowType>(op->getResult(0).getType()) ||
        isa<SelectLoadOp, RopeOp, ReduceOp, DivOp>(op))
      continue;
    bool hoisted = true;
    unsigned widest = 0;
    for (Value operand : op->getOperands()) {
      if (isa<RowType>(operand.getType())) {
        hoisted &= invariant.contains(operand) && operand.hasOneUse();
        widest = std::max(widest, bits(operand));
      } else {
        hoisted &= isa_and_nonnull<ConstantOp>(operand.getDefiningOp());
      }
    }
    if (!hoisted || widest == 0 || bits(op->getResult(0)) > widest)
      continue;
    invariant.insert(op->getResult(0));
    values.push_back(op->getResult(0));
  }
  return values;
}

void KernelLowering::emitPersistentRows(
    unsigned c, Value localCta, ArrayRef<ReduceOp> reductions,
    ArrayRef<std::pair<unsigned, Value>> outputs, Value numChunks) {
  const Chain &chain = chains.getChains()[c];
  chainIndex = c;
  Value s = chainS[c];
  // rows = B * S. The launch has B * P CTAs (the runtime; a launch of one
  // CTA per rows_per_cta rows is P = ceil(S / rows_per_cta) for B = 1).
  // CTA p of entry b walks the tokens p * R, (p + P) * R, ... (R =
  // rows_per_cta), its row r each one's token + r. Every row of the CTA
  // runs the same iterations (its barriers and shuffles stay uniform); a
  // token past S computes on the last token and stores nothing.
  int64_t R = sched.rowsPerCta;
  Value batches = batchCount(c);
  Value grid = idxToI64(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  Value perBatch = div(grid, batches);
  Value batch = div(localCta, perBatch);
  // With one row per CTA the grid is a multiple of B (B * P, or B * S
  // where one CTA per row is launched). With R, one CTA per R rows of the
  // whole launch (a reader that does not know the schedule) need not be:
  // the CTAs past B * P walk nothing, and read the last entry's operands.
  // (Not for R = 1: the bound held in a register took layernorm_modulate_
  // quant_fp8's 512 x 4 rows to 8 bytes of spill at D = 16384.)
  Value end = s;
  if (R > 1) {
    end = select(lt(batch, batches), s, i64c(0));
    batch = select(lt(batch, batches), batch, sub(batches, i64c(1)));
  }
  Value firstBase = mul(rem(localCta, perBatch), i64c(R));
  Value step = mul(perBatch, i64c(R));
  // Rows are set up from (batch, token): no division per row.
  auto setUp = [&](Value base) {
    setUpRow(c, Value(), batch, R > 1 ? add(base, rowInCta) : base);
  };

  // The chunks, and the row-invariant operands loaded into them once.
  setUp(firstBase);
  SmallVector<Chunk> proto;
  for (int64_t k = 0; k < sched.chunksPerThread; ++k)
    proto.push_back(
        makeChunk(add(i64c(k * sched.threadsPerRow), lane), numChunks));
  for (Value v : getRowInvariantValues(chain)) {
    for (Chunk &chunk : proto)
      evaluate(v, chunk);
    // Kept across every reduction (maybeRematerialize).
    pinnedLoads.insert(v);
  }

  // Two slots per row of the CTA for its share of the row's [B, S, D]
  // inputs. Copies row `row`'s chunks into `slot` (then commits the group,
  // copies or not, so that "all but the newest group" is the row before).
  Schedule staged = sched;
  staged.staged = true;
  Value slotBytes = i64c(getStagedRowBytes(kernel, staged));
  auto slotOffset = [&](Value slot) {
    return mul(R > 1 ? add(mul(rowInCta, i64c(2)), slot) : slot, slotBytes);
  };
  auto stage = [&](Value token, Value slot, Value copy) {
    setUp(token);
    SmallVector<Chunk> chunks(proto);
    placeStagedChunks(chain, chunks, slotOffset(slot));
    auto ifOp = scf::IfOp::create(b, loc, copy, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      copyStagedChunks(chain, chunks);
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  };

  // The first row (with R = 1, firstBase < P <= S: every CTA has one).
  stage(firstBase, i64c(0), R > 1 ? lt(firstBase, end) : trueValue());
  auto loop =
      scf::ForOp::create(b, loc, firstBase, end, step, ValueRange{i64c(0)});
  OpBuilder::InsertionGuard guard(b);
  // The builder adds an empty yield when there are no iteration values.
  if (!loop.getBody()->empty() &&
      loop.getBody()->back().hasTrait<OpTrait::IsTerminator>())
    loop.getBody()->getTerminator()->erase();
  b.setInsertionPointToEnd(loop.getBody());
  Value current = loop.getInductionVar();
  Value slot = loop.getRegionIterArgs()[0];
  Value nextSlot = sub(i64c(1), slot);
  Value next = add(current, step);
  stage(next, nextSlot, lt(next, end));
  // Every group but the newest (the next row's) is complete: this row.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 1);

  setUp(current);
  SmallVector<Chunk> chunks(proto);
  placeStagedChunks(chain, chunks, slotOffset(slot));
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
