//===- LowerRows.cpp - rows in -nf-lower-to-gpu ---------------------------===//
//
// Part of normfuse. The rows of a chain: where each operand's row starts,
// the per-row scalars and reciprocals, which schedule runs a thread's rows,
// and the streamed and staged rows' passes (a register-resident row's
// phases are in RowPhases.cpp, what is recomputed across a reduction in
// Rematerialize.cpp, the reductions over the row and the stores in
// LowerReductions.cpp).
//
//===----------------------------------------------------------------------===//

#include "dialect/NfGpuDialect.h"
#include "passes/KernelLowering.h"
#include "passes/Passes.h"
#include "passes/QuantizedCasts.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::lowering;

//===----------------------------------------------------------------------===//
// Rows
//===----------------------------------------------------------------------===//

SmallVector<Value> KernelLowering::stridesOf(Value tensor) {
  return argStrides.lookup(cast<BlockArgument>(tensor).getArgNumber());
}

Value KernelLowering::rowOffset(Value tensor, BroadcastKind kind) {
  auto it = rowOffsets.find(tensor);
  if (it != rowOffsets.end())
    return it->second;
  SmallVector<Value> strides = stridesOf(tensor);
  Value offset;
  switch (kind) {
  case BroadcastKind::One:
  case BroadcastKind::D:
    offset = i64c(0);
    break;
  case BroadcastKind::BD:
  case BroadcastKind::B1D:
    offset = mul(rowB, strides[0]);
    break;
  case BroadcastKind::BSD:
    offset = add(mul(rowB, strides[0]), mul(rowS, strides[1]));
    break;
  case BroadcastKind::BF1D:
    offset = add(mul(rowB, strides[0]), mul(rowFrame, strides[1]));
    break;
  }
  rowOffsets[tensor] = offset;
  return offset;
}

Value KernelLowering::scalarOf(Value v) {
  auto it = scalars.find(v);
  assert(it != scalars.end() && "per-row scalar used before it is computed");
  return it->second;
}

void KernelLowering::evaluateReadyScalars(const Chain &chain) {
  for (Operation *op : chain.ops) {
    if (op->getNumResults() != 1 || isa<RowType>(op->getResult(0).getType()) ||
        scalars.count(op->getResult(0)) || isa<ReduceOp>(op))
      continue;
    if (!llvm::all_of(op->getOperands(),
                      [&](Value v) { return scalars.count(v) > 0; }))
      continue;
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(scalarOf(v));
    scalars[op->getResult(0)] = emitElementwise(op, operands);
  }
  emitReciprocals(chain);
}

/// Whether a per-row scalar is known to be at least the smallest normal f32
/// in magnitude, or NaN: a constant, or the NaN-propagating maximum of a
/// value and such a constant (a quantization scale's lower bound). Its
/// reciprocal is then finite, so the row needs no scaling.
bool mlir::nf::lowering::isNormalOrNaN(Value v) {
  auto isNormalConstant = [](Value c) {
    auto constant = c.getDefiningOp<ConstantOp>();
    if (!constant)
      return false;
    auto value = dyn_cast<FloatAttr>(constant.getValue());
    return value && std::fabs(value.getValueAsDouble()) >= 0x1p-126 &&
           std::isfinite(value.getValueAsDouble());
  };
  if (isNormalConstant(v))
    return true;
  auto max = v.getDefiningOp<MaxOp>();
  if (!max)
    return false;
  auto positive = [&](Value c) {
    return isNormalConstant(c) &&
           cast<FloatAttr>(c.getDefiningOp<ConstantOp>().getValue())
                   .getValueAsDouble() > 0;
  };
  return positive(max.getLhs()) || positive(max.getRhs());
}

/// A division of a row by a per-row scalar s costs one reciprocal per row
/// and a multiplication per element instead of an IEEE division per element
/// (about ten instructions in SASS, which made softmax issue-bound). A
/// subnormal s would have an infinite reciprocal: s and the row are then
/// scaled by k = 2^64 (exactly), k = 1 otherwise, which costs a second
/// multiplication per element unless s is known to be normal (k is then
/// null). Both forms give RN(x * RN(1/s)) wherever 1/s is finite.
void KernelLowering::emitReciprocals(const Chain &chain) {
  for (Operation *op : chain.ops) {
    auto div = dyn_cast<DivOp>(op);
    if (!div || !isa<RowType>(div.getLhs().getType()) ||
        isa<RowType>(div.getRhs().getType()) || reciprocals.count(op) ||
        !scalars.count(div.getRhs()))
      continue;
    Value s = toF32(scalarOf(div.getRhs()));
    if (isNormalOrNaN(div.getRhs())) {
      // No scaling to undo: one multiply per element.
      reciprocals[op] = {Value(), callF32("llvm.nvvm.rcp.rn.f", s)};
      continue;
    }
    Value magnitude = math::AbsFOp::create(b, loc, s);
    Value subnormal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                            magnitude, f32c(0x1p-126));
    Value k = select(subnormal, f32c(0x1p64), f32c(1.0));
    Value r =
        callF32("llvm.nvvm.rcp.rn.f", arith::MulFOp::create(b, loc, s, k));
    reciprocals[op] = {k, r};
  }
}

/// e^x as 2^(x * log2 e) on ex2.approx.ftz: two instructions where
/// libdevice's expf takes about ten. The ftz form is MUFU.EX2 alone; the
/// form that keeps subnormal results adds a range test and predicated
/// scalings around it, which an issue-bound softmax pays twice per element
/// (docs/Rationale.md, "Exponentials flush subnormal results").
Value KernelLowering::exp2Approx(Value x) {
  Value log2e = f32c(1.4426950408889634);
  if (isa<VectorType>(x.getType()))
    log2e = splat(log2e);
  Value t = arith::MulFOp::create(b, loc, x, log2e);
  return mapScalars(
      t, [&](Value e) -> Value { return callF32(kEx2Intrinsic, e); });
}

Value KernelLowering::divideByS(unsigned c, Value n32) {
  Value divisor = chainSDivisor[c];
  Type i32 = b.getI32Type();
  Value multiplier = arith::TruncIOp::create(b, loc, i32, divisor);
  Value shift = arith::TruncIOp::create(
      b, loc, i32, arith::ShRUIOp::create(b, loc, divisor, i64c(32)));
  Value high =
      arith::MulUIExtendedOp::create(b, loc, n32, multiplier).getHigh();
  return arith::ShRUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, high, n32), shift);
}

Value KernelLowering::batchCount(unsigned c) {
  Value rows32 = arith::TruncIOp::create(b, loc, b.getI32Type(), chainRows[c]);
  return arith::ExtUIOp::create(b, loc, b.getI64Type(), divideByS(c, rows32));
}

void KernelLowering::setUpRow(unsigned c, Value row, Value batch, Value token) {
  const Chain &chain = chains.getChains()[c];
  scalars.clear();
  rowOffsets.clear();
  selectTaken.clear();
  ropePosition.clear();
  reciprocals.clear();

  // Constants are shared by every chain.
  for (Operation &op : kernel.getBody().front())
    if (auto constant = dyn_cast<ConstantOp>(op))
      scalars[constant.getResult()] = arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(constant.getValue()));

  // 32-bit arithmetic: a 64-bit division is a called subroutine in SASS
  // (slow, and its register saves show up as spills). The runtime refuses
  // chains of 2^31 rows or more.
  auto i32 = [&](Value v) {
    return arith::TruncIOp::create(b, loc, b.getI32Type(), v);
  };
  auto i64 = [&](Value v) {
    return arith::ExtUIOp::create(b, loc, b.getI64Type(), v);
  };
  Value sOfRow, s32;
  if (batch) {
    // The caller walks the tokens of one batch entry (persistent CTAs): no
    // division. Tokens past the entry's end compute on its last token and
    // store nothing. The division of the general path was 40 of the 604
    // SASS instructions of layernorm_modulate_quant_fp8's persistent 512 x 4
    // row.
    rowValid = lt(token, chainS[c]);
    token = select(rowValid, token, sub(chainS[c], i64c(1)));
    rowB = batch;
    rowS = token;
  } else {
    Value rows = chainRows[c];
    rowValid = lt(row, rows);
    // Rows past the end compute on the last row and store nothing, so every
    // thread reaches every barrier.
    row = select(rowValid, row, sub(rows, i64c(1)));
    Value row32 = i32(row);
    s32 = i32(chainS[c]);
    // A streamed row (thousands of elements per row, its loop holding up to
    // 32 loaded values per thread) keeps the division instruction: the
    // multiplier's form took norm_tanh_mul_add's 1024-thread streamed
    // general variant on sm_120 from no spill to 20 bytes (64 registers,
    // the most at 1024 threads), for a per-row cost its rows do not feel.
    Value quotient = sched.isRegisterResident()
                         ? divideByS(c, row32)
                         : arith::DivUIOp::create(b, loc, row32, s32);
    sOfRow = arith::SubIOp::create(
        b, loc, row32, arith::MulIOp::create(b, loc, quotient, s32));
    rowB = i64(quotient);
    rowS = i64(sOfRow);
  }
  // The frame of the row, for [B, F, 1, D] operands only.
  rowFrame = Value();
  if (llvm::any_of(chain.ops, [](Operation *op) {
        if (auto load = dyn_cast<LoadOp>(op))
          return load.getKind() == BroadcastKind::BF1D;
        auto selectOp = dyn_cast<SelectLoadOp>(op);
        return selectOp && selectOp.getKind() == BroadcastKind::BF1D;
      })) {
    if (!sOfRow) {
      s32 = i32(chainS[c]);
      sOfRow = i32(rowS);
    }
    Value tokensPerFrame = arith::DivUIOp::create(b, loc, s32, i32(chainF[c]));
    rowFrame = i64(arith::DivUIOp::create(b, loc, sOfRow, tokensPerFrame));
  }

  // Per-row operand state: row offsets (computed here, not on first use,
  // so that they dominate every phase's loop), which select candidate,
  // which rotary position.
  for (Operation *op : chain.ops) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      rowOffset(load.getSource(), load.getKind());
    } else if (auto selectOp = dyn_cast<SelectLoadOp>(op)) {
      rowOffset(selectOp.getFirst(), selectOp.getKind());
      rowOffset(selectOp.getSecond(), selectOp.getKind());
    }
  }
  // Peeled: the row's offset within a chunk, from the first [B, S, D]
  // load (the runtime checked that every row tensor has the same), so that
  // chunk j, elements [j * C - head, (j + 1) * C - head), is aligned.
  rowHead = Value();
  if (peeled) {
    for (Operation *op : chain.ops) {
      auto load = dyn_cast<LoadOp>(op);
      if (!load || load.getKind() != BroadcastKind::BSD)
        continue;
      auto type = cast<RankedTensorType>(load.getSource().getType());
      unsigned bytes =
          getStorageType(type.getElementType()).getIntOrFloatBitWidth() / 8;
      Value address = LLVM::PtrToIntOp::create(
          b, loc, b.getI64Type(),
          argValue[cast<BlockArgument>(load.getSource()).getArgNumber()]);
      Value start = add(div(address, i64c(bytes)),
                        rowOffset(load.getSource(), BroadcastKind::BSD));
      rowHead = andI(start, i64c(sched.chunk - 1));
      break;
    }
    assert(rowHead && "a peeled variant needs a [B, S, D] load");
  }
  for (Operation *op : chain.ops) {
    if (auto selectOp = dyn_cast<SelectLoadOp>(op)) {
      auto indexType = cast<RankedTensorType>(selectOp.getIndex().getType());
      Value ptr =
          argValue[cast<BlockArgument>(selectOp.getIndex()).getArgNumber()];
      SmallVector<Value> strides = stridesOf(selectOp.getIndex());
      Value offset = add(mul(rowB, strides[0]), rowS);
      Value index = LLVM::LoadOp::create(
          b, loc, indexType.getElementType(),
          gep(ptr, indexType.getElementType(), offset),
          indexType.getElementTypeBitWidth() / 8, false, false,
          /*isInvariant=*/true);
      Value zero = arith::ConstantIntOp::create(b, loc, index.getType(), 0);
      selectTaken[op] =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, index, zero);
    } else if (auto rope = dyn_cast<RopeOp>(op)) {
      auto posType = cast<RankedTensorType>(rope.getPositions().getType());
      Value ptr =
          argValue[cast<BlockArgument>(rope.getPositions()).getArgNumber()];
      Value pos = LLVM::LoadOp::create(b, loc, posType.getElementType(),
                                       gep(ptr, posType.getElementType(), rowB),
                                       posType.getElementTypeBitWidth() / 8,
                                       false, false, true);
      if (pos.getType() != b.getI64Type())
        pos = arith::ExtSIOp::create(b, loc, b.getI64Type(), pos);
      if (Value offset = rope.getOffset()) {
        Value off = argValue[cast<BlockArgument>(offset).getArgNumber()];
        if (off.getType() != b.getI64Type())
          off = arith::ExtSIOp::create(b, loc, b.getI64Type(), off);
        pos = add(pos, off);
      }
      Value maxPos =
          cacheRows[cast<BlockArgument>(rope.getCache()).getArgNumber()];
      Value inRange = andI(arith::CmpIOp::create(
                               b, loc, arith::CmpIPredicate::sge, pos, i64c(0)),
                           lt(pos, maxPos));
      ropePosition[op] = {select(inRange, pos, i64c(0)), inRange};
    }
  }
  evaluateReadyScalars(chain);
}

LogicalResult KernelLowering::emitChain(unsigned c, Value localCta) {
  const Chain &chain = chains.getChains()[c];
  reductionSlot = 0;
  // A thread holds `group` rows of the CTA's rows_per_cta * group, rows_per_cta
  // apart; each row is set up (row offsets, select and rotary state) before
  // any is computed.
  int64_t group = sched.rowsPerThread;
  // The CTAs of a cluster share one row (rows_per_cta and group are 1).
  if (sched.clusterSize > 1)
    localCta = div(localCta, i64c(sched.clusterSize));
  Value first = mul(localCta, i64c(sched.rowsPerCta * group));
  auto rowIndex = [&](int64_t g) {
    return add(first, add(i64c(g * sched.rowsPerCta), rowInCta));
  };
  // Every row of the thread is set up here.
  SmallVector<RowState> rowStates(group);
  for (int64_t g = 0; g < group; ++g) {
    setUpRow(c, rowIndex(g));
    swapRow(rowStates[g]);
  }
  swapRow(rowStates[0]);

  // Reductions over the row; group reductions are evaluated per chunk.
  SmallVector<ReduceOp> reductions = getRowReductions(chain);

  int64_t C = sched.chunk;
  Value numChunks =
      vectorized ? div(rowLength, i64c(C))
                 : arith::CeilDivUIOp::create(b, loc, rowLength, i64c(C));
  Operation *ret = kernel.getReturn();
  // Rows are stored chunk by chunk; per-row values ([B, S] results) once
  // per row, when the reductions are done.
  SmallVector<std::pair<unsigned, Value>> outputs;
  perRowOutputs.clear();
  for (unsigned r : chain.results) {
    Value value = ret->getOperand(r);
    (isa<RowType, GroupType>(value.getType()) ? outputs : perRowOutputs)
        .push_back({r, value});
  }

  if (persistentRows) {
    emitPersistentRows(c, localCta, reductions, outputs, numChunks);
    return success();
  }
  if (sched.isRegisterResident()) {
    chainIndex = c;
    unsigned numReductions = reductions.size();
    SmallVector<SmallVector<Chunk>> rowChunks(group);
    // In a cluster, the row's chunks are numbered across its CTAs: chunk k
    // of the thread is k * T * N + rank * T + lane (T threads, N CTAs), so
    // consecutive lanes touch consecutive chunks.
    Value firstChunk = lane;
    if (sched.clusterSize > 1)
      firstChunk = add(mul(clusterRank, i64c(sched.threadsPerRow)), lane);
    // (In each row's state: a peeled chunk depends on where its row starts.)
    for (int64_t g = 0; g < group; ++g) {
      if (g > 0)
        swapRow(rowStates[g]);
      for (int64_t k = 0; k < sched.chunksPerThread; ++k)
        rowChunks[g].push_back(makeChunk(
            add(i64c(k * sched.threadsPerRow * sched.clusterSize), firstChunk),
            numChunks));
      if (g > 0)
        swapRow(rowStates[g]);
    }
    // The cluster barrier that tells a CTA the others have started (their
    // shared memory exists and their mbarriers are initialized) is arrived
    // on here (nfgpu.cluster_arrive), waited on before the first reduction
    // writes into the others (cluster_wait): the row's loads overlap it.
    if (sched.clusterSize > 1 && !reductions.empty()) {
      Value tid32 = arith::TruncIOp::create(
          b, loc, b.getI32Type(),
          add(mul(rowInCta, i64c(sched.threadsPerRow)), lane));
      nfgpu::ClusterArriveOp::create(b, loc, tid32);
      clusterWaitPending = true;
    }
    // With several rows per thread, the [B, S, D] loads of every row are
    // issued before the first row's reductions: the loads of later rows
    // are in flight while earlier ones reduce (a barrier would keep ptxas
    // from hoisting them). So are a peeled variant's, whose reductions
    // branch per chunk (full or not), past which ptxas does not move the
    // next chunk's loads. A staged row's chunks are all copied into shared
    // memory here, and every pass reads them back from there (a staged
    // CTA holds one row).
    if (stagedRows)
      stageRow(chain, rowChunks[0]);
    else if (group > 1 || peeled) {
      for (int64_t g = 0; g < group; ++g) {
        if (g > 0)
          swapRow(rowStates[g]);
        for (Operation *op : chain.ops)
          if (auto load = dyn_cast<LoadOp>(op))
            if (load.getKind() == BroadcastKind::BSD)
              for (Chunk &chunk : rowChunks[g])
                evaluate(load.getResult(), chunk);
        if (g > 0)
          swapRow(rowStates[g]);
      }
    }
    // The variant's `joint_rows` (-nf-materialize-variants decides it,
    // nf::reducesRowsJointly): the rows go through their phases together,
    // one exchange per reduction for all of them; elsewhere each row
    // reduces and stores in turn.
    if (jointRows) {
      SmallVector<MutableArrayRef<Chunk>> rows(rowChunks.begin(),
                                               rowChunks.end());
      emitRows(chain, rows, rowStates, reductions, outputs);
      return success();
    }
    for (int64_t g = 0; g < group; ++g) {
      if (g > 0)
        swapRow(rowStates[g]);
      reductionSlot = g * numReductions;
      SmallVector<Chunk> &chunks = rowChunks[g];
      emitRow(chain, chunks, reductions, outputs);
      if (g > 0)
        swapRow(rowStates[g]);
    }
    return success();
  }

  // Streaming: one loop over the thread's chunks per phase, the thread's
  // rows one after the other (the general variant of a register-resident
  // schedule may stream; its CTAs cover as many rows).
  emitStreamedRows(c, group, rowStates, reductions, outputs, numChunks);
  return success();
}

int64_t KernelLowering::streamedUnroll() {
  // A streamed general variant (one element per chunk) of a row program
  // with one reduction takes kStreamedGeneralUnroll chunks per iteration:
  // with one 2-byte load per thread per iteration too few bytes are in
  // flight per SM to cover the memory latency. An iteration whose chunks
  // are all in the row (all but the last) loads them unclamped and
  // unmasked; the last one clamps and masks. Rows of two or more
  // reductions (read three times) keep one chunk per iteration: unrolled,
  // at odd D past 8192 (512 threads), LayerNorm gained 2 to 7 points but
  // softmax lost up to 2 and seed #1 15 to 19 (docs/benchmarks.md,
  // "Streamed odd rows").
  return !vectorized && sched.chunk == 1 && !hasRope &&
                 countRowReductions(kernel) <= 1
             ? kStreamedGeneralUnroll
             : 1;
}

scf::ForOp KernelLowering::chunkLoop(
    Value numChunks, ValueRange init,
    function_ref<SmallVector<Value>(Chunk &, ValueRange)> body,
    function_ref<void(Chunk &)> prefetch) {
  int64_t unroll = streamedUnroll();
  int64_t step = sched.threadsPerRow * unroll;
  auto loop = scf::ForOp::create(b, loc, lane, numChunks, i64c(step), init);
  OpBuilder::InsertionGuard guard(b);
  // The builder adds an empty yield when there are no iteration values.
  if (!loop.getBody()->empty())
    loop.getBody()->getTerminator()->erase();
  b.setInsertionPointToStart(loop.getBody());
  Value first = loop.getInductionVar();
  auto emitChunks = [&](bool inRow) {
    SmallVector<Chunk> chunks;
    for (int64_t u = 0; u < unroll; ++u) {
      Value index = add(first, i64c(u * sched.threadsPerRow));
      chunks.push_back(inRow ? makeInRowChunk(index)
                             : makeChunk(index, numChunks));
    }
    if (prefetch && unroll > 1)
      for (Chunk &chunk : chunks)
        prefetch(chunk);
    SmallVector<Value> acc(loop.getRegionIterArgs());
    for (Chunk &chunk : chunks)
      acc = body(chunk, acc);
    return acc;
  };
  if (unroll == 1) {
    scf::YieldOp::create(b, loc, emitChunks(/*inRow=*/false));
    return loop;
  }
  Value last = add(first, i64c((unroll - 1) * sched.threadsPerRow));
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(init).getTypes(),
                                lt(last, numChunks), /*withElseRegion=*/true);
  // Without results the builder has added empty yields: replaced.
  for (Block *block : {ifOp.thenBlock(), ifOp.elseBlock()})
    if (!block->empty())
      block->getTerminator()->erase();
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, emitChunks(/*inRow=*/true));
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, emitChunks(/*inRow=*/false));
  b.setInsertionPointAfter(ifOp);
  scf::YieldOp::create(b, loc, ifOp.getResults());
  return loop;
}

/// Whether `sum` adds e^(x - m) over the row, m the result of `max` over
/// the same row x (a softmax's denominator).
static bool isExpSumOf(ReduceOp sum, ReduceOp max) {
  if (sum.getKind() != ReduceKind::Sum || max.getKind() != ReduceKind::Max ||
      sum.getGroup() || max.getGroup())
    return false;
  auto exp = sum.getInput().getDefiningOp<ExpOp>();
  auto sub = exp ? exp.getInput().getDefiningOp<SubOp>() : SubOp();
  return sub && sub.getLhs() == max.getInput() &&
         sub.getRhs() == max.getResult();
}

void KernelLowering::emitStreamedRows(
    unsigned c, int64_t group, MutableArrayRef<RowState> rowStates,
    ArrayRef<ReduceOp> reductions, ArrayRef<std::pair<unsigned, Value>> outputs,
    Value numChunks) {
  const Chain &chain = chains.getChains()[c];
  for (int64_t g = 0; g < group; ++g) {
    if (g > 0)
      swapRow(rowStates[g]);
    reductionSlot = g * reductions.size();
    for (size_t k = 0; k < reductions.size(); ++k) {
      ReduceOp reduce = reductions[k];
      // A softmax's maximum and sum: one pass over the row instead of two,
      // and one exchange (exp_sum), each thread keeping a running maximum
      // and sum (expSumStep). Only here, where each pass reads the row from
      // memory again: in rows held in registers or shared memory, which
      // pay no second read, the exponentials computed twice (relative to
      // the thread's maximum, then to the row's) cost more than the
      // exchange saved (H200, softmax f16: D = 131072 streamed 48.0 ->
      // 60.0% of a copy; held rows -6 to -20 points at D = 100-12288, -7.0
      // at 65536, +1.3 and +1.5 at 24576 and 32768; docs/benchmarks.md
      // "Softmax's maximum and sum in one exchange").
      if (k + 1 < reductions.size() && isExpSumOf(reductions[k + 1], reduce)) {
        ReduceOp sum = reductions[k + 1];
        scf::ForOp loop =
            chunkLoop(numChunks,
                      ValueRange{f32c(-std::numeric_limits<double>::infinity()),
                                 f32c(0.0)},
                      [&](Chunk &chunk, ValueRange acc) {
                        auto [m, s] =
                            expSumStep(reduce, sum, chunk, acc[0], acc[1]);
                        return SmallVector<Value>{m, s};
                      });
        SmallVector<Value> totals = allReduce(
            {loop.getResult(0), loop.getResult(1)},
            {ReduceKind::Max, ReduceKind::Sum}, reductionSlot, /*expSum=*/true);
        reductionSlot += 2;
        scalars[reduce.getResult()] = totals[0];
        scalars[sum.getResult()] = totals[1];
        evaluateReadyScalars(chain);
        ++k;
        continue;
      }
      Value identity = reduce.getKind() == ReduceKind::Max
                           ? f32c(-std::numeric_limits<double>::infinity())
                           : f32c(0.0);
      scf::ForOp loop =
          chunkLoop(numChunks, identity, [&](Chunk &chunk, ValueRange acc) {
            return SmallVector<Value>{
                combine(reduce.getKind(), acc[0], reduceChunk(reduce, chunk))};
          });
      scalars[reduce.getResult()] =
          allReduce(loop.getResult(0), reduce.getKind(), reductionSlot++);
      evaluateReadyScalars(chain);
    }
    storePerRowValues(perRowOutputs);
    // Unrolled, with three or more loads per element, the iteration's loads
    // are issued before its first store: a load of a tensor written in
    // place (fused add + RMSNorm's residual) is not invariant, and neither
    // LLVM nor ptxas moves it above a store that may alias it, nor any load
    // out of the per-element branches into which LLVM merges the full
    // iterations and the last. H100, odd D: fused add + RMSNorm +6.7 to
    // +24.8 points (-2.4 at 8193), seed #2 +6.6 to +23.9. With two loads
    // (RMSNorm's row and weight) it took ptxas from 36 to 54 registers and
    // lost up to 7.8 at 8193-12289 (docs/benchmarks.md, "Streamed odd
    // rows"). Past maxPrefetchedValues the loads stay with their elements
    // (more cost occupancy or spilled).
    auto loadRows = [&](Chunk &chunk) {
      for (Operation *op : chain.ops)
        if (isa<LoadOp>(op))
          evaluate(op->getResult(0), chunk);
    };
    int64_t numLoads = llvm::count_if(chain.ops, llvm::IsaPred<LoadOp>);
    auto storeLoop = [&] {
      chunkLoop(
          numChunks, {},
          [&](Chunk &chunk, ValueRange) {
            for (auto &[r, value] : outputs)
              storeOutput(r, value, chunk);
            return SmallVector<Value>{};
          },
          numLoads >= 3 && numLoads * streamedUnroll() <=
                               maxPrefetchedValues(sched.blockSize())
              ? function_ref<void(Chunk &)>(loadRows)
              : nullptr);
    };
    if (streamedUnroll() == 1) {
      storeLoop();
    } else {
      // Unrolled, a row past the chain's end is tested once around the loop
      // (no barrier inside it), so that a full iteration's stores are not
      // conditional.
      auto inChain = scf::IfOp::create(b, loc, rowValid, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inChain.thenBlock());
      Value saved = std::exchange(rowValid, trueValue());
      storeLoop();
      rowValid = saved;
    }
    if (g > 0)
      swapRow(rowStates[g]);
  }
}

/// Whether `v` is computed from a value for which `isSource` holds.
static bool computedFrom(Value v, function_ref<bool(Value)> isSource) {
  DenseSet<Value> seen;
  SmallVector<Value> stack{v};
  while (!stack.empty()) {
    Value x = stack.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (isSource(x))
      return true;
    if (Operation *op = x.getDefiningOp())
      llvm::append_range(stack, op->getOperands());
  }
  return false;
}

bool mlir::nf::lowering::dependsOnAny(Value v, ArrayRef<ReduceOp> reductions) {
  DenseSet<Value> results;
  for (ReduceOp reduce : reductions)
    results.insert(reduce.getResult());
  return computedFrom(v, [&](Value x) { return results.contains(x); });
}

/// One chunk's step of a thread's running maximum m and sum s of
/// e^(x - m) (an online softmax): with the chunk's maximum c, m' = max(m,
/// c) and s' = s e^(m - m') + the chunk's sum of e^(x - m'), the factor 1
/// where m = m' (so that masked chunks, -inf and 0, add nothing and do not
/// make NaN). The row is read once for both; the chunk's values that
/// depend on the maximum are forgotten (they were relative to m', not to
/// the row's maximum).
std::pair<Value, Value> KernelLowering::expSumStep(ReduceOp max, ReduceOp sum,
                                                   Chunk &chunk, Value m,
                                                   Value s) {
  Value c = reduceChunk(max, chunk);
  Value next = arith::MaximumFOp::create(b, loc, m, c);
  scalars[max.getResult()] = next;
  Value part = reduceChunk(sum, chunk);
  scalars.erase(max.getResult());
  llvm::MapVector<Value, Value> kept;
  for (auto &[v, value] : chunk.cache)
    if (!dependsOnAny(v, {max}))
      kept[v] = value;
  chunk.cache = std::move(kept);
  Value below = arith::SubFOp::create(b, loc, m, next);
  Value rescale = exp2Approx(below);
  Value equal =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, next);
  Value one = f32c(1.0);
  Value scale = select(equal, one, rescale);
  return {next, math::FmaOp::create(b, loc, s, scale, part)};
}

void KernelLowering::placeStagedChunks(const Chain &chain,
                                       MutableArrayRef<Chunk> chunks,
                                       Value slotOffset) {
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value base = gep(LLVM::AddressOfOp::create(b, loc, ptr3, stageBuffer),
                   b.getI8Type(), slotOffset);
  int64_t offset = 0;
  for (Operation *op : chain.ops) {
    auto load = dyn_cast<LoadOp>(op);
    if (!load || load.getKind() != BroadcastKind::BSD)
      continue;
    auto type = cast<RankedTensorType>(load.getSource().getType());
    int64_t bytes =
        getStorageType(type.getElementType()).getIntOrFloatBitWidth() / 8 *
        sched.chunk;
    // Chunk k of every thread, then chunk k + 1: a warp's copies land in
    // consecutive bytes (no bank conflicts when read back).
    for (auto [k, chunk] : llvm::enumerate(chunks)) {
      Value at = add(i64c(offset + (int64_t)k * sched.threadsPerRow * bytes),
                     mul(lane, i64c(bytes)));
      chunk.staged[load.getResult()] = gep(base, b.getI8Type(), at);
    }
    offset += bytes * sched.chunksPerThread * sched.threadsPerRow;
  }
}

void KernelLowering::copyStagedChunks(const Chain &chain,
                                      ArrayRef<Chunk> chunks) {
  for (Operation *op : chain.ops) {
    auto load = dyn_cast<LoadOp>(op);
    if (!load || load.getKind() != BroadcastKind::BSD)
      continue;
    auto type = cast<RankedTensorType>(load.getSource().getType());
    Type element = getStorageType(type.getElementType());
    Value ptr = argValue[cast<BlockArgument>(load.getSource()).getArgNumber()];
    Value rowOff = rowOffset(load.getSource(), load.getKind());
    // A multiple of 16 bytes per chunk (hasWholeStagedChunks, checked
    // before lowering): copied 16 bytes at a time, bypassing L1 (.cg).
    int64_t bytes = element.getIntOrFloatBitWidth() / 8 * sched.chunk;
    assert(bytes % 16 == 0 && "a staged chunk is a multiple of 16 bytes");
    for (const Chunk &chunk : chunks) {
      Value src = gep(ptr, element, add(rowOff, chunk.base));
      Value dst = chunk.staged.lookup(load.getResult());
      // A chunk past the row (its address clamped to the row's last chunk)
      // reads no global memory: a source size of 0 fills its slot with
      // zeros, which the row masks out. Copying the last chunk again took
      // every such lane to the same 16 bytes, rows of 12800 to 14848
      // elements at 512 x 4 having 6 to 14 warps of them.
      Value size;
      if (!chunk.valid.empty())
        size = select(chunk.valid.front(),
                      arith::ConstantIntOp::create(b, loc, 16, 32),
                      arith::ConstantIntOp::create(b, loc, 0, 32));
      for (int64_t piece = 0; piece < bytes; piece += 16)
        NVVM::CpAsyncOp::create(b, loc, gep(dst, b.getI8Type(), i64c(piece)),
                                gep(src, b.getI8Type(), i64c(piece)), 16,
                                NVVM::LoadCacheModifierKind::CG, size);
    }
  }
}

void KernelLowering::stageRow(const Chain &chain,
                              MutableArrayRef<Chunk> chunks) {
  placeStagedChunks(chain, chunks, i64c(0));
  copyStagedChunks(chain, chunks);
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
}
