//===- NfBase.td - nf dialect, types and enums -------------*- tablegen -*-===//
//
// Part of normfuse. The dialect definition, the row type and the enums shared
// by the ops in NfOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef NF_BASE_TD
#define NF_BASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def Nf_Dialect : Dialect {
  let name = "nf";
  let cppNamespace = "::mlir::nf";
  let summary = "Fused elementwise -> row-reduction -> elementwise chains";
  let description = [{
    The `nf` dialect describes the normalization chains of diffusion
    transformers (residual + gate, LayerNorm/RMSNorm, modulation, QK-norm with
    rotary embedding) as one *row program*: the body of an `nf.kernel` says
    what happens to one row of D elements. The kernel is executed once for
    every row `(b, s)` of its `[B, S, D]` tensors.

    Values in a kernel body are either *rows* (`!nf.row<T>`, D elements of
    type T) or *per-row scalars* (a builtin float, e.g. the result of a
    reduction). Tensor operands enter the row program only through `nf.load`,
    `nf.select_load` and `nf.rope`, which state how the operand broadcasts
    over `[B, S, D]`. Every arithmetic op computes exactly and rounds its
    result once to its element type; `nf.cast` is the only conversion, so
    every rounding point is visible in the IR.
  }];
  let useDefaultTypePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class Nf_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Nf_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Nf_FloatElement : AnyTypeOf<[F32, F16, BF16],
                                 "f32, f16 or bf16 element">;

def Nf_RowType : Nf_Type<"Row", "row"> {
  let summary = "one row of D elements, D being the row length of the kernel";
  let description = [{
    A row value holds the D elements of the current row of a chain. D is not
    part of the type: it is the last dimension of the tensors the chain
    loads and stores, checked when the kernel is verified (static sizes) and
    when it is launched (dynamic sizes).

    ```mlir
    %x = nf.load %input [B, S, D] : tensor<?x?x1536xbf16>   // !nf.row<bf16>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Nf_BcastOne : I32EnumAttrCase<"One", 0, "one">;
def Nf_BcastD : I32EnumAttrCase<"D", 1, "D">;
def Nf_BcastBD : I32EnumAttrCase<"BD", 2, "BD">;
def Nf_BcastB1D : I32EnumAttrCase<"B1D", 3, "B1D">;
def Nf_BcastBSD : I32EnumAttrCase<"BSD", 4, "BSD">;
def Nf_BcastBF1D : I32EnumAttrCase<"BF1D", 5, "BF1D">;

def Nf_BroadcastKind : I32EnumAttr<"BroadcastKind",
    "how a tensor operand maps onto the [B, S, D] rows of a chain",
    [Nf_BcastOne, Nf_BcastD, Nf_BcastBD, Nf_BcastB1D, Nf_BcastBSD,
     Nf_BcastBF1D]> {
  let cppNamespace = "::mlir::nf";
}


def Nf_ReduceSum : I32EnumAttrCase<"Sum", 0, "sum">;
def Nf_ReduceMax : I32EnumAttrCase<"Max", 1, "max">;
def Nf_ReduceMean : I32EnumAttrCase<"Mean", 2, "mean">;
def Nf_ReduceMeanSq : I32EnumAttrCase<"MeanSq", 3, "mean_sq">;

def Nf_ReduceKind : I32EnumAttr<"ReduceKind", "row reduction",
    [Nf_ReduceSum, Nf_ReduceMax, Nf_ReduceMean, Nf_ReduceMeanSq]> {
  let cppNamespace = "::mlir::nf";
}


def Nf_RopeNeox : I32EnumAttrCase<"Neox", 0, "neox">;
def Nf_RopeInterleaved : I32EnumAttrCase<"Interleaved", 1, "interleaved">;

def Nf_RopeLayout : I32EnumAttr<"RopeLayout",
    "which elements of a row form a rotary pair",
    [Nf_RopeNeox, Nf_RopeInterleaved]> {
  let cppNamespace = "::mlir::nf";
}


//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Nf_IsRow : CPred<"::llvm::isa<::mlir::nf::RowType>($_self)">;
def Nf_AnyRow : Type<Nf_IsRow, "row", "::mlir::Type">;
def Nf_F32Row : Type<And<[Nf_IsRow,
    CPred<"::llvm::cast<::mlir::nf::RowType>($_self).getElementType().isF32()">]>,
    "row of f32", "::mlir::Type">;

// A value of the row program: a row, or one scalar per row.
def Nf_Value : AnyTypeOf<[Nf_AnyRow, F32, F16, BF16],
                         "row or per-row f32/f16/bf16 scalar">;
def Nf_F32Value : AnyTypeOf<[Nf_F32Row, F32], "f32 row or f32 scalar">;

#endif // NF_BASE_TD
