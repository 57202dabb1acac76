//===- nf-opt.cpp - the nf optimizer driver -------------------------------===//
//
// Part of normfuse. mlir-opt for the nf dialect: parses, verifies and prints
// nf IR and the GPU IR it lowers to, and runs any pass of the pipeline alone
// (`nf-opt --help` lists them): the nf passes, and the upstream passes that
// codegen/Codegen.cpp chains after them.
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"
#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::registerConversionPasses();
  mlir::registerGPUPasses();
  mlir::nf::registerNfPasses();

  mlir::DialectRegistry registry;
  mlir::nf::registerCodegenDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "nf optimizer driver: parse, verify, transform nf IR\n",
      registry));
}
