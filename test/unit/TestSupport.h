//===- TestSupport.h - shared helpers of the unit tests ---------*- C++ -*-===//
//
// Part of normfuse. Parsing nf source in a test, and rounding written for the
// tests alone: the expected values must not come from the interpreter's own
// helpers, so f16 uses the compiler's _Float16 and bf16 a bit manipulation.
//
//===----------------------------------------------------------------------===//

#ifndef NF_TEST_UNIT_TESTSUPPORT_H
#define NF_TEST_UNIT_TESTSUPPORT_H

#include "dialect/NfOps.h"
#include "interpreter/Interpreter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cmath>
#include <cstring>
#include <string>

namespace nf_test {

/// A parsed nf module with its own context; parse errors are collected in
/// `diagnostics` instead of printed.
class ParsedModule {
public:
  explicit ParsedModule(llvm::StringRef source) {
    context.disableMultithreading();
    context.getOrLoadDialect<mlir::nf::NfDialect>();
    mlir::ScopedDiagnosticHandler handler(
        &context, [&](mlir::Diagnostic &diagnostic) {
          diagnostics += diagnostic.str() + "\n";
          return mlir::success();
        });
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  }

  bool ok() const { return (bool)module; }

  /// The kernel called `name`, or the first one if `name` is empty.
  mlir::nf::KernelOp kernel(llvm::StringRef name = "") {
    for (auto kernel : module->getOps<mlir::nf::KernelOp>())
      if (name.empty() || kernel.getSymName() == name)
        return kernel;
    return {};
  }

  std::string diagnostics;

private:
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// f32 rounding by the hardware.
inline double f32(double x) { return (double)(float)x; }

/// f16 rounding by the compiler (correctly rounded from double).
inline double f16(double x) { return (double)(_Float16)x; }

/// bf16 rounding of an f32 value: add half an ulp of bf16 (ties to even)
/// and drop the low 16 bits. Values from double go through f32 first.
inline double bf16(double x) {
  float f = (float)x;
  if (std::isnan(f))
    return f;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline double roundTo(mlir::nf::ElementKind kind, double x) {
  switch (kind) {
  case mlir::nf::ElementKind::F32:
    return f32(x);
  case mlir::nf::ElementKind::F16:
    return f16(x);
  case mlir::nf::ElementKind::BF16:
    return bf16(x);
  default:
    return x;
  }
}

} // namespace nf_test

#endif // NF_TEST_UNIT_TESTSUPPORT_H
