//===- NfOps.td - nf dialect operations --------------------*- tablegen -*-===//
//
// Part of normfuse. Every op of the row-program language: the kernel, the
// ops that bring tensor operands into a row, elementwise arithmetic,
// reductions, the composite norms and rotary embedding.
//
//===----------------------------------------------------------------------===//

#ifndef NF_OPS_TD
#define NF_OPS_TD

include "NfBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Nf_Op<string mnemonic, list<Trait> traits = []>
    : Op<Nf_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

def Nf_KernelOp : Nf_Op<"kernel", [
    FunctionOpInterface, IsolatedFromAbove, Symbol,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "a fused row program, compiled into one GPU kernel";
  let description = [{
    A kernel takes tensor arguments (activations `[B, S, D]`, modulation
    operands of any broadcast kind, norm weights, index and position tensors)
    and scalar integer arguments (a rotary position offset), and produces
    `[B, S, D]` tensors and, for values computed once per row (a
    quantization scale), `[B, S]` f32 tensors. Its body is the program for *one row*: it runs for
    every row `(b, s)`. Ops of the body that are not connected by data flow
    form independent *chains* (Q and K of QK-norm): each chain has its own
    `[B, S]`, and all chains of a kernel share one launch.

    A result with the attribute `nf.in_place = i` is written into the storage
    of argument `i` (which must have the same type) instead of a new buffer.
    Argument names are kept (`arg_names`) so that tools and the runtime can
    refer to operands by name.

    ```mlir
    nf.kernel @add_rms(%x: tensor<?x?x?xf32>, %w: tensor<?xf32>)
        -> tensor<?x?x?xf32> {
      %r = nf.load %x [B, S, D] : tensor<?x?x?xf32>
      %wr = nf.load %w [D] : tensor<?xf32>
      %y = nf.rms_norm %r weight %wr eps 1.0e-06 : !nf.row<f32>
      nf.return %y : !nf.row<f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       OptionalAttr<StrArrayAttr>:$arg_names);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// FunctionOpInterface / CallableOpInterface hooks.
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    ::mlir::Region *getCallableRegion() { return &getBody(); }

    /// Name of the attribute marking an in-place result.
    static ::llvm::StringRef getInPlaceAttrName() { return "nf.in_place"; }

    /// The argument whose storage result `resultIndex` reuses, if any.
    std::optional<unsigned> getInPlaceArgument(unsigned resultIndex);

    /// Whether any result reuses an argument's storage (`nf.in_place`).
    bool hasInPlaceResult();

    /// The source-level name of argument `index` ("arg<index>" if unnamed).
    std::string getArgumentName(unsigned index);

    /// The terminator of the body.
    ::mlir::Operation *getReturn() { return getBody().front().getTerminator(); }
  }];
}

def Nf_ReturnOp : Nf_Op<"return", [Pure, HasParent<"KernelOp">, Terminator]> {
  let summary = "rows and per-row values written to the kernel results";
  let description = [{
    Ends the row program. A row operand `i` is stored into row `(b, s)` of
    the `[B, S, D]` result `i`, whose element type must be the row's. An f32
    per-row scalar (a reduction's result or what is computed from it: a
    quantization scale, a mean) is stored into element `(b, s)` of the
    `[B, S]` f32 result `i`. A group value (`!nf.group<f32, G>`) is stored
    into row `(b, s)` of the `[B, S, D / G]` f32 result `i`.

    ```mlir
    nf.return %y, %r : !nf.row<bf16>, !nf.row<bf16>
    nf.return %q, %scale : !nf.row<f8E4M3FN>, f32
    nf.return %q, %blocks : !nf.row<f8E4M3FN>, !nf.group<f32, 128>
    ```
  }];
  let arguments = (ins Variadic<Nf_ReturnValue>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Operands of the row program
//===----------------------------------------------------------------------===//

def Nf_LoadOp : Nf_Op<"load", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the current row of a tensor operand, under a broadcast kind";
  let description = [{
    Reads the D elements that row `(b, s)` sees of a kernel argument. The
    broadcast kind is written as the operand's shape and must match its rank:

    | kind          | tensor shape   | element d of row (b, s)       |
    |---------------|----------------|-------------------------------|
    | `[1]`         | `[1]`          | `t[0]` (one value everywhere) |
    | `[D]`         | `[D]`          | `t[d]`                        |
    | `[B, D]`      | `[B, D]`       | `t[b, d]`                     |
    | `[B, 1, D]`   | `[B, 1, D]`    | `t[b, 0, d]`                  |
    | `[B, S, D]`   | `[B, S, D]`    | `t[b, s, d]`                  |
    | `[B, F, 1, D]`| `[B, F, 1, D]` | `t[b, s / (S / F), 0, d]`     |

    The result has the tensor's element type: loading never converts.

    ```mlir
    %x = nf.load %x_in [B, S, D] : tensor<?x?x1536xbf16>
    %g = nf.load %gate [B, F, 1, D] : tensor<?x?x1x1536xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source,
                       Nf_BroadcastKind:$kind);
  let results = (outs Nf_AnyRow:$result);
  let assemblyFormat =
      "$source custom<BroadcastKind>($kind) attr-dict `:` type($source)";
  let hasVerifier = 1;
}

def Nf_SelectLoadOp : Nf_Op<"select_load", [Pure,
    AllTypesMatch<["first", "second"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "load one of two operands, chosen per row by an index tensor";
  let description = [{
    The select01 modulation of Qwen-Image: `index` is a `[B, S]` integer
    tensor; row `(b, s)` loads `first` where `index[b, s] == 0` and `second`
    otherwise. Both candidates have the same type and broadcast kind. Only the
    chosen operand is read.

    ```mlir
    %scale = nf.select_load %idx, %scale0, %scale1 [B, D]
        : tensor<?x?xi32>, tensor<?x3072xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$index, AnyRankedTensor:$first,
                       AnyRankedTensor:$second,
                       Nf_BroadcastKind:$kind);
  let results = (outs Nf_AnyRow:$result);
  let assemblyFormat = [{
    $index `,` $first `,` $second custom<BroadcastKind>($kind) attr-dict
    `:` type($index) `,` type($first)
  }];
  let hasVerifier = 1;
}

def Nf_ConstantOp : Nf_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a floating-point constant, the same for every row";
  let description = [{
    ```mlir
    %one = nf.constant 1.000000e+00 : f32
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs AnyTypeOf<[F32, F16, BF16]>:$result);
  let assemblyFormat = "attr-dict $value";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Nf_CastOp : Nf_Op<"cast", [Pure]> {
  let summary = "convert element types, rounding to nearest even";
  let description = [{
    The only conversion of the language. Between `f32`, `f16` and `bf16`, a
    cast to a narrower type rounds to nearest, ties to even; a cast to a
    wider type is exact. Rows cast to rows, scalars to scalars.

    Quantized rows (`f8E4M3FN`, `f8E5M2`, `i8`) cast only from and to `f32`
    rows. A cast of an f32 row to one of them rounds to nearest, ties to
    even, and saturates to the type's finite range: to +-448 for
    `f8E4M3FN`, +-57344 for `f8E5M2`, [-128, 127] for `i8`, also for
    +-inf. NaN becomes NaN for the fp8 types (the encoding `0x7f`, with the
    input's sign) and 0 for `i8`. Subnormal fp8 values are kept. A cast
    from a quantized row to f32 is exact.

    ```mlir
    %xf = nf.cast %x : !nf.row<bf16> to !nf.row<f32>
    %q = nf.cast %y : !nf.row<f32> to !nf.row<f8E4M3FN>
    ```
  }];
  let arguments = (ins Nf_CastValue:$input);
  let results = (outs Nf_CastValue:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

class Nf_BinaryOp<string mnemonic, string what, string accuracy = "">
    : Nf_Op<mnemonic, [Pure,
        DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "elementwise " # what;
  let description = [{
    Elementwise }] # what # [{ of two rows, a row and a per-row scalar (the
    scalar is broadcast across the row), two scalars, or group values (f32,
    `!nf.group<f32, G>`) with each other (same G), with scalars (the result
    is a group value) or with rows (each group value is broadcast over its
    group's elements). Both operands have the same element type; the exact result is rounded once to it}] #
    accuracy # [{. The type list names one type when both operands have it,
    else both types.

    ```mlir
    %r = nf.}] # mnemonic # [{ %a, %b : !nf.row<f32>
    %y = nf.}] # mnemonic # [{ %a, %s : !nf.row<f32>, f32
    ```
  }];
  let arguments = (ins Nf_Value:$lhs, Nf_Value:$rhs);
  let results = (outs Nf_Value:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

// What the GPU lowering may do to f32 additions, subtractions and
// multiplications (-nf-allow-contraction).
defvar Nf_Contractable = [{, except that in the GPU kernels of
    register-resident variants an f32 multiplication and the addition or
    subtraction that consumes it may be one fused multiply-add (the product
    is not rounded on its own; -nf-allow-contraction), and a sum of squares
    is accumulated so}];
def Nf_AddOp : Nf_BinaryOp<"add", "addition", Nf_Contractable>;
def Nf_SubOp : Nf_BinaryOp<"sub", "subtraction", Nf_Contractable>;
def Nf_MulOp : Nf_BinaryOp<"mul", "multiplication", Nf_Contractable>;
def Nf_DivOp : Nf_BinaryOp<"div", "division", [{, except that
    a row divided by a per-row scalar or a group value `s` is multiplied by
    the correctly rounded `1/s`, computed once per row or group (one extra
    rounding: at most 1.5 ulp
    in f32 where the division has 0.5; a subnormal `s`, whose reciprocal
    would overflow, is scaled by 2^64 together with the row, so no finite
    quotient becomes infinite)}]>;
def Nf_MaxOp : Nf_BinaryOp<"max", "maximum (NaN propagating)">;
def Nf_MinOp : Nf_BinaryOp<"min", "minimum (NaN propagating)">;

class Nf_UnaryOp<string mnemonic, string what,
                 string accuracy = "the exact result is rounded once to the element type">
    : Nf_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise " # what;
  let description = [{
    Computes }] # what # [{ of every element of a row, of a per-row
    scalar, or of every value of a group value; }] # accuracy # [{.

    ```mlir
    %y = nf.}] # mnemonic # [{ %x : !nf.row<f32>
    ```
  }];
  let arguments = (ins Nf_Value:$input);
  let results = (outs Nf_Value:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Nf_NegOp : Nf_UnaryOp<"neg", "-x">;
def Nf_AbsOp : Nf_UnaryOp<"abs", "|x|">;
def Nf_ExpOp : Nf_UnaryOp<"exp", "e^x", [{computed in f32 as 2^(x * log2(e)) by the
    GPU's `ex2.approx.ftz` (relative error about 2^-22) after rounding the
    product (a relative error of at most |x| * 2^-24 * ln 2 more: 3e-6 at
    |x| = 80, below one f16 or bf16 ulp everywhere); overflow gives +inf,
    results below 2^-126 (x below about -87.3) are flushed to +0 (an
    absolute error under 1.2e-38; f16 has no such values), NaN stays NaN.
    `exp(x - max)`, a softmax's, only meets arguments <= 0}]>;
def Nf_TanhOp : Nf_UnaryOp<"tanh", "tanh(x)">;
def Nf_SigmoidOp : Nf_UnaryOp<"sigmoid", "1 / (1 + e^-x)">;
def Nf_SqrtOp : Nf_UnaryOp<"sqrt", "the square root of x">;
def Nf_RsqrtOp : Nf_UnaryOp<"rsqrt", "1 / sqrt(x)">;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Nf_ReduceOp : Nf_Op<"reduce", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "reduce a row to one f32 value per row, or per group";
  let description = [{
    `sum`, `max`, `mean` (sum / D) or `mean_sq` (sum of squares / D) of the
    D elements of an f32 row. Reductions accumulate in f32: to reduce f16 or
    bf16 data, cast it to f32 first (an exact conversion).

    With `group G` (G a power of two, D a multiple of it) the row is reduced
    over each group of G consecutive elements instead, giving one value per
    group (`!nf.group<f32, G>`; `mean` and `mean_sq` divide by G): block
    scales, say.

    ```mlir
    %ms = nf.reduce mean_sq %x : !nf.row<f32>
    %gmax = nf.reduce max %a group 128 : !nf.row<f32>
    ```
  }];
  let arguments = (ins Nf_ReduceKind:$kind, Nf_F32Row:$input,
                       OptionalAttr<I64Attr>:$group);
  let results = (outs Nf_ReduceResult:$result);
  let assemblyFormat =
      "$kind $input (`group` $group^)? attr-dict `:` type($input)";
  let builders = [
    // A reduction over the whole row.
    OpBuilder<(ins "::mlir::nf::ReduceKind":$kind, "::mlir::Value":$input), [{
      build($_builder, $_state, $_builder.getF32Type(),
            ::mlir::nf::ReduceKindAttr::get($_builder.getContext(), kind),
            input, ::mlir::IntegerAttr());
    }]>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Composite ops (decomposed by -nf-decompose)
//===----------------------------------------------------------------------===//

class Nf_NormOp<string mnemonic, string what, string formula>
    : Nf_Op<mnemonic, [Pure, AttrSizedOperandSegments,
        AllTypesMatch<["input", "result"]>]> {
  let summary = what # " of a row, with optional weight and bias";
  let description = [{
    Computes }] # formula # [{ over the D elements of the row, then
    `y * weight + bias` where given. The composite computes in f32 precision
    and rounds its result once to the element type. `-nf-decompose` rewrites
    it into casts, reductions and elementwise ops.

    ```mlir
    %y = nf.}] # mnemonic # [{ %x weight %w bias %b eps 1.000000e-06
        : !nf.row<f32>
    ```
  }];
  let arguments = (ins Nf_FloatRow:$input, Optional<Nf_FloatRow>:$weight,
                       Optional<Nf_FloatRow>:$bias, F32Attr:$eps);
  let results = (outs Nf_FloatRow:$result);
  // Weight and bias share the input's type, so one type is printed.
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Nf_LayerNormOp : Nf_NormOp<"layer_norm", "LayerNorm",
    "`(x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps)`, the variance taken "
    "as a second pass over the centred row,">;
def Nf_RmsNormOp : Nf_NormOp<"rms_norm", "RMSNorm",
    "`x * rsqrt(mean(x^2) + eps)`">;

def Nf_ModulateOp : Nf_Op<"modulate", [Pure,
    AllTypesMatch<["input", "scale", "shift", "result"]>]> {
  let summary = "adaptive modulation x * (1 + scale) + shift";
  let description = [{
    The DiT modulation. Computes in f32 precision and rounds once to the
    element type; `-nf-decompose` rewrites it into elementwise ops.

    ```mlir
    %y = nf.modulate %n, %scale, %shift : !nf.row<f32>
    ```
  }];
  let arguments = (ins Nf_FloatRow:$input, Nf_FloatRow:$scale,
                       Nf_FloatRow:$shift);
  let results = (outs Nf_FloatRow:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $shift attr-dict `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//

def Nf_RopeOp : Nf_Op<"rope", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "rotary position embedding of the first rotary_dim elements";
  let description = [{
    Rotates pairs of the first `rotary_dim` elements of the row by the angle
    of the row's position; the other elements pass through. The position of
    row `(b, s)` is `positions[b] + offset` (`offset` is an optional scalar
    kernel argument). `cache` is `[max_pos, rotary_dim]`: columns
    `[0, rotary_dim/2)` hold cos, `[rotary_dim/2, rotary_dim)` hold sin.
    With `c = cache[p, i]`, `s = cache[p, rotary_dim/2 + i]`, the pair
    `(x1, x2)` becomes `(x1*c - x2*s, x2*c + x1*s)`, where the pair is
    `(2i, 2i+1)` for `interleaved` and `(i, i + rotary_dim/2)` for `neox`.
    Each output element is rounded once to the element type, which the cache
    shares with the row.

    ```mlir
    %y = nf.rope neox %x, %cos_sin[%pos] rotary 64
        : !nf.row<f32>, tensor<?x64xf32>, tensor<?xi64>
    %z = nf.rope interleaved %x, %cos_sin[%pos + %offset] rotary 128
        : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi32>, i32
    ```
  }];
  let arguments = (ins Nf_RopeLayout:$layout, Nf_FloatRow:$input,
                       AnyRankedTensor:$cache, AnyRankedTensor:$positions,
                       Optional<AnySignlessInteger>:$offset,
                       I64Attr:$rotary_dim);
  let results = (outs Nf_FloatRow:$result);
  let assemblyFormat = [{
    $layout $input `,` $cache `[` $positions (`+` $offset^)? `]`
    `rotary` $rotary_dim attr-dict `:` type($input) `,` type($cache) `,`
    type($positions) (`,` type($offset)^)?
  }];
  let hasVerifier = 1;
}

#endif // NF_OPS_TD
