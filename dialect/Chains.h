//===- Chains.h - independent row programs inside a kernel ------*- C++ -*-===//
//
// Part of normfuse.
//
// A kernel body may hold several row programs that share no values (QK-norm:
// one for Q, one for K). Each is a *chain*: a connected component of the
// body's data flow. Chains run over their own [B, S] rows but share D and
// one launch. The verifier, the interpreter and the lowering all need the
// same partition and the same map from tensor dimensions to the chain's
// symbolic sizes, so both live here.
//
//===----------------------------------------------------------------------===//

#ifndef NF_DIALECT_CHAINS_H
#define NF_DIALECT_CHAINS_H

#include "dialect/NfOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::nf {

/// A symbolic size of a chain. `One` is a dimension that must be 1;
/// `MaxPos` is the row count of a rotary cache and `Rotary` its width.
enum class DimSymbol { B, S, D, F, One, MaxPos, Rotary };

/// "B", "S", ...: the letter the IR and the diagnostics use.
StringRef stringifyDimSymbol(DimSymbol symbol);

/// One dimension of a kernel argument or result that a chain ties to one of
/// its symbolic sizes.
struct DimUse {
  Operation *user;  ///< the op that imposes the meaning (return for results)
  int argument;     ///< kernel argument index, or -1 for a result
  int result;       ///< kernel result index, or -1 for an argument
  unsigned dim;     ///< dimension of that tensor
  DimSymbol symbol; ///< what the dimension means
  RankedTensorType type;
};

struct Chain {
  /// Ops of the chain in body order: no constants, no terminator.
  SmallVector<Operation *> ops;
  /// Kernel results this chain writes.
  SmallVector<unsigned> results;
  /// Every tensor dimension the chain constrains.
  SmallVector<DimUse> dims;
  /// The rotary dims this chain uses (for the rotary_dim <= D check).
  SmallVector<Operation *> ropes;
};

class ChainAnalysis {
public:
  explicit ChainAnalysis(KernelOp kernel);

  ArrayRef<Chain> getChains() const { return chains; }
  /// Index of the chain `op` belongs to; -1 for constants and the terminator.
  int getChainOf(Operation *op) const { return chainOf.lookup(op) - 1; }
  /// Index of the chain that writes kernel result `index`.
  int getChainOfResult(unsigned index) const;

private:
  SmallVector<Chain> chains;
  llvm::DenseMap<Operation *, int> chainOf; // chain index + 1
};

/// What a kernel argument is used as. Every use of an argument must have the
/// same role (and data the same broadcast kind); the kernel verifier checks
/// it, with forEachArgumentUse like every other reader of roles.
enum class ArgumentRole { Unused, Data, Index, Cache, Positions, Offset };

/// "unused", "data", "index", "cache", "positions", "offset".
StringRef stringifyArgumentRole(ArgumentRole role);

/// Calls `fn` for every use of a kernel argument by an op of the body, in
/// body order: the op, the argument, its role there and, for Data, the
/// broadcast kind (One otherwise). Stops at, and returns, the first failure.
/// The one definition of which operand of which op plays which role.
LogicalResult forEachArgumentUse(
    KernelOp kernel,
    llvm::function_ref<LogicalResult(Operation *user, BlockArgument argument,
                                     ArgumentRole role, BroadcastKind kind)>
        fn);

/// The role of each argument (Unused for arguments no op uses).
SmallVector<ArgumentRole> getArgumentRoles(KernelOp kernel);

} // namespace mlir::nf

#endif // NF_DIALECT_CHAINS_H
