//===- FactorRowScalars.cpp - per-row scalars out of products -------------===//
//
// Part of normfuse. Implements -nf-factor-row-scalars.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFFACTORROWSCALARS
#include "passes/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

namespace {

/// The factors of a product of f32 rows and per-row scalars (nested
/// `nf.mul`), rows and scalars apart, each in the order it is met.
struct Factors {
  SmallVector<Value> rows, scalars;
};

static bool isF32Row(Value v) {
  auto row = dyn_cast<RowType>(v.getType());
  return row && row.getElementType().isF32();
}

static void collectFactors(Value v, Factors &factors) {
  if (auto mul = v.getDefiningOp<MulOp>()) {
    if (isF32Row(mul.getResult()) || mul.getResult().getType().isF32()) {
      collectFactors(mul.getLhs(), factors);
      collectFactors(mul.getRhs(), factors);
      return;
    }
  }
  (isa<RowType>(v.getType()) ? factors.rows : factors.scalars).push_back(v);
}

static Value product(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  Value result = values.front();
  for (Value v : values.drop_front())
    result = MulOp::create(b, loc, result, v);
  return result;
}

/// `reduce max (abs p)`, p a product of rows and per-row scalars s:
/// `|s| * reduce max (abs t)`, t the product of the rows, and p becomes
/// `t * s`. Rounding is monotonic, so max |fl(t * s)| = fl(|s| * max |t|)
/// exactly: the scale computed from the maximum is that of the row it
/// scales. Returns whether it rewrote.
static bool factorMaxAbs(ReduceOp reduce) {
  if (reduce.getKind() != ReduceKind::Max || reduce.getGroup())
    return false;
  auto abs = reduce.getInput().getDefiningOp<AbsOp>();
  if (!abs)
    return false;
  Value p = abs.getInput();
  Factors factors;
  collectFactors(p, factors);
  if (factors.rows.empty() || factors.scalars.empty())
    return false;

  OpBuilder b(p.getContext());
  Location loc = p.getLoc();
  // The factors dominate p: its replacement is built right after it.
  b.setInsertionPointAfterValue(p);
  Value t = product(b, loc, factors.rows);
  Value s = product(b, loc, factors.scalars);
  Value factored = MulOp::create(b, loc, t, s);
  p.replaceAllUsesExcept(factored, factored.getDefiningOp());

  b.setInsertionPoint(reduce);
  Value max = ReduceOp::create(b, loc, ReduceKind::Max,
                               AbsOp::create(b, loc, t).getResult());
  Value scaled = MulOp::create(b, loc, max, AbsOp::create(b, loc, s));
  reduce.getResult().replaceAllUsesWith(scaled);
  return true;
}

/// `(t * s1) * s2` and `(t * s1) / s2`, t a row and s1, s2 per-row
/// scalars, the inner product used once: `t * (s1 * s2)` and
/// `t * (s1 / s2)`, one multiplication per element instead of two.
static bool foldScalarPair(Operation *op) {
  if (!isa<MulOp, DivOp>(op) || !isF32Row(op->getResult(0)) ||
      !op->getOperand(1).getType().isF32())
    return false;
  auto inner = op->getOperand(0).getDefiningOp<MulOp>();
  if (!inner || !inner->hasOneUse() || !isF32Row(inner.getLhs()) ||
      !inner.getRhs().getType().isF32())
    return false;
  OpBuilder b(op);
  Value s1 = inner.getRhs(), s2 = op->getOperand(1);
  Value s = isa<MulOp>(op) ? MulOp::create(b, op->getLoc(), s1, s2).getResult()
                           : DivOp::create(b, op->getLoc(), s1, s2).getResult();
  Value folded = MulOp::create(b, op->getLoc(), inner.getLhs(), s);
  op->getResult(0).replaceAllUsesWith(folded);
  return true;
}

/// Erases `op` if nothing uses it any more, then the elementwise ops and
/// reductions it used that are then unused: what a rewrite left behind.
static void eraseIfDead(Operation *op) {
  if (!op || !op->use_empty() || !isa<MulOp, DivOp, AbsOp, ReduceOp>(op))
    return;
  SmallVector<Operation *> operands;
  for (Value v : op->getOperands())
    operands.push_back(v.getDefiningOp());
  op->erase();
  for (Operation *operand : operands)
    eraseIfDead(operand);
}

struct NfFactorRowScalarsPass
    : nf::impl::NfFactorRowScalarsBase<NfFactorRowScalarsPass> {
  void runOnOperation() override { factorRowScalars(getOperation()); }
};

} // namespace

bool mlir::nf::factorRowScalars(Operation *root) {
  bool changed = false;
  SmallVector<ReduceOp> reductions;
  root->walk([&](ReduceOp op) { reductions.push_back(op); });
  for (ReduceOp reduce : reductions) {
    // The product p of `reduce max (abs p)`, which the rewrite leaves
    // without uses.
    Operation *abs = reduce.getInput().getDefiningOp();
    Operation *p = abs ? abs->getOperand(0).getDefiningOp() : nullptr;
    if (!factorMaxAbs(reduce))
      continue;
    changed = true;
    // p no longer has uses, so erasing the reduction does not reach it
    // (nor any reduction still to come: those are defined after it).
    eraseIfDead(reduce);
    eraseIfDead(p);
  }
  SmallVector<Operation *> candidates;
  root->walk([&](Operation *op) {
    if (isa<MulOp, DivOp>(op))
      candidates.push_back(op);
  });
  // A fold erases `op` and what it alone used, all defined before it: ops
  // already visited, never one still to come.
  for (Operation *op : candidates) {
    if (foldScalarPair(op)) {
      changed = true;
      eraseIfDead(op);
    }
  }
  return changed;
}
