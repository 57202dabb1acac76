//===- Interpreter.cpp - reference interpreter of nf kernels
//---------------===//
//
// Part of normfuse.
//
// Each chain of the kernel is sized from the tensors it touches, then run
// row by row: every op of the chain, in body order, writes its value for the
// current row (b, s) into a slot (D doubles for a row, one for a scalar).
// Constants are shared by all chains and evaluated once.
//
// "Exact, then rounded once" is taken literally where double arithmetic
// allows it: products of f32/f16/bf16 values are exact in double, sums are
// carried as TwoSum pairs and rounded with roundSumToElement; division and
// square root rounded to double and then to a format of at most 24 bits are
// correctly rounded (double rounding is innocuous for p <= 25). exp, tanh,
// and the norms use the double libm result.
//
//===----------------------------------------------------------------------===//

#include "interpreter/Interpreter.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::nf;

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

HostTensor::HostTensor(ElementKind elementType, std::vector<int64_t> shape)
    : elementType(elementType), shape(std::move(shape)) {
  int64_t n = getNumElements();
  data.assign(n < 0 ? 0 : n, 0.0);
}

HostTensor HostTensor::scalar(ElementKind elementType, double value) {
  HostTensor t(elementType, {});
  t.data[0] = value;
  return t;
}

int64_t HostTensor::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    n *= d;
  }
  return n;
}

std::string mlir::nf::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

//===----------------------------------------------------------------------===//
// Exact arithmetic helpers
//===----------------------------------------------------------------------===//

namespace {
/// An unevaluated sum hi + lo with hi = fl(hi + lo).
struct ExactSum {
  double hi, lo;
};
} // namespace

/// Knuth's TwoSum: a + b exactly, for finite a and b.
static ExactSum twoSum(double a, double b) {
  double s = a + b;
  double bb = s - a;
  double err = (a - (s - bb)) + (b - bb);
  return {s, std::isfinite(s) ? err : 0.0};
}

/// a + b + c, exact up to the rounding of the two error terms (far below
/// half an ulp of any target format).
static ExactSum threeSum(double a, double b, double c) {
  ExactSum ab = twoSum(a, b);
  ExactSum abc = twoSum(ab.hi, c);
  return twoSum(abc.hi, ab.lo + abc.lo);
}

static double roundSum(ExactSum sum, ElementKind kind) {
  return roundSumToElement(sum.hi, sum.lo, kind);
}

/// Neumaier's compensated sum of `values` (squared if asked).
static double compensatedSum(ArrayRef<double> values, bool squared) {
  double sum = 0, compensation = 0;
  for (double v : values) {
    double x = squared ? v * v : v;
    double t = sum + x;
    if (std::fabs(sum) >= std::fabs(x))
      compensation += (sum - t) + x;
    else
      compensation += (x - t) + sum;
    sum = t;
  }
  // Once an infinity or NaN appears the compensation is meaningless.
  return std::isfinite(sum) ? sum + compensation : sum;
}

static double nanPropagatingMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b) // +0 is larger than -0
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

static double nanPropagatingMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

//===----------------------------------------------------------------------===//
// KernelInterpreter
//===----------------------------------------------------------------------===//

namespace {

/// The value of one SSA value of the body for the current row.
struct Slot {
  bool isRow = false;
  int64_t group = 0; ///< G for a group value, else 0
  ElementKind kind = ElementKind::F32;
  std::vector<double> values; ///< D for a row, D / G for groups, 1 for a scalar

  /// The value at element `d` of the row.
  double at(int64_t d) const {
    return isRow ? values[d] : group ? values[d / group] : values[0];
  }
  /// Values: one per element, per group, or one.
  int64_t size(int64_t rowLength) const {
    return isRow ? rowLength : group ? rowLength / group : 1;
  }
  /// The element whose value is value `i` (the first of group `i`).
  int64_t element(int64_t i) const { return group ? i * group : i; }
};

/// Runtime sizes of one chain; -1 where the chain has no such dimension.
struct ChainSizes {
  int64_t B = -1, S = -1, D = -1, F = -1;
};

class KernelInterpreter {
public:
  KernelInterpreter(KernelOp kernel, ArrayRef<HostTensor> args,
                    std::string &error)
      : kernel(kernel), args(args), error(error) {}

  FailureOr<SmallVector<HostTensor>> run();

private:
  LogicalResult fail(const Twine &message) {
    error = ("@" + kernel.getSymName() + ": " + message).str();
    return failure();
  }
  std::string argName(unsigned index) {
    return "%" + kernel.getArgumentName(index);
  }

  LogicalResult checkArguments();
  void createSlots();
  LogicalResult sizeChain(const Chain &chain, ChainSizes &sizes);
  LogicalResult runChain(const Chain &chain, ArrayRef<HostTensor *> outputs);
  LogicalResult evaluate(Operation *op, int64_t b, int64_t s);

  Slot &slot(Value value) { return slots[slotIndex.lookup(value)]; }
  const HostTensor &argument(Value tensor) {
    return args[cast<BlockArgument>(tensor).getArgNumber()];
  }
  /// Element offset of element 0 of row (b, s) of `tensor` under `kind`,
  /// and the step between elements d and d+1.
  std::pair<int64_t, int64_t> rowStart(BroadcastKind kind, int64_t b,
                                       int64_t s) const;
  void loadRow(const HostTensor &tensor, BroadcastKind kind, int64_t b,
               int64_t s, Slot &out) const;
  template <typename Fn> void elementwise(Operation *op, Fn fn);
  LogicalResult rope(RopeOp op, int64_t b);

  KernelOp kernel;
  ArrayRef<HostTensor> args;
  std::string &error;

  llvm::DenseMap<Value, unsigned> slotIndex;
  std::vector<Slot> slots;
  ChainSizes sizes; ///< of the chain being run
};

} // namespace

LogicalResult KernelInterpreter::checkArguments() {
  auto types = kernel.getArgumentTypes();
  if (args.size() != types.size())
    return fail("expects " + Twine(types.size()) + " arguments, got " +
                Twine(args.size()));
  for (auto [i, type] : llvm::enumerate(types)) {
    const HostTensor &arg = args[i];
    std::string typeText;
    llvm::raw_string_ostream(typeText) << type;
    auto tensorType = dyn_cast<RankedTensorType>(type);
    std::optional<ElementKind> kind =
        getElementKind(tensorType ? tensorType.getElementType() : type);
    if (!kind)
      return fail("argument " + argName(i) + " has the unsupported type " +
                  typeText);
    if (arg.elementType != *kind)
      return fail("argument " + argName(i) + " must have " +
                  stringifyElementKind(*kind) + " elements (" + typeText +
                  "), got " + stringifyElementKind(arg.elementType));
    int64_t rank = tensorType ? tensorType.getRank() : 0;
    if ((int64_t)arg.shape.size() != rank)
      return fail("argument " + argName(i) + " must have rank " + Twine(rank) +
                  " (" + typeText + "), got shape " + formatShape(arg.shape));
    for (int64_t d = 0; d < rank; ++d) {
      if (arg.shape[d] < 0)
        return fail("argument " + argName(i) + " has a negative size in " +
                    formatShape(arg.shape));
      if (!tensorType.isDynamicDim(d) &&
          tensorType.getDimSize(d) != arg.shape[d])
        return fail("argument " + argName(i) + " dimension " + Twine(d) +
                    " must be " + Twine(tensorType.getDimSize(d)) + " (" +
                    typeText + "), got shape " + formatShape(arg.shape));
    }
    if ((int64_t)arg.data.size() != arg.getNumElements())
      return fail("argument " + argName(i) + " has shape " +
                  formatShape(arg.shape) + " (" + Twine(arg.getNumElements()) +
                  " elements) but " + Twine(arg.data.size()) + " values");
  }
  return success();
}

void KernelInterpreter::createSlots() {
  for (Operation &op : kernel.getBody().front()) {
    for (Value result : op.getResults()) {
      Slot slot;
      slot.isRow = isa<RowType>(result.getType());
      if (auto group = dyn_cast<GroupType>(result.getType()))
        slot.group = group.getSize();
      slot.kind = getElementKind(getRowElementType(result.getType()))
                      .value_or(ElementKind::F32);
      slot.values.assign(1, 0.0);
      slotIndex[result] = slots.size();
      slots.push_back(std::move(slot));
    }
    // Constants are the same for every row of every chain.
    if (auto constant = dyn_cast<ConstantOp>(op))
      if (auto value = dyn_cast<FloatAttr>(constant.getValue())) {
        Slot &out = slot(constant.getResult());
        out.values[0] = roundToElement(value.getValueAsDouble(), out.kind);
      }
  }
}

LogicalResult KernelInterpreter::sizeChain(const Chain &chain,
                                           ChainSizes &sizes) {
  auto describe = [&](const DimUse &use) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (use.argument >= 0)
      os << argName(use.argument);
    else
      os << "result #" << use.result;
    os << " dimension " << use.dim;
    return text;
  };
  std::map<DimSymbol, std::pair<int64_t, const DimUse *>> known;
  for (const DimUse &use : chain.dims) {
    int64_t value;
    if (use.argument >= 0)
      value = args[use.argument].shape[use.dim];
    else if (use.type.isDynamicDim(use.dim))
      continue;
    else
      value = use.type.getDimSize(use.dim);
    if (use.symbol == DimSymbol::One) {
      if (value != 1)
        return fail(describe(use) + " must be 1, got " + Twine(value));
      continue;
    }
    // max_pos and the width belong to one cache, not to the chain; each
    // rope checks its own cache.
    if (use.symbol == DimSymbol::MaxPos || use.symbol == DimSymbol::Rotary)
      continue;
    auto [it, inserted] = known.try_emplace(use.symbol, value, &use);
    if (inserted || it->second.first == value)
      continue;
    StringRef symbol = stringifyDimSymbol(use.symbol);
    return fail(symbol + " mismatch: " + describe(*it->second.second) +
                " sets " + symbol + " = " + Twine(it->second.first) + ", but " +
                describe(use) + " is " + Twine(value));
  }
  auto lookup = [&](DimSymbol symbol) -> int64_t {
    auto it = known.find(symbol);
    return it == known.end() ? -1 : it->second.first;
  };
  sizes.B = lookup(DimSymbol::B);
  sizes.S = lookup(DimSymbol::S);
  sizes.D = lookup(DimSymbol::D);
  sizes.F = lookup(DimSymbol::F);
  std::string writes =
      "the chain writing result #" + std::to_string(chain.results.front());
  for (auto [symbol, value] :
       {std::pair(DimSymbol::B, sizes.B), std::pair(DimSymbol::S, sizes.S),
        std::pair(DimSymbol::D, sizes.D)})
    if (value < 0)
      return fail("cannot tell " + stringifyDimSymbol(symbol) + " of " +
                  writes + ": none of its tensors has that dimension");
  if (sizes.D < 1)
    return fail("D = 0 in " + writes + "; rows must not be empty");
  if (sizes.F >= 0 && (sizes.F == 0 || sizes.S % sizes.F != 0))
    return fail("frames: S = " + Twine(sizes.S) +
                " is not divisible by F = " + Twine(sizes.F) + " in " + writes +
                " (token s uses frame s / (S / F))");
  for (Operation *op : chain.ops)
    if (auto group = dyn_cast<GroupType>(op->getResult(0).getType()))
      if (sizes.D % group.getSize() != 0)
        return fail("the row length D = " + Twine(sizes.D) +
                    " is not a multiple of the group size " +
                    Twine(group.getSize()) + " in " + writes);
  for (Operation *op : chain.ropes) {
    auto rope = cast<RopeOp>(op);
    int64_t rotary = rope.getRotaryDim();
    if (rotary > sizes.D)
      return fail("rotary_dim " + Twine(rotary) +
                  " is larger than the row length D = " + Twine(sizes.D) +
                  " in " + writes);
    const HostTensor &cache = argument(rope.getCache());
    if (cache.shape[1] != rotary)
      return fail("cache " +
                  argName(cast<BlockArgument>(rope.getCache()).getArgNumber()) +
                  " has width " + Twine(cache.shape[1]) +
                  ", but the rope's rotary_dim is " + Twine(rotary));
  }
  return success();
}

std::pair<int64_t, int64_t>
KernelInterpreter::rowStart(BroadcastKind kind, int64_t b, int64_t s) const {
  switch (kind) {
  case BroadcastKind::One:
    return {0, 0};
  case BroadcastKind::D:
    return {0, 1};
  case BroadcastKind::BD:
  case BroadcastKind::B1D:
    return {b * sizes.D, 1};
  case BroadcastKind::BSD:
    return {(b * sizes.S + s) * sizes.D, 1};
  case BroadcastKind::BF1D:
    return {(b * sizes.F + s / (sizes.S / sizes.F)) * sizes.D, 1};
  }
  return {0, 0};
}

void KernelInterpreter::loadRow(const HostTensor &tensor, BroadcastKind kind,
                                int64_t b, int64_t s, Slot &out) const {
  auto [start, step] = rowStart(kind, b, s);
  for (int64_t d = 0; d < sizes.D; ++d)
    out.values[d] = tensor.data[start + d * step];
}

template <typename Fn>
void KernelInterpreter::elementwise(Operation *op, Fn fn) {
  Slot &out = slot(op->getResult(0));
  int64_t n = out.size(sizes.D);
  if (op->getNumOperands() == 1) {
    const Slot &in = slot(op->getOperand(0));
    for (int64_t i = 0; i < n; ++i)
      out.values[i] = fn(in.at(out.element(i)), 0.0, out.kind);
    return;
  }
  const Slot &lhs = slot(op->getOperand(0));
  const Slot &rhs = slot(op->getOperand(1));
  for (int64_t i = 0; i < n; ++i)
    out.values[i] =
        fn(lhs.at(out.element(i)), rhs.at(out.element(i)), out.kind);
}

LogicalResult KernelInterpreter::rope(RopeOp op, int64_t b) {
  const Slot &in = slot(op.getInput());
  Slot &out = slot(op.getResult());
  const HostTensor &cache = argument(op.getCache());
  const HostTensor &positions = argument(op.getPositions());
  int64_t position = (int64_t)positions.data[b];
  if (Value offset = op.getOffset())
    position += (int64_t)argument(offset).data[0];
  int64_t maxPos = cache.shape[0];
  if (position < 0 || position >= maxPos)
    return fail("rope: the position of batch row " + Twine(b) + " is " +
                Twine(position) + ", outside the cache [0, " + Twine(maxPos) +
                ")");
  int64_t rotary = op.getRotaryDim();
  int64_t half = rotary / 2;
  bool interleaved = op.getLayout() == RopeLayout::Interleaved;
  const double *row = cache.data.data() + position * rotary;
  out.values = in.values; // elements >= rotary_dim pass through
  for (int64_t i = 0; i < half; ++i) {
    int64_t first = interleaved ? 2 * i : i;
    int64_t second = interleaved ? 2 * i + 1 : i + half;
    double c = row[i], s = row[half + i];
    double x1 = in.values[first], x2 = in.values[second];
    out.values[first] = roundSum(twoSum(x1 * c, -(x2 * s)), out.kind);
    out.values[second] = roundSum(twoSum(x2 * c, x1 * s), out.kind);
  }
  return success();
}

/// The f32 value of a reduction of `x`: compensated sums, rounded once.
static double reduceValues(ReduceKind kind, ArrayRef<double> x) {
  double value = 0;
  switch (kind) {
  case ReduceKind::Sum:
    value = compensatedSum(x, false);
    break;
  case ReduceKind::Max:
    value = -std::numeric_limits<double>::infinity();
    for (double v : x)
      value = nanPropagatingMax(value, v);
    break;
  case ReduceKind::Mean:
    value = compensatedSum(x, false) / (double)x.size();
    break;
  case ReduceKind::MeanSq:
    value = compensatedSum(x, true) / (double)x.size();
    break;
  }
  return roundToF32(value);
}

template <typename NormOp>
static void evaluateNorm(NormOp op, bool centre, const Slot &in,
                         const Slot *weight, const Slot *bias, Slot &out) {
  ArrayRef<double> x = in.values;
  auto n = (double)x.size();
  double mean = centre ? compensatedSum(x, false) / n : 0.0;
  std::vector<double> centred(x.begin(), x.end());
  for (double &v : centred)
    v -= mean;
  double meanSquare = compensatedSum(centred, true) / n;
  double denominator = std::sqrt(meanSquare + op.getEps().convertToDouble());
  for (size_t d = 0; d < x.size(); ++d) {
    double y = centred[d] / denominator;
    if (weight)
      y *= weight->values[d];
    if (bias)
      y += bias->values[d];
    out.values[d] = roundToElement(y, out.kind);
  }
}

LogicalResult KernelInterpreter::evaluate(Operation *op, int64_t b, int64_t s) {
  auto round = [](double x, ElementKind kind) {
    return roundToElement(x, kind);
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<LoadOp>([&](LoadOp load) {
        loadRow(argument(load.getSource()), load.getKind(), b, s,
                slot(load.getResult()));
        return success();
      })
      .Case<SelectLoadOp>([&](SelectLoadOp select) {
        const HostTensor &index = argument(select.getIndex());
        Value chosen = index.data[b * sizes.S + s] == 0 ? select.getFirst()
                                                        : select.getSecond();
        loadRow(argument(chosen), select.getKind(), b, s,
                slot(select.getResult()));
        return success();
      })
      .Case<CastOp>([&](CastOp) {
        elementwise(
            op, [&](double x, double, ElementKind k) { return round(x, k); });
        return success();
      })
      .Case<AddOp>([&](AddOp) {
        elementwise(op, [](double x, double y, ElementKind k) {
          return roundSum(twoSum(x, y), k);
        });
        return success();
      })
      .Case<SubOp>([&](SubOp) {
        elementwise(op, [](double x, double y, ElementKind k) {
          return roundSum(twoSum(x, -y), k);
        });
        return success();
      })
      .Case<MulOp>([&](MulOp) {
        // Exact: two significands of at most 24 bits fit in 53.
        elementwise(op, [&](double x, double y, ElementKind k) {
          return round(x * y, k);
        });
        return success();
      })
      .Case<DivOp>([&](DivOp) {
        elementwise(op, [&](double x, double y, ElementKind k) {
          return round(x / y, k);
        });
        return success();
      })
      .Case<MaxOp>([&](MaxOp) {
        elementwise(op, [&](double x, double y, ElementKind k) {
          return round(nanPropagatingMax(x, y), k);
        });
        return success();
      })
      .Case<MinOp>([&](MinOp) {
        elementwise(op, [&](double x, double y, ElementKind k) {
          return round(nanPropagatingMin(x, y), k);
        });
        return success();
      })
      .Case<NegOp>([&](NegOp) {
        elementwise(op, [](double x, double, ElementKind) { return -x; });
        return success();
      })
      .Case<AbsOp>([&](AbsOp) {
        elementwise(op,
                    [](double x, double, ElementKind) { return std::fabs(x); });
        return success();
      })
      .Case<ExpOp>([&](ExpOp) {
        elementwise(op, [&](double x, double, ElementKind k) {
          return round(std::exp(x), k);
        });
        return success();
      })
      .Case<TanhOp>([&](TanhOp) {
        elementwise(op, [&](double x, double, ElementKind k) {
          return round(std::tanh(x), k);
        });
        return success();
      })
      .Case<SigmoidOp>([&](SigmoidOp) {
        elementwise(op, [&](double x, double, ElementKind k) {
          return round(1.0 / (1.0 + std::exp(-x)), k);
        });
        return success();
      })
      .Case<SqrtOp>([&](SqrtOp) {
        elementwise(op, [&](double x, double, ElementKind k) {
          return round(std::sqrt(x), k);
        });
        return success();
      })
      .Case<RsqrtOp>([&](RsqrtOp) {
        elementwise(op, [&](double x, double, ElementKind k) {
          return round(1.0 / std::sqrt(x), k);
        });
        return success();
      })
      .Case<ReduceOp>([&](ReduceOp reduce) {
        ArrayRef<double> row = slot(reduce.getInput()).values;
        Slot &out = slot(reduce.getResult());
        // Over the row, or over each group of G elements.
        int64_t width = out.group ? out.group : sizes.D;
        for (int64_t i = 0; i < out.size(sizes.D); ++i)
          out.values[i] =
              reduceValues(reduce.getKind(), row.slice(i * width, width));
        return success();
      })
      .Case<LayerNormOp>([&](LayerNormOp norm) {
        evaluateNorm(norm, /*centre=*/true, slot(norm.getInput()),
                     norm.getWeight() ? &slot(norm.getWeight()) : nullptr,
                     norm.getBias() ? &slot(norm.getBias()) : nullptr,
                     slot(norm.getResult()));
        return success();
      })
      .Case<RmsNormOp>([&](RmsNormOp norm) {
        evaluateNorm(norm, /*centre=*/false, slot(norm.getInput()),
                     norm.getWeight() ? &slot(norm.getWeight()) : nullptr,
                     norm.getBias() ? &slot(norm.getBias()) : nullptr,
                     slot(norm.getResult()));
        return success();
      })
      .Case<ModulateOp>([&](ModulateOp modulate) {
        const Slot &x = slot(modulate.getInput());
        const Slot &scale = slot(modulate.getScale());
        const Slot &shift = slot(modulate.getShift());
        Slot &out = slot(modulate.getResult());
        // x * (1 + scale) + shift = x + x * scale + shift, each product
        // exact in double.
        for (int64_t d = 0; d < sizes.D; ++d)
          out.values[d] =
              roundSum(threeSum(x.values[d], x.values[d] * scale.values[d],
                                shift.values[d]),
                       out.kind);
        return success();
      })
      .Case<RopeOp>([&](RopeOp op) { return rope(op, b); })
      .Default([&](Operation *other) {
        return fail("the interpreter does not know '" +
                    other->getName().getStringRef() + "'");
      });
}

LogicalResult KernelInterpreter::runChain(const Chain &chain,
                                          ArrayRef<HostTensor *> outputs) {
  for (Operation *op : chain.ops)
    for (Value result : op->getResults()) {
      Slot &out = slot(result);
      out.values.assign(out.size(sizes.D), 0.0);
    }
  Operation *ret = kernel.getReturn();
  for (int64_t b = 0; b < sizes.B; ++b) {
    for (int64_t s = 0; s < sizes.S; ++s) {
      for (Operation *op : chain.ops)
        if (failed(evaluate(op, b, s)))
          return failure();
      for (auto [i, r] : llvm::enumerate(chain.results)) {
        const Slot &row = slot(ret->getOperand(r));
        // A per-row value fills one element of its [B, S] result, group
        // values a row of D / G of their [B, S, D / G] one.
        int64_t width = row.size(sizes.D);
        std::copy(row.values.begin(), row.values.end(),
                  outputs[i]->data.begin() + (b * sizes.S + s) * width);
      }
    }
  }
  return success();
}

FailureOr<SmallVector<HostTensor>> KernelInterpreter::run() {
  if (failed(checkArguments()))
    return failure();
  createSlots();
  ChainAnalysis analysis(kernel);
  auto resultTypes = kernel.getResultTypes();
  SmallVector<HostTensor> results(resultTypes.size());
  for (unsigned r = 0; r < resultTypes.size(); ++r)
    if (analysis.getChainOfResult(r) < 0)
      return fail("result #" + Twine(r) + " is not computed by any chain");
  const Chain *firstChain = nullptr;
  int64_t kernelD = -1;
  for (const Chain &chain : analysis.getChains()) {
    if (chain.results.empty())
      continue; // nothing observable
    sizes = ChainSizes();
    if (failed(sizeChain(chain, sizes)))
      return failure();
    // Chains have their own [B, S] but share D (one launch).
    if (!firstChain) {
      firstChain = &chain;
      kernelD = sizes.D;
    } else if (sizes.D != kernelD) {
      return fail(
          "D mismatch between chains: the chain writing result #" +
          Twine(firstChain->results.front()) + " has D = " + Twine(kernelD) +
          ", the chain writing result #" + Twine(chain.results.front()) +
          " has D = " + Twine(sizes.D) + "; the chains of a kernel share D");
    }
    SmallVector<HostTensor *> outputs;
    for (unsigned r : chain.results) {
      auto type = cast<RankedTensorType>(resultTypes[r]);
      std::optional<ElementKind> kind = getElementKind(type.getElementType());
      if (!kind)
        return fail("result #" + Twine(r) + " has an unsupported type");
      std::vector<int64_t> shape{sizes.B, sizes.S};
      auto group =
          dyn_cast<GroupType>(kernel.getReturn()->getOperand(r).getType());
      if (type.getRank() == 3)
        shape.push_back(group ? sizes.D / group.getSize() : sizes.D);
      results[r] = HostTensor(*kind, shape);
      outputs.push_back(&results[r]);
    }
    if (failed(runChain(chain, outputs)))
      return failure();
  }
  return results;
}

FailureOr<SmallVector<HostTensor>>
mlir::nf::interpretKernel(KernelOp kernel, ArrayRef<HostTensor> args,
                          std::string &error) {
  return KernelInterpreter(kernel, args, error).run();
}
