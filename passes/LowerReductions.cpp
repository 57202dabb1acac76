//===- LowerReductions.cpp - reductions and stores in -nf-lower-to-gpu ----===//
//
// Part of normfuse. A row's reductions, from the elements of a thread's
// chunk (masked where the chunk leaves the row) to the thread's partial
// value, which one nfgpu.row_reduce combines with the row's other threads
// (lowered by -nf-lower-row-reductions, LowerRowReductions.cpp); and the
// stores of row results and per-row values.
//
//===----------------------------------------------------------------------===//

#include "dialect/NfGpuDialect.h"
#include "passes/KernelLowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::lowering;

Value KernelLowering::combine(ReduceKind kind, Value x, Value y) {
  if (kind == ReduceKind::Max)
    return arith::MaximumFOp::create(b, loc, x, y);
  return arith::AddFOp::create(b, loc, x, y);
}

Value KernelLowering::reduceLanes(Value v, ReduceKind kind, int64_t begin,
                                  int64_t count) {
  // Streamed schedules keep vector.reduction (a sum starts at +0.0, the
  // squares are rounded): their chunk loops wait on memory, not on issue,
  // and their 1024-thread CTAs sit at 32 registers, two per SM, which the
  // forms below crossed (33 registers for LayerNorm's, one CTA per SM,
  // -18 points at D = 24576; docs/benchmarks.md "Fused multiply-add").
  if (!sched.isRegisterResident()) {
    if (kind == ReduceKind::MeanSq)
      v = arith::MulFOp::create(b, loc, v, v);
    if (count == 1 && sched.chunk != 1)
      return vector::ExtractOp::create(b, loc, v, begin);
    Value slice = v;
    if (count != sched.chunk) {
      SmallVector<int64_t> lanes;
      for (int64_t e = begin; e < begin + count; ++e)
        lanes.push_back(e);
      slice = vector::ShuffleOp::create(b, loc, v, v, lanes);
    }
    auto combining = kind == ReduceKind::Max ? vector::CombiningKind::MAXIMUMF
                                             : vector::CombiningKind::ADD;
    return vector::ReductionOp::create(b, loc, combining, slice);
  }
  SmallVector<Value> elements;
  for (int64_t e = begin; e < begin + count; ++e)
    elements.push_back(vector::ExtractOp::create(b, loc, v, e));
  // A sum of squares accumulates by fused multiply-add: one instruction and
  // one rounding per element (the square is not rounded on its own).
  if (kind == ReduceKind::MeanSq) {
    Value acc = arith::MulFOp::create(b, loc, elements[0], elements[0]);
    for (Value e : ArrayRef<Value>(elements).drop_front())
      acc = math::FmaOp::create(b, loc, e, e, acc);
    return acc;
  }
  // Sums and maxima by a balanced tree: count - 1 operations, log2(count)
  // deep, and no identity to start from (vector.reduction starts a sum at
  // +0.0, an addition that cannot be folded away).
  while (elements.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i < elements.size(); i += 2)
      next.push_back(combine(kind, elements[i], elements[i + 1]));
    elements = std::move(next);
  }
  return elements.front();
}

Value KernelLowering::reduceChunk(ReduceOp op, Chunk &chunk) {
  Value v = evaluate(op.getInput(), chunk);
  bool isMax = op.getKind() == ReduceKind::Max;
  Value identity = f32c(isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  // Masked elements contribute the identity (-inf for max, not 0; a masked
  // element of a sum of squares is 0 before it is squared).
  if (peeled) {
    // Only a row's first and last chunk mask their elements.
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{b.getF32Type()}, chunk.full,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, reduceLanes(v, op.getKind(), 0, sched.chunk));
    b.setInsertionPointToStart(ifOp.elseBlock());
    SmallVector<Value> valid = peeledValid(chunk);
    Value mask = vector::FromElementsOp::create(
        b, loc, VectorType::get({sched.chunk}, b.getI1Type()), valid);
    scf::YieldOp::create(b, loc,
                         reduceLanes(select(mask, v, splat(identity)),
                                     op.getKind(), 0, sched.chunk));
    return ifOp.getResult(0);
  }
  if (!vectorized) {
    Value mask = vector::FromElementsOp::create(
        b, loc, VectorType::get({sched.chunk}, b.getI1Type()), chunk.valid);
    v = select(mask, v, splat(identity));
  }
  Value sum = reduceLanes(v, op.getKind(), 0, sched.chunk);
  if (vectorized)
    sum = select(chunk.valid[0], sum, identity);
  return sum;
}

Value KernelLowering::allReduce(Value partial, ReduceKind kind, unsigned slot) {
  return allReduce(ArrayRef<Value>{partial}, ArrayRef<ReduceKind>{kind}, slot)
      .front();
}

SmallVector<Value> KernelLowering::allReduce(ArrayRef<Value> partials,
                                             ArrayRef<ReduceKind> kinds,
                                             unsigned firstSlot, bool expSum) {
  SmallVector<Attribute> combining;
  for (auto [i, kind] : llvm::enumerate(kinds))
    combining.push_back(nfgpu::CombiningKindAttr::get(
        b.getContext(), kind == ReduceKind::Max ? nfgpu::CombiningKind::Max
                        : expSum && i == 1      ? nfgpu::CombiningKind::ExpSum
                                                : nfgpu::CombiningKind::Sum));
  auto exchange = nfgpu::RowReduceOp::create(
      b, loc, ValueRange(partials).getTypes(), partials, lane, rowInCta,
      sched.clusterSize > 1 ? clusterRank : Value(), b.getArrayAttr(combining),
      sched.threadsPerRow, sched.rowsPerCta, sched.clusterSize, firstSlot,
      /*cluster_wait=*/clusterWaitPending);
  clusterWaitPending = false;
  SmallVector<Value> values(exchange.getTotals());
  for (size_t i = 0; i < values.size(); ++i) {
    if (kinds[i] != ReduceKind::Mean && kinds[i] != ReduceKind::MeanSq)
      continue;
    // sum * (1 / D), the reciprocal from rcp.approx and one Newton step:
    // within an ulp of sum / D, without the division subroutine.
    Value d = arith::UIToFPOp::create(b, loc, b.getF32Type(), rowLength);
    Value r = callF32("llvm.nvvm.rcp.approx.ftz.f", d);
    Value err = arith::SubFOp::create(b, loc, f32c(1.0),
                                      arith::MulFOp::create(b, loc, d, r));
    r = arith::AddFOp::create(b, loc, r, arith::MulFOp::create(b, loc, r, err));
    values[i] = arith::MulFOp::create(b, loc, values[i], r);
  }
  return values;
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
  if (peeled) {
    // A full chunk in one aligned store; a row's first and last chunk
    // element by element, only those in the row.
    auto inRow = scf::IfOp::create(b, loc, rowValid, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(inRow.thenBlock());
    Value first = add(rowOff, chunk.first);
    auto ifOp = scf::IfOp::create(b, loc, chunk.full, true);
    b.setInsertionPointToStart(ifOp.thenBlock());
    LLVM::StoreOp::create(b, loc, value, gep(ptr, element, first),
                          std::min<unsigned>(16, bytes * sched.chunk));
    b.setInsertionPointToStart(ifOp.elseBlock());
    SmallVector<Value> valid = peeledValid(chunk);
    for (int64_t i = 0; i < sched.chunk; ++i) {
      auto one = scf::IfOp::create(b, loc, valid[i], false);
      OpBuilder::InsertionGuard elementGuard(b);
      b.setInsertionPointToStart(one.thenBlock());
      LLVM::StoreOp::create(b, loc, vector::ExtractOp::create(b, loc, value, i),
                            gep(ptr, element, add(first, i64c(i))), bytes);
    }
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
  // In a cluster, by the first thread of its first CTA.
  if (sched.clusterSize > 1)
    first = andI(first, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              clusterRank, i64c(0)));
  auto ifOp = scf::IfOp::create(b, loc, andI(rowValid, first), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  for (auto [r, value] : outputs) {
    Value offset = add(mul(rowB, resultStrides[r][0]), rowS);
    LLVM::StoreOp::create(b, loc, scalarOf(value),
                          gep(resultPtr[r], b.getF32Type(), offset), 4);
  }
}
