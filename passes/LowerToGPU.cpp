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
// The lowering is one class (KernelLowering.h) in eight files: this one (the
// kernel's structure and the pass), LowerRows.cpp (rows: set-up, schedules,
// streamed and staged rows), RowPhases.cpp (a register-resident row's
// phases), PersistentRows.cpp (persistent CTAs), LowerChunks.cpp (a chunk's
// loads and arithmetic), LowerReductions.cpp (reductions over the row,
// stores), Rematerialize.cpp (what is recomputed across a reduction) and
// GroupReductions.cpp (group values).
//
//===----------------------------------------------------------------------===//

#include "dialect/NfGpuDialect.h"
#include "passes/KernelABI.h"
#include "passes/KernelLowering.h"
#include "passes/Passes.h"
#include "passes/QuantizedCasts.h"
#include "passes/Schedule.h"
#include "passes/Target.h"

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
  // A staged row is read back from shared memory chunk by chunk: a rotary
  // partner or a group spanning chunks would need another thread's chunks,
  // a static shared buffer holds at most 48 KB, and a chunk is copied 16
  // bytes at a time.
  if (sched.staged && (hasRope || getGroupLanes(kernel, sched.chunk) > 1 ||
                       getStagedRowBytes(kernel, sched) > 48 * 1024 ||
                       !hasWholeStagedChunks(kernel, sched.chunk)))
    return kernel.emitOpError(
        "has a staged schedule, which needs a kernel without rotary "
        "embedding or group reductions whose CTA's share of the row fits in "
        "48 KB of shared memory and whose [B, S, D] inputs take a multiple "
        "of 16 bytes per chunk");
  if (sched.persistent &&
      !mayPersist(kernel, sched, kLargePersistentStageBytes))
    return kernel.emitOpError(
               "has a persistent schedule, which needs a kernel of one chain "
               "without select, rotary embedding, group reductions or "
               "[B, F, 1, D] operands, with an operand broadcast along the "
               "row, whose two staged rows fit in ")
           << kLargePersistentStageBytes / 1024 << " KB of shared memory";
  return checkGroups();
}

void KernelLowering::bindParameters(gpu::GPUFuncOp func) {
  SmallVector<KernelParam> abi = computeKernelABI(kernel, chains);
  chainRows.resize(chains.getChains().size());
  chainS.resize(chainRows.size());
  chainF.resize(chainRows.size());
  chainSDivisor.resize(chainRows.size());
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
    case KernelParam::ChainSDivisor:
      chainSDivisor[param.index] = v;
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

  // A staged schedule's vectorized variant holds the CTA's share of each
  // [B, S, D] input in a shared buffer, 16 bytes per chunk of each thread
  // (its twin, peeled and general variants do not: Schedule::unstaged).
  // A persistent schedule's holds two such rows (PersistentRows.cpp), but
  // reads each chunk back once per row, as if it had been loaded from
  // global memory (no `stagedRows`: rematerialization keeps what it would
  // keep of a loaded row).
  persistentRows = sched.persistent && vectorized && !peeled;
  stagedRows = sched.staged && vectorized && !peeled;
  int64_t dynamicBytes = 0;
  if (stagedRows || persistentRows) {
    Schedule staged = sched;
    staged.staged = true;
    int64_t bytes = getStagedRowBytes(kernel, staged);
    stageBuffer = (name + "_stage").str();
    // A staged row (at most 48 KB) is static shared memory. The two slots
    // of a persistent CTA (TargetInfo::maxPersistentStageBytes) are dynamic,
    // an extern buffer of no size whose bytes the launch gives
    // (getDynamicSharedBytesAttrName; the artifact's `dynamic_shared`),
    // aligned to 128 bytes: it follows the static buffers, and 48 bytes
    // past a 128-byte boundary the same kernel ran at 81.6% of a copy
    // instead of 92.6 (H200, layernorm_modulate_quant_fp8, D = 4096).
    if (persistentRows)
      dynamicBytes = getPersistentStageBytes(kernel, sched);
    LLVM::GlobalOp::create(
        b, loc,
        LLVM::LLVMArrayType::get(b.getI8Type(), dynamicBytes ? 0 : bytes),
        /*isConstant=*/false,
        dynamicBytes ? LLVM::Linkage::External : LLVM::Linkage::Internal,
        stageBuffer, Attribute(), /*alignment=*/dynamicBytes ? 128 : 16,
        /*addrSpace=*/3);
  }

  // Shared memory for the row's exchanges is allocated when they are
  // lowered (-nf-lower-row-reductions).
  auto func =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(paramTypes, {}),
                             TypeRange{}, TypeRange{});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({(int32_t)sched.blockSize(), 1, 1}));
  if (dynamicBytes)
    func->setAttr(getDynamicSharedBytesAttrName(),
                  b.getI64IntegerAttr(dynamicBytes));
  // A 1-D cluster: the runtime launches clusterSize consecutive CTAs per
  // row, which `.reqnctapercluster` groups into one cluster.
  if (sched.clusterSize > 1)
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  b.getDenseI32ArrayAttr({(int32_t)sched.clusterSize, 1, 1}));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  bindParameters(func);

  Value tid = idxToI64(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value cta = idxToI64(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value threads = i64c(sched.threadsPerRow);
  lane = rem(tid, threads);
  rowInCta = div(tid, threads);
  warpLane =
      arith::TruncIOp::create(b, loc, b.getI32Type(), rem(tid, i64c(32)));
  // For a cluster of (N, 1, 1), %cluster_ctarank is blockIdx.x mod N.
  if (sched.clusterSize > 1)
    clusterRank = rem(cta, i64c(sched.clusterSize));

  // Chains own consecutive CTA ranges, so each CTA runs one chain and its
  // barriers are uniform.
  Value ctaStart = i64c(0);
  Value rowsPerCta = i64c(sched.ctaRows());
  for (unsigned c = 0; c < chains.getChains().size(); ++c) {
    Value ctas = arith::CeilDivUIOp::create(b, loc, chainRows[c], rowsPerCta);
    // A persistent variant (one chain) is launched with up to B * ceil(S /
    // rows_per_cta) CTAs (its rows are tokens of one entry), more than
    // ceil(B * S / rows_per_cta) where S is not a multiple of rows_per_cta.
    if (persistentRows && sched.rowsPerCta > 1)
      ctas = mul(batchCount(c),
                 arith::CeilDivUIOp::create(b, loc, chainS[c], rowsPerCta));
    // Whole clusters per chain, so a cluster's CTAs take the same branch.
    if (sched.clusterSize > 1)
      ctas = mul(ctas, i64c(sched.clusterSize));
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
// Pass
//===----------------------------------------------------------------------===//

/// What a variant's flags ask of the kernel and the target beyond what the
/// attribute's verifier sees: an L2 prefetch needs a target that has it
/// (LLVM's NVPTX backend cannot select `prefetch.global.L2` below sm_90),
/// and rotary rows are computed one by one.
static LogicalResult checkFlags(KernelOp kernel, VariantAttr variant,
                                const TargetInfo &target) {
  if (variant.getL2Prefetch() && !target.hasL2Prefetch())
    return kernel.emitOpError("variant '")
           << variant.getName()
           << "' has l2_prefetch, which needs a target of sm_90 or newer "
              "(-nf-lower-to-gpu's chip option)";
  if (variant.getJointRows() && containsOp<RopeOp>(kernel))
    return kernel.emitOpError("variant '")
           << variant.getName()
           << "' has joint_rows, but a kernel with rotary embedding computes "
              "each row whole before it stores it, one by one";
  return success();
}

namespace {
struct NfLowerToGPUPass : nf::impl::NfLowerToGPUBase<NfLowerToGPUPass> {
  using NfLowerToGPUBase::NfLowerToGPUBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!chip.empty() && !llvm::is_contained(getSupportedChips(), chip)) {
      mlir::emitError(module.getLoc(), getUnsupportedChipMessage(chip));
      return signalPassFailure();
    }
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    if (kernels.empty())
      return;
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "nf_kernels");
    b.setInsertionPointToStart(gpuModule.getBody());
    TargetInfo target = getTargetInfo(chip);
    for (KernelOp kernel : kernels) {
      FailureOr<SmallVector<VariantAttr>> variants = getVariants(kernel);
      if (failed(variants))
        return signalPassFailure();
      // The kernel with its per-row scalars factored out of max-|x|
      // reductions (factorRowScalars), for the variants whose rows one CTA
      // holds in registers: there the maximum joins the first reduction's
      // exchange. In clusters and streamed rows ptxas took 6 to 32
      // registers more for it, one CTA per SM fewer (H200: -6 to -25
      // points; docs/benchmarks.md, "Per-row scalars out of the maximum").
      KernelOp factored = kernel.clone();
      module.getBody()->push_back(factored);
      if (!factorRowScalars(factored)) {
        factored.erase();
        factored = nullptr;
      }
      for (VariantAttr variant : *variants) {
        Schedule schedule = Schedule::fromAttr(variant.getSchedule());
        if (failed(checkFlags(kernel, variant, target))) {
          if (factored)
            factored.erase();
          return signalPassFailure();
        }
        bool useFactored = factored && schedule.isRegisterResident() &&
                           schedule.clusterSize == 1;
        KernelLowering lowering(useFactored ? factored : kernel, variant,
                                target.hasHardwareFp8(), b);
        if (failed(lowering.emit(getVariantFunctionName(kernel, variant)))) {
          if (factored)
            factored.erase();
          return signalPassFailure();
        }
      }
      if (factored)
        factored.erase();
    }
  }
};
} // namespace
