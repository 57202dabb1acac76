//===- LowerRowReductions.cpp - nfgpu exchanges to shuffles and barriers --===//
//
// Part of normfuse. Implements -nf-lower-row-reductions: the exchanges of
// the GPU level (nfgpu.row_reduce, nfgpu.cluster_arrive, and
// nfgpu.group_reduce, a butterfly among a group's lanes) become warp
// shuffles, a shared-memory step across a CTA's warps and, in a cluster,
// st.async into the other CTAs' shared memory counted on an mbarrier per
// slot. The pass allocates that shared memory from the slots the ops use:
// one workgroup buffer per function, one array of partials and one of
// mbarriers per clustered function.
//
//===----------------------------------------------------------------------===//

#include "dialect/NfGpuDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::nf {
#define GEN_PASS_DEF_NFLOWERROWREDUCTIONS
#include "passes/Passes.h.inc"
} // namespace mlir::nf

using namespace mlir;
using namespace mlir::nfgpu;

namespace {

/// The shared memory of one function's exchanges and the code that uses
/// it.
class ExchangeLowering {
public:
  ExchangeLowering(gpu::GPUFuncOp func) : func(func), b(func) {}

  LogicalResult run();

private:
  Value i64c(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); }
  Value i32c(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }
  Value combine(CombiningKind kind, Value x, Value y) {
    if (kind == CombiningKind::Max)
      return arith::MaximumFOp::create(b, loc, x, y);
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value expSum(Value mx, Value sx, Value my, Value sy);
  /// Combines `other` into `values`, kind by kind; an exp_sum reads the
  /// maxima before them as they were before this step.
  void combineAll(ArrayRef<CombiningKind> kinds, MutableArrayRef<Value> values,
                  ArrayRef<Value> other);
  /// Combines parts[0], parts[1], ... of each value in that order.
  SmallVector<Value> fold(ArrayRef<CombiningKind> kinds,
                          ArrayRef<SmallVector<Value>> parts);
  void inlinePtx(ValueRange operands, StringRef ptx, StringRef constraints);
  Value slotBarrier(unsigned slot);

  LogicalResult allocate();
  void lower(RowReduceOp op);
  void lower(ClusterArriveOp op);
  /// The thread's warp in its row and lane in that warp.
  std::pair<Value, Value> warpOf(RowReduceOp op);
  /// Sends `partial` to every CTA of the cluster and reads the N partials
  /// of slot `slot` received, passing each to `received` in rank order.
  void clusterExchange(RowReduceOp op, Value partial, unsigned slot,
                       function_ref<void(Value)> received);

  gpu::GPUFuncOp func;
  OpBuilder b;
  Location loc = func.getLoc();
  SmallVector<RowReduceOp> reductions;
  /// One past the highest slot any exchange uses.
  int64_t slots = 0;
  int64_t threadsPerRow = 0, rowsPerCta = 0, clusterSize = 0;
  Value workgroup;
  std::string clusterSlots, clusterBarriers;
  DenseMap<Value, std::pair<Value, Value>> warpCoordinates;
};

} // namespace

void ExchangeLowering::inlinePtx(ValueRange operands, StringRef ptx,
                                 StringRef constraints) {
  LLVM::InlineAsmOp::create(
      b, loc, TypeRange{}, operands, ptx, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

Value ExchangeLowering::slotBarrier(unsigned slot) {
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value base = LLVM::AddressOfOp::create(b, loc, ptr3, clusterBarriers);
  return LLVM::GEPOp::create(b, loc, ptr3, b.getI64Type(), base,
                             ArrayRef<LLVM::GEPArg>{(int32_t)slot});
}

/// (mx, sx) and (my, sy), each a maximum and a sum of exponentials relative
/// to it: the sum relative to M = max(mx, my), sx e^(mx - M) + sy e^(my - M).
/// The larger maximum's sum is kept as it is and the other one's scaled by
/// e^-|mx - my| (a factor of 1 where they are equal, so that two empty
/// partials, -inf and 0, give 0 and not NaN); a NaN maximum gives a NaN
/// sum. The same in both orders of the operands, bit for bit, so every
/// lane of a butterfly gets the same value.
Value ExchangeLowering::expSum(Value mx, Value sx, Value my, Value sy) {
  // Each operation on its own line: the IR's order does not depend on the
  // order in which the C++ compiler evaluates arguments.
  Value gap = arith::SubFOp::create(b, loc, mx, my);
  gap = math::AbsFOp::create(b, loc, gap);
  Value minusLog2e = arith::ConstantFloatOp::create(
      b, loc, b.getF32Type(), APFloat(-1.4426950408889634f));
  Value t = arith::MulFOp::create(b, loc, gap, minusLog2e);
  Value scale = LLVM::CallIntrinsicOp::create(
                    b, loc, b.getF32Type(), b.getStringAttr(nf::kEx2Intrinsic),
                    ValueRange{t})
                    .getResult(0);
  Value one =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(1.0f));
  Value equal =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mx, my);
  scale = arith::SelectOp::create(b, loc, equal, one, scale);
  Value xLarger =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, mx, my);
  Value keepX = math::FmaOp::create(b, loc, sy, scale, sx);
  Value keepY = math::FmaOp::create(b, loc, sx, scale, sy);
  return arith::SelectOp::create(b, loc, xLarger, keepX, keepY);
}

void ExchangeLowering::combineAll(ArrayRef<CombiningKind> kinds,
                                  MutableArrayRef<Value> values,
                                  ArrayRef<Value> other) {
  // Backwards, so that an exp_sum sees its maximum before it is combined.
  for (size_t i = values.size(); i-- > 0;)
    values[i] = kinds[i] == CombiningKind::ExpSum
                    ? expSum(values[i - 1], values[i], other[i - 1], other[i])
                    : combine(kinds[i], values[i], other[i]);
}

SmallVector<Value> ExchangeLowering::fold(ArrayRef<CombiningKind> kinds,
                                          ArrayRef<SmallVector<Value>> parts) {
  SmallVector<Value> totals(parts.front());
  for (ArrayRef<Value> part : parts.drop_front())
    combineAll(kinds, totals, part);
  return totals;
}

LogicalResult ExchangeLowering::allocate() {
  func.walk([&](RowReduceOp op) { reductions.push_back(op); });
  if (reductions.empty())
    return success();
  RowReduceOp first = reductions.front();
  threadsPerRow = first.getThreadsPerRowAttr().getInt();
  rowsPerCta = first.getRowsPerCtaAttr().getInt();
  clusterSize = first.getClusterSizeAttr().getInt();
  for (RowReduceOp op : reductions) {
    // One buffer is laid out for every exchange of the function.
    if (op.getThreadsPerRowAttr().getInt() != threadsPerRow ||
        op.getRowsPerCtaAttr().getInt() != rowsPerCta ||
        op.getClusterSizeAttr().getInt() != clusterSize)
      return op.emitOpError("maps rows onto threads unlike the function's "
                            "first exchange (threads_per_row, rows_per_cta "
                            "and cluster_size must agree in one gpu.func)");
    slots = std::max<int64_t>(slots, op.getSlot() + op.getPartials().size());
  }
  OpBuilder::InsertionGuard guard(b);
  // A slot per value and row of the CTA, one f32 per warp of the row.
  int64_t warps = threadsPerRow / 32;
  if (warps > 1) {
    auto type =
        MemRefType::get({slots * rowsPerCta * warps}, b.getF32Type(),
                        MemRefLayoutAttrInterface(),
                        gpu::AddressSpaceAttr::get(
                            b.getContext(), gpu::AddressSpace::Workgroup));
    workgroup = func.addWorkgroupAttribution(type, loc);
    // The partials are read back 16 bytes at a time (LLVM merges the
    // loads), so the buffer must be 16-byte aligned: it was only by luck
    // while it was the first shared variable (another shared variable
    // before it once gave a misaligned-address fault on the H100).
    func.setWorkgroupAttributionAttr(func.getNumWorkgroupAttributions() - 1,
                                     LLVM::LLVMDialect::getAlignAttrName(),
                                     b.getI64IntegerAttr(16));
  }
  if (clusterSize > 1) {
    // Written by the other CTAs of the cluster (distributed shared memory):
    // a shared global rather than a workgroup attribution, so that its
    // address is the same in every CTA. Placed first among the function's
    // shared globals (before a staged row's buffer), where ptxas lays out
    // the function's shared memory in that order.
    Operation *before = func;
    func.walk([&](LLVM::AddressOfOp address) {
      Operation *global = SymbolTable::lookupNearestSymbolFrom(
          func, address.getGlobalNameAttr());
      if (global && global->getBlock() == func->getBlock() &&
          global->isBeforeInBlock(before))
        before = global;
    });
    b.setInsertionPoint(before);
    clusterSlots = (func.getName() + "_cluster").str();
    LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(b.getF32Type(), slots * clusterSize),
        /*isConstant=*/false, LLVM::Linkage::Internal, clusterSlots,
        Attribute(), /*alignment=*/4, /*addrSpace=*/3);
    clusterBarriers = (func.getName() + "_cluster_mbar").str();
    LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(b.getI64Type(), slots),
        /*isConstant=*/false, LLVM::Linkage::Internal, clusterBarriers,
        Attribute(), /*alignment=*/8, /*addrSpace=*/3);
  }
  return success();
}

void ExchangeLowering::lower(RowReduceOp op) {
  b.setInsertionPoint(op);
  loc = op.getLoc();
  SmallVector<CombiningKind> kinds;
  for (Attribute kind : op.getKinds())
    kinds.push_back(cast<CombiningKindAttr>(kind).getValue());
  SmallVector<Value> values(op.getPartials());
  Value lane = op.getLane();
  // Butterfly among the row's lanes of the warp (lanes of a row are
  // consecutive and aligned, so xor offsets below T stay inside the row);
  // the values of one exchange step by step together, their shuffles
  // independent.
  int64_t width = std::min<int64_t>(threadsPerRow, 32);
  Value warpWidth = i32c(32);
  // An exp_sum combines with its maximum: every value is shuffled before
  // any is combined. Otherwise each value is combined as it arrives.
  bool joint = llvm::is_contained(kinds, CombiningKind::ExpSum);
  for (int64_t offset = width / 2; offset >= 1; offset /= 2) {
    Value off = i32c(offset);
    SmallVector<Value> others;
    for (size_t i = 0; i < values.size(); ++i) {
      Value other = gpu::ShuffleOp::create(b, loc, values[i], off, warpWidth,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      if (joint)
        others.push_back(other);
      else
        values[i] = combine(kinds[i], values[i], other);
    }
    if (joint)
      combineAll(kinds, values, others);
  }
  int64_t warps = threadsPerRow / 32;
  if (warps > 1) {
    auto [warpInRow, laneInWarp] = warpOf(op);
    // Slot (slot + i) of the value, then the row, then the warp; the values
    // of one exchange share its barrier.
    SmallVector<Value> bases;
    for (size_t i = 0; i < values.size(); ++i)
      bases.push_back(
          mul(add(mul(i64c(op.getSlot() + i), i64c(rowsPerCta)), op.getRow()),
              i64c(warps)));
    auto toIndex = [&](Value v) {
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    };
    auto ifOp = scf::IfOp::create(b, loc, eq(laneInWarp, i64c(0)), false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      for (size_t i = 0; i < values.size(); ++i)
        memref::StoreOp::create(b, loc, values[i], workgroup,
                                ValueRange{toIndex(add(bases[i], warpInRow))});
    }
    gpu::BarrierOp::create(b, loc);
    SmallVector<SmallVector<Value>> parts(warps);
    for (size_t i = 0; i < values.size(); ++i) {
      Value total;
      for (int64_t w = 0; w < warps; ++w) {
        Value part = memref::LoadOp::create(
            b, loc, workgroup, ValueRange{toIndex(add(bases[i], i64c(w)))});
        parts[w].push_back(part);
        if (!joint)
          total = total ? combine(kinds[i], total, part) : part;
      }
      values[i] = total;
    }
    if (joint)
      values = fold(kinds, parts);
  }
  if (clusterSize > 1) {
    if (op.getClusterWait())
      NVVM::ClusterWaitOp::create(b, loc, UnitAttr());
    SmallVector<SmallVector<Value>> parts(clusterSize);
    for (size_t i = 0; i < values.size(); ++i) {
      Value total;
      size_t rank = 0;
      clusterExchange(op, values[i], op.getSlot() + i, [&](Value part) {
        if (joint)
          parts[rank++].push_back(part);
        else
          total = total ? combine(kinds[i], total, part) : part;
      });
      if (!joint)
        values[i] = total;
    }
    if (joint)
      values = fold(kinds, parts);
  }
  op.replaceAllUsesWith(values);
  op.erase();
}

std::pair<Value, Value> ExchangeLowering::warpOf(RowReduceOp op) {
  Value lane = op.getLane();
  auto cached = warpCoordinates.find(lane);
  if (cached != warpCoordinates.end())
    return cached->second;
  // Computed once per function, where the thread's coordinates are (after
  // the row's index, or at the function's start): placed at each exchange
  // instead, LLVM scheduled the kernel differently and ptxas gave some
  // functions up to 8 registers more (LayerNorm's 256 x 5 clusters, 32 ->
  // 40) and others fewer.
  OpBuilder::InsertionGuard guard(b);
  Value row = op.getRow();
  if (Operation *def = row.getDefiningOp();
      def && lane.getParentRegion() == row.getParentRegion() &&
      (!lane.getDefiningOp() || lane.getDefiningOp()->isBeforeInBlock(def)))
    b.setInsertionPointAfter(def);
  else if (Operation *laneDef = lane.getDefiningOp())
    b.setInsertionPointAfter(laneDef);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(lane).getOwner());
  std::pair<Value, Value> coordinates{
      arith::DivUIOp::create(b, loc, lane, i64c(32)),
      arith::RemUIOp::create(b, loc, lane, i64c(32))};
  warpCoordinates[lane] = coordinates;
  return coordinates;
}

void ExchangeLowering::clusterExchange(RowReduceOp op, Value partial,
                                       unsigned slot,
                                       function_ref<void(Value)> received) {
  // `partial` is the CTA's result, the same in all its threads. Thread 0
  // sends it into slot (slot, rank) of every CTA of the cluster with
  // `st.async`, which counts its 4 bytes on that CTA's mbarrier of the
  // slot; the thread also arrives on its own CTA's mbarrier, expecting 4
  // bytes from each CTA. Every thread waits on that mbarrier and reads
  // the N slots of its own CTA, which the caller combines in rank order, so
  // that every CTA gets the same value. A CTA waits only for the N partials,
  // not (as with a cluster barrier) for every thread of the cluster and the
  // release fence before the arrive (measured: docs/benchmarks.md). Each slot
  // has its own mbarrier (phase 0, used once), and a CTA's slots are all
  // written before its wait returns, so none is written after its CTA
  // exits.
  int64_t n = clusterSize;
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto ptr7 = LLVM::LLVMPointerType::get(b.getContext(), 7);
  Value base = LLVM::AddressOfOp::create(b, loc, ptr3, clusterSlots);
  auto slotPtr = [&](Value index) {
    return LLVM::GEPOp::create(b, loc, ptr3, b.getF32Type(), base,
                               ValueRange{index});
  };
  Value barrier = slotBarrier(slot);
  Value leader =
      eq(add(mul(op.getRow(), i64c(threadsPerRow)), op.getLane()), i64c(0));
  auto ifOp = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), barrier, i32c(4 * n),
                                           NVVM::MemScopeKind::CTA,
                                           /*relaxed=*/false, Value());
    Value mine = slotPtr(add(i64c(slot * n), op.getRank()));
    Value bits = LLVM::BitcastOp::create(b, loc, b.getI32Type(), partial);
    for (int64_t r = 0; r < n; ++r) {
      Value rank = i32c(r);
      Value remoteSlot = NVVM::MapaOp::create(b, loc, ptr7, mine, rank);
      Value remoteBarrier = NVVM::MapaOp::create(b, loc, ptr7, barrier, rank);
      inlinePtx({remoteSlot, bits, remoteBarrier},
                "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 "
                "[$0], $1, [$2];",
                "l,r,l");
    }
  }
  // The suspend-time hint is an upper bound the hardware may cut short; the
  // op loops until the phase completes.
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, i32c(0),
                                        i32c(1000000));
  // Each slot is read just before it is combined (the caller's order).
  for (int64_t r = 0; r < n; ++r)
    received(LLVM::LoadOp::create(b, loc, b.getF32Type(),
                                  slotPtr(i64c(slot * n + r)), 4));
}

void ExchangeLowering::lower(ClusterArriveOp op) {
  b.setInsertionPoint(op);
  loc = op.getLoc();
  // The mbarriers of the cluster exchanges in the op's region.
  int64_t used = 0;
  op->getParentRegion()->walk([&](RowReduceOp reduce) {
    if (reduce.getClusterSize() > 1)
      used = std::max<int64_t>(used,
                               reduce.getSlot() + reduce.getPartials().size());
  });
  if (used > 0) {
    // Thread 0 initializes each mbarrier (one arrival: its own, with the
    // bytes it expects). Predicated inside the PTX rather than branched
    // around: a branch here, before the row's loads, changed how LLVM
    // placed the row's address arithmetic, and ptxas then needed 57
    // registers instead of 40 for seed #2's 512 x 3 cluster CTAs (two CTAs
    // per SM instead of three).
    std::string init = "{\n.reg .pred p;\nsetp.eq.u32 p, $0, 0;\n";
    for (int64_t s = 0; s < used; ++s)
      init +=
          "@p mbarrier.init.shared.b64 [$" + std::to_string(s + 1) + "], 1;\n";
    init += "@p fence.mbarrier_init.release.cluster;\n}";
    SmallVector<Value> operands{op.getThread()};
    std::string constraints = "r";
    for (int64_t s = 0; s < used; ++s) {
      operands.push_back(slotBarrier(s));
      constraints += ",l";
    }
    inlinePtx(operands, init, constraints);
  }
  // Relaxed: of what is written before it, only the mbarriers'
  // initialization must be seen by the others, and
  // `fence.mbarrier_init` orders that.
  NVVM::ClusterArriveRelaxedOp::create(b, loc, UnitAttr());
  op.erase();
}

LogicalResult ExchangeLowering::run() {
  if (failed(allocate()))
    return failure();
  SmallVector<ClusterArriveOp> arrivals;
  func.walk([&](ClusterArriveOp op) { arrivals.push_back(op); });
  if (!arrivals.empty() && clusterBarriers.empty())
    return arrivals.front().emitOpError(
        "has no exchange between CTAs (nfgpu.row_reduce with cluster_size "
        "> 1) in its function to start");
  for (ClusterArriveOp op : arrivals)
    lower(op);
  for (RowReduceOp op : reductions)
    lower(op);
  return success();
}

/// nfgpu.group_reduce: a butterfly of `nvvm.shfl.sync bfly` over the
/// segment's lanes (clamp 31: the xor partners stay within the segment),
/// with the whole warp as member mask, or the segment's lanes where the op
/// has the thread's lane in its warp.
static void lowerGroupReduce(GroupReduceOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type i32 = b.getI32Type();
  auto i32c = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v).getResult();
  };
  int64_t lanes = op.getLanes();
  Value mask;
  if (Value lane = op.getWarpLane()) {
    Value first = arith::AndIOp::create(b, loc, lane, i32c(~(lanes - 1)));
    mask =
        arith::ShLIOp::create(b, loc, i32c((int64_t(1) << lanes) - 1), first);
  } else {
    mask = i32c(-1);
  }
  Value clamp = i32c(0x1f);
  Value partial = op.getPartial();
  for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
    Value other = NVVM::ShflOp::create(b, loc, b.getF32Type(), mask, partial,
                                       i32c(offset), clamp,
                                       NVVM::ShflKind::bfly, UnitAttr());
    if (op.getKind() == CombiningKind::Max)
      partial = arith::MaximumFOp::create(b, loc, partial, other);
    else
      partial = arith::AddFOp::create(b, loc, partial, other);
  }
  op.replaceAllUsesWith(partial);
  op.erase();
}

namespace {
struct NfLowerRowReductionsPass
    : nf::impl::NfLowerRowReductionsBase<NfLowerRowReductionsPass> {
  void runOnOperation() override {
    SmallVector<gpu::GPUFuncOp> funcs;
    getOperation().walk([&](gpu::GPUFuncOp func) { funcs.push_back(func); });
    for (gpu::GPUFuncOp func : funcs) {
      ExchangeLowering lowering(func);
      if (failed(lowering.run()))
        return signalPassFailure();
      SmallVector<GroupReduceOp> groups;
      func.walk([&](GroupReduceOp op) { groups.push_back(op); });
      for (GroupReduceOp op : groups)
        lowerGroupReduce(op);
    }
    // An exchange outside a gpu.func has no threads to exchange between.
    WalkResult stray = getOperation().walk([](Operation *op) {
      if (isa<RowReduceOp, ClusterArriveOp, GroupReduceOp>(op)) {
        op->emitOpError("must be inside a gpu.func");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (stray.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
