//===- nf-opt.cpp - the nf optimizer driver -------------------------------===//
//
// Part of normfuse. mlir-opt for the nf dialect: parses, verifies and prints
// nf IR, and runs any nf pass alone (`nf-opt --help` lists them).
//
//===----------------------------------------------------------------------===//

#include "dialect/NfOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::nf::registerNfPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::nf::NfDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "nf optimizer driver: parse, verify, transform nf IR\n",
      registry));
}
