//===- NfGpuOps.td - nfgpu dialect and ops -----------------*- tablegen -*-===//
//
// Part of normfuse. The GPU level: ops between the row program (`nf`) and
// NVVM that say what the threads of a row do together, lowered by their
// own passes (passes/Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef NF_GPU_OPS_TD
#define NF_GPU_OPS_TD

include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def NfGpu_Dialect : Dialect {
  let name = "nfgpu";
  let cppNamespace = "::mlir::nfgpu";
  let summary = "The GPU level of normfuse: how the threads of a row cooperate";
  let description = [{
    The level between the row program (`nf`) and NVVM. `-nf-lower-to-gpu`
    turns each variant of an `nf.kernel` into a `gpu.func` in which a
    thread's own work (its chunks' loads, arithmetic and stores) is already
    in upstream dialects (`arith`, `vector`, `llvm`), while what the threads
    holding one row do *together* is an `nfgpu` op: the op says what is
    exchanged, its own pass (`-nf-lower-row-reductions`) decides how (warp
    shuffles, a shared-memory step across the CTA's warps, `st.async`
    between the CTAs of a cluster) and allocates the shared memory it
    needs, so that the artifact's resource figures come from what was
    allocated.

    A row is held by `threads_per_row` consecutive threads of a CTA
    (`rows_per_cta` rows per CTA), or by the same threads of each of the
    `cluster_size` CTAs of a cluster.
  }];
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def NfGpu_CombiningKind : I32EnumAttr<"CombiningKind",
    "how partial values of a row combine", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"ExpSum", 2, "exp_sum">,
    ]> {
  let cppNamespace = "::mlir::nfgpu";
  let genSpecializedAttr = 0;
}

def NfGpu_CombiningKindAttr
    : EnumAttr<NfGpu_Dialect, NfGpu_CombiningKind, "combining"> {
  let assemblyFormat = "`<` $value `>`";
}

def NfGpu_CombiningKindArrayAttr
    : TypedArrayAttrBase<NfGpu_CombiningKindAttr, "combining kinds">;

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

class NfGpu_Op<string mnemonic, list<Trait> traits = []>
    : Op<NfGpu_Dialect, mnemonic, traits>;

def NfGpu_RowReduceOp : NfGpu_Op<"row_reduce", [AttrSizedOperandSegments,
    AllTypesMatch<["partials", "totals"]>]> {
  let summary = "combine every thread's partial values of a row";
  let description = [{
    Each thread holding a row passes its partial values (f32, one per
    reduction); every one of them gets the row's totals: the sums or maxima
    (`kinds`, one per value) of the partials of all threads of the row, in
    every CTA of its cluster.

    An `exp_sum` value follows a `max` value and is a sum of exponentials
    relative to it: a thread passes its own maximum m and s = the sum of
    e^(x - m) over its elements, and the totals are the row's maximum M and
    the row's sum of e^(x - M) (two partials combine as
    s_a e^(m_a - M) + s_b e^(m_b - M), M = max(m_a, m_b)). A softmax's
    maximum and sum so take one exchange and one pass over the row instead
    of two (an online softmax); `-nf-lower-to-gpu` uses it for streamed
    rows, which read the row from memory on every pass.

    Every thread of the CTA must reach the op (it may synchronize the CTA), with the same values of `lane` and `row`
    as its position: `lane` in [0, threads_per_row) is the thread's index
    among the row's threads, `row` in [0, rows_per_cta) the row's index in
    the CTA, and `rank` the CTA's index in its cluster (only with
    `cluster_size` > 1).

    Several values in one op share its exchange: their shuffles step
    together and one barrier serves them all. `slot` numbers the op's
    first value among the exchanges of the function: values of different
    slots have their own shared memory (a later exchange does not
    overwrite what a slower warp still reads of an earlier one), and in a
    cluster their own mbarrier, which is used once. `cluster_wait` marks
    the first exchange between CTAs after `nfgpu.cluster_arrive`: the
    CTA waits there for the others to have started.

    `-nf-lower-row-reductions` lowers it: a butterfly of `gpu.shuffle
    xor` among the row's lanes of a warp; with more than one warp per row,
    the warps' results through a `workgroup` buffer and one `gpu.barrier`;
    in a cluster, thread 0 sends the CTA's result to every CTA with
    `st.async`, counted on that CTA's mbarrier of the slot, and every
    thread combines the N results in rank order, so that every CTA gets
    the same totals.

    Example:

    ```mlir
    %sum, %max = nfgpu.row_reduce [#nfgpu.combining<sum>,
                                   #nfgpu.combining<max>] %a, %b
        lane %lane row %row
        {threads_per_row = 256 : i64, rows_per_cta = 1 : i64,
         cluster_size = 1 : i64, slot = 0 : i64} : f32, f32
    %m, %s = nfgpu.row_reduce [#nfgpu.combining<max>,
                               #nfgpu.combining<exp_sum>] %pm, %ps
        lane %lane row %row
        {threads_per_row = 512 : i64, rows_per_cta = 1 : i64,
         cluster_size = 1 : i64, slot = 0 : i64} : f32, f32
    ```
  }];
  let arguments = (ins Variadic<F32>:$partials, I64:$lane, I64:$row,
                   Optional<I64>:$rank,
                   NfGpu_CombiningKindArrayAttr:$kinds,
                   I64Attr:$threads_per_row, I64Attr:$rows_per_cta,
                   I64Attr:$cluster_size, I64Attr:$slot,
                   UnitAttr:$cluster_wait);
  let results = (outs Variadic<F32>:$totals);
  let assemblyFormat = [{
    $kinds $partials `lane` $lane `row` $row (`rank` $rank^)? attr-dict
    `:` type($partials)
  }];
  let hasVerifier = 1;
}

def NfGpu_ClusterArriveOp : NfGpu_Op<"cluster_arrive"> {
  let summary = "tell the cluster's other CTAs that this one has started";
  let description = [{
    In a kernel whose rows span the CTAs of a cluster, a CTA may write into
    another's shared memory (`nfgpu.row_reduce` with `cluster_size` > 1)
    only once that CTA has started and initialized the mbarriers those
    writes count on. This op initializes them, one per slot of the
    cluster exchanges in the op's region, by the thread whose `thread`
    (its index in the CTA) is 0, and arrives (relaxed) on the cluster
    barrier; the first such exchange after it (`cluster_wait`) waits on
    that barrier. Placed before a row's loads, the start-up overlaps them.

    Example:

    ```mlir
    nfgpu.cluster_arrive %tid
    ```
  }];
  let arguments = (ins I32:$thread);
  let assemblyFormat = "$thread attr-dict";
}

def NfGpu_GroupReduceOp : NfGpu_Op<"group_reduce",
    [AllTypesMatch<["partial", "total"]>]> {
  let summary = "combine a partial value over the lanes that hold one group";
  let description = [{
    A group reduction (`nf.reduce ... group G`) whose G elements span L
    consecutive chunks, held by L consecutive lanes of one warp (`lanes` =
    L, a power of two from 2 to 32, the segment aligned to L lanes): each
    of those lanes passes its partial (f32), and each gets the
    combination (`kind`: `sum` or `max`) of the partials of its segment.
    Without a barrier or shared memory.

    Without `warp_lane`, every lane of the warp reaches the op (a
    vectorized variant masks a chunk past the row rather than skipping
    it). With `warp_lane` (the thread's lane in its warp, i32), only the
    segment's lanes are known to: a general variant skips a chunk past the
    row in a branch, so the op's member mask is the segment's lanes.

    `-nf-lower-row-reductions` lowers it to a butterfly of log2(L)
    `nvvm.shfl.sync bfly` steps whose member mask is the whole warp, or
    the segment's lanes computed from `warp_lane` (a mask ptxas cannot
    prove uniform costs a convergence loop around each shuffle, so a
    variant whose lanes all arrive leaves `warp_lane` out).

    Example:

    ```mlir
    %m = nfgpu.group_reduce <max> %partial lanes 8 : f32
    %s = nfgpu.group_reduce <sum> %partial lanes 4 warp_lane %lane : f32
    ```
  }];
  let arguments = (ins F32:$partial, Optional<I32>:$warp_lane,
                   NfGpu_CombiningKindAttr:$kind, I64Attr:$lanes);
  let results = (outs F32:$total);
  let assemblyFormat = [{
    $kind $partial `lanes` $lanes (`warp_lane` $warp_lane^)? attr-dict
    `:` type($partial)
  }];
  let hasVerifier = 1;
}

#endif // NF_GPU_OPS_TD
