//===- LowerToGPU.cpp - nf.kernel to gpu.func -----------------------------===//
//
// Part of normfuse. Implements -nf-lower-to-gpu: every variant of every
// decomposed nf.kernel becomes a gpu.func (see Passes.td for the kernel's
// shape and KernelABI.h for its parameters).
//
// The row program is evaluated *per chunk*: a chunk is `chunk` consecutive
// elements of a row (16 bytes of the narrowest type), held as a vector. A
// thread evaluates the values it needs at each of its chunks; per-row
// scalars (reduction results and what is computed from them) are evaluated
// once per row. Every reduction ends a phase: the values feeding it are
// evaluated for all of the thread's chunks, reduced in f32, then combined
// across the row's threads. With a register-resident schedule the chunks
// are unrolled and values computed in one phase are reused by the next (the
// row is read from memory once); a streaming schedule loops over the chunks
// in every phase and recomputes from memory.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelABI.h"
#include "passes/KernelLowering.h"
#include "passes/Passes.h"
#include "passes/QuantizedCasts.h"
#include "passes/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFLOWERTOGPU
#include "passes/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

using namespace mlir::nf::lowering;

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::checkSupported() {
  WalkResult walk = kernel.walk([&](Operation *op) {
    if (isa<LayerNormOp, RmsNormOp, ModulateOp>(op)) {
      op->emitOpError("must be decomposed before lowering; run -nf-decompose");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // In place + rotary: an element's partner is read while other threads
  // (or later chunks) store the row; only the register-resident schedule
  // computes the whole row before storing it.
  if (inPlaceRope && !sched.isRegisterResident())
    return kernel.emitOpError(
        "writes in place and applies rotary embedding, which needs the "
        "register-resident schedule: fix D (nf-compile --dim D=<n>) so the "
        "row fits in registers");
  return checkGroups();
}

void KernelLowering::bindParameters(gpu::GPUFuncOp func) {
  SmallVector<KernelParam> abi = computeKernelABI(kernel, chains);
  chainRows.resize(chains.getChains().size());
  chainS.resize(chainRows.size());
  chainF.resize(chainRows.size());
  for (auto [i, param] : llvm::enumerate(abi)) {
    Value v = func.getArgument(i);
    switch (param.kind) {
    case KernelParam::ArgPointer:
    case KernelParam::ArgScalar:
      argValue[param.index] = v;
      break;
    case KernelParam::ResultPointer:
      resultPtr[param.index] = v;
      break;
    case KernelParam::ChainRows:
      chainRows[param.index] = v;
      break;
    case KernelParam::ChainS:
      chainS[param.index] = v;
      break;
    case KernelParam::ChainF:
      chainF[param.index] = v;
      break;
    case KernelParam::RowLength:
      rowLength = v;
      break;
    case KernelParam::ArgStride:
      argStrides[param.index].push_back(v);
      break;
    case KernelParam::ResultStride:
      resultStrides[param.index].push_back(v);
      break;
    case KernelParam::CacheRows:
      cacheRows[param.index] = v;
      break;
    }
  }
  for (unsigned r = 0; r < kernel.getResultTypes().size(); ++r)
    if (std::optional<unsigned> a = kernel.getInPlaceArgument(r)) {
      resultPtr[r] = argValue[*a];
      resultStrides[r] = argStrides[*a];
    }
}

LogicalResult KernelLowering::emit(StringRef name) {
  if (failed(checkSupported()))
    return failure();
  SmallVector<KernelParam> abi = computeKernelABI(kernel, chains);
  SmallVector<Type> paramTypes;
  for (const KernelParam &p : abi)
    paramTypes.push_back(p.type);

  unsigned maxReductions = 0;
  for (const Chain &chain : chains.getChains())
    maxReductions = std::max<unsigned>(
        maxReductions, llvm::count_if(chain.ops, [](Operation *op) {
          auto reduce = dyn_cast<ReduceOp>(op);
          return reduce && !reduce.getGroup();
        }));
  int64_t warpsPerRow = sched.threadsPerRow / 32;
  SmallVector<Type> workgroupTypes;
  if (warpsPerRow > 1 && maxReductions > 0)
    workgroupTypes.push_back(
        MemRefType::get({(int64_t)maxReductions * sched.rowsPerThread *
                         sched.rowsPerCta * warpsPerRow},
                        b.getF32Type(), MemRefLayoutAttrInterface(),
                        gpu::AddressSpaceAttr::get(
                            b.getContext(), gpu::AddressSpace::Workgroup)));

  auto func =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(paramTypes, {}),
                             workgroupTypes, TypeRange{});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({(int32_t)sched.blockSize(), 1, 1}));
  if (!workgroupTypes.empty()) {
    workgroup = func.getWorkgroupAttributions().front();
    // The partials are read back 16 bytes at a time (LLVM merges the
    // loads), so the buffer must be 16-byte aligned: it was only by luck
    // while it was the first shared variable (another shared variable
    // before it once gave a misaligned-address fault on the H100).
    func.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                                     b.getI64IntegerAttr(16));
  }

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  bindParameters(func);

  Value tid = idxToI64(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value cta = idxToI64(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value threads = i64c(sched.threadsPerRow);
  lane = rem(tid, threads);
  rowInCta = div(tid, threads);
  warpInRow = div(lane, i64c(32));
  laneInWarp = rem(lane, i64c(32));
  warpLane =
      arith::TruncIOp::create(b, loc, b.getI32Type(), rem(tid, i64c(32)));

  // Chains own consecutive CTA ranges, so each CTA runs one chain and its
  // barriers are uniform.
  Value ctaStart = i64c(0);
  Value rowsPerCta = i64c(sched.ctaRows());
  for (unsigned c = 0; c < chains.getChains().size(); ++c) {
    Value ctas = arith::CeilDivUIOp::create(b, loc, chainRows[c], rowsPerCta);
    Value end = add(ctaStart, ctas);
    Value mine = andI(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, cta, ctaStart),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, cta, end));
    auto ifOp = scf::IfOp::create(b, loc, mine, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard chainGuard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      if (failed(emitChain(c, sub(cta, ctaStart))))
        return failure();
    }
    ctaStart = end;
  }
  gpu::ReturnOp::create(b, loc);
  return success();
}

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

/// e^x as 2^(x * log2 e) on ex2.approx (not ftz: subnormal results stay):
/// three instructions where libdevice's expf takes about ten.
Value KernelLowering::exp2Approx(Value x) {
  Value log2e = f32c(1.4426950408889634);
  if (isa<VectorType>(x.getType()))
    log2e = splat(log2e);
  Value t = arith::MulFOp::create(b, loc, x, log2e);
  return mapScalars(t, [&](Value e) -> Value {
    return callF32("llvm.nvvm.ex2.approx.f32", e);
  });
}

void KernelLowering::setUpRow(unsigned c, Value row) {
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

  Value rows = chainRows[c];
  rowValid = lt(row, rows);
  // Rows past the end compute on the last row and store nothing, so every
  // thread reaches every barrier.
  row = select(rowValid, row, sub(rows, i64c(1)));
  // 32-bit divisions: a 64-bit one is a called subroutine in SASS (slow,
  // and its register saves show up as spills). The runtime refuses chains
  // of 2^31 rows or more.
  auto i32 = [&](Value v) {
    return arith::TruncIOp::create(b, loc, b.getI32Type(), v);
  };
  auto i64 = [&](Value v) {
    return arith::ExtUIOp::create(b, loc, b.getI64Type(), v);
  };
  Value row32 = i32(row), s32 = i32(chainS[c]);
  Value sOfRow = arith::RemUIOp::create(b, loc, row32, s32);
  rowB = i64(arith::DivUIOp::create(b, loc, row32, s32));
  rowS = i64(sOfRow);
  Value tokensPerFrame = arith::DivUIOp::create(b, loc, s32, i32(chainF[c]));
  rowFrame = i64(arith::DivUIOp::create(b, loc, sOfRow, tokensPerFrame));

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
  SmallVector<ReduceOp> reductions;
  for (Operation *op : chain.ops)
    if (auto reduce = dyn_cast<ReduceOp>(op))
      if (!reduce.getGroup())
        reductions.push_back(reduce);

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

  if (sched.isRegisterResident()) {
    chainIndex = c;
    unsigned numReductions = reductions.size();
    SmallVector<SmallVector<Chunk>> rowChunks(group);
    for (int64_t g = 0; g < group; ++g)
      for (int64_t k = 0; k < sched.chunksPerThread; ++k)
        rowChunks[g].push_back(
            makeChunk(add(i64c(k * sched.threadsPerRow), lane), numChunks));
    // With several rows per thread, the [B, S, D] loads of every row are
    // issued before the first row's reductions: the loads of later rows
    // are in flight while earlier ones reduce (a barrier would keep ptxas
    // from hoisting them).
    if (group > 1) {
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

scf::ForOp KernelLowering::chunkLoop(
    Value numChunks, ValueRange init,
    function_ref<SmallVector<Value>(Chunk &, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, loc, lane, numChunks,
                                 i64c(sched.threadsPerRow), init);
  OpBuilder::InsertionGuard guard(b);
  // The builder adds an empty yield when there are no iteration values.
  if (!loop.getBody()->empty())
    loop.getBody()->getTerminator()->erase();
  b.setInsertionPointToStart(loop.getBody());
  Chunk chunk = makeChunk(loop.getInductionVar(), numChunks);
  SmallVector<Value> next = body(chunk, loop.getRegionIterArgs());
  scf::YieldOp::create(b, loc, next);
  return loop;
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
    for (ReduceOp reduce : reductions) {
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
    chunkLoop(numChunks, {}, [&](Chunk &chunk, ValueRange) {
      for (auto &[r, value] : outputs)
        storeOutput(r, value, chunk);
      return SmallVector<Value>{};
    });
    if (g > 0)
      swapRow(rowStates[g]);
  }
}

void KernelLowering::emitRow(const Chain &chain, MutableArrayRef<Chunk> chunks,
                             ArrayRef<ReduceOp> reductions,
                             ArrayRef<std::pair<unsigned, Value>> outputs) {
  for (ReduceOp reduce : reductions) {
    Value partial;
    for (Chunk &chunk : chunks) {
      Value part = reduceChunk(reduce, chunk);
      partial = partial ? combine(reduce.getKind(), partial, part) : part;
    }
    scalars[reduce.getResult()] =
        allReduce(partial, reduce.getKind(), reductionSlot++);
    evaluateReadyScalars(chain);
  }
  storePerRowValues(perRowOutputs);
  // Without rotary partners a chunk's results depend on its own elements
  // only: each chunk is computed and stored before the next one's epilogue
  // operands are loaded, so that they are not all live at once.
  if (!hasRope) {
    if (reductions.size() == 1) {
      SmallVector<Value> needed;
      for (auto &output : outputs)
        needed.push_back(output.second);
      maybeRematerialize(chunks, needed);
    }
    for (Chunk &chunk : chunks)
      for (auto &[r, value] : outputs)
        storeOutput(r, value, chunk);
    return;
  }
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
  bool needsBarrier =
      hasRope && llvm::any_of(outputs, [&](auto &output) {
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

/// Before the epilogue of a row program with one reduction, which needs
/// `needed`: when recomputing from narrow values holds at most half the
/// bits per element that keeping what was computed does (a bf16 row instead
/// of its f32 widening), forgets every value of each chunk that
/// isKeptAcrossReduction does not keep. ptxas, sm_90: RMSNorm 256 x 4 63 -> 40
/// registers, fused add + RMSNorm 80 -> 52, seed #2 59 -> 42. Not with two
/// or more reductions: there the recomputation also runs between two
/// barriers, and measured slower (H200: LayerNorm -3 to -7 points at D <=
/// 2240, softmax -1 to -4; rematerializing only before the epilogue keeps
/// the narrow row live next to the f32 one across the first reduction,
/// LayerNorm 5120 -8; docs/benchmarks.md). Kernels with rotary embedding
/// keep everything (partners are read from other chunks).
void KernelLowering::maybeRematerialize(MutableArrayRef<Chunk> chunks,
                                        ArrayRef<Value> needed) {
  if (!vectorized || hasRope || !sched.isRegisterResident() || chunks.empty() ||
      2 * liveBits(chunks.front(), needed, /*keepAll=*/false) >
          liveBits(chunks.front(), needed, /*keepAll=*/true))
    return;
  // The kept narrow values pass through an XOR with a zero that neither
  // LLVM nor ptxas can prove is zero, the chain's row count shifted right
  // by 32 (the runtime refuses 2^31 rows or more), so that what is computed
  // from them cannot be merged (CSE) with what was computed before the
  // reduction: the f32 values then die at the reduction. (A copy, mov or
  // inline assembly, is propagated away by ptxas, which then merges the
  // conversions again.)
  Value zero = arith::TruncIOp::create(
      b, loc, b.getI32Type(),
      arith::ShRUIOp::create(b, loc, chainRows[chainIndex], i64c(32)));
  for (Chunk &chunk : chunks) {
    DenseMap<Value, Value> kept;
    for (auto &[v, value] : chunk.cache) {
      if (!isKeptAcrossReduction(v, value))
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

//===----------------------------------------------------------------------===//
// Chunks
//===----------------------------------------------------------------------===//

Chunk KernelLowering::makeChunk(Value chunkIndex, Value numChunks) {
  int64_t C = sched.chunk;
  Chunk chunk;
  if (vectorized && sched.isRegisterResident()) {
    // 32-bit index arithmetic (D is at most the variant's capacity): the
    // chunk offsets stay live until the epilogue's stores, in one register
    // each rather than two.
    Type i32 = b.getI32Type();
    Value index = arith::TruncIOp::create(b, loc, i32, chunkIndex);
    Value count = arith::TruncIOp::create(b, loc, i32, numChunks);
    chunk.valid.push_back(lt(index, count));
    // Clamp so that loads of chunks past the row stay inside it.
    Value last = arith::SubIOp::create(
        b, loc, count, arith::ConstantIntOp::create(b, loc, 1, 32));
    Value base = arith::MulIOp::create(
        b, loc, minI(index, last), arith::ConstantIntOp::create(b, loc, C, 32));
    chunk.base = arith::ExtUIOp::create(b, loc, b.getI64Type(), base);
    return chunk;
  }
  if (vectorized) {
    chunk.valid.push_back(lt(chunkIndex, numChunks));
    // Clamp so that loads of chunks past the row stay inside it.
    Value last = sub(numChunks, i64c(1));
    chunk.base = mul(minI(chunkIndex, last), i64c(C));
    return chunk;
  }
  Value first = mul(chunkIndex, i64c(C));
  Value lastElement = sub(rowLength, i64c(1));
  chunk.base = first;
  for (int64_t i = 0; i < C; ++i) {
    Value e = add(first, i64c(i));
    chunk.valid.push_back(lt(e, rowLength));
    chunk.elements.push_back(minI(e, lastElement));
  }
  return chunk;
}

Chunk KernelLowering::makeShiftedChunk(Chunk &of,
                                       function_ref<Value(Value)> index) {
  Chunk chunk;
  chunk.valid = of.valid;
  if (vectorized) {
    chunk.base = index(of.base);
    return chunk;
  }
  chunk.base = of.base;
  for (Value e : of.elements)
    chunk.elements.push_back(index(e));
  return chunk;
}

Value KernelLowering::loadRow(Value ptr, Type element, Value rowOff,
                              Chunk &chunk, bool invariant) {
  unsigned bytes = element.getIntOrFloatBitWidth() / 8;
  if (vectorized) {
    Value address = gep(ptr, element, add(rowOff, chunk.base));
    unsigned align = std::min<unsigned>(16, bytes * sched.chunk);
    return LLVM::LoadOp::create(b, loc, vecOf(element), address, align, false,
                                false, invariant);
  }
  SmallVector<Value> elements;
  for (Value e : chunk.elements)
    elements.push_back(LLVM::LoadOp::create(b, loc, element,
                                            gep(ptr, element, add(rowOff, e)),
                                            bytes, false, false, invariant));
  return vector::FromElementsOp::create(b, loc, vecOf(element), elements);
}

Value KernelLowering::evaluate(Value v, Chunk &chunk) {
  if (auto group = dyn_cast<GroupType>(v.getType()))
    return expandGroup(evaluateGroup(v, chunk), group.getSize());
  if (!isa<RowType>(v.getType()))
    return splat(scalarOf(v));
  auto cached = chunk.cache.find(v);
  if (cached != chunk.cache.end())
    return cached->second;

  Operation *op = v.getDefiningOp();
  auto isWritten = [&](Value tensor) {
    unsigned arg = cast<BlockArgument>(tensor).getArgNumber();
    for (unsigned r = 0; r < kernel.getResultTypes().size(); ++r)
      if (kernel.getInPlaceArgument(r) == arg)
        return true;
    return false;
  };
  Value result =
      llvm::TypeSwitch<Operation *, Value>(op)
          .Case([&](LoadOp load) -> Value {
            auto type = cast<RankedTensorType>(load.getSource().getType());
            Type element = getStorageType(type.getElementType());
            Value ptr =
                argValue[cast<BlockArgument>(load.getSource()).getArgNumber()];
            if (load.getKind() == BroadcastKind::One) {
              Value scalar = LLVM::LoadOp::create(
                  b, loc, element, ptr, element.getIntOrFloatBitWidth() / 8,
                  false, false, true);
              return splat(scalar);
            }
            return loadRow(ptr, element,
                           rowOffset(load.getSource(), load.getKind()), chunk,
                           !isWritten(load.getSource()));
          })
          .Case([&](SelectLoadOp selectOp) -> Value {
            auto type = cast<RankedTensorType>(selectOp.getFirst().getType());
            Type element = getStorageType(type.getElementType());
            Value taken = selectTaken[selectOp];
            auto argOf = [&](Value t) {
              return cast<BlockArgument>(t).getArgNumber();
            };
            // Pick the pointer, not the data: only the chosen set is read.
            Value ptr = select(taken, argValue[argOf(selectOp.getSecond())],
                               argValue[argOf(selectOp.getFirst())]);
            Value off = select(
                taken, rowOffset(selectOp.getSecond(), selectOp.getKind()),
                rowOffset(selectOp.getFirst(), selectOp.getKind()));
            if (selectOp.getKind() == BroadcastKind::One)
              return splat(LLVM::LoadOp::create(
                  b, loc, element, ptr, element.getIntOrFloatBitWidth() / 8,
                  false, false, true));
            return loadRow(ptr, element, off, chunk, true);
          })
          .Case([&](RopeOp rope) -> Value { return evaluateRope(rope, chunk); })
          .Default([&](Operation *op) -> Value {
            auto div = dyn_cast<DivOp>(op);
            if (div && isa<GroupType>(div.getRhs().getType()))
              return divideByGroup(div, chunk);
            auto reciprocal = reciprocals.find(op);
            if (reciprocal != reciprocals.end()) {
              auto [k, r] = reciprocal->second;
              Value x = toF32(evaluate(op->getOperand(0), chunk));
              Value scaled = k ? arith::MulFOp::create(b, loc, x, splat(k)) : x;
              Value q = arith::MulFOp::create(b, loc, scaled, splat(r));
              return fromF32(q, getRowElementType(v.getType()));
            }
            SmallVector<Value> operands;
            for (Value operand : op->getOperands())
              operands.push_back(evaluate(operand, chunk));
            return emitElementwise(op, operands);
          });
  chunk.cache[v] = result;
  return result;
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

Value KernelLowering::toF32(Value v) {
  Type element = getElementTypeOrSelf(v.getType());
  if (element.isF32())
    return v;
  Type f32 = b.getF32Type();
  Type type = isa<VectorType>(v.getType()) ? Type(vecOf(f32)) : f32;
  return arith::ExtFOp::create(b, loc, type, v);
}

Value KernelLowering::fromF32(Value v, Type element) {
  if (element.isF32())
    return v;
  Type type = isa<VectorType>(v.getType()) ? Type(vecOf(element)) : element;
  return arith::TruncFOp::create(b, loc, type, v);
}

/// Applies a scalar function to every element: libdevice calls take scalars.
Value KernelLowering::mapScalars(Value v, function_ref<Value(Value)> fn) {
  auto type = dyn_cast<VectorType>(v.getType());
  if (!type)
    return fn(v);
  SmallVector<Value> elements;
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    elements.push_back(fn(vector::ExtractOp::create(b, loc, v, i)));
  return vector::FromElementsOp::create(b, loc, type, elements);
}

/// The correctly rounded sqrt.rn.f32. math.sqrt becomes libdevice's
/// __nv_sqrtf, which is sqrt.approx unless precise sqrt is reflected in, and
/// convert-gpu-to-nvvm rejects llvm.intr.sqrt.
Value KernelLowering::sqrtRn(Value x) {
  return mapScalars(x, [&](Value e) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                         b.getStringAttr("llvm.nvvm.sqrt.rn.f"),
                                         ValueRange{e})
        .getResult(0);
  });
}

Value KernelLowering::callF32(StringRef intrinsic, Value e) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(), b.getStringAttr(intrinsic), ValueRange{e})
      .getResult(0);
}

/// rsqrt.approx.f32 refined by one Newton step (relative error ~1e-7).
/// 1 / sqrt.rn(x) would be exact, but ptxas implements the IEEE division
/// with a called subroutine whose register saves show up as spills.
Value KernelLowering::rsqrtRefined(Value x) {
  return mapScalars(x, [&](Value e) -> Value {
    Value r = callF32("llvm.nvvm.rsqrt.approx.f", e);
    Value half = arith::MulFOp::create(b, loc, f32c(0.5), e);
    Value hrr = arith::MulFOp::create(b, loc, half,
                                      arith::MulFOp::create(b, loc, r, r));
    Value refined = arith::MulFOp::create(
        b, loc, r, arith::SubFOp::create(b, loc, f32c(1.5), hrr));
    // 0, inf and NaN keep the approximation's exact special values.
    Value finitePositive = andI(
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, e, f32c(0.0)),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, e,
                              f32c(std::numeric_limits<double>::infinity())));
    return select(finitePositive, refined, r);
  });
}

Value KernelLowering::emitElementwise(Operation *op, ArrayRef<Value> operands) {
  Type resultElement = getRowElementType(op->getResult(0).getType());
  if (auto cast = dyn_cast<CastOp>(op)) {
    Value v = operands[0];
    Type inputElement = getRowElementType(cast.getInput().getType());
    if (inputElement == resultElement)
      return v;
    // Quantized rows cast only from and to f32 (the verifier's rule).
    if (isNfQuantized(inputElement))
      return emitDequantize(b, loc, v, inputElement);
    if (isNfQuantized(resultElement))
      return emitQuantize(b, loc, v, resultElement, hardwareFp8);
    return fromF32(toF32(v), resultElement);
  }
  // Row-scalar mixes: the scalar was splatted by evaluate(); a scalar op
  // only sees scalars.
  SmallVector<Value> f32Operands;
  for (Value v : operands)
    f32Operands.push_back(toF32(v));
  Value x = f32Operands[0];
  Value y = f32Operands.size() > 1 ? f32Operands[1] : Value();
  Type type = x.getType();
  auto one = [&]() -> Value {
    Value c = f32c(1.0);
    return isa<VectorType>(type) ? splat(c) : c;
  };
  Value result =
      llvm::TypeSwitch<Operation *, Value>(op)
          .Case([&](AddOp) { return arith::AddFOp::create(b, loc, x, y); })
          .Case([&](SubOp) { return arith::SubFOp::create(b, loc, x, y); })
          .Case([&](MulOp) { return arith::MulFOp::create(b, loc, x, y); })
          .Case([&](DivOp) { return arith::DivFOp::create(b, loc, x, y); })
          .Case([&](MaxOp) { return arith::MaximumFOp::create(b, loc, x, y); })
          .Case([&](MinOp) { return arith::MinimumFOp::create(b, loc, x, y); })
          .Case([&](NegOp) { return arith::NegFOp::create(b, loc, x); })
          .Case([&](AbsOp) { return math::AbsFOp::create(b, loc, x); })
          .Case([&](ExpOp) { return exp2Approx(x); })
          .Case([&](TanhOp) {
            return mapScalars(x, [&](Value e) -> Value {
              return math::TanhOp::create(b, loc, e);
            });
          })
          .Case([&](SigmoidOp) {
            Value e = exp2Approx(arith::NegFOp::create(b, loc, x));
            // rcp.rn is 1 / x correctly rounded: the division's result.
            return mapScalars(arith::AddFOp::create(b, loc, one(), e),
                              [&](Value d) -> Value {
                                return callF32("llvm.nvvm.rcp.rn.f", d);
                              });
          })
          .Case([&](SqrtOp) { return sqrtRn(x); })
          .Case([&](RsqrtOp) { return rsqrtRefined(x); })
          .Default([&](Operation *) -> Value { return {}; });
  assert(result && "unhandled elementwise op");
  return fromF32(result, resultElement);
}

Value KernelLowering::evaluateRope(RopeOp rope, Chunk &chunk) {
  Value x = toF32(evaluate(rope.getInput(), chunk));
  Type element = getRowElementType(rope.getType());
  int64_t rotary = rope.getRotaryDim();
  int64_t half = rotary / 2;
  int64_t C = sched.chunk;
  auto [pos, posValid] = ropePosition[rope];
  Value cachePtr =
      argValue[cast<BlockArgument>(rope.getCache()).getArgNumber()];
  Value cacheRow = mul(pos, stridesOf(rope.getCache())[0]);
  bool neox = rope.getLayout() == RopeLayout::Neox;
  Value rotaryC = i64c(rotary), halfC = i64c(half);

  // Per element (general) or per chunk (vectorized: the chunk lies in one
  // half, checked when the vectorized variant is chosen): the partner index,
  // the cos/sin column, and whether the element rotates.
  auto partnerOf = [&](Value e) -> Value {
    Value inRot = lt(e, rotaryC);
    Value partner;
    if (neox) {
      partner = select(lt(e, halfC), add(e, halfC), sub(e, halfC));
    } else {
      // e ^ 1: the other element of the pair.
      partner = arith::XOrIOp::create(b, loc, e, i64c(1));
    }
    return select(inRot, partner, e);
  };

  Value cos, sin, sign, inRotation;
  Value xp;
  if (vectorized) {
    Value e0 = chunk.base;
    inRotation = splat(lt(e0, rotaryC));
    Type f32 = b.getF32Type();
    if (neox) {
      Value first = lt(e0, halfC);
      // Chunk c pairs with chunk c ^ m (m = half / chunk). When m is a
      // power of two below the row's lanes in a warp, the partner chunk is
      // in lane `lane ^ m` at the same unrolled slot: exchange it with
      // shuffles instead of recomputing it from memory.
      int64_t m = half / C;
      bool viaShuffle = sched.isRegisterResident() && llvm::isPowerOf2_64(m) &&
                        m < std::min<int64_t>(sched.threadsPerRow, 32);
      if (viaShuffle) {
        Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
        Value offset = arith::ConstantIntOp::create(b, loc, m, 32);
        xp = mapScalars(x, [&](Value e) -> Value {
          return gpu::ShuffleOp::create(b, loc, e, offset, width,
                                        gpu::ShuffleMode::XOR)
              .getShuffleResult();
        });
      } else {
        Chunk partner = makeShiftedChunk(chunk, partnerOf);
        xp = toF32(evaluate(rope.getInput(), partner));
      }
      Value col =
          select(lt(e0, rotaryC), select(first, e0, sub(e0, halfC)), i64c(0));
      unsigned align = std::min<int64_t>(16, 4 * C);
      cos = LLVM::LoadOp::create(b, loc, vecOf(f32),
                                 gep(cachePtr, f32, add(cacheRow, col)), align,
                                 false, false, true);
      sin = LLVM::LoadOp::create(
          b, loc, vecOf(f32),
          gep(cachePtr, f32, add(cacheRow, add(col, halfC))), align, false,
          false, true);
      sign = select(splat(first), splat(f32c(-1.0)), splat(f32c(1.0)));
    } else {
      // Pairs are adjacent inside the chunk: swap them in registers.
      SmallVector<int64_t> swap, twice;
      SmallVector<float> signs;
      for (int64_t i = 0; i < C; ++i) {
        swap.push_back(i ^ 1);
        twice.push_back(i / 2);
        signs.push_back(i % 2 ? 1.0f : -1.0f);
      }
      xp = vector::ShuffleOp::create(b, loc, x, x, swap);
      Value col = select(lt(e0, rotaryC), div(e0, i64c(2)), i64c(0));
      auto halfType = VectorType::get({C / 2}, f32);
      unsigned align = std::min<int64_t>(16, 2 * C);
      Value c2 = LLVM::LoadOp::create(b, loc, halfType,
                                      gep(cachePtr, f32, add(cacheRow, col)),
                                      align, false, false, true);
      Value s2 = LLVM::LoadOp::create(
          b, loc, halfType, gep(cachePtr, f32, add(cacheRow, add(col, halfC))),
          align, false, false, true);
      cos = vector::ShuffleOp::create(b, loc, c2, c2, twice);
      sin = vector::ShuffleOp::create(b, loc, s2, s2, twice);
      sign = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vecOf(f32), ArrayRef<float>(signs)));
    }
  } else {
    Chunk partner = makeShiftedChunk(chunk, partnerOf);
    xp = toF32(evaluate(rope.getInput(), partner));
    SmallVector<Value> cosElems, sinElems, signElems, rotElems;
    Type f32 = b.getF32Type();
    for (Value e : chunk.elements) {
      Value inRot = lt(e, rotaryC);
      Value col;
      Value firstOfPair;
      if (neox) {
        firstOfPair = lt(e, halfC);
        col = select(firstOfPair, e, sub(e, halfC));
      } else {
        firstOfPair = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::AndIOp::create(b, loc, e, i64c(1)), i64c(0));
        col = div(e, i64c(2));
      }
      col = select(inRot, col, i64c(0));
      cosElems.push_back(LLVM::LoadOp::create(
          b, loc, f32, gep(cachePtr, f32, add(cacheRow, col)), 4, false, false,
          true));
      sinElems.push_back(LLVM::LoadOp::create(
          b, loc, f32, gep(cachePtr, f32, add(cacheRow, add(col, halfC))), 4,
          false, false, true));
      signElems.push_back(select(firstOfPair, f32c(-1.0), f32c(1.0)));
      rotElems.push_back(inRot);
    }
    auto f32Vec = vecOf(f32);
    cos = vector::FromElementsOp::create(b, loc, f32Vec, cosElems);
    sin = vector::FromElementsOp::create(b, loc, f32Vec, sinElems);
    sign = vector::FromElementsOp::create(b, loc, f32Vec, signElems);
    inRotation = vector::FromElementsOp::create(
        b, loc, VectorType::get({C}, b.getI1Type()), rotElems);
  }
  // A position outside the cache makes the rotated elements NaN rather
  // than silently reading another row of the cache.
  Value nan = splat(f32c(std::numeric_limits<double>::quiet_NaN()));
  cos = select(splat(posValid), cos, nan);
  Value rotated = arith::AddFOp::create(
      b, loc, arith::MulFOp::create(b, loc, x, cos),
      arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, sign, xp),
                            sin));
  return fromF32(select(inRotation, rotated, x), element);
}

//===----------------------------------------------------------------------===//
// Reductions and stores
//===----------------------------------------------------------------------===//

Value KernelLowering::combine(ReduceKind kind, Value x, Value y) {
  if (kind == ReduceKind::Max)
    return arith::MaximumFOp::create(b, loc, x, y);
  return arith::AddFOp::create(b, loc, x, y);
}

Value KernelLowering::reduceChunk(ReduceOp op, Chunk &chunk) {
  Value v = evaluate(op.getInput(), chunk);
  if (op.getKind() == ReduceKind::MeanSq)
    v = arith::MulFOp::create(b, loc, v, v);
  bool isMax = op.getKind() == ReduceKind::Max;
  Value identity = f32c(isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  // Masked elements contribute the identity (-inf for max, not 0).
  if (!vectorized) {
    Value mask = vector::FromElementsOp::create(
        b, loc, VectorType::get({sched.chunk}, b.getI1Type()), chunk.valid);
    v = select(mask, v, splat(identity));
  }
  auto kind =
      isMax ? vector::CombiningKind::MAXIMUMF : vector::CombiningKind::ADD;
  Value sum = vector::ReductionOp::create(b, loc, kind, v);
  if (vectorized)
    sum = select(chunk.valid[0], sum, identity);
  return sum;
}

Value KernelLowering::allReduce(Value partial, ReduceKind kind, unsigned slot) {
  // Butterfly among the row's lanes of the warp (lanes of a row are
  // consecutive and aligned, so xor offsets below T stay inside the row).
  int64_t width = std::min<int64_t>(sched.threadsPerRow, 32);
  Value warpWidth = arith::ConstantIntOp::create(b, loc, 32, 32);
  for (int64_t offset = width / 2; offset >= 1; offset /= 2) {
    Value off = arith::ConstantIntOp::create(b, loc, offset, 32);
    Value other = gpu::ShuffleOp::create(b, loc, partial, off, warpWidth,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    partial = combine(kind, partial, other);
  }
  int64_t warps = sched.threadsPerRow / 32;
  if (warps > 1) {
    // One slot per reduction and row: a single barrier per reduction.
    Value base = mul(add(mul(i64c(slot), i64c(sched.rowsPerCta)), rowInCta),
                     i64c(warps));
    auto toIndex = [&](Value v) {
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    };
    Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         laneInWarp, i64c(0));
    auto ifOp = scf::IfOp::create(b, loc, leader, false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      memref::StoreOp::create(b, loc, partial, workgroup,
                              ValueRange{toIndex(add(base, warpInRow))});
    }
    gpu::BarrierOp::create(b, loc);
    Value total;
    for (int64_t w = 0; w < warps; ++w) {
      Value part = memref::LoadOp::create(
          b, loc, workgroup, ValueRange{toIndex(add(base, i64c(w)))});
      total = total ? combine(kind, total, part) : part;
    }
    partial = total;
  }
  if (kind == ReduceKind::Mean || kind == ReduceKind::MeanSq) {
    // sum * (1 / D), the reciprocal from rcp.approx and one Newton step:
    // within an ulp of sum / D, without the division subroutine.
    Value d = arith::UIToFPOp::create(b, loc, b.getF32Type(), rowLength);
    Value r = callF32("llvm.nvvm.rcp.approx.ftz.f", d);
    Value err = arith::SubFOp::create(b, loc, f32c(1.0),
                                      arith::MulFOp::create(b, loc, d, r));
    r = arith::AddFOp::create(b, loc, r, arith::MulFOp::create(b, loc, r, err));
    partial = arith::MulFOp::create(b, loc, partial, r);
  }
  return partial;
}

void KernelLowering::storeRow(unsigned result, Value value, Chunk &chunk) {
  Value ptr = resultPtr[result];
  SmallVector<Value> strides = resultStrides[result];
  Value rowOff = add(mul(rowB, strides[0]), mul(rowS, strides[1]));
  auto type = cast<VectorType>(value.getType());
  Type element = type.getElementType();
  unsigned bytes = element.getIntOrFloatBitWidth() / 8;
  if (vectorized) {
    auto ifOp =
        scf::IfOp::create(b, loc, andI(rowValid, chunk.valid[0]), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    LLVM::StoreOp::create(b, loc, value,
                          gep(ptr, element, add(rowOff, chunk.base)),
                          std::min<unsigned>(16, bytes * sched.chunk));
    return;
  }
  for (auto [i, e] : llvm::enumerate(chunk.elements)) {
    auto ifOp =
        scf::IfOp::create(b, loc, andI(rowValid, chunk.valid[i]), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value scalar = vector::ExtractOp::create(b, loc, value, (int64_t)i);
    LLVM::StoreOp::create(b, loc, scalar, gep(ptr, element, add(rowOff, e)),
                          bytes);
  }
}

/// One f32 per row into each [B, S] result, by the row's first thread.
void KernelLowering::storePerRowValues(
    ArrayRef<std::pair<unsigned, Value>> outputs) {
  if (outputs.empty())
    return;
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, i64c(0));
  auto ifOp = scf::IfOp::create(b, loc, andI(rowValid, first), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  for (auto [r, value] : outputs) {
    Value offset = add(mul(rowB, resultStrides[r][0]), rowS);
    LLVM::StoreOp::create(b, loc, scalarOf(value),
                          gep(resultPtr[r], b.getF32Type(), offset), 4);
  }
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct NfLowerToGPUPass : nf::impl::NfLowerToGPUBase<NfLowerToGPUPass> {
  using NfLowerToGPUBase::NfLowerToGPUBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    if (kernels.empty())
      return;
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "nf_kernels");
    b.setInsertionPointToStart(gpuModule.getBody());
    for (KernelOp kernel : kernels) {
      FailureOr<SmallVector<VariantAttr>> variants = getVariants(kernel);
      if (failed(variants))
        return signalPassFailure();
      for (VariantAttr variant : *variants) {
        Schedule schedule = Schedule::fromAttr(variant.getSchedule());
        KernelLowering lowering(kernel, schedule, variant.getVectorized(),
                                hasHardwareFp8(chip), b);
        if (failed(lowering.emit(getVariantFunctionName(kernel, variant))))
          return signalPassFailure();
      }
    }
  }
};
} // namespace
