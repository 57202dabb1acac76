//===- NfOps.h - nf dialect operations --------------------------*- C++ -*-===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#ifndef NF_DIALECT_NFOPS_H
#define NF_DIALECT_NFOPS_H

#include "dialect/NfDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialect/NfOps.h.inc"

namespace mlir::nf {
/// On a kernel built for one combination of type parameters (nf-compile
/// --types): the name the user wrote (the symbol is <name>__<types>), and
/// the combination ("act=bf16 w=f32"). The artifact writer reads both.
inline StringRef getPublicNameAttrName() { return "nf.public_name"; }
inline StringRef getTypesAttrName() { return "nf.types"; }
/// On a compiled kernel (compileToPTX): a dictionary from each variant's
/// GPU function to the static shared memory it allocated, in bytes (i64),
/// which the artifact reports.
inline StringRef getSharedBytesAttrName() { return "nf.shared_bytes"; }
/// The dynamic shared memory a launch must give a GPU function, in bytes
/// (i64): on the gpu.func, set by -nf-lower-to-gpu (a persistent CTA's
/// slots); on a compiled kernel, a dictionary from each variant's function
/// to it (absent: none), which the artifact reports.
inline StringRef getDynamicSharedBytesAttrName() {
  return "nf.dynamic_shared_bytes";
}
} // namespace mlir::nf

#endif // NF_DIALECT_NFOPS_H
