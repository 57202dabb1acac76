//===- NfGpuDialect.h - nfgpu dialect and ops -------------------*- C++ -*-===//
//
// Part of normfuse. The GPU level (dialect/NfGpuOps.td): the ops that say
// what the threads holding a row do together.
//
//===----------------------------------------------------------------------===//

#ifndef NF_DIALECT_NFGPUDIALECT_H
#define NF_DIALECT_NFGPUDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "dialect/NfGpuDialect.h.inc"
#include "dialect/NfGpuEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/NfGpuAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/NfGpuOps.h.inc"

#endif // NF_DIALECT_NFGPUDIALECT_H
