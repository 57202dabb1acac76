//===- Target.cpp - What the generator knows of each target SM ------------===//
//
// Part of normfuse.
//
//===----------------------------------------------------------------------===//

#include "passes/Target.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::nf;

llvm::ArrayRef<llvm::StringRef> mlir::nf::getSupportedChips() {
  static const llvm::StringRef chips[] = {
      "sm_75",  "sm_80",   "sm_86",  "sm_87",  "sm_89",  "sm_90",   "sm_90a",
      "sm_100", "sm_100a", "sm_103", "sm_110", "sm_120", "sm_120a", "sm_121"};
  return chips;
}

std::string mlir::nf::getUnsupportedChipMessage(llvm::StringRef chip) {
  std::string message =
      "unsupported target '" + chip.str() + "'; expected one of:";
  for (llvm::StringRef supported : getSupportedChips())
    message += " " + supported.str();
  return message;
}

TargetInfo mlir::nf::getTargetInfo(llvm::StringRef chip) {
  TargetInfo target;
  if (!llvm::is_contained(getSupportedChips(), chip))
    return target;
  llvm::StringRef digits = chip.drop_front(3);
  digits.consume_back("a");
  digits.getAsInteger(10, target.sm);
  if (target.sm == 75)
    target.maxThreadsPerSm = 1024;
  else if (target.sm == 86 || target.sm == 87 || target.sm == 89 ||
           target.sm >= 120)
    target.maxThreadsPerSm = 1536;
  if (target.sm == 90 || target.sm == 100 || target.sm == 103)
    target.maxPersistentStageBytes = kLargePersistentStageBytes;
  if (target.sm == 90)
    target.ptxFeatures = "+ptx81";
  return target;
}
