//===- LowerMoments.cpp - a row's mean and variance in one exchange -------===//
//
// Part of normfuse. In -nf-lower-to-gpu's register-resident rows of one
// CTA of several warps: LayerNorm's `mean` and the `mean_sq` of the row
// centred on it, which would take two exchanges (shuffles, then a CTA
// barrier and shared memory, each), reduced with one barrier. Each warp
// finds its own mean (one butterfly), centres its elements on it and sums
// their squares (a second butterfly); the warps' counts, sums and centred
// sums of squares then cross the barrier together and are merged exactly by
// a butterfly over the warps (Chan, Golub and LeVeque: the centred sums
// add, plus na * nb / n times the square of the distance between means).
// The variance is still a sum of squares of centred values, never
// E[x^2] - E[x]^2
// (docs/Rationale.md, "LayerNorm's statistics with one barrier").
//
//===----------------------------------------------------------------------===//

#include "passes/KernelLowering.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::nf;
using namespace mlir::nf::lowering;

/// Whether `sq` is `nf.reduce mean_sq (x - m)` where `mean` is
/// `m = nf.reduce mean x`: the second moment of the row centred on its mean.
static bool isCenteredSecondMoment(ReduceOp mean, ReduceOp sq) {
  if (mean.getKind() != ReduceKind::Mean || sq.getKind() != ReduceKind::MeanSq)
    return false;
  auto centred = sq.getInput().getDefiningOp<SubOp>();
  return centred && centred.getLhs() == mean.getInput() &&
         centred.getRhs() == mean.getResult();
}

bool KernelLowering::fusesMoments(ArrayRef<ReduceOp> reductions, size_t i) {
  // A row of one warp has no barrier to save. A cluster exchanges one f32
  // per reduction between its CTAs (clusterCombine): it keeps the two
  // exchanges.
  return sched.isRegisterResident() && sched.threadsPerRow > 32 &&
         sched.clusterSize == 1 && i + 1 < reductions.size() &&
         isCenteredSecondMoment(reductions[i], reductions[i + 1]);
}

unsigned KernelLowering::exchangeSlots(ArrayRef<ReduceOp> reductions) {
  // The fused pair exchanges three values (count, mean and centred sum of
  // squares of each warp) in the slots of two reductions and one more.
  unsigned slots = reductions.size();
  for (size_t i = 0; i + 1 < reductions.size(); ++i)
    if (fusesMoments(reductions, i))
      ++slots, ++i;
  return slots;
}

Value KernelLowering::reciprocalOrZero(Value n) {
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, n, f32c(0.0));
  return select(positive, callF32("llvm.nvvm.rcp.approx.ftz.f", n), f32c(0.0));
}

std::pair<Value, Value>
KernelLowering::reduceMoments(ReduceOp mean, MutableArrayRef<Chunk> chunks,
                              unsigned firstSlot,
                              function_ref<void()> beforeCentring) {
  auto addF = [&](Value x, Value y) {
    return x ? arith::AddFOp::create(b, loc, x, y).getResult() : y;
  };
  auto mulF = [&](Value x, Value y) {
    return arith::MulFOp::create(b, loc, x, y).getResult();
  };
  Value warpWidth = arith::ConstantIntOp::create(b, loc, 32, 32);
  // Sums over the warp by butterfly, the values' shuffles interleaved.
  auto warpSums = [&](SmallVector<Value> values) {
    for (int64_t offset = 16; offset >= 1; offset /= 2) {
      Value off = arith::ConstantIntOp::create(b, loc, offset, 32);
      for (Value &v : values)
        v = addF(v, gpu::ShuffleOp::create(b, loc, v, off, warpWidth,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult());
    }
    return values;
  };

  // The warp's count and sum, its elements masked as any reduction's are
  // (a chunk of ones counts the chunk's elements in the row).
  Value n, sum;
  for (Chunk &chunk : chunks) {
    n = addF(n, reduceChunkValue(splat(f32c(1.0)), ReduceKind::Sum, chunk));
    sum = addF(sum, reduceChunkValue(evaluate(mean.getInput(), chunk),
                                     ReduceKind::Sum, chunk));
  }
  SmallVector<Value> warp = warpSums({n, sum});
  Value warpN = warp[0];
  Value warpMean = mulF(warp[1], reciprocalOrZero(warpN));
  // The warp's elements centred on the warp's mean (recomputed from the
  // row as loaded where the schedule recomputes between reductions: the
  // f32 row live across the butterfly cost 512 x 3 its third CTA per SM).
  beforeCentring();
  Value m2;
  for (Chunk &chunk : chunks) {
    Value centred = arith::SubFOp::create(
        b, loc, evaluate(mean.getInput(), chunk), splat(warpMean));
    m2 = addF(m2, reduceChunkValue(centred, ReduceKind::MeanSq, chunk));
  }
  Value warpM2 = warpSums({m2})[0];

  // Each warp's count, sum and centred sum of squares into its slots. After
  // the barrier lane l of every warp takes warp l's (mod the row's warps)
  // and a butterfly over those lanes merges them: three values per thread,
  // where merging every warp's in each thread held them all (ptxas: 64 -> 92
  // registers at 512 x 4).
  int64_t warps = sched.threadsPerRow / 32;
  auto toIndex = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  auto slot = [&](unsigned k, Value w) {
    Value base =
        mul(add(mul(i64c(firstSlot + k), i64c(sched.rowsPerCta)), rowInCta),
            i64c(warps));
    return toIndex(add(base, w));
  };
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       laneInWarp, i64c(0));
  auto ifOp = scf::IfOp::create(b, loc, leader, false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    SmallVector<Value> values{warpN, warp[1], warpM2};
    for (auto [k, v] : llvm::enumerate(values))
      memref::StoreOp::create(b, loc, v, workgroup,
                              ValueRange{slot(k, warpInRow)});
  }
  gpu::BarrierOp::create(b, loc);
  Value mine = rem(laneInWarp, i64c(warps));
  auto part = [&](unsigned k) {
    return memref::LoadOp::create(b, loc, workgroup, ValueRange{slot(k, mine)})
        .getResult();
  };
  Value rowN = part(0), rowSum = part(1), rowM2 = part(2);
  // Two warps' results merged: counts and sums add; the centred sums of
  // squares add, plus (ma - mb)^2 * na * nb / n for the distance between
  // their means. Every operation is commutative in the two, so both lanes
  // of a butterfly pair get the same bits.
  for (int64_t offset = warps / 2; offset >= 1; offset /= 2) {
    Value off = arith::ConstantIntOp::create(b, loc, offset, 32);
    auto shuffle = [&](Value v) {
      return gpu::ShuffleOp::create(b, loc, v, off, warpWidth,
                                    gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    Value otherN = shuffle(rowN), otherSum = shuffle(rowSum),
          otherM2 = shuffle(rowM2);
    Value n = arith::AddFOp::create(b, loc, rowN, otherN);
    Value d = arith::SubFOp::create(b, loc,
                                    mulF(rowSum, reciprocalOrZero(rowN)),
                                    mulF(otherSum, reciprocalOrZero(otherN)));
    Value weight = mulF(mulF(rowN, otherN), reciprocalOrZero(n));
    rowM2 = addF(addF(rowM2, otherM2), mulF(mulF(d, d), weight));
    rowSum = addF(rowSum, otherSum);
    rowN = n;
  }
  Value r = reciprocalOfRowLength();
  return {mulF(rowSum, r), mulF(rowM2, r)};
}
