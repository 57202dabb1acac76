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

    Values in a kernel body are *rows* (`!nf.row<T>`, D elements of type T),
    *per-row scalars* (a builtin float, e.g. the result of a reduction), or
    *group values* (`!nf.group<f32, G>`: one f32 per group of G consecutive
    elements of the row, the result of a group reduction). Tensor operands enter the row program only through `nf.load`,
    `nf.select_load` and `nf.rope`, which state how the operand broadcasts
    over `[B, S, D]`. Every arithmetic op computes exactly and rounds its
    result once to its element type; `nf.cast` is the only conversion, so
    every rounding point is visible in the IR.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class Nf_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Nf_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Nf_RowType : Nf_Type<"Row", "row"> {
  let summary = "one row of D elements, D being the row length of the kernel";
  let description = [{
    A row value holds the D elements of the current row of a chain. D is not
    part of the type: it is the last dimension of the tensors the chain
    loads and stores, checked when the kernel is verified (static sizes) and
    when it is launched (dynamic sizes).

    Elements are `f32`, `f16` or `bf16`, on which the arithmetic ops work,
    or one of the *quantized* types `f8E4M3FN`, `f8E5M2` and `i8`: a row of
    those is only loaded, stored, and cast to or from `f32` (`nf.cast`).

    ```mlir
    %x = nf.load %input [B, S, D] : tensor<?x?x1536xbf16>   // !nf.row<bf16>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
  let genVerifyDecl = 1;
}

def Nf_GroupType : Nf_Type<"Group", "group"> {
  let summary = "one value per group of G consecutive elements of a row";
  let description = [{
    A group value holds D / G values: value `j` belongs to elements
    `[j * G, (j + 1) * G)` of the row. G is a power of two; D must be a
    multiple of it (checked when the kernel is verified, for a static D, and
    when it is launched). Group values are f32: a group reduction's result
    (`nf.reduce ... group G`) and what elementwise ops compute from it, with
    per-row scalars and with other group values of the same G. Combined with
    a row, each group value is broadcast over its group's elements. A kernel
    returns one as an f32 `[B, S, D / G]` result, e.g. the scale of each
    block of 128 elements of block-scaled FP8.

    ```mlir
    %gmax = nf.reduce max %a group 128 : !nf.row<f32>  // !nf.group<f32, 128>
    ```
  }];
  let parameters = (ins "::mlir::Type":$elementType, "int64_t":$size);
  let assemblyFormat = "`<` $elementType `,` $size `>`";
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
// Attributes: schedules and kernel variants
//===----------------------------------------------------------------------===//

class Nf_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Nf_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Nf_ScheduleAttr : Nf_Attr<"Schedule", "schedule"> {
  let summary = "how the rows of one kernel variant map onto threads";
  let description = [{
    `threads_per_row` threads (a power of two) share a row; a CTA holds
    `rows_per_cta` such row groups, and each group holds `rows_per_thread`
    rows at once. A thread touches `chunk` consecutive elements at a time
    (16 bytes of the narrowest row type for a vectorized variant, or 8 where
    the schedule reads f32 operands along a 16-bit row in 16-byte accesses;
    1 for a general one, or the vectorized chunk in a kernel with group
    reductions, each element then loaded on its own). With
    `chunks_per_thread` > 0 the row stays in registers: a thread holds at
    most that many chunks, so the variant serves rows of at most
    `threads_per_row * chunks_per_thread * chunk` elements. With 0 the row
    is streamed from memory once per reduction (any D).
    With `cluster_size` = N > 1 (sm_90 and newer) a row too long for one
    CTA's registers is shared by the N CTAs of a thread-block cluster, each
    holding `threads_per_row * chunks_per_thread` of its chunks: the variant
    serves rows of N times as many elements, a CTA holds one row
    (`rows_per_cta` = `rows_per_thread` = 1), and each reduction over the row
    is combined across the cluster through distributed shared memory.
    A `staged` schedule (one row per CTA, or per CTA of a cluster) holds the
    CTA's share of the row in shared memory rather than registers: every
    thread copies its chunks of each `[B, S, D]` input there with
    asynchronous copies at the row's start and reads them back in each
    pass, so no row element is live in registers across a reduction.
    A `persistent` schedule (register-resident rows, one per thread and
    one per CTA where a row takes more than 32 threads, no cluster)
    launches as many CTAs per batch entry as fit on the GPU at once, each
    walking its entry's rows: the operands that do not depend on the row
    (`[D]`, `[B, 1, D]`, `[1]`) are loaded once per CTA and held in
    registers, and the next row's `[B, S, D]` inputs are copied into shared
    memory (asynchronous copies, two slots) while the current row is
    computed. Only the schedule's vectorized variant loops; its other
    variants run one row per CTA.
    A schedule that is not persistent but could be may name
    `short_launch_rows` = R > 0: its vectorized variant then has a
    persistent twin ahead of it, which the runtime launches only where the
    launch has at most R rows per CTA of that twin resident on the device
    at once (a short launch, whose last rows one CTA per row would leave
    to a few SMs).
    Parameters left at their default are not printed.

    ```mlir
    #nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8,
                 chunks_per_thread = 3>
    ```
  }];
  let parameters = (ins
    "int64_t":$threads_per_row,
    "int64_t":$rows_per_cta,
    "int64_t":$chunk,
    "int64_t":$chunks_per_thread,
    DefaultValuedParameter<"int64_t", "1">:$rows_per_thread,
    DefaultValuedParameter<"int64_t", "1">:$cluster_size,
    DefaultValuedParameter<"bool", "false">:$staged,
    DefaultValuedParameter<"bool", "false">:$persistent,
    DefaultValuedParameter<"int64_t", "0">:$short_launch_rows
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Most elements of a row the variant holds in registers (0: streamed,
    /// any length).
    int64_t getCapacity() const;
    bool isRegisterResident() const { return getChunksPerThread() > 0; }
  }];
}

def Nf_ScheduleArrayAttr : TypedArrayAttrBase<Nf_ScheduleAttr,
                                              "array of #nf.schedule">;

def Nf_VariantAttr : Nf_Attr<"Variant", "variant"> {
  let summary = "one specialization of a kernel, with the guard that picks it";
  let description = [{
    A kernel is compiled into a family of variants, each a GPU function
    `@<kernel>_<name>` with its own schedule. At launch the runtime takes the
    first variant, in the kernel's order, whose guard holds:

    - `vectorized = true`: every row tensor is 16-byte aligned with strides
      that keep it so, and D is a multiple of the schedule's `chunk` (the
      function uses 16-byte loads and stores); `false`: any alignment, any D.
    - `peeled = true` (with `vectorized = false`): D need not be a multiple of
      the chunk, nor rows aligned; every row tensor `[B, S, D]` starts at the
      same element offset modulo the chunk and has strides equal modulo the
      chunk, so that each row's body is loaded and stored in 16-byte chunks
      and only its first and last chunk element by element (odd D; a
      register-resident schedule, whose `max_d` leaves room for a row that
      starts a chunk minus one element before an aligned address). Operands
      broadcast along rows (`[D]`, `[B, 1, D]`) are then misaligned with the
      row and loaded element by element. Omitted when false.
    - `max_d`: D is at most this (a register-resident schedule holds at most
      that many elements per row); 0: any D.
    - `max_rows_per_cta` = R > 0 (a vectorized variant of a persistent
      schedule): the launch has at most R rows per CTA of this function
      resident on the device at once (the runtime asks the driver how many
      fit); the variant after it serves longer launches. Omitted when 0.

    `-nf-materialize-variants` builds the list from the schedules that
    `-nf-select-schedule` chose; its last variant has no guard.

    Three flags tell `-nf-lower-to-gpu` how to emit the variant's rows where
    the schedule alone does not say; `-nf-materialize-variants` sets them
    from the kernel, the variant and the target (its rules and their
    measurements: docs/Rationale.md, "Decisions the variant carries"), and
    each is omitted when false:

    - `l2_prefetch`: each `[B, S, D]` input that no reduction reads (loaded
      after the row's last exchange) is prefetched into L2 after the row's
      own loads, before the first exchange (`prefetch.global.L2`, sm_90 and
      newer). A vectorized or peeled variant of a register-resident
      schedule without a cluster; not a vectorized variant of a staged or
      persistent schedule, whose rows are copied one row ahead already.
    - `joint_rows`: the `rows_per_thread` rows a thread holds go through
      their phases together, one exchange per reduction for all of them,
      before each stores in turn (elsewhere each row reduces and stores in
      turn). A vectorized variant of a register-resident schedule of two or
      more rows per thread, not persistent.
    - `third_cta`: a row of several reductions is recomputed from its
      elements as loaded before each reduction after the first and before
      the epilogue, so that its CTA of 512 threads fits three per SM
      (nf-compile then asks ptxas for three). A vectorized variant of a
      register-resident schedule of 512 threads per row, one row per
      thread, neither staged nor in a cluster.

    ```mlir
    #nf.variant<name = "cta_t64", vectorized = true, max_d = 1536,
      schedule = #nf.schedule<threads_per_row = 64, rows_per_cta = 2,
                              chunk = 8, chunks_per_thread = 3>>
    #nf.variant<name = "v0_multi_row8x1", vectorized = true, max_d = 64,
      schedule = #nf.schedule<threads_per_row = 8, rows_per_cta = 16,
                              chunk = 8, chunks_per_thread = 1,
                              rows_per_thread = 2>,
      l2_prefetch = true, joint_rows = true>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the suffix of the variant's GPU function">:$name,
    "bool":$vectorized,
    "int64_t":$max_d,
    Nf_ScheduleAttr:$schedule,
    DefaultValuedParameter<"bool", "false",
                           "rows start anywhere (see the description)">:$peeled,
    DefaultValuedParameter<"int64_t", "0",
                           "most rows per resident CTA (0: any)">:$max_rows_per_cta,
    DefaultValuedParameter<"bool", "false",
                           "epilogue-only rows prefetched into L2">:$l2_prefetch,
    DefaultValuedParameter<"bool", "false",
                           "a thread's rows share each exchange">:$joint_rows,
    DefaultValuedParameter<"bool", "false",
                           "row recomputed for a third CTA per SM">:$third_cta
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Nf_VariantArrayAttr : TypedArrayAttrBase<Nf_VariantAttr,
                                             "array of #nf.variant">;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Nf_IsRow : CPred<"::llvm::isa<::mlir::nf::RowType>($_self)">;
def Nf_AnyRow : Type<Nf_IsRow, "row", "::mlir::Type">;
def Nf_FloatRow : Type<And<[Nf_IsRow,
    CPred<"::mlir::nf::isNfFloat(::llvm::cast<::mlir::nf::RowType>($_self)"
          ".getElementType())">]>,
    "row of f32, f16 or bf16", "::mlir::Type">;
def Nf_F32Row : Type<And<[Nf_IsRow,
    CPred<"::llvm::cast<::mlir::nf::RowType>($_self).getElementType().isF32()">]>,
    "row of f32", "::mlir::Type">;

def Nf_IsGroup : CPred<"::llvm::isa<::mlir::nf::GroupType>($_self)">;
def Nf_AnyGroup : Type<Nf_IsGroup, "group value", "::mlir::Type">;

// A value the arithmetic works on: a float row, one scalar per row, or one
// f32 per group of a row.
def Nf_Value : AnyTypeOf<[Nf_FloatRow, F32, F16, BF16, Nf_AnyGroup],
                         "f32/f16/bf16 row, per-row scalar or group value">;
// What nf.cast converts: also quantized rows (to and from f32 rows only).
def Nf_CastValue : AnyTypeOf<[Nf_AnyRow, F32, F16, BF16],
                             "row or per-row f32/f16/bf16 scalar">;
// What a kernel returns: rows ([B, S, D] results), f32 per-row scalars
// ([B, S] results) and group values ([B, S, D / G] results).
def Nf_ReturnValue : AnyTypeOf<[Nf_AnyRow, F32, Nf_AnyGroup],
                               "row, per-row f32 scalar or group value">;
// What a reduction gives: one f32 per row, or one per group.
def Nf_ReduceResult : AnyTypeOf<[F32, Nf_AnyGroup],
                                "per-row f32 scalar or group value">;
def Nf_F32Value : AnyTypeOf<[Nf_F32Row, F32], "f32 row or f32 scalar">;

#endif // NF_BASE_TD
