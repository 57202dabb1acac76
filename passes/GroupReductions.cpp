//===- GroupReductions.cpp - group values in -nf-lower-to-gpu -------------===//
//
// Part of normfuse. How -nf-lower-to-gpu computes group values
// (`!nf.group<f32, G>`: one value per G consecutive elements of a row).
//
// A chunk covers `chunk` (C) consecutive elements, and the row's threads
// take consecutive chunks, so a group is either inside one chunk (G <= C:
// the chunk holds C / G groups) or spread over L = G / C consecutive chunks
// of as many consecutive lanes of one warp (G > C). A group value is
// therefore evaluated per chunk, like a row: a reduction of the chunk's
// elements, then for G > C an nfgpu.group_reduce over the group's L lanes
// (a butterfly, without a barrier or shared memory). The schedule keeps L <= 32
// and L <= the row's threads (checkGroups; -nf-select-schedule and
// -nf-materialize-variants choose such schedules), so those lanes exist and
// take the same loop trips: D is a multiple of G, so a chunk loop gives all L
// lanes of a group a chunk or none.
//
// A chunk holds its group values as max(1, C / G) f32 scalars; combined with
// a row they are broadcast over their elements.
//
//===----------------------------------------------------------------------===//

#include "dialect/NfGpuDialect.h"
#include "passes/KernelLowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::lowering;

/// Lanes (chunks) one group spans: 1 for a group inside a chunk.
static int64_t lanesOfGroup(int64_t group, int64_t chunk) {
  return group > chunk ? group / chunk : 1;
}

LogicalResult KernelLowering::checkGroups() {
  WalkResult walk = kernel.walk([&](ReduceOp reduce) {
    std::optional<uint64_t> group = reduce.getGroup();
    if (!group)
      return WalkResult::advance();
    int64_t g = *group, c = sched.chunk;
    int64_t lanes = lanesOfGroup(g, c);
    if (lanes <= 32 && lanes <= sched.threadsPerRow)
      return WalkResult::advance();
    reduce.emitOpError("a group of ")
        << g << " elements spans " << lanes << " chunks of " << c
        << " elements, more than "
        << (lanes > 32 ? "a warp (32)"
                       : "the " + std::to_string(sched.threadsPerRow) +
                             " threads of a row")
        << " of this schedule; groups of at most " << 32 * c
        << " elements are supported here";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

SmallVector<Value> KernelLowering::evaluateGroup(Value v, Chunk &chunk) {
  auto cached = chunk.groups.find(v);
  if (cached != chunk.groups.end())
    return cached->second;
  int64_t count = std::max<int64_t>(
      1, sched.chunk / cast<GroupType>(v.getType()).getSize());
  Operation *op = v.getDefiningOp();
  SmallVector<Value> values;
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    values = reduceGroups(reduce, chunk);
  } else {
    // Elementwise on group values and per-row scalars: value by value.
    for (int64_t j = 0; j < count; ++j) {
      SmallVector<Value> operands;
      for (Value operand : op->getOperands())
        operands.push_back(isa<GroupType>(operand.getType())
                               ? evaluateGroup(operand, chunk)[j]
                               : scalarOf(operand));
      values.push_back(emitElementwise(op, operands));
    }
  }
  chunk.groups[v] = values;
  return values;
}

Value KernelLowering::expandGroup(ArrayRef<Value> values, int64_t group) {
  if (values.size() == 1)
    return splat(values.front());
  SmallVector<Value> elements;
  for (int64_t e = 0; e < sched.chunk; ++e)
    elements.push_back(values[e / group]);
  return vector::FromElementsOp::create(b, loc, vecOf(b.getF32Type()),
                                        elements);
}

SmallVector<Value> KernelLowering::reduceGroups(ReduceOp op, Chunk &chunk) {
  int64_t g = *op.getGroup(), c = sched.chunk;
  Value v = evaluate(op.getInput(), chunk);
  ReduceKind kind = op.getKind();
  bool isMax = kind == ReduceKind::Max;
  Value identity = f32c(isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  // Elements past the row (a general chunk's tail) count as the identity;
  // a vectorized chunk is all in the row or all out, and the lanes of a
  // group are all in or all out (D is a multiple of G), so its value is
  // never stored.
  if (!vectorized) {
    Value mask = vector::FromElementsOp::create(
        b, loc, VectorType::get({c}, b.getI1Type()), chunk.valid);
    v = select(mask, v, splat(identity));
  }
  SmallVector<Value> values;
  int64_t width = std::min(g, c);
  for (int64_t j = 0; j < c / width; ++j)
    values.push_back(reduceLanes(v, kind, j * width, width));
  if (g > c)
    values.front() = segmentReduce(values.front(), kind, g / c);
  if (kind == ReduceKind::Mean || kind == ReduceKind::MeanSq)
    for (Value &value : values) // 1 / G is exact: G is a power of two
      value = arith::MulFOp::create(b, loc, value, f32c(1.0 / (double)g));
  return values;
}

/// Combines `partial` over `lanes` consecutive lanes of the warp
/// (nfgpu.group_reduce, lowered to a butterfly by -nf-lower-row-reductions).
/// In a vectorized variant every lane of the warp takes every chunk (a
/// chunk past the row is masked, not skipped, as for the row's own
/// exchange), so the op needs no lane: its member mask is the whole warp. A
/// general variant skips a chunk past the row in a branch (or leaves its
/// chunk loop), so the other lanes of the warp may not be there: the op
/// takes the thread's lane in the warp, from which its member mask is the
/// group's lanes. A mask that ptxas cannot prove uniform costs a
/// convergence loop around every shuffle (H200,
/// rmsnorm_quant_fp8_group128 at D = 4096: 1,064 SASS instructions against
/// 600 for the per-row kernel, 57% more executed, issue 82% busy).
Value KernelLowering::segmentReduce(Value partial, ReduceKind kind,
                                    int64_t lanes) {
  nfgpu::CombiningKind combining = kind == ReduceKind::Max
                                       ? nfgpu::CombiningKind::Max
                                       : nfgpu::CombiningKind::Sum;
  Value warp = lanes == 32 || vectorized ? Value() : warpLane;
  return nfgpu::GroupReduceOp::create(b, loc, b.getF32Type(), partial, warp,
                                      combining, lanes);
}

/// A row divided by group values: the row times the correctly rounded
/// reciprocal of each group value (as for a per-row scalar, see
/// emitReciprocals), computed once per group value of the chunk.
Value KernelLowering::divideByGroup(DivOp op, Chunk &chunk) {
  auto type = cast<GroupType>(op.getRhs().getType());
  SmallVector<Value> scales, reciprocalValues;
  bool normal = isNormalOrNaN(op.getRhs());
  for (Value s : evaluateGroup(op.getRhs(), chunk)) {
    if (normal) {
      reciprocalValues.push_back(callF32("llvm.nvvm.rcp.rn.f", s));
      continue;
    }
    // A subnormal s is scaled by 2^64, with the row, so that its reciprocal
    // stays finite.
    Value magnitude = math::AbsFOp::create(b, loc, s);
    Value subnormal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                            magnitude, f32c(0x1p-126));
    Value k = select(subnormal, f32c(0x1p64), f32c(1.0));
    scales.push_back(k);
    reciprocalValues.push_back(
        callF32("llvm.nvvm.rcp.rn.f", arith::MulFOp::create(b, loc, s, k)));
  }
  Value x = toF32(evaluate(op.getLhs(), chunk));
  if (!normal)
    x = arith::MulFOp::create(b, loc, x, expandGroup(scales, type.getSize()));
  Value q = arith::MulFOp::create(
      b, loc, x, expandGroup(reciprocalValues, type.getSize()));
  return fromF32(q, getRowElementType(op.getType()));
}

/// One f32 per group into the [B, S, D / G] result: by the chunk that holds
/// the group (G <= C), or by the group's lanes (all of them in a vectorized
/// variant, the first in a general one).
void KernelLowering::storeGroups(unsigned result, ArrayRef<Value> values,
                                 int64_t group, Chunk &chunk) {
  Value ptr = resultPtr[result];
  SmallVector<Value> strides = resultStrides[result];
  Value rowOff = add(mul(rowB, strides[0]), mul(rowS, strides[1]));
  Value firstGroup = div(chunk.base, i64c(group));
  for (auto [j, value] : llvm::enumerate(values)) {
    // The group's first element is in the row: the whole group is.
    int64_t first = j * std::min<int64_t>(group, sched.chunk);
    Value inRow = vectorized ? chunk.valid[0] : chunk.valid[first];
    // A vectorized variant stores the value from every lane of the group
    // (the same value to the same address, one transaction): under the
    // chunk's own condition, the store joins the row's store in one branch.
    // Stored by the first lane only, it took a branch and a predicate of
    // its own per chunk (H200, rmsnorm_quant_fp8_group128: 84.4-89.5 ->
    // 88.1-92.2% of a copy at D = 512-10240, 78.9 -> 88.1 at 20480).
    if (group > sched.chunk && !vectorized)
      inRow = andI(
          inRow, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       rem(chunk.base, i64c(group)), i64c(0)));
    auto ifOp = scf::IfOp::create(b, loc, andI(rowValid, inRow), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value offset = add(rowOff, add(firstGroup, i64c(j)));
    LLVM::StoreOp::create(b, loc, value, gep(ptr, b.getF32Type(), offset), 4);
  }
}

void KernelLowering::storeOutput(unsigned result, Value value, Chunk &chunk) {
  if (auto group = dyn_cast<GroupType>(value.getType())) {
    storeGroups(result, evaluateGroup(value, chunk), group.getSize(), chunk);
    return;
  }
  storeRow(result, evaluate(value, chunk), chunk);
}
