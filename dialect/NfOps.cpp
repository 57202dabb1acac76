//===- NfOps.cpp - nf dialect operations ----------------------------------===//
//
// Part of normfuse. Custom syntax and verifiers. Verifier messages say what
// was expected and what was found, naming kernel arguments by their names.
//
//===----------------------------------------------------------------------===//

#include "dialect/NfOps.h"
#include "dialect/Chains.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::nf;

//===----------------------------------------------------------------------===//
// custom<BroadcastKind>: `[B, 1, D]`
//===----------------------------------------------------------------------===//

static ParseResult parseBroadcastKind(OpAsmParser &parser,
                                      BroadcastKindAttr &kindAttr) {
  SMLoc loc = parser.getCurrentLocation();
  std::string spelling;
  auto parseDim = [&]() -> ParseResult {
    int64_t one;
    OptionalParseResult integer = parser.parseOptionalInteger(one);
    if (integer.has_value()) {
      if (failed(*integer))
        return failure();
      if (one != 1)
        return parser.emitError(parser.getCurrentLocation(),
                                "a broadcast dimension must be B, S, F, D "
                                "or 1, found ")
               << one;
      spelling += "1";
      return success();
    }
    StringRef letter;
    if (parser.parseKeyword(&letter))
      return failure();
    spelling += letter.str();
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseDim))
    return failure();
  std::optional<BroadcastKind> kind =
      llvm::StringSwitch<std::optional<BroadcastKind>>(spelling)
          .Case("1", BroadcastKind::One)
          .Case("D", BroadcastKind::D)
          .Case("BD", BroadcastKind::BD)
          .Case("B1D", BroadcastKind::B1D)
          .Case("BSD", BroadcastKind::BSD)
          .Case("BF1D", BroadcastKind::BF1D)
          .Default(std::nullopt);
  if (!kind)
    return parser.emitError(loc, "unknown broadcast kind; expected one of "
                                 "[1], [D], [B, D], [B, 1, D], [B, S, D], "
                                 "[B, F, 1, D]");
  kindAttr = BroadcastKindAttr::get(parser.getContext(), *kind);
  return success();
}

static void printBroadcastKind(OpAsmPrinter &printer, Operation *,
                               BroadcastKindAttr kind) {
  printer << formatBroadcastKind(kind.getValue());
}

#define GET_OP_CLASSES
#include "dialect/NfOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static bool isIndexElement(Type type) {
  return type.isSignlessInteger(8) || type.isSignlessInteger(32) ||
         type.isSignlessInteger(64);
}

static bool isPositionElement(Type type) {
  return type.isSignlessInteger(32) || type.isSignlessInteger(64);
}

/// How an operand is named in diagnostics: `%x` for a named kernel argument.
static std::string describeValue(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (auto kernel = dyn_cast<KernelOp>(arg.getOwner()->getParentOp()))
      return "%" + kernel.getArgumentName(arg.getArgNumber());
  return "operand";
}

/// Checks a tensor loaded under `kind`: rank, unit dimensions, element type.
static LogicalResult verifyBroadcastOperand(Operation *op, Value tensor,
                                            BroadcastKind kind) {
  auto type = cast<RankedTensorType>(tensor.getType());
  ArrayRef<StringRef> shape = getBroadcastShape(kind);
  std::string kindText = formatBroadcastKind(kind);
  if (type.getRank() != (int64_t)shape.size())
    return op->emitOpError("broadcast kind ")
           << kindText << " expects a rank-" << shape.size() << " tensor, "
           << describeValue(tensor) << " is " << type;
  for (auto [i, letter] : llvm::enumerate(shape)) {
    if (letter != "1" || type.isDynamicDim(i) || type.getDimSize(i) == 1)
      continue;
    return op->emitOpError("broadcast kind ")
           << kindText << " expects dimension " << i << " of "
           << describeValue(tensor) << " to be 1, found " << type.getDimSize(i);
  }
  if (!isNfRowElement(type.getElementType()))
    return op->emitOpError("expected a tensor of f32, f16, bf16, f8E4M3FN, "
                           "f8E5M2 or i8 elements, ")
           << describeValue(tensor) << " is " << type;
  return success();
}

static LogicalResult inferRowOf(std::optional<Location> location, Value tensor,
                                SmallVectorImpl<Type> &inferred) {
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (!type || !isNfRowElement(type.getElementType())) {
    if (location)
      return emitError(*location, "expected a ranked tensor of f32, f16, "
                                  "bf16, f8E4M3FN, f8E5M2 or i8 elements, "
                                  "found ")
             << tensor.getType();
    return failure();
  }
  inferred.push_back(RowType::get(tensor.getContext(), type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  StringAttr nameAttr;
  if (parser.parseSymbolName(nameAttr, SymbolTable::getSymbolAttrName(),
                             result.attributes))
    return failure();

  SmallVector<OpAsmParser::Argument> args;
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  bool isVariadic = false;
  if (function_interface_impl::parseFunctionSignatureWithArguments(
          parser, /*allowVariadic=*/false, args, isVariadic, resultTypes,
          resultAttrs))
    return failure();

  SmallVector<Type> argTypes;
  SmallVector<Attribute> names;
  for (auto [i, arg] : llvm::enumerate(args)) {
    argTypes.push_back(arg.type);
    StringRef name = arg.ssaName.name;
    name.consume_front("%");
    // Numbered names (%0) carry no meaning; fall back to argN.
    if (name.empty() || llvm::all_of(name, llvm::isDigit))
      names.push_back(builder.getStringAttr("arg" + Twine(i)));
    else
      names.push_back(builder.getStringAttr(name));
  }
  OperationName opName = result.name;
  result.addAttribute(
      getFunctionTypeAttrName(opName),
      TypeAttr::get(builder.getFunctionType(argTypes, resultTypes)));
  call_interface_impl::addArgAndResultAttrs(builder, result, args, resultAttrs,
                                            getArgAttrsAttrName(opName),
                                            getResAttrsAttrName(opName));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  if (!result.attributes.get(getArgNamesAttrName(opName)))
    result.addAttribute(getArgNamesAttrName(opName),
                        builder.getArrayAttr(names));

  Region *body = result.addRegion();
  SMLoc bodyLoc = parser.getCurrentLocation();
  if (parser.parseRegion(*body, args, /*enableNameShadowing=*/false))
    return failure();
  if (body->empty())
    return parser.emitError(bodyLoc, "expected a kernel body");
  return success();
}

void KernelOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  function_interface_impl::printFunctionSignature(
      p, *this, getArgumentTypes(), /*isVariadic=*/false, getResultTypes());
  function_interface_impl::printFunctionAttributes(
      p, *this,
      {getFunctionTypeAttrName(), getArgAttrsAttrName(), getResAttrsAttrName(),
       getArgNamesAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/true);
}

void KernelOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  if (region.empty())
    return;
  for (BlockArgument arg : region.front().getArguments())
    setNameFn(arg, getArgumentName(arg.getArgNumber()));
}

std::string KernelOp::getArgumentName(unsigned index) {
  if (ArrayAttr names = getArgNamesAttr())
    if (index < names.size())
      if (auto name = dyn_cast<StringAttr>(names[index]))
        return name.str();
  return "arg" + std::to_string(index);
}

std::optional<unsigned> KernelOp::getInPlaceArgument(unsigned resultIndex) {
  auto attr =
      getResultAttrOfType<IntegerAttr>(resultIndex, getInPlaceAttrName());
  if (!attr)
    return std::nullopt;
  return attr.getInt();
}

bool KernelOp::hasInPlaceResult() {
  for (unsigned r = 0; r < getResultTypes().size(); ++r)
    if (getInPlaceArgument(r))
      return true;
  return false;
}

/// What a kernel argument is used as, by its first user; all uses must agree.
namespace {
struct ArgumentUse {
  ArgumentRole kind = ArgumentRole::Unused;
  BroadcastKind bcast = BroadcastKind::One;
  Operation *firstUser = nullptr;
};
} // namespace

static StringRef describeRole(const ArgumentUse &role) {
  switch (role.kind) {
  case ArgumentRole::Unused:
    return "unused";
  case ArgumentRole::Data:
    return "loaded data";
  case ArgumentRole::Index:
    return "a select index";
  case ArgumentRole::Cache:
    return "a rotary cache";
  case ArgumentRole::Positions:
    return "rotary positions";
  case ArgumentRole::Offset:
    return "a rotary position offset";
  }
  llvm_unreachable("unknown role");
}

LogicalResult KernelOp::verifyRegions() {
  Block &body = getBody().front();
  auto argTypes = getArgumentTypes();
  auto resultTypes = getResultTypes();
  if (ArrayAttr names = getArgNamesAttr())
    if (names.size() != argTypes.size())
      return emitOpError("has ") << names.size() << " argument names for "
                                 << argTypes.size() << " arguments";
  if (body.getNumArguments() != argTypes.size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments, the signature "
           << argTypes.size();

  for (auto [i, type] : llvm::enumerate(argTypes)) {
    if (body.getArgument(i).getType() != type)
      return emitOpError("body argument #")
             << i << " has type " << body.getArgument(i).getType()
             << ", the signature " << type;
    if (type.isSignlessInteger(32) || type.isSignlessInteger(64))
      continue;
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !(isNfRowElement(tensor.getElementType()) ||
                     isIndexElement(tensor.getElementType())))
      return emitOpError("argument %")
             << getArgumentName(i)
             << " must be a ranked tensor of f32, f16, bf16, f8E4M3FN, "
                "f8E5M2, i8, i32 or i64, or an i32/i64 scalar; found "
             << type;
  }
  for (auto [i, type] : llvm::enumerate(resultTypes)) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    bool rows = tensor && tensor.getRank() == 3 &&
                isNfRowElement(tensor.getElementType());
    bool perRow =
        tensor && tensor.getRank() == 2 && tensor.getElementType().isF32();
    if (!rows && !perRow)
      return emitOpError("result #")
             << i
             << " must be a [B, S, D] tensor of f32, f16, bf16, f8E4M3FN, "
                "f8E5M2 or i8, a [B, S] tensor of f32 (one value per row), or "
                "a [B, S, D / G] tensor of f32 (one value per group), found "
             << type;
  }

  // Roles of the arguments.
  SmallVector<ArgumentUse> roles(argTypes.size());
  for (Operation &op : body)
    if (auto select = dyn_cast<SelectLoadOp>(op))
      if (select.getFirst() == select.getSecond())
        return select.emitOpError("selects between %")
               << describeValue(select.getFirst()).substr(1)
               << " and itself; use nf.load";
  if (failed(forEachArgumentUse(
          *this,
          [&](Operation *user, BlockArgument arg, ArgumentRole kind,
              BroadcastKind bcast) -> LogicalResult {
            ArgumentUse &role = roles[arg.getArgNumber()];
            if (role.kind == ArgumentRole::Unused) {
              role = {kind, bcast, user};
              return success();
            }
            if (role.kind != kind)
              return user->emitOpError("uses %")
                     << getArgumentName(arg.getArgNumber()) << " as "
                     << describeRole({kind, bcast, user})
                     << ", but it is already " << describeRole(role);
            if (kind == ArgumentRole::Data && role.bcast != bcast)
              return user->emitOpError("loads %")
                     << getArgumentName(arg.getArgNumber()) << " as "
                     << formatBroadcastKind(bcast)
                     << ", but another load of it uses "
                     << formatBroadcastKind(role.bcast)
                     << "; an argument has one broadcast kind";
            return success();
          })))
    return failure();
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    bool scalar = !isa<RankedTensorType>(type);
    if (scalar && roles[i].kind != ArgumentRole::Offset &&
        roles[i].kind != ArgumentRole::Unused)
      return emitOpError("scalar argument %")
             << getArgumentName(i) << " can only be a rotary offset";
  }

  // In-place results.
  SmallVector<int> aliasedBy(argTypes.size(), -1);
  for (unsigned r = 0; r < resultTypes.size(); ++r) {
    Attribute attr = getResultAttr(r, getInPlaceAttrName());
    if (!attr)
      continue;
    auto index = dyn_cast<IntegerAttr>(attr);
    if (!index || index.getInt() < 0 ||
        index.getInt() >= (int64_t)argTypes.size())
      return emitOpError("result #")
             << r << ": " << getInPlaceAttrName()
             << " must be the index of an argument (0 to "
             << (int64_t)argTypes.size() - 1 << "), found " << attr;
    unsigned a = index.getInt();
    if (argTypes[a] != resultTypes[r])
      return emitOpError("result #")
             << r << " is written in place into %" << getArgumentName(a)
             << ", which must then have the result's type " << resultTypes[r]
             << ", found " << argTypes[a];
    if (aliasedBy[a] >= 0)
      return emitOpError("results #")
             << aliasedBy[a] << " and #" << r << " are both written into %"
             << getArgumentName(a);
    aliasedBy[a] = r;
    if (roles[a].kind != ArgumentRole::Unused &&
        !(roles[a].kind == ArgumentRole::Data &&
          roles[a].bcast == BroadcastKind::BSD))
      return emitOpError("result #")
             << r << " is written in place into %" << getArgumentName(a)
             << ", which is read as " << describeRole(roles[a])
             << (roles[a].kind == ArgumentRole::Data
                     ? " " + formatBroadcastKind(roles[a].bcast)
                     : std::string())
             << "; only a [B, S, D] operand read by the same row can be "
                "overwritten";
  }

  // Sizes shared within each chain.
  ChainAnalysis chains(*this);
  // The first static D of any chain: chains have their own [B, S] but share
  // the row length D (one launch; see Chains.h).
  const DimUse *kernelD = nullptr;
  for (auto [c, chain] : llvm::enumerate(chains.getChains())) {
    // In place: a row must read the aliased tensor from its own chain only.
    for (unsigned r : chain.results) {
      std::optional<unsigned> a = getInPlaceArgument(r);
      if (!a)
        continue;
      for (Operation *user : body.getArgument(*a).getUsers())
        if (chains.getChainOf(user) != (int)c)
          return user->emitOpError("reads %")
                 << getArgumentName(*a)
                 << ", which another chain overwrites in place (result #" << r
                 << ")";
    }

    auto describeDim = [&](const DimUse &use) {
      std::string text;
      llvm::raw_string_ostream os(text);
      if (use.argument >= 0)
        os << "%" << getArgumentName(use.argument);
      else
        os << "result #" << use.result;
      os << " dimension " << use.dim;
      return text;
    };
    std::map<DimSymbol, const DimUse *> first;
    for (const DimUse &use : chain.dims) {
      // max_pos and rotary_dim belong to one cache, not to the chain: two
      // ropes of a chain may use caches of different sizes (each rope checks
      // its own cache's width).
      if (use.symbol == DimSymbol::One || use.symbol == DimSymbol::MaxPos ||
          use.symbol == DimSymbol::Rotary || use.type.isDynamicDim(use.dim))
        continue;
      auto [it, inserted] = first.try_emplace(use.symbol, &use);
      if (inserted)
        continue;
      int64_t expected = it->second->type.getDimSize(it->second->dim);
      int64_t found = use.type.getDimSize(use.dim);
      if (expected == found)
        continue;
      StringRef symbol = stringifyDimSymbol(use.symbol);
      return use.user->emitOpError()
             << symbol << " mismatch: " << describeDim(*it->second) << " sets "
             << symbol << " = " << expected << ", but " << describeDim(use)
             << " is " << found;
    }
    auto staticSize = [&](DimSymbol symbol) -> std::optional<int64_t> {
      auto it = first.find(symbol);
      if (it == first.end())
        return std::nullopt;
      return it->second->type.getDimSize(it->second->dim);
    };
    std::optional<int64_t> s = staticSize(DimSymbol::S);
    std::optional<int64_t> f = staticSize(DimSymbol::F);
    if (s && f && (*f == 0 || *s % *f != 0))
      return first[DimSymbol::F]->user->emitOpError("frames: S = ")
             << *s << " is not divisible by F = " << *f
             << " (token s uses frame s / (S / F))";
    std::optional<int64_t> d = staticSize(DimSymbol::D);
    if (d && !kernelD) {
      kernelD = first[DimSymbol::D];
    } else if (d && kernelD->type.getDimSize(kernelD->dim) != *d) {
      const DimUse &use = *first[DimSymbol::D];
      return use.user->emitOpError("D mismatch between chains: ")
             << describeDim(*kernelD)
             << " sets D = " << kernelD->type.getDimSize(kernelD->dim)
             << ", but " << describeDim(use) << " is " << *d
             << "; the chains of a kernel share D";
    }
    // Group results: [B, S, D / G], D a multiple of G.
    for (unsigned r : chain.results) {
      auto group =
          dyn_cast<GroupType>(body.getTerminator()->getOperand(r).getType());
      if (!group)
        continue;
      int64_t g = group.getSize();
      auto type = cast<RankedTensorType>(resultTypes[r]);
      Operation *ret = body.getTerminator();
      if (d && *d % g != 0)
        return ret->emitOpError("group size ")
               << g << " of result #" << r
               << " does not divide the row length D = " << *d;
      if (d && !type.isDynamicDim(2) && type.getDimSize(2) * g != *d)
        return ret->emitOpError("result #")
               << r << " holds one value per group of " << g
               << " elements: its last dimension must be D / " << g << " = "
               << *d / g << ", found " << type.getDimSize(2);
    }
    for (Operation *op : chain.ropes) {
      int64_t rotary = cast<RopeOp>(op).getRotaryDim();
      if (d && rotary > *d)
        return op->emitOpError("rotary_dim ")
               << rotary << " is larger than the row length D = " << *d;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ReturnOp
//===----------------------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  auto kernel = cast<KernelOp>((*this)->getParentOp());
  auto resultTypes = kernel.getResultTypes();
  if (getNumOperands() != resultTypes.size())
    return emitOpError("returns ")
           << getNumOperands() << " rows, but @" << kernel.getSymName()
           << " has " << resultTypes.size() << " results";
  for (auto [i, value] : llvm::enumerate(getOperands())) {
    // A result of no valid type at all is the kernel verifier's to report
    // (after this one runs); suggesting a cast would mislead.
    auto resultType = dyn_cast<RankedTensorType>(resultTypes[i]);
    bool rows = resultType && resultType.getRank() == 3 &&
                isNfRowElement(resultType.getElementType());
    bool perRow = resultType && resultType.getRank() == 2 &&
                  resultType.getElementType().isF32();
    if (!rows && !perRow)
      continue;
    if (auto group = dyn_cast<GroupType>(value.getType())) {
      if (!resultType || resultType.getRank() != 3 ||
          !resultType.getElementType().isF32())
        return emitOpError("group value #")
               << i << " is stored into a [B, S, D / " << group.getSize()
               << "] f32 result, but result #" << i << " is " << resultTypes[i];
      continue;
    }
    if (!isa<RowType>(value.getType())) {
      if (!perRow)
        return emitOpError("per-row value #")
               << i << " is stored into a [B, S] f32 result, but result #" << i
               << " is " << resultTypes[i];
      if (!value.getDefiningOp() || isa<ConstantOp>(value.getDefiningOp()))
        return emitOpError("per-row value #")
               << i << " is a constant; a per-row result must be computed "
               << "from a row (it takes the row's [B, S])";
      continue;
    }
    if (!rows)
      return emitOpError("row #")
             << i << " is stored into a [B, S, D] result, "
             << "but result #" << i << " is " << resultTypes[i];
    Type rowElement = cast<RowType>(value.getType()).getElementType();
    Type resultElement = resultType.getElementType();
    if (rowElement != resultElement)
      return emitOpError("row #")
             << i << " has element type " << rowElement << ", but result #" << i
             << " is " << resultTypes[i] << " (insert nf.cast)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LoadOp / SelectLoadOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       ValueRange operands, DictionaryAttr,
                                       OpaqueProperties, RegionRange,
                                       SmallVectorImpl<Type> &inferred) {
  if (operands.empty())
    return failure();
  return inferRowOf(location, operands[0], inferred);
}

LogicalResult LoadOp::verify() {
  return verifyBroadcastOperand(*this, getSource(), getKind());
}

LogicalResult SelectLoadOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             ValueRange operands,
                                             DictionaryAttr, OpaqueProperties,
                                             RegionRange,
                                             SmallVectorImpl<Type> &inferred) {
  if (operands.size() < 2)
    return failure();
  return inferRowOf(location, operands[1], inferred);
}

LogicalResult SelectLoadOp::verify() {
  auto index = cast<RankedTensorType>(getIndex().getType());
  if (index.getRank() != 2 || !isIndexElement(index.getElementType()))
    return emitOpError("index must be a [B, S] tensor of i8, i32 or i64, ")
           << describeValue(getIndex()) << " is " << index;
  if (failed(verifyBroadcastOperand(*this, getFirst(), getKind())))
    return failure();
  return verifyBroadcastOperand(*this, getSecond(), getKind());
}

//===----------------------------------------------------------------------===//
// ConstantOp / CastOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  if (!isa<FloatAttr>(getValue()))
    return emitOpError("value must be a floating-point attribute, found ")
           << getValue();
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult CastOp::verify() {
  if (isa<RowType>(getInput().getType()) != isa<RowType>(getType()))
    return emitOpError("casts a row to a row and a scalar to a scalar; found ")
           << getInput().getType() << " to " << getType();
  Type from = getRowElementType(getInput().getType());
  Type to = getRowElementType(getType());
  if ((isNfQuantized(from) || isNfQuantized(to)) && from != to &&
      !from.isF32() && !to.isF32())
    return emitOpError("f8E4M3FN, f8E5M2 and i8 rows are cast from and to "
                       "f32 rows only; found ")
           << getInput().getType() << " to " << getType()
           << " (cast through !nf.row<f32>)";
  return success();
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

/// A row if either operand is one, else a group value if either is one, else
/// a scalar.
static Type inferBinaryType(Type lhs, Type rhs) {
  if (auto row = dyn_cast<RowType>(lhs))
    return row;
  if (auto row = dyn_cast<RowType>(rhs))
    return row;
  if (auto group = dyn_cast<GroupType>(lhs))
    return group;
  if (auto group = dyn_cast<GroupType>(rhs))
    return group;
  return lhs;
}

static ParseResult parseBinaryOp(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand lhs, rhs;
  Type lhsType, rhsType;
  if (parser.parseOperand(lhs) || parser.parseComma() ||
      parser.parseOperand(rhs) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(lhsType))
    return failure();
  rhsType = lhsType;
  if (succeeded(parser.parseOptionalComma()) && parser.parseType(rhsType))
    return failure();
  if (parser.resolveOperand(lhs, lhsType, result.operands) ||
      parser.resolveOperand(rhs, rhsType, result.operands))
    return failure();
  result.addTypes(inferBinaryType(lhsType, rhsType));
  return success();
}

static void printBinaryOp(OpAsmPrinter &p, Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  p << ' ' << lhs << ", " << rhs;
  p.printOptionalAttrDict(op->getAttrs());
  p << " : " << lhs.getType();
  if (rhs.getType() != lhs.getType())
    p << ", " << rhs.getType();
}

static LogicalResult verifyBinaryOp(Operation *op) {
  Type lhs = getRowElementType(op->getOperand(0).getType());
  Type rhs = getRowElementType(op->getOperand(1).getType());
  if (lhs != rhs)
    return op->emitOpError("operands have different element types, ")
           << lhs << " and " << rhs << "; nf converts only through nf.cast";
  auto lhsGroup = dyn_cast<GroupType>(op->getOperand(0).getType());
  auto rhsGroup = dyn_cast<GroupType>(op->getOperand(1).getType());
  if (lhsGroup && rhsGroup && lhsGroup.getSize() != rhsGroup.getSize())
    return op->emitOpError("combines group values of groups of ")
           << lhsGroup.getSize() << " and " << rhsGroup.getSize()
           << " elements; group values combine with the same group size only";
  return success();
}

static LogicalResult inferBinaryReturnTypes(ValueRange operands,
                                            SmallVectorImpl<Type> &inferred) {
  if (operands.size() != 2)
    return failure();
  inferred.push_back(
      inferBinaryType(operands[0].getType(), operands[1].getType()));
  return success();
}

#define NF_DEFINE_BINARY_OP(OP)                                                \
  ParseResult OP::parse(OpAsmParser &parser, OperationState &result) {         \
    return parseBinaryOp(parser, result);                                      \
  }                                                                            \
  void OP::print(OpAsmPrinter &p) { printBinaryOp(p, *this); }                 \
  LogicalResult OP::verify() { return verifyBinaryOp(*this); }                 \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location>,   \
                                     ValueRange operands, DictionaryAttr,      \
                                     OpaqueProperties, RegionRange,            \
                                     SmallVectorImpl<Type> &inferred) {        \
    return inferBinaryReturnTypes(operands, inferred);                         \
  }

NF_DEFINE_BINARY_OP(AddOp)
NF_DEFINE_BINARY_OP(SubOp)
NF_DEFINE_BINARY_OP(MulOp)
NF_DEFINE_BINARY_OP(DivOp)
NF_DEFINE_BINARY_OP(MaxOp)
NF_DEFINE_BINARY_OP(MinOp)
#undef NF_DEFINE_BINARY_OP

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult
ReduceOp::inferReturnTypes(MLIRContext *context, std::optional<Location>,
                           ValueRange operands, DictionaryAttr attributes,
                           OpaqueProperties properties, RegionRange regions,
                           SmallVectorImpl<Type> &inferred) {
  ReduceOp::Adaptor adaptor(operands, attributes, properties, regions);
  Type f32 = Float32Type::get(context);
  std::optional<uint64_t> group = adaptor.getGroup();
  // An invalid size is the verifier's to report; the type must still build.
  if (group && *group >= 1 && llvm::isPowerOf2_64(*group))
    inferred.push_back(GroupType::get(context, f32, *group));
  else
    inferred.push_back(f32);
  return success();
}

LogicalResult ReduceOp::verify() {
  std::optional<uint64_t> group = getGroup();
  if (group && (*group < 1 || !llvm::isPowerOf2_64(*group) ||
                *group > (uint64_t(1) << 30)))
    return emitOpError("group size must be a power of two from 1 to 2^30, "
                       "found ")
           << (int64_t)*group;
  return success();
}

//===----------------------------------------------------------------------===//
// Norms and rope
//===----------------------------------------------------------------------===//

static LogicalResult verifyEps(Operation *op, APFloat eps) {
  if (eps.isNegative() || !eps.isFinite())
    return op->emitOpError("eps must be finite and non-negative, found ")
           << eps.convertToDouble();
  return success();
}

template <typename NormOp> static LogicalResult verifyNorm(NormOp op) {
  for (Value operand : {op.getWeight(), op.getBias()})
    if (operand && operand.getType() != op.getInput().getType())
      return op.emitOpError("weight and bias must have the input's type ")
             << op.getInput().getType() << ", found " << operand.getType();
  return verifyEps(op, op.getEps());
}

/// `%x (weight %w)? (bias %b)? eps <float> attr-dict : type`
template <typename NormOp>
static ParseResult parseNorm(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand input, weight, bias;
  bool hasWeight = false, hasBias = false;
  if (parser.parseOperand(input))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("weight"))) {
    hasWeight = true;
    if (parser.parseOperand(weight))
      return failure();
  }
  if (succeeded(parser.parseOptionalKeyword("bias"))) {
    hasBias = true;
    if (parser.parseOperand(bias))
      return failure();
  }
  FloatAttr eps;
  Type type;
  if (parser.parseKeyword("eps") ||
      parser.parseAttribute(eps, parser.getBuilder().getF32Type()) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type))
    return failure();
  if (parser.resolveOperand(input, type, result.operands) ||
      (hasWeight && parser.resolveOperand(weight, type, result.operands)) ||
      (hasBias && parser.resolveOperand(bias, type, result.operands)))
    return failure();
  auto &props = result.getOrAddProperties<typename NormOp::Properties>();
  props.eps = eps;
  props.operandSegmentSizes = {1, hasWeight ? 1 : 0, hasBias ? 1 : 0};
  result.addTypes(type);
  return success();
}

template <typename NormOp> static void printNorm(OpAsmPrinter &p, NormOp op) {
  p << ' ' << op.getInput();
  if (op.getWeight())
    p << " weight " << op.getWeight();
  if (op.getBias())
    p << " bias " << op.getBias();
  p << " eps ";
  p.printAttributeWithoutType(op.getEpsAttr());
  p.printOptionalAttrDict(op->getAttrs(), {"eps", "operandSegmentSizes"});
  p << " : " << op.getType();
}

LogicalResult LayerNormOp::verify() { return verifyNorm(*this); }
LogicalResult RmsNormOp::verify() { return verifyNorm(*this); }
ParseResult LayerNormOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseNorm<LayerNormOp>(parser, result);
}
ParseResult RmsNormOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseNorm<RmsNormOp>(parser, result);
}
void LayerNormOp::print(OpAsmPrinter &p) { printNorm(p, *this); }
void RmsNormOp::print(OpAsmPrinter &p) { printNorm(p, *this); }

LogicalResult RopeOp::verify() {
  int64_t rotary = getRotaryDim();
  if (rotary <= 0 || rotary % 2 != 0)
    return emitOpError("rotary_dim must be positive and even, found ")
           << rotary;
  auto cache = cast<RankedTensorType>(getCache().getType());
  Type element = cast<RowType>(getInput().getType()).getElementType();
  if (cache.getRank() != 2)
    return emitOpError("cache must be a [max_pos, rotary_dim] tensor, ")
           << describeValue(getCache()) << " is " << cache;
  if (cache.getElementType() != element)
    return emitOpError("cache elements must have the row's element type ")
           << element << ", " << describeValue(getCache()) << " is " << cache
           << " (cast the row instead)";
  if (!cache.isDynamicDim(1) && cache.getDimSize(1) != rotary)
    return emitOpError("cache width must equal rotary_dim = ")
           << rotary << ", " << describeValue(getCache()) << " is " << cache;
  auto positions = cast<RankedTensorType>(getPositions().getType());
  if (positions.getRank() != 1 ||
      !isPositionElement(positions.getElementType()))
    return emitOpError("positions must be a [B] tensor of i32 or i64, ")
           << describeValue(getPositions()) << " is " << positions;
  if (Value offset = getOffset())
    if (!isPositionElement(offset.getType()))
      return emitOpError("offset must be an i32 or i64 scalar, found ")
             << offset.getType();
  return success();
}
