//===- Chains.cpp - independent row programs inside a kernel --------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "dialect/Chains.h"

#include "llvm/ADT/EquivalenceClasses.h"

using namespace mlir;
using namespace mlir::nf;

StringRef mlir::nf::stringifyDimSymbol(DimSymbol symbol) {
  switch (symbol) {
  case DimSymbol::B:
    return "B";
  case DimSymbol::S:
    return "S";
  case DimSymbol::D:
    return "D";
  case DimSymbol::F:
    return "F";
  case DimSymbol::One:
    return "1";
  case DimSymbol::MaxPos:
    return "max_pos";
  case DimSymbol::Rotary:
    return "rotary_dim";
  }
  llvm_unreachable("unknown dim symbol");
}

static DimSymbol symbolFromLetter(StringRef letter) {
  return llvm::StringSwitch<DimSymbol>(letter)
      .Case("B", DimSymbol::B)
      .Case("S", DimSymbol::S)
      .Case("D", DimSymbol::D)
      .Case("F", DimSymbol::F)
      .Default(DimSymbol::One);
}

/// Records the dims of `tensor` (a kernel argument) as `symbols`, if the
/// ranks agree; rank errors are the op verifiers' to report.
static void addArgumentDims(Chain &chain, Operation *user, Value tensor,
                            ArrayRef<DimSymbol> symbols) {
  auto arg = dyn_cast<BlockArgument>(tensor);
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (!arg || !type || type.getRank() != (int64_t)symbols.size())
    return;
  for (auto [i, symbol] : llvm::enumerate(symbols))
    chain.dims.push_back(
        {user, (int)arg.getArgNumber(), -1, (unsigned)i, symbol, type});
}

static void addBroadcastDims(Chain &chain, Operation *user, Value tensor,
                             BroadcastKind kind) {
  SmallVector<DimSymbol> symbols;
  for (StringRef letter : getBroadcastShape(kind))
    symbols.push_back(symbolFromLetter(letter));
  addArgumentDims(chain, user, tensor, symbols);
}

ChainAnalysis::ChainAnalysis(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  // Union ops that exchange values. Constants are excluded: a constant
  // shared by Q and K must not merge their chains.
  llvm::EquivalenceClasses<Operation *> classes;
  auto isMember = [](Operation *op) {
    return !op->hasTrait<OpTrait::ConstantLike>() &&
           !op->hasTrait<OpTrait::IsTerminator>();
  };
  for (Operation &op : body) {
    if (!isMember(&op))
      continue;
    classes.insert(&op);
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (def->getBlock() == &body && isMember(def))
          classes.unionSets(&op, def);
  }

  DenseMap<Operation *, int> leaderIndex;
  for (Operation &op : body) {
    if (!isMember(&op))
      continue;
    Operation *leader = classes.getLeaderValue(&op);
    auto [it, inserted] = leaderIndex.try_emplace(leader, chains.size());
    if (inserted)
      chains.emplace_back();
    chains[it->second].ops.push_back(&op);
    chainOf[&op] = it->second + 1;
  }

  for (Chain &chain : chains) {
    for (Operation *op : chain.ops) {
      if (auto load = dyn_cast<LoadOp>(op)) {
        addBroadcastDims(chain, op, load.getSource(), load.getKind());
      } else if (auto select = dyn_cast<SelectLoadOp>(op)) {
        addArgumentDims(chain, op, select.getIndex(),
                        {DimSymbol::B, DimSymbol::S});
        addBroadcastDims(chain, op, select.getFirst(), select.getKind());
        addBroadcastDims(chain, op, select.getSecond(), select.getKind());
      } else if (auto rope = dyn_cast<RopeOp>(op)) {
        addArgumentDims(chain, op, rope.getPositions(), {DimSymbol::B});
        addArgumentDims(chain, op, rope.getCache(),
                        {DimSymbol::MaxPos, DimSymbol::Rotary});
        chain.ropes.push_back(op);
      }
    }
  }

  Operation *ret = body.getTerminator();
  auto resultTypes = kernel.getResultTypes();
  for (auto [i, operand] : llvm::enumerate(ret->getOperands())) {
    Operation *def = operand.getDefiningOp();
    int index = def ? getChainOf(def) : -1;
    if (index < 0)
      continue;
    Chain &chain = chains[index];
    chain.results.push_back(i);
    auto type = i < resultTypes.size()
                    ? dyn_cast<RankedTensorType>(resultTypes[i])
                    : RankedTensorType();
    // [B, S, D] rows, [B, S] values computed once per row, or [B, S, D / G]
    // group values (whose last size is not D: the kernel verifier checks it).
    if (!type || type.getRank() < 2 || type.getRank() > 3)
      continue;
    DimSymbol symbols[] = {DimSymbol::B, DimSymbol::S, DimSymbol::D};
    int64_t rank = isa<GroupType>(operand.getType()) ? 2 : type.getRank();
    for (int64_t d = 0; d < rank; ++d)
      chain.dims.push_back({ret, -1, (int)i, (unsigned)d, symbols[d], type});
  }
}

int ChainAnalysis::getChainOfResult(unsigned index) const {
  for (auto [i, chain] : llvm::enumerate(chains))
    if (llvm::is_contained(chain.results, index))
      return i;
  return -1;
}

StringRef mlir::nf::stringifyArgumentRole(ArgumentRole role) {
  switch (role) {
  case ArgumentRole::Unused:
    return "unused";
  case ArgumentRole::Data:
    return "data";
  case ArgumentRole::Index:
    return "index";
  case ArgumentRole::Cache:
    return "cache";
  case ArgumentRole::Positions:
    return "positions";
  case ArgumentRole::Offset:
    return "offset";
  }
  return "?";
}

LogicalResult mlir::nf::forEachArgumentUse(
    KernelOp kernel,
    llvm::function_ref<LogicalResult(Operation *, BlockArgument, ArgumentRole,
                                     BroadcastKind)>
        fn) {
  for (Operation &op : kernel.getBody().front()) {
    SmallVector<std::tuple<Value, ArgumentRole, BroadcastKind>, 3> uses;
    if (auto load = dyn_cast<LoadOp>(op)) {
      uses.push_back({load.getSource(), ArgumentRole::Data, load.getKind()});
    } else if (auto select = dyn_cast<SelectLoadOp>(op)) {
      uses.push_back(
          {select.getIndex(), ArgumentRole::Index, BroadcastKind::One});
      uses.push_back({select.getFirst(), ArgumentRole::Data, select.getKind()});
      uses.push_back(
          {select.getSecond(), ArgumentRole::Data, select.getKind()});
    } else if (auto rope = dyn_cast<RopeOp>(op)) {
      uses.push_back(
          {rope.getCache(), ArgumentRole::Cache, BroadcastKind::One});
      uses.push_back(
          {rope.getPositions(), ArgumentRole::Positions, BroadcastKind::One});
      if (rope.getOffset())
        uses.push_back(
            {rope.getOffset(), ArgumentRole::Offset, BroadcastKind::One});
    }
    for (auto [value, role, kind] : uses)
      if (auto arg = dyn_cast<BlockArgument>(value))
        if (failed(fn(&op, arg, role, kind)))
          return failure();
  }
  return success();
}

SmallVector<ArgumentRole> mlir::nf::getArgumentRoles(KernelOp kernel) {
  SmallVector<ArgumentRole> roles(kernel.getArgumentTypes().size(),
                                  ArgumentRole::Unused);
  (void)forEachArgumentUse(kernel, [&](Operation *, BlockArgument arg,
                                       ArgumentRole role, BroadcastKind) {
    if (arg.getArgNumber() < roles.size())
      roles[arg.getArgNumber()] = role;
    return success();
  });
  return roles;
}
