//===- TorchEmitter.cpp - PyTorch fallback generated from nf IR -----------===//
//
// Part of normfuse.
//
// Every row value of a chain is a torch tensor that broadcasts to
// [B, F, S/F, D] (F = 1 when the chain has no [B, F, 1, D] operand): a load
// is a view of its argument with size-1 dimensions where the broadcast kind
// has none, a per-row scalar is [.., 1] (reductions keep their dimension),
// a constant is a 0-d tensor. Torch broadcasting then does what the kernel's
// row indexing does, and each result is copied into a new [B, S, D] tensor
// viewed as [B, F, S/F, D].
//
// Rounding, to match the interpreter (exact result, rounded once):
//   - f32 elementwise ops use torch's f32 ops (correctly rounded for + - * /
//     sqrt; exp, tanh, sigmoid, rsqrt within an ulp or two).
//   - f16/bf16 elementwise ops compute in f32 and round once with .to():
//     f32 holds every f16/bf16 product and rounding twice is innocuous for
//     + - * / sqrt at these widths (24 >= 2 * 11 + 2).
//   - Reductions and rope, which combine several values before their one
//     rounding, compute in f64.
//
//===----------------------------------------------------------------------===//

#include "codegen/TorchEmitter.h"
#include "dialect/Chains.h"
#include "dialect/NfOps.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <set>

using namespace mlir;
using namespace mlir::nf;

//===----------------------------------------------------------------------===//
// Python spelling
//===----------------------------------------------------------------------===//

static bool isPythonKeyword(StringRef word) {
  static const char *const keywords[] = {
      "False",  "None",   "True",    "and",      "as",       "assert", "async",
      "await",  "break",  "class",   "continue", "def",      "del",    "elif",
      "else",   "except", "finally", "for",      "from",     "global", "if",
      "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
      "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};
  return llvm::is_contained(keywords, word);
}

/// A Python identifier close to `name`: other characters become '_', a
/// leading digit gets a '_' before it, a keyword one after it.
static std::string toIdentifier(StringRef name) {
  std::string id;
  for (char c : name)
    id += (llvm::isAlnum(c) || c == '_') ? c : '_';
  if (id.empty() || llvm::isDigit(id[0]))
    id = "_" + id;
  if (isPythonKeyword(id))
    id += "_";
  return id;
}

/// `text` as the inside of a Python string literal.
static std::string escapeForPython(StringRef text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\\' || c == '"')
      out += std::string("\\") + (char)c;
    else if (c >= 0x20 && c < 0x7f)
      out += (char)c;
    else
      out += llvm::formatv("\\x{0:x-2}", (unsigned)c).str();
  }
  return out;
}

/// A Python float literal with exactly the value `v` (a double prints in
/// at most 17 significant digits; every f32/f16/bf16 value is a double).
static std::string pythonFloat(double v) {
  if (std::isnan(v))
    return "float(\"nan\")";
  if (std::isinf(v))
    return v > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", v);
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0"; // "1" would be an int, "-0" would lose its sign
  return text;
}

/// "torch.float32" etc. for the float element types of rows.
static std::optional<std::string> torchDType(Type type) {
  if (type.isF32())
    return std::string("torch.float32");
  if (type.isF16())
    return std::string("torch.float16");
  if (type.isBF16())
    return std::string("torch.bfloat16");
  if (isa<Float8E4M3FNType>(type))
    return std::string("torch.float8_e4m3fn");
  if (isa<Float8E5M2Type>(type))
    return std::string("torch.float8_e5m2");
  if (type.isSignlessInteger(8))
    return std::string("torch.int8");
  return std::nullopt;
}

/// The conversion of an f32 tensor `x` to a quantized type, as nf.cast
/// defines it: torch's float8 conversions round to nearest even but turn
/// overflow into NaN (e4m3fn) or inf (e5m2), so the value is clamped to the
/// finite range first (clamp keeps NaN); the int8 conversion truncates and
/// wraps, so NaN becomes 0 and the value is rounded (half to even) and
/// clamped first.
static std::string quantize(const std::string &x, Type element,
                            const std::string &dtype) {
  if (element.isSignlessInteger(8))
    return "torch.nan_to_num(" + x + ", nan=0.0).round().clamp(-128, 127).to(" +
           dtype + ")";
  double max = isa<Float8E4M3FNType>(element) ? 448.0 : 57344.0;
  std::string bound = std::to_string((int64_t)max);
  return x + ".clamp(-" + bound + ", " + bound + ").to(" + dtype + ")";
}

static std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// "bf16[B,S,128]": a tensor type with each dynamic dimension named by its
/// letter (or "?" without one).
static std::string describeTensor(RankedTensorType type,
                                  ArrayRef<StringRef> letters) {
  std::string text = typeName(type.getElementType()) + "[";
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d)
      text += ",";
    if (!type.isDynamicDim(d))
      text += std::to_string(type.getDimSize(d));
    else if ((size_t)d < letters.size())
      text += letters[d].str();
    else
      text += "?";
  }
  return text + "]";
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

namespace {
/// Hands out Python identifiers that are unique in one scope.
class Namer {
public:
  void reserve(StringRef name) { taken.insert(name.str()); }
  std::string take(StringRef base) {
    std::string name = toIdentifier(base);
    while (!taken.insert(name).second)
      name += "_";
    return name;
  }

private:
  std::set<std::string> taken;
};

/// Names the generated code itself refers to inside a function or at
/// module level; no argument or kernel may shadow them.
const char *const kReservedNames[] = {"torch", "float", "_nf_rope", "KERNELS"};
} // namespace

//===----------------------------------------------------------------------===//
// The rope helper
//===----------------------------------------------------------------------===//

// Rows x of [.., D] elements (any leading shape that broadcasts with [B]),
// cache [max_pos, rotary] (cos in columns [0, rotary/2), sin in
// [rotary/2, rotary)), positions [B]. Pair (x1, x2) becomes
// (x1*c - x2*s, x2*c + x1*s), computed in f64 (every product exact) and
// rounded once to x's dtype; elements from rotary on pass through. A
// position outside the cache makes the rotated elements NaN, as the kernel
// does.
static const char kRopeHelper[] = R"PY(
def _nf_rope(x, cache, positions, offset, rotary, interleaved, d):
    """nf.rope of rows x [.., D] at positions[b] + offset; NaN outside the cache."""
    half = rotary // 2
    pos = positions.to(torch.int64) + offset
    valid = (pos >= 0) & (pos < cache.shape[0])
    if cache.shape[0] > 0:
        rows = cache.index_select(0, torch.where(valid, pos, torch.zeros_like(pos)))
    else:
        rows = torch.zeros((pos.shape[0], rotary), dtype=cache.dtype, device=cache.device)
    rows = rows.to(torch.float64)
    rows = torch.where(valid[:, None], rows, torch.full_like(rows, float("nan")))
    cos = rows[:, :half].reshape(-1, 1, 1, half)
    sin = rows[:, half:rotary].reshape(-1, 1, 1, half)
    lead = torch.broadcast_shapes(x.shape[:-1], cos.shape[:-1])
    y = x.to(torch.float64).expand(*lead, d).contiguous()
    if interleaved:
        first, second = slice(0, rotary, 2), slice(1, rotary, 2)
    else:
        first, second = slice(0, half), slice(half, rotary)
    x1, x2 = y[..., first], y[..., second]
    y1 = x1 * cos - x2 * sin
    y2 = x2 * cos + x1 * sin
    y[..., first] = y1
    y[..., second] = y2
    return y.to(x.dtype)
)PY";

//===----------------------------------------------------------------------===//
// KernelEmitter
//===----------------------------------------------------------------------===//

namespace {

/// Python names of a chain's sizes; `frames` and `perFrame` are empty when
/// the chain has no [B, F, 1, D] operand.
struct ChainSizeNames {
  std::string batch, tokens, frames, perFrame;
};

class KernelEmitter {
public:
  KernelEmitter(KernelOp kernel, std::string functionName, bool &usesRope)
      : kernel(kernel), chains(kernel), functionName(std::move(functionName)),
        usesRope(usesRope) {}

  /// The function's source, or failure after a diagnostic.
  FailureOr<std::string> emit();

private:
  InFlightDiagnostic error(Operation *op) {
    return op->emitError("cannot emit the PyTorch fallback: ");
  }

  std::string argName(Value value) const {
    return argNames[cast<BlockArgument>(value).getArgNumber()];
  }
  void line(const Twine &text) { os << "    " << text << "\n"; }
  void assign(Value result, const Twine &expr, StringRef opName);

  void nameArguments();
  std::string docstring();
  std::optional<std::string> sizeOf(const Chain &chain, DimSymbol symbol);
  LogicalResult emitSizes();
  std::string loadView(Value tensor, BroadcastKind kind,
                       const ChainSizeNames &sizes);
  LogicalResult emitOp(Operation *op, const ChainSizeNames &sizes);
  LogicalResult emitElementwise(Operation *op);
  void emitResults();

  KernelOp kernel;
  ChainAnalysis chains;
  std::string functionName;
  bool &usesRope;

  std::string text;
  llvm::raw_string_ostream os{text};
  Namer namer;
  SmallVector<std::string> argNames;
  std::string device, rowLength;
  SmallVector<ChainSizeNames> chainSizes; ///< per chain (empty: no results)
  DenseMap<Value, std::string> names;
  /// Rows whose last dimension may be 1 rather than D ([1] loads and what
  /// is computed only from them and scalars).
  DenseSet<Value> narrow;
};

} // namespace

void KernelEmitter::nameArguments() {
  for (const char *name : kReservedNames)
    namer.reserve(name);
  for (unsigned i = 0; i < kernel.getArgumentTypes().size(); ++i)
    argNames.push_back(namer.take(kernel.getArgumentName(i)));
}

std::string KernelEmitter::docstring() {
  // What each argument is, from its uses.
  SmallVector<std::string> shapes;
  for (Type type : kernel.getArgumentTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    shapes.push_back(tensor ? describeTensor(tensor, {}) : "int");
  }
  auto note = [&](Value value, ArrayRef<StringRef> letters) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg)
      return;
    if (auto tensor = dyn_cast<RankedTensorType>(arg.getType()))
      shapes[arg.getArgNumber()] = describeTensor(tensor, letters);
  };
  (void)forEachArgumentUse(kernel, [&](Operation *, BlockArgument arg,
                                       ArgumentRole role, BroadcastKind kind) {
    if (role == ArgumentRole::Data)
      note(arg, getBroadcastShape(kind));
    else if (role == ArgumentRole::Index)
      note(arg, {"B", "S"});
    else if (role == ArgumentRole::Cache)
      note(arg, {"max_pos", "rotary"});
    else if (role == ArgumentRole::Positions)
      note(arg, {"B"});
    return success();
  });
  std::string doc =
      "nf.kernel @" + escapeForPython(kernel.getSymName()) + " on torch: (";
  for (unsigned i = 0; i < argNames.size(); ++i) {
    if (i)
      doc += ", ";
    doc += argNames[i];
    if (argNames[i] != kernel.getArgumentName(i))
      doc += " (%" + escapeForPython(kernel.getArgumentName(i)) + ")";
    doc += ": " + shapes[i];
    if (kernel.getArgument(i).use_empty())
      doc += " (unused)";
  }
  doc += ") -> (";
  for (auto [r, type] : llvm::enumerate(kernel.getResultTypes())) {
    if (r)
      doc += ", ";
    // A [B, S, D / G] result of group values.
    auto group =
        dyn_cast<GroupType>(kernel.getReturn()->getOperand(r).getType());
    std::string last = group ? "D/" + std::to_string(group.getSize()) : "D";
    doc += describeTensor(cast<RankedTensorType>(type), {"B", "S", last});
    if (std::optional<unsigned> arg = kernel.getInPlaceArgument(r))
      doc += " in place of " + argNames[*arg];
  }
  if (kernel.getResultTypes().size() == 1)
    doc += ",";
  doc += "), new tensors";
  doc += kernel.hasInPlaceResult()
             ? "; the caller copies in-place results back."
             : ".";
  return doc;
}

std::optional<std::string> KernelEmitter::sizeOf(const Chain &chain,
                                                 DimSymbol symbol) {
  for (const DimUse &use : chain.dims)
    if (use.symbol == symbol && use.argument >= 0)
      return argNames[use.argument] + ".shape[" + std::to_string(use.dim) + "]";
  for (const DimUse &use : chain.dims)
    if (use.symbol == symbol && !use.type.isDynamicDim(use.dim))
      return std::to_string(use.type.getDimSize(use.dim));
  return std::nullopt;
}

LogicalResult KernelEmitter::emitSizes() {
  ArrayRef<Chain> all = chains.getChains();
  chainSizes.resize(all.size());
  // D is shared by the chains: take it from any of them.
  std::optional<std::string> d;
  for (const Chain &chain : all)
    if (!chain.results.empty() && !d)
      d = sizeOf(chain, DimSymbol::D);
  bool anyResults = llvm::any_of(
      all, [](const Chain &chain) { return !chain.results.empty(); });
  if (anyResults && !d)
    return error(kernel) << "no argument has the row length D";
  if (d) {
    rowLength = namer.take("D");
    line(rowLength + " = " + *d);
  }
  for (auto [c, chain] : llvm::enumerate(all)) {
    if (chain.results.empty())
      continue; // nothing observable: not computed
    ChainSizeNames &names = chainSizes[c];
    std::string suffix = std::to_string(c);
    std::string results;
    for (unsigned r : chain.results)
      results += (results.empty() ? "" : ", ") + std::to_string(r);
    line("# chain " + suffix + " (result" +
         (chain.results.size() > 1 ? "s " : " ") + results + "): rows [B" +
         suffix + ", S" + suffix + "]");
    for (auto [symbol, name] : {std::pair(DimSymbol::B, &names.batch),
                                std::pair(DimSymbol::S, &names.tokens)}) {
      std::optional<std::string> size = sizeOf(chain, symbol);
      if (!size)
        return error(kernel)
               << "no argument of the chain writing result #"
               << chain.results.front() << " has its "
               << stringifyDimSymbol(symbol)
               << " dimension (the fallback returns new tensors, so it "
                  "cannot take it from a result)";
      *name = namer.take((stringifyDimSymbol(symbol) + suffix).str());
      line(*name + " = " + *size);
    }
    if (std::optional<std::string> frames = sizeOf(chain, DimSymbol::F)) {
      names.frames = namer.take("F" + suffix);
      names.perFrame = namer.take("T" + suffix);
      line(names.frames + " = " + *frames);
      line(names.perFrame + " = " + names.tokens + " // " + names.frames +
           "  # tokens per frame: token s uses frame s // T");
    }
  }
  return success();
}

void KernelEmitter::assign(Value result, const Twine &expr, StringRef opName) {
  std::string name = names[result];
  line(name + " = " + expr + "  # " + opName);
}

std::string KernelEmitter::loadView(Value tensor, BroadcastKind kind,
                                    const ChainSizeNames &sizes) {
  std::string name = argName(tensor);
  switch (kind) {
  case BroadcastKind::One:
  case BroadcastKind::D:
    return name + "[None, None, None, :]";
  case BroadcastKind::BD:
    return name + "[:, None, None, :]";
  case BroadcastKind::B1D:
    return name + "[:, :, None, :]";
  case BroadcastKind::BSD:
    if (sizes.frames.empty())
      return name + "[:, None, :, :]";
    return name + ".reshape(" + sizes.batch + ", " + sizes.frames + ", " +
           sizes.perFrame + ", " + rowLength + ")";
  case BroadcastKind::BF1D:
    return name;
  }
  llvm_unreachable("unknown broadcast kind");
}

LogicalResult KernelEmitter::emitElementwise(Operation *op) {
  Value result = op->getResult(0);
  Type element = getRowElementType(result.getType());
  std::optional<std::string> dtype = torchDType(element);
  if (!dtype)
    return error(op) << "unsupported element type " << element;
  // f16/bf16: compute in f32, round once.
  bool widen = !element.isF32();
  SmallVector<std::string> in;
  bool allNarrow = true;
  for (Value operand : op->getOperands()) {
    in.push_back(names[operand] + (widen ? ".float()" : ""));
    if (isa<RowType>(operand.getType()) && !narrow.contains(operand))
      allNarrow = false;
  }
  if (isa<RowType>(result.getType()) && allNarrow)
    narrow.insert(result);
  std::string expr =
      llvm::TypeSwitch<Operation *, std::string>(op)
          .Case<AddOp>([&](auto) { return in[0] + " + " + in[1]; })
          .Case<SubOp>([&](auto) { return in[0] + " - " + in[1]; })
          .Case<MulOp>([&](auto) { return in[0] + " * " + in[1]; })
          .Case<DivOp>([&](auto) { return in[0] + " / " + in[1]; })
          .Case<MaxOp>([&](auto) {
            return "torch.maximum(" + in[0] + ", " + in[1] + ")";
          })
          .Case<MinOp>([&](auto) {
            return "torch.minimum(" + in[0] + ", " + in[1] + ")";
          })
          .Case<NegOp>([&](auto) { return "torch.neg(" + in[0] + ")"; })
          .Case<AbsOp>([&](auto) { return "torch.abs(" + in[0] + ")"; })
          .Case<ExpOp>([&](auto) { return "torch.exp(" + in[0] + ")"; })
          .Case<TanhOp>([&](auto) { return "torch.tanh(" + in[0] + ")"; })
          .Case<SigmoidOp>([&](auto) { return "torch.sigmoid(" + in[0] + ")"; })
          .Case<SqrtOp>([&](auto) { return "torch.sqrt(" + in[0] + ")"; })
          .Case<RsqrtOp>([&](auto) { return "torch.rsqrt(" + in[0] + ")"; })
          .Default([](Operation *) { return std::string(); });
  if (expr.empty())
    return error(op) << "'" << op->getName() << "' is not an elementwise op";
  if (widen)
    expr = "(" + expr + ").to(" + *dtype + ")";
  assign(result, expr, op->getName().getStringRef());
  return success();
}

LogicalResult KernelEmitter::emitOp(Operation *op,
                                    const ChainSizeNames &sizes) {
  for (Value result : op->getResults())
    names[result] = namer.take((isa<ConstantOp>(op) ? "c" : "v") +
                               std::to_string(names.size()));
  StringRef opName = op->getName().getStringRef();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<ConstantOp>([&](ConstantOp constant) -> LogicalResult {
        auto value = dyn_cast<FloatAttr>(constant.getValue());
        std::optional<std::string> dtype =
            torchDType(constant.getResult().getType());
        if (!value || !dtype)
          return error(op) << "expected a f32, f16 or bf16 constant";
        assign(constant.getResult(),
               "torch.tensor(" + pythonFloat(value.getValueAsDouble()) +
                   ", dtype=" + *dtype + ", device=" + device + ")",
               opName);
        return success();
      })
      .Case<LoadOp>([&](LoadOp load) {
        if (load.getKind() == BroadcastKind::One)
          narrow.insert(load.getResult());
        assign(load.getResult(),
               loadView(load.getSource(), load.getKind(), sizes),
               (opName + " " + formatBroadcastKind(load.getKind())).str());
        return success();
      })
      .Case<SelectLoadOp>([&](SelectLoadOp select) {
        if (select.getKind() == BroadcastKind::One)
          narrow.insert(select.getResult());
        std::string index = argName(select.getIndex());
        index = sizes.frames.empty()
                    ? index + "[:, None, :, None]"
                    : index + ".reshape(" + sizes.batch + ", " + sizes.frames +
                          ", " + sizes.perFrame + ", 1)";
        // Index 0 picks the first operand, any other value the second.
        assign(select.getResult(),
               "torch.where(" + index + " == 0, " +
                   loadView(select.getFirst(), select.getKind(), sizes) + ", " +
                   loadView(select.getSecond(), select.getKind(), sizes) + ")",
               (opName + " " + formatBroadcastKind(select.getKind())).str());
        return success();
      })
      .Case<CastOp>([&](CastOp cast) -> LogicalResult {
        Type element = getRowElementType(cast.getResult().getType());
        std::optional<std::string> dtype = torchDType(element);
        if (!dtype)
          return error(op) << "unsupported element type " << element;
        if (narrow.contains(cast.getInput()))
          narrow.insert(cast.getResult());
        assign(cast.getResult(),
               isNfQuantized(element)
                   ? quantize(names[cast.getInput()], element, *dtype)
                   : names[cast.getInput()] + ".to(" + *dtype + ")",
               opName);
        return success();
      })
      .Case<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, NegOp, AbsOp, ExpOp,
            TanhOp, SigmoidOp, SqrtOp, RsqrtOp>(
          [&](Operation *op) { return emitElementwise(op); })
      .Case<ReduceOp>([&](ReduceOp reduce) {
        // Over the D elements of each row (a [1] row is expanded first),
        // keeping the dimension: a per-row scalar.
        std::string x = names[reduce.getInput()];
        if (narrow.contains(reduce.getInput()))
          x += ".expand(-1, -1, -1, " + rowLength + ")";
        // Over each group of G elements instead: the row viewed as [...,
        // D / G, G] is reduced over its last dimension, and each group's
        // value is repeated over its G elements, so that group values
        // combine with rows and scalars as rows do (a [B, S, D / G] result
        // takes every G-th).
        std::string keep = ", keepdim=True", count = rowLength, repeat;
        if (std::optional<uint64_t> group = reduce.getGroup()) {
          std::string g = std::to_string(*group);
          line("if " + rowLength + " % " + g +
               ": raise ValueError(f\"the row length D = {" + rowLength +
               "} is not a multiple of the group size " + g + "\")");
          x += ".unflatten(-1, (-1, " + g + "))";
          keep = "";
          count = g;
          repeat = ".repeat_interleave(" + g + ", -1)";
        }
        std::string expr;
        switch (reduce.getKind()) {
        case ReduceKind::Sum:
          expr = "torch.sum(" + x + ", -1" + keep +
                 ", dtype=torch.float64).to(torch.float32)";
          break;
        case ReduceKind::Max:
          expr = "torch.amax(" + x + ", -1" + keep + ")";
          break;
        case ReduceKind::Mean:
          expr = "(torch.sum(" + x + ", -1" + keep +
                 ", dtype=torch.float64) / " + count + ").to(torch.float32)";
          break;
        case ReduceKind::MeanSq:
          expr = "(torch.sum(" + x + ".double().square(), -1" + keep + ") / " +
                 count + ").to(torch.float32)";
          break;
        }
        expr += repeat;
        assign(reduce.getResult(), expr,
               (opName + " " + stringifyReduceKind(reduce.getKind())).str());
        return success();
      })
      .Case<RopeOp>([&](RopeOp rope) -> LogicalResult {
        if (!isa<BlockArgument>(rope.getCache()) ||
            !isa<BlockArgument>(rope.getPositions()) ||
            (rope.getOffset() && !isa<BlockArgument>(rope.getOffset())))
          return error(op) << "the cache, positions and offset of a rope must "
                              "be kernel arguments";
        usesRope = true;
        bool interleaved = rope.getLayout() == RopeLayout::Interleaved;
        std::string offset =
            rope.getOffset() ? argName(rope.getOffset()) : std::string("0");
        assign(rope.getResult(),
               "_nf_rope(" + names[rope.getInput()] + ", " +
                   argName(rope.getCache()) + ", " +
                   argName(rope.getPositions()) + ", " + offset + ", " +
                   std::to_string(rope.getRotaryDim()) + ", " +
                   (interleaved ? "True" : "False") + ", " + rowLength + ")",
               (opName + " " + stringifyRopeLayout(rope.getLayout())).str());
        return success();
      })
      .Case<LayerNormOp, RmsNormOp, ModulateOp>(
          [&](Operation *op) -> LogicalResult {
            return error(op) << "'" << op->getName()
                             << "' is a composite: run -nf-decompose first";
          })
      .Default([&](Operation *op) -> LogicalResult {
        return error(op) << "no PyTorch translation of '" << op->getName()
                         << "'";
      });
}

void KernelEmitter::emitResults() {
  Operation *ret = kernel.getReturn();
  SmallVector<std::string> returned;
  for (auto [r, type] : llvm::enumerate(kernel.getResultTypes())) {
    int c = chains.getChainOfResult(r);
    const ChainSizeNames &sizes = chainSizes[c];
    Value value = ret->getOperand(r);
    std::string out = namer.take("out" + std::to_string(r));
    std::string dtype =
        *torchDType(cast<RankedTensorType>(type).getElementType());
    // A per-row value ([B, F, S/F, 1]) fills a [B, S] result; group values
    // (repeated over their groups) a [B, S, D / G] one.
    auto group = dyn_cast<GroupType>(value.getType());
    bool perRow = !group && !isa<RowType>(value.getType());
    std::string width =
        perRow  ? "1"
        : group ? rowLength + " // " + std::to_string(group.getSize())
                : rowLength;
    line(out + " = torch.empty((" + sizes.batch + ", " + sizes.tokens +
         (perRow ? "" : ", " + width) + "), dtype=" + dtype +
         ", device=" + device + ")");
    std::string view = sizes.frames.empty()
                           ? out + (perRow ? "[:, None, :, None]" : "[:, None]")
                           : out + ".view(" + sizes.batch + ", " +
                                 sizes.frames + ", " + sizes.perFrame + ", " +
                                 width + ")";
    line(view + ".copy_(" + names[value] +
         (group ? "[..., ::" + std::to_string(group.getSize()) + "]" : "") +
         ")");
    returned.push_back(out);
  }
  // Always a tuple: "(out0,)" for one result.
  line("return (" + llvm::join(returned, ", ") +
       (returned.size() == 1 ? ",)" : ")"));
}

FailureOr<std::string> KernelEmitter::emit() {
  nameArguments();
  // Result element types and chains were checked by the verifier; the
  // fallback relies on them.
  for (auto [r, type] : llvm::enumerate(kernel.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || tensor.getRank() < 2 || tensor.getRank() > 3 ||
        !torchDType(tensor.getElementType()))
      return error(kernel) << "result #" << r
                           << " is not a [B, S, D] or [B, S] tensor of a "
                              "known dtype";
    if (chains.getChainOfResult(r) < 0)
      return error(kernel) << "result #" << r
                           << " is not computed by any chain";
  }

  os << "def " << functionName << "(" << llvm::join(argNames, ", ") << "):\n";
  line("\"\"\"" + docstring() + "\"\"\"");
  device = namer.take("dev");
  std::string deviceOf = "torch.device(\"cpu\")";
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes()))
    if (isa<RankedTensorType>(type)) {
      deviceOf = argNames[i] + ".device";
      break;
    }
  line(device + " = " + deviceOf);
  if (failed(emitSizes()))
    return failure();

  ChainSizeNames none;
  for (Operation &op : kernel.getBody().front()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    int c = chains.getChainOf(&op);
    // Ops of chains that write no result are not observable: skipped.
    if (c >= 0 && chainSizes[c].batch.empty())
      continue;
    if (failed(emitOp(&op, c >= 0 ? chainSizes[c] : none)))
      return failure();
  }
  emitResults();
  return text;
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

LogicalResult mlir::nf::emitTorchFallback(ModuleOp module, StringRef sourceName,
                                          llvm::raw_ostream &out) {
  Namer functions;
  for (const char *name : kReservedNames)
    functions.reserve(name);
  bool usesRope = false;
  std::string kernels, table;
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    std::string name = functions.take(kernel.getSymName());
    FailureOr<std::string> source =
        KernelEmitter(kernel, name, usesRope).emit();
    if (failed(source))
      return failure();
    kernels += "\n\n" + *source;
    table +=
        "    \"" + escapeForPython(kernel.getSymName()) + "\": " + name + ",\n";
  }
  out << "# Generated by nf-compile from " << sourceName
      << "; do not edit.\n"
         "#\n"
         "# PyTorch fallback of the nf kernels of that file: each function "
         "computes\n"
         "# what its GPU kernel computes, op for op, with the reference "
         "interpreter's\n"
         "# semantics (each op rounds once to its IR type). Arguments in IR "
         "order:\n"
         "# tensors on any device with any strides, rotary offsets as Python "
         "ints;\n"
         "# shapes and dtypes are the caller's to validate. Returns a tuple "
         "of new\n"
         "# contiguous [B, S, D] tensors ([B, S] for per-row values), one per "
         "kernel\n"
         "# result, also for results the kernel writes in place (the caller "
         "copies\n"
         "# them back). Arguments are never written.\n"
         "\n"
         "import torch\n";
  if (usesRope)
    out << "\n" << kRopeHelper;
  out << kernels << "\n\nKERNELS = {\n" << table << "}\n";
  return success();
}

FailureOr<std::string> mlir::nf::generateTorchFallback(ModuleOp module,
                                                       StringRef sourceName) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  pm.addPass(createNfDecompose());
  if (failed(pm.run(*copy)))
    return failure();
  std::string source;
  llvm::raw_string_ostream os(source);
  if (failed(emitTorchFallback(*copy, sourceName, os)))
    return failure();
  return source;
}
