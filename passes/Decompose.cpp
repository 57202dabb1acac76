//===- Decompose.cpp - composite ops into primitives ----------------------===//
//
// Part of normfuse. Implements -nf-decompose.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFDECOMPOSE
#include "passes/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

namespace {

/// Builds f32 arithmetic for a composite whose operands may be f16/bf16.
struct F32Builder {
  PatternRewriter &rewriter;
  Location loc;

  Type f32() { return rewriter.getF32Type(); }
  RowType f32Row() { return RowType::get(rewriter.getContext(), f32()); }

  /// The row as f32 (exact widening); f32 rows pass through.
  Value widen(Value row) {
    if (cast<RowType>(row.getType()).getElementType().isF32())
      return row;
    return CastOp::create(rewriter, loc, f32Row(), row);
  }
  /// Rounds an f32 row once to the element type of `like`.
  Value narrowLike(Value row, Type like) {
    if (row.getType() == like)
      return row;
    return CastOp::create(rewriter, loc, like, row);
  }
  Value constant(double value) {
    return ConstantOp::create(rewriter, loc, f32(),
                              rewriter.getF32FloatAttr(value));
  }
  template <typename OpT> Value binary(Value lhs, Value rhs) {
    return OpT::create(rewriter, loc, lhs, rhs);
  }
};

/// y = x * rstd (* weight) (+ bias), shared by both norms.
static Value applyAffine(F32Builder &b, Value normalized, Value weight,
                         Value bias) {
  if (weight)
    normalized = b.binary<MulOp>(normalized, b.widen(weight));
  if (bias)
    normalized = b.binary<AddOp>(normalized, b.widen(bias));
  return normalized;
}

static Value inverseStdDev(F32Builder &b, Value meanSquare, APFloat eps) {
  Value shifted =
      b.binary<AddOp>(meanSquare, b.constant(eps.convertToDouble()));
  return RsqrtOp::create(b.rewriter, b.loc, shifted);
}

struct DecomposeLayerNorm : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    F32Builder b{rewriter, op.getLoc()};
    Value x = b.widen(op.getInput());
    Value mean = ReduceOp::create(rewriter, op.getLoc(), ReduceKind::Mean, x);
    Value centred = b.binary<SubOp>(x, mean);
    Value variance =
        ReduceOp::create(rewriter, op.getLoc(), ReduceKind::MeanSq, centred);
    Value normalized =
        b.binary<MulOp>(centred, inverseStdDev(b, variance, op.getEps()));
    Value y = applyAffine(b, normalized, op.getWeight(), op.getBias());
    rewriter.replaceOp(op, b.narrowLike(y, op.getType()));
    return success();
  }
};

struct DecomposeRmsNorm : OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RmsNormOp op,
                                PatternRewriter &rewriter) const override {
    F32Builder b{rewriter, op.getLoc()};
    Value x = b.widen(op.getInput());
    Value meanSquare =
        ReduceOp::create(rewriter, op.getLoc(), ReduceKind::MeanSq, x);
    Value normalized =
        b.binary<MulOp>(x, inverseStdDev(b, meanSquare, op.getEps()));
    Value y = applyAffine(b, normalized, op.getWeight(), op.getBias());
    rewriter.replaceOp(op, b.narrowLike(y, op.getType()));
    return success();
  }
};

struct DecomposeModulate : OpRewritePattern<ModulateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ModulateOp op,
                                PatternRewriter &rewriter) const override {
    F32Builder b{rewriter, op.getLoc()};
    Value onePlusScale =
        b.binary<AddOp>(b.widen(op.getScale()), b.constant(1.0));
    Value scaled = b.binary<MulOp>(b.widen(op.getInput()), onePlusScale);
    Value y = b.binary<AddOp>(scaled, b.widen(op.getShift()));
    rewriter.replaceOp(op, b.narrowLike(y, op.getType()));
    return success();
  }
};

struct NfDecomposePass : nf::impl::NfDecomposeBase<NfDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns);
    // No folding or dead-code removal: the pass rewrites composites only.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

void mlir::nf::populateDecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeLayerNorm, DecomposeRmsNorm, DecomposeModulate>(
      patterns.getContext());
}
