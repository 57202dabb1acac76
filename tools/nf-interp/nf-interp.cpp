//===- nf-interp.cpp - run nf kernels on the reference interpreter --------===//
//
// Part of normfuse. Runs the kernels of an nf file on deterministic random
// inputs with the reference interpreter; prints, saves or cross-checks the
// results (`nf-interp --help` says how).
//
//===----------------------------------------------------------------------===//

#include "dialect/NfOps.h"
#include "interpreter/Interpreter.h"
#include "passes/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/EndianStream.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::nf;
namespace cl = llvm::cl;

static const char *const kOverview = R"(nf reference interpreter

Runs each nf.kernel of the input file (or only --kernel) on random inputs,
evaluating every op in double precision and rounding each result once to its
element type, as NfOps.td defines.

Sizes. A dimension fixed in an argument's type keeps that size. A dynamic
one takes its symbol's size: B, S, D, F from --dims, and P (the max_pos rows
of a rotary cache); a cache's width is the rope's rotary_dim. Within a chain
a static size of a symbol wins over --dims, and --shape gives an argument's
whole shape (needed when chains differ, e.g. Q and K with different head
counts in S); its sizes then also size the rest of its chain.

Inputs (deterministic for a given --seed):
  float tensors       uniform in [-1, 1), rounded to their dtype
  rotary caches       cos | sin of p * 10000^(-2i/rotary_dim), rounded
  select indices      0 or 1
  rotary positions    uniform in [0, P - offset)
  scalar offsets      --offset (default 0)
  unused int tensors  0

Output. Without --print, --write-dir or --check-decompose, one summary line
per result. --write-dir writes each tensor as raw little-endian row-major
binary in its dtype (f16/bf16 as their 16-bit patterns) and a manifest.txt
with one line per tensor:
  <kernel> input|output <name> <dtype> <shape AxBxC|scalar> <file> [key=value]
(role=<data|index|cache|positions|offset|unused> for inputs, in_place=<arg>
for outputs written into an argument). Results are named by index.

--check-decompose runs each kernel as written and after -nf-decompose on the
same inputs and prints one line per result with the normwise relative error
||decomposed - written|| / ||written||; it must be <= 1e-5 for f32 results and
<= 1e-2 for f16/bf16 results, and NaN never passes. Exit status 1 on any
mismatch or error.
)";

static cl::OptionCategory category("nf-interp options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::init("-"), cl::cat(category));

static cl::opt<std::string>
    kernelName("kernel", cl::desc("Run only this kernel (default: every one)"),
               cl::value_desc("name"), cl::cat(category));

static cl::list<std::string> dimsOptions(
    "dims",
    cl::desc("Sizes of the dynamic dimensions, as a comma-separated "
             "list of B, S, D, F, P (max_pos) assignments "
             "(repeatable; default B=2,S=8,D=64,F=2,P=32, given "
             "ones replace those defaults)"),
    cl::value_desc("B=2,S=8,D=64,F=2,P=32"), cl::cat(category));

static cl::list<std::string>
    shapeOptions("shape",
                 cl::desc("The full shape of one argument, by its name "
                          "(repeatable), e.g. --shape=k=4096x8x128"),
                 cl::value_desc("arg=AxBxC"), cl::cat(category));

static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed of the random inputs (default 1)"),
                              cl::init(1), cl::cat(category));

static cl::opt<int64_t> offsetOption(
    "offset", cl::desc("Value of scalar rotary offset arguments (default 0)"),
    cl::init(0), cl::cat(category));

static cl::opt<bool> printOption(
    "print",
    cl::desc("Print every input and result as text, each value with enough "
             "digits to recover it exactly in its dtype"),
    cl::cat(category));

static cl::opt<std::string> writeDir(
    "write-dir",
    cl::desc("Write inputs, results and manifest.txt into this directory"),
    cl::value_desc("dir"), cl::cat(category));

static cl::opt<bool> checkDecompose(
    "check-decompose",
    cl::desc("Compare every result with the result after -nf-decompose"),
    cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "error: " << message << "\n";
  return 1;
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

static bool parseSize(StringRef text, int64_t &size) {
  return !text.getAsInteger(10, size) && size > 0;
}

static LogicalResult parseDims(StringRef text,
                               std::map<DimSymbol, int64_t> &sizes,
                               std::string &error) {
  SmallVector<StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [letter, value] = item.trim().split('=');
    std::optional<DimSymbol> symbol =
        llvm::StringSwitch<std::optional<DimSymbol>>(letter.trim())
            .Case("B", DimSymbol::B)
            .Case("S", DimSymbol::S)
            .Case("D", DimSymbol::D)
            .Case("F", DimSymbol::F)
            .Case("P", DimSymbol::MaxPos)
            .Default(std::nullopt);
    if (!symbol) {
      error = ("--dims: unknown size '" + letter.trim() +
               "' (expected B, S, D, F or P)")
                  .str();
      return failure();
    }
    int64_t size;
    if (!parseSize(value.trim(), size)) {
      error = ("--dims: " + letter.trim() +
               " must be a positive integer, got '" + value.trim() + "'")
                  .str();
      return failure();
    }
    sizes[*symbol] = size;
  }
  return success();
}

static LogicalResult parseShapes(ArrayRef<std::string> options,
                                 llvm::StringMap<std::vector<int64_t>> &shapes,
                                 std::string &error) {
  for (StringRef option : options) {
    auto [name, text] = option.split('=');
    if (name.empty() || !option.contains('=')) {
      error = ("--shape: expected <arg>=AxBxC, got '" + option + "'").str();
      return failure();
    }
    SmallVector<StringRef> dims;
    text.split(dims, 'x');
    std::vector<int64_t> shape;
    for (StringRef dim : dims) {
      int64_t size;
      if (!parseSize(dim, size)) {
        error = ("--shape " + name +
                 ": expected positive sizes separated by "
                 "'x', got '" +
                 text + "'")
                    .str();
        return failure();
      }
      shape.push_back(size);
    }
    shapes[name] = std::move(shape);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

namespace {
/// Deterministic across standard libraries, unlike std::*_distribution.
struct Random {
  std::mt19937_64 engine;
  explicit Random(uint64_t seed) : engine(seed) {}
  /// Uniform in [-1, 1).
  double symmetric() { return (double)(engine() >> 11) * 0x1.0p-52 - 1.0; }
  /// Uniform in [0, n).
  int64_t below(int64_t n) { return (int64_t)(engine() % (uint64_t)n); }
};
} // namespace

static FailureOr<SmallVector<HostTensor>>
makeInputs(KernelOp kernel, ArrayRef<std::vector<int64_t>> shapes,
           std::string &error) {
  Random random(seed);
  SmallVector<ArgumentRole> roles = getArgumentRoles(kernel);
  auto types = kernel.getArgumentTypes();

  // Positions index caches: keep position + offset inside the smallest.
  SmallVector<int64_t> maxPos(types.size(), INT64_MAX);
  kernel.walk([&](RopeOp rope) {
    auto positions = cast<BlockArgument>(rope.getPositions()).getArgNumber();
    auto cache = cast<BlockArgument>(rope.getCache()).getArgNumber();
    maxPos[positions] = std::min(maxPos[positions], shapes[cache][0]);
  });

  SmallVector<HostTensor> inputs;
  for (auto [i, type] : llvm::enumerate(types)) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    ElementKind kind =
        *getElementKind(tensorType ? tensorType.getElementType() : type);
    HostTensor tensor(kind, shapes[i]);
    switch (roles[i]) {
    case ArgumentRole::Data:
    case ArgumentRole::Unused:
      if (isFloatKind(kind))
        for (double &v : tensor.data)
          v = roundToElement(random.symmetric(), kind);
      else if (kind == ElementKind::I8) // quantized data
        for (double &v : tensor.data)
          v = (double)random.below(255) - 127;
      break;
    case ArgumentRole::Index:
      for (double &v : tensor.data)
        v = (double)random.below(2);
      break;
    case ArgumentRole::Positions: {
      int64_t range = maxPos[i] - offsetOption;
      if (range <= 0) {
        error = ("@" + kernel.getSymName() +
                 ": --offset=" + Twine(offsetOption.getValue()) +
                 " leaves no valid position in a cache of " + Twine(maxPos[i]) +
                 " rows")
                    .str();
        return failure();
      }
      for (double &v : tensor.data)
        v = (double)random.below(range);
      break;
    }
    case ArgumentRole::Cache: {
      int64_t rows = tensor.shape[0], width = tensor.shape[1];
      int64_t half = width / 2;
      for (int64_t p = 0; p < rows; ++p)
        for (int64_t j = 0; j < half; ++j) {
          double angle =
              (double)p * std::pow(10000.0, -2.0 * (double)j / (double)width);
          tensor.data[p * width + j] = roundToElement(std::cos(angle), kind);
          tensor.data[p * width + half + j] =
              roundToElement(std::sin(angle), kind);
        }
      break;
    }
    case ArgumentRole::Offset:
      tensor.data[0] = (double)offsetOption;
      break;
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

static void printValue(llvm::raw_ostream &os, double value, ElementKind kind) {
  if (isFloatKind(kind))
    os << llvm::format("%.9g", value); // round-trips f32, hence f16/bf16
  else
    os << (int64_t)value;
}

static void printTensor(llvm::raw_ostream &os, StringRef header,
                        const HostTensor &tensor) {
  os << header << " " << stringifyElementKind(tensor.elementType) << " "
     << formatShape(tensor.shape) << "\n";
  int64_t width = tensor.shape.empty() ? 1 : tensor.shape.back();
  int64_t rows = width ? (int64_t)tensor.data.size() / width : 0;
  for (int64_t row = 0; row < rows; ++row) {
    os << " ";
    if (tensor.shape.size() > 1) {
      // The index of the row in the leading dimensions: [b, s].
      SmallVector<int64_t> index(tensor.shape.size() - 1);
      for (int64_t rest = row, d = (int64_t)index.size() - 1; d >= 0; --d) {
        index[d] = rest % tensor.shape[d];
        rest /= tensor.shape[d];
      }
      os << " [";
      llvm::interleaveComma(index, os);
      os << "]";
    }
    for (int64_t e = 0; e < width; ++e) {
      os << " ";
      printValue(os, tensor.data[row * width + e], tensor.elementType);
    }
    os << "\n";
  }
}

static void printSummary(llvm::raw_ostream &os, StringRef header,
                         const HostTensor &tensor) {
  double sum = 0, maxAbs = 0;
  for (double v : tensor.data) {
    sum += v;
    maxAbs = std::max(maxAbs, std::fabs(v));
  }
  os << header << ": " << stringifyElementKind(tensor.elementType) << " "
     << formatShape(tensor.shape) << ", mean "
     << llvm::format("%.6e",
                     tensor.data.empty() ? 0.0 : sum / tensor.data.size())
     << ", max |x| " << llvm::format("%.6e", maxAbs) << "\n";
}

static LogicalResult writeBinary(StringRef path, const HostTensor &tensor,
                                 std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = ("cannot write '" + path + "': " + ec.message()).str();
    return failure();
  }
  using llvm::support::endian::write;
  constexpr auto little = llvm::endianness::little;
  for (double v : tensor.data) {
    switch (tensor.elementType) {
    case ElementKind::F32:
      write<float>(os, (float)v, little);
      break;
    case ElementKind::F16:
      write<uint16_t>(os, f16BitsFromDouble(v), little);
      break;
    case ElementKind::BF16:
      write<uint16_t>(os, bf16BitsFromDouble(v), little);
      break;
    case ElementKind::F8E4M3FN:
      write<uint8_t>(os, f8E4M3FNBitsFromDouble(v), little);
      break;
    case ElementKind::F8E5M2:
      write<uint8_t>(os, f8E5M2BitsFromDouble(v), little);
      break;
    case ElementKind::I8:
      write<int8_t>(os, (int8_t)v, little);
      break;
    case ElementKind::I32:
      write<int32_t>(os, (int32_t)v, little);
      break;
    case ElementKind::I64:
      write<int64_t>(os, (int64_t)v, little);
      break;
    }
  }
  os.close();
  if (os.has_error()) {
    error = ("cannot write '" + path + "': " + os.error().message()).str();
    os.clear_error();
    return failure();
  }
  return success();
}

/// Writes the tensors of one kernel and appends their manifest lines.
static LogicalResult writeKernel(KernelOp kernel, ArrayRef<HostTensor> inputs,
                                 ArrayRef<HostTensor> results,
                                 llvm::raw_ostream &manifest,
                                 std::string &error) {
  SmallVector<ArgumentRole> roles = getArgumentRoles(kernel);
  auto write = [&](StringRef role, StringRef name, const HostTensor &tensor,
                   StringRef extra) -> LogicalResult {
    std::string file = (kernel.getSymName() + "." +
                        (role == "input" ? "in" : "out") + "." + name + ".bin")
                           .str();
    llvm::SmallString<256> path(writeDir);
    llvm::sys::path::append(path, file);
    if (failed(writeBinary(path, tensor, error)))
      return failure();
    manifest << kernel.getSymName() << " " << role << " " << name << " "
             << stringifyElementKind(tensor.elementType) << " "
             << formatShape(tensor.shape) << " " << file;
    if (!extra.empty())
      manifest << " " << extra;
    manifest << "\n";
    return success();
  };
  for (auto [i, input] : llvm::enumerate(inputs))
    if (failed(write("input", kernel.getArgumentName(i), input,
                     ("role=" + stringifyArgumentRole(roles[i])).str())))
      return failure();
  for (auto [r, result] : llvm::enumerate(results)) {
    std::string extra;
    if (std::optional<unsigned> arg = kernel.getInPlaceArgument(r))
      extra = "in_place=" + kernel.getArgumentName(*arg);
    if (failed(write("output", std::to_string(r), result, extra)))
      return failure();
  }
  return success();
}

/// Prints one line per result; false if any differs beyond its tolerance.
static bool compareResults(KernelOp kernel, ArrayRef<HostTensor> written,
                           ArrayRef<HostTensor> decomposed) {
  bool ok = true;
  for (auto [r, expected] : llvm::enumerate(written)) {
    const HostTensor &actual = decomposed[r];
    double tolerance = expected.elementType == ElementKind::F32 ? 1e-5 : 1e-2;
    double diff = 0, norm = 0;
    bool hasNaN = actual.shape != expected.shape;
    for (size_t i = 0; !hasNaN && i < expected.data.size(); ++i) {
      double a = actual.data[i], b = expected.data[i];
      hasNaN |= std::isnan(a) || std::isnan(b);
      diff += (a - b) * (a - b);
      norm += b * b;
    }
    double error = diff == 0 ? 0.0 : std::sqrt(diff) / std::sqrt(norm);
    if (hasNaN || std::isinf(diff) || std::isinf(norm))
      error = std::numeric_limits<double>::quiet_NaN();
    bool pass = error <= tolerance; // false for NaN
    llvm::outs() << "@" << kernel.getSymName() << " result #" << r << " "
                 << stringifyElementKind(expected.elementType) << " "
                 << formatShape(expected.shape) << ": rel_error "
                 << llvm::format("%.2e", error) << (pass ? " <= " : " > ")
                 << llvm::format("%.0e", tolerance)
                 << (pass ? " ok" : " MISMATCH") << "\n";
    ok &= pass;
  }
  return ok;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, kOverview);

  std::string error;
  std::map<DimSymbol, int64_t> sizes = {{DimSymbol::B, 2},
                                        {DimSymbol::S, 8},
                                        {DimSymbol::D, 64},
                                        {DimSymbol::F, 2},
                                        {DimSymbol::MaxPos, 32}};
  llvm::StringMap<std::vector<int64_t>> shapes;
  for (StringRef dims : dimsOptions)
    if (failed(parseDims(dims, sizes, error)))
      return fail(error);
  if (failed(parseShapes(shapeOptions, shapes, error)))
    return fail(error);
  if (offsetOption < 0)
    return fail("--offset must not be negative");

  MLIRContext context;
  context.disableMultithreading();
  context.printOpOnDiagnostic(false);
  context.getOrLoadDialect<NfDialect>();

  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFilename, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // the parser or verifier has printed the error

  SmallVector<KernelOp> kernels;
  for (KernelOp kernel : module->getOps<KernelOp>())
    if (kernelName.empty() || kernel.getSymName() == kernelName)
      kernels.push_back(kernel);
  if (kernels.empty()) {
    if (kernelName.empty())
      return fail("'" + inputFilename + "' has no nf.kernel");
    std::string names;
    for (KernelOp kernel : module->getOps<KernelOp>())
      names += (names.empty() ? "@" : ", @") + kernel.getSymName().str();
    return fail("no kernel @" + kernelName + " in '" + inputFilename +
                "' (it has " + (names.empty() ? "none" : names) + ")");
  }

  OwningOpRef<ModuleOp> decomposed;
  if (checkDecompose) {
    decomposed = module->clone();
    PassManager pm(&context);
    pm.addPass(createNfDecompose());
    if (failed(pm.run(*decomposed)))
      return fail("-nf-decompose failed");
  }

  std::string manifestText;
  llvm::raw_string_ostream manifest(manifestText);
  if (!writeDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(writeDir))
      return fail("cannot create '" + writeDir + "': " + ec.message());
    manifest << "# nf-interp reference data for " << inputFilename << " (seed "
             << seed << ", offset " << offsetOption << ")\n"
             << "# kernel input|output name dtype shape file [key=value]\n";
  }

  bool allAgree = true;
  for (KernelOp kernel : kernels) {
    auto argShapes = deriveArgumentShapes(kernel, sizes, shapes, error);
    if (failed(argShapes))
      return fail(error);
    auto inputs = makeInputs(kernel, *argShapes, error);
    if (failed(inputs))
      return fail(error);
    auto results = interpretKernel(kernel, *inputs, error);
    if (failed(results))
      return fail(error);

    std::string prefix = "@" + kernel.getSymName().str();
    if (printOption) {
      for (auto [i, input] : llvm::enumerate(*inputs))
        printTensor(llvm::outs(),
                    prefix + " input %" + kernel.getArgumentName(i), input);
      for (auto [r, result] : llvm::enumerate(*results))
        printTensor(llvm::outs(), prefix + " result #" + std::to_string(r),
                    result);
    }
    if (!writeDir.empty() &&
        failed(writeKernel(kernel, *inputs, *results, manifest, error)))
      return fail(error);
    if (checkDecompose) {
      auto other = dyn_cast_or_null<KernelOp>(
          SymbolTable::lookupSymbolIn(*decomposed, kernel.getSymName()));
      if (!other)
        return fail(prefix + " is missing after -nf-decompose");
      auto decomposedResults = interpretKernel(other, *inputs, error);
      if (failed(decomposedResults))
        return fail("after -nf-decompose: " + error);
      allAgree &= compareResults(kernel, *results, *decomposedResults);
    }
    if (!printOption && writeDir.empty() && !checkDecompose)
      for (auto [r, result] : llvm::enumerate(*results))
        printSummary(llvm::outs(), prefix + " result #" + std::to_string(r),
                     result);
  }

  if (!writeDir.empty()) {
    llvm::SmallString<256> path(writeDir);
    llvm::sys::path::append(path, "manifest.txt");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail("cannot write '" + path + "': " + ec.message());
    os << manifestText;
  }
  if (!allAgree)
    return fail("-nf-decompose changes the results beyond the tolerance");
  return 0;
}
