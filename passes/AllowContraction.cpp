//===- AllowContraction.cpp - let a multiply and an add fuse --------------===//
//
// Part of normfuse. Implements -nf-allow-contraction (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFALLOWCONTRACTION
#include "passes/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nf;

namespace {

struct NfAllowContractionPass
    : nf::impl::NfAllowContractionBase<NfAllowContractionPass> {
  void runOnOperation() override {
    // The functions of streamed schedules keep separate roundings (see
    // Passes.td: contracted, ptxas gave them more registers and one
    // 1024-thread CTA per SM instead of two).
    llvm::StringSet<> streamed;
    getOperation().walk([&](KernelOp kernel) {
      auto variants = kernel->getAttrOfType<ArrayAttr>(getVariantsAttrName());
      for (Attribute a : variants ? variants.getValue() : ArrayRef<Attribute>())
        if (auto v = dyn_cast<VariantAttr>(a))
          if (!Schedule::fromAttr(v.getSchedule()).isRegisterResident())
            streamed.insert(getVariantFunctionName(kernel, v));
    });
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (streamed.contains(func.getName()))
        return;
      func.walk([](Operation *op) {
        // Only the operations a fused multiply-add replaces: a division or
        // a square root keeps its own rounding.
        if (!isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(op))
          return;
        auto fastmath = cast<arith::ArithFastMathInterface>(op);
        arith::FastMathFlagsAttr old = fastmath.getFastMathFlagsAttr();
        arith::FastMathFlags flags =
            old ? old.getValue() : arith::FastMathFlags::none;
        op->setAttr(
            fastmath.getFastMathAttrName(),
            arith::FastMathFlagsAttr::get(
                op->getContext(), flags | arith::FastMathFlags::contract));
      });
    });
  }
};

} // namespace
