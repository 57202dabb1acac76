//===- Passes.td - nf passes -------------------------------*- tablegen -*-===//
//
// Part of normfuse. Every pass of the compiler, in pipeline order.
//
//===----------------------------------------------------------------------===//

#ifndef NF_PASSES_TD
#define NF_PASSES_TD

include "mlir/Pass/PassBase.td"

def NfDecompose : Pass<"nf-decompose"> {
  let summary = "rewrite layer_norm, rms_norm and modulate into primitives";
  let description = [{
    Replaces each composite op by casts, reductions and elementwise ops that
    compute the same function, so that later passes and the interpreter see
    a small set of primitives. Composites compute in f32 and round once: the
    decomposition casts f16/bf16 operands to f32 (exact), computes in f32 and
    casts the result back. LayerNorm takes the variance as a second pass over
    the centred row, never as E[x^2] - E[x]^2.

    Before:
    ```mlir
    %y = nf.rms_norm %x weight %w eps 1.000000e-06 : !nf.row<f32>
    ```
    After:
    ```mlir
    %ms = nf.reduce mean_sq %x : !nf.row<f32>
    %eps = nf.constant 1.000000e-06 : f32
    %v = nf.add %ms, %eps : f32
    %rstd = nf.rsqrt %v : f32
    %n = nf.mul %x, %rstd : !nf.row<f32>, f32
    %y = nf.mul %n, %w : !nf.row<f32>
    ```
  }];
  let dependentDialects = ["::mlir::nf::NfDialect"];
}

def NfSpecializeDims : Pass<"nf-specialize-dims"> {
  let summary = "fix the dynamic row length D of every kernel";
  let description = [{
    Rewrites every dynamic dimension that a kernel's chains use as D (the
    last dimension of rows, `[D]` operands, ...) into the given static size,
    so that a file written for any D can be compiled for one hidden size
    without editing it. A static D that differs from the option is an error.

    Before (`-nf-specialize-dims=d=1536`):
    ```mlir
    nf.kernel @k(%x: tensor<?x?x?xf32>, %w: tensor<?xf32>) -> tensor<?x?x?xf32>
    ```
    After:
    ```mlir
    nf.kernel @k(%x: tensor<?x?x1536xf32>, %w: tensor<1536xf32>)
        -> tensor<?x?x1536xf32>
    ```
  }];
  let options = [
    Option<"rowLength", "d", "int64_t", /*default=*/"0",
           "the row length D to fix (0: leave D as it is)">,
  ];
  let dependentDialects = ["::mlir::nf::NfDialect"];
}

def NfSelectSchedule : Pass<"nf-select-schedule"> {
  let summary = "choose how each kernel's rows map onto threads, per row length";
  let description = [{
    Chooses threads per row, rows per CTA, the chunk (16 bytes of the
    narrowest row element type) and whether the row stays in registers, from
    D and the dtypes, and stores the choice on the kernel as `nf.schedules`,
    an array of `#nf.schedule`:

    - static D: one schedule, the fewest threads per row (a power of two, at
      most 512: a 1024-thread CTA leaves 64 registers per thread) that hold
      the row in at most `max-chunks` chunks per thread (by default 5 for
      a kernel that computes much per byte it moves, at least one reduction
      per two bytes of `[B, S, D]` traffic per element: quantizing kernels,
      LayerNorm, softmax; else 4; 5 for every kernel at 512 threads, before
      a row goes to a cluster), and at least the
      `G / chunk` lanes a group reduction of G elements spans; at least 16
      threads (or one per chunk), but 4 for 16-bit rows of at most 24
      chunks of a kernel of one `[B, S, D]` input and two or more
      reductions (no rotary embedding). A row of two
      or more reductions that 512 threads cannot hold, but 1024 threads hold
      in at most 16 elements each (f32 rows of 8193 to 16384), gets 1024
      threads; so does a row of one reduction over one `[B, S, D]` input
      (RMSNorm) that 1024 threads hold in at most 4 chunks each (bf16 rows
      of 20481 to 32768, f32 of 10241 to 16384). A kernel that reads one
      `[B, S, D]` tensor in whole
      16-byte copies per chunk, reduces it twice or more and loads no
      operand along the row (softmax) holds a row that 512 threads would
      hold in 32 or more elements each (16-bit rows of 12289 to 16384)
      `staged` in 256 threads instead: each copies its chunks into shared
      memory (at most 32 KB per CTA) and reads them back in each pass.
      Under 32 threads
      several rows share a warp (`multi_row`); 32 is one warp per row
      (`warp`); more is one CTA per row with a shared-memory step (`cta`).
      In a kernel of two 16-bit `[B, S, D]` inputs a warp holds at most 3
      chunks per lane (2 where the kernel writes a `[B, S, D]` result in
      place and has one reduction: fused add + RMSNorm); longer rows take
      64 threads (docs/Rationale.md, "Rows of two inputs in 64 threads").
      Where such a kernel writes a result in place, a row of 4 chunks per
      lane of 16 threads takes a warp.
    - dynamic D: a *family*, the schedule a static D would get for every
      distinct choice over the row lengths that registers hold (each
      serves rows up to its capacity), smallest first, then a `streaming`
      schedule of 1024 threads for longer rows (none for a kernel that
      writes a rotary result in place). `-nf-materialize-variants` turns
      the family into variants the runtime picks from at launch, so a
      kernel compiled without `--dim` runs every D with the schedule a
      specialization would have.
    - a row too long for one CTA's registers: with `max-cluster` > 1 (and
      no rotary embedding) a `cluster` schedule, the fewest CTAs (a power of
      two up to `max-cluster`) of 512 threads that hold the row in at most
      4 chunks per thread (or `max-chunks` when set), one row per cluster (a
      kernel with two or more reductions over the row: CTAs of at most 24
      elements per thread, which recompute from the narrow row between the
      reductions, and more than two CTAs only where it reads two or more
      `[B, S, D]` tensors, or no operand that broadcasts along the row, or
      one that a later reduction reads). A
      kernel that
      reads one `[B, S, D]` tensor (`nf.load`, no `select_load`) in
      chunks of whole 16-byte copies, has a reduction and whose later
      reductions read no operand along the row (RMSNorm, LayerNorm,
      softmax) gets a `staged` cluster instead: CTAs of
      256 threads holding twice the chunks in shared memory (asynchronous
      copies at the row's start, read back in each pass), at most 32 KB,
      and a pair of CTAs rather than four where a pair's shares fit;
      longer rows (and every long row with `max-cluster` = 1): `streaming`,
      1024 threads, the row read from memory once per reduction.

    Where a reduction reads another reduction's result and an operand along
    the row that the first reduction does not read (judged after
    `-nf-factor-row-scalars`' rewrite: layernorm_modulate_quant_fp8's row
    maximum), each one-row-per-CTA schedule that may be is made
    `persistent` (`persistent=auto`): its CTAs walk many rows of a batch
    entry, holding those operands in registers and copying the next row
    into shared memory meanwhile (docs/Rationale.md, "Persistent CTAs");
    there a row of 64 threads gets a CTA of its own (not two rows per CTA)
    where that makes it persistent, and rows of a warp or less keep sharing
    their CTA of 128 threads, each row group walking its own tokens; a row
    of 16 threads or fewer takes the fewest threads (at least 4) that hold
    it in at most `max-chunks` chunks while it stays persistent, and a
    one-CTA row whose threads would hold more operand registers than a
    persistent schedule may (seed #3's four f32 operands at four chunks)
    is spread over the fewest more threads (at most 512) that may be
    (64 x 4 -> 128 x 2, 128 x 4 -> 256 x 2, 256 x 4 -> 512 x 2), and a
    row of three chunks in 256 threads goes to 128 threads of six chunks
    where those may be persistent (layernorm_modulate_quant_fp8). In
    other kernels (rows of 64 threads or more only) of one 16-bit
    `[B, S, D]` input and two or more reductions, where measured faster:
    the 512 x 4 schedule (LayerNorm, rmsnorm_quant_fp8 at D =
    12289-16384); and where a later reduction
    reads an operand along the row (rmsnorm_quant_fp8's maximum), every
    schedule of 256 or 512 threads and four or five chunks. In kernels of
    two 16-bit `[B, S, D]` inputs and two or more reductions whose later one
    reads an operand along the row (fused_add_rmsnorm_quant_i8), the
    512-thread schedules of three to five chunks, where their slots fit
    (`max-persistent-stage-kb`). Every other one-row-per-CTA schedule of
    128 or 256 threads that may be persistent gets `short_launch_rows = 8`
    (`persistent=auto`): a persistent twin for launches of at most 8 rows
    per resident CTA, which one row per CTA leaves to a few SMs at their
    end; 16 in kernels with a `[B, S, D]` input that no reduction reads,
    whose rows load it after the exchange where a persistent CTA has
    copied it ahead (docs/Rationale.md, "Persistent CTAs for short
    launches").

    An option that forces a choice gives one schedule for a dynamic D too
    (streaming with 256 threads unless `threads-per-row` says otherwise),
    so every schedule can be tested at any D.

    ```mlir
    nf.kernel @k(...) attributes {nf.schedules = [
        #nf.schedule<threads_per_row = 64, rows_per_cta = 2, chunk = 8,
                     chunks_per_thread = 3>]}
    ```
  }];
  let options = [
    Option<"threadsPerRow", "threads-per-row", "int64_t", /*default=*/"0",
           "force the threads per row (a power of two; 0: choose)">,
    Option<"rowsPerCta", "rows-per-cta", "int64_t", /*default=*/"0",
           "force the rows per CTA (0: fill 128 threads)">,
    Option<"rowsPerThread", "rows-per-thread", "int64_t", /*default=*/"0",
           "rows each thread holds at once, their loads issued together "
           "(register-resident schedules; 1 to 8; 0: 2 for rows shorter "
           "than a warp, else 1)">,
    Option<"maxChunks", "max-chunks", "int64_t", /*default=*/"0",
           "most 16-byte chunks of a row a thread of a one-CTA row keeps in "
           "registers (0: 5 for a kernel of at least one reduction per two "
           "bytes of [B, S, D] traffic per element and for every 512-thread "
           "row, else 4)">,
    Option<"forceStreaming", "streaming", "bool", /*default=*/"false",
           "stream the row from memory even when D is static">,
    Option<"maxCluster", "max-cluster", "int64_t", /*default=*/"1",
           "most CTAs of a thread-block cluster that share a row too long "
           "for one CTA's registers (1, 2, 4 or 8; 1: none, the row is "
           "streamed; nf-compile sets 8 for sm_90 and newer)">,
    Option<"persistent", "persistent", "std::string", /*default=*/"\"auto\"",
           "which schedules walk many rows of a batch entry per CTA, holding "
           "the operands that do not depend on the row in registers: auto "
           "(those that may, mayPersist in Schedule.h, of kernels where a "
           "reduction waits on operands along the row; and, in kernels of "
           "one 16-bit [B, S, D] input and two reductions, 512 x 4 rows "
           "and, where a later reduction reads an operand along the "
           "row, rows of 256 or 512 threads and 4 or 5 chunks; in kernels of "
           "two such inputs whose later reduction reads such an operand, "
           "512-thread rows of 3 to 5 chunks; the others of 128 or 256 "
           "threads that may get a persistent twin for short launches), all "
           "(every one that may) or none">,
    Option<"maxPersistentStageKB", "max-persistent-stage-kb", "int64_t",
           /*default=*/"96",
           "most KB of shared memory a persistent CTA's two row slots may "
           "take (nf-compile sets 200 for sm_90 and sm_100, 96 otherwise)">,
    Option<"asyncCopy", "async-copy", "bool", /*default=*/"true",
           "the target has asynchronous copies (cp.async, sm_80 and newer): "
           "without them no schedule is staged or persistent">,
  ];
  let dependentDialects = ["::mlir::nf::NfDialect"];
}

def NfMaterializeVariants : Pass<"nf-materialize-variants"> {
  let summary = "turn each kernel's schedules into variants with guards";
  let description = [{
    Replaces `nf.schedules` by `nf.variants`, the list of `#nf.variant` the
    lowering emits as GPU functions and the runtime picks from at launch
    (the first whose guard holds). For each schedule:

    - a *vectorized* variant (16-byte loads and stores), unless D is static
      and not a multiple of the chunk or a rotary half is not whole chunks;
      its guard: row tensors and strides aligned to the accesses (16 bytes),
      D a multiple of the chunk, and D at most the schedule's capacity if it
      holds the row in registers; for a schedule with `short_launch_rows`
      = R, a persistent twin of it right before it, guarded as well by
      `max_rows_per_cta` = R times the CTA's rows (the runtime compares
      the launch's rows with the CTAs of the twin resident at once) and
      named with the number of the variant after it;
    - for a register-resident schedule, its 8-byte and 4-byte twins: half
      (a quarter of) the chunk, twice (four times) the chunks per thread,
      the same threads and capacity, for rows that are a multiple of half a
      chunk only (D = 100 in bf16) or of a quarter (D = 1030), at least two
      elements per access; the guard asks accesses of that width to be
      aligned. A static D gets only the widest twin that divides it (none
      where the whole chunk does), and none where a rotary half is not
      whole twin chunks. In kernels of two `[B, S, D]` inputs and one
      reduction, the 8-byte twin of a 16-bit schedule of two rows per
      thread holds one (measured faster there, docs/Rationale.md, "One row
      per thread in the 8-byte twins of short rows of two inputs");
    - for a register-resident schedule of 16 chunks or more per row (no
      cluster), a *peeled* variant: the same threads and chunks, for rows of
      any length whose `[B, S, D]` tensors all start at the same offset
      within a chunk (odd D, rows of a slice): each row's chunk grid is
      shifted by that offset, so its body takes 16-byte accesses and only
      its first and last chunk are masked; operands broadcast along the
      rows are loaded element by element, but those of 4 bytes or more per
      element from the aligned 16-byte granules that hold each chunk,
      shifted into place by selects. Its bound is the capacity less
      chunk - 1 (a row may start that far past an aligned address). Only in
      kernels with a `[B, S, D]` load, no rotary embedding or group
      reductions, and at most 2 bytes per element of operands broadcast
      along the rows loaded element by element (more measured slower than
      the general variant; granules measured faster for LayerNorm's `[D]`
      and the seeds' `[B, 1, D]` f32 operands); for a static D only where D
      is not a multiple of the chunk;
    - a `staged` schedule's twins, peeled and general variants hold the row
      in the registers of the schedule it was staged from (512 threads);
      where consecutive staged schedules come from the same one, only the
      last has them (bounded by its capacity), so no function is emitted
      twice;
    - a *general* variant (any alignment, one element per access) with the
      same threads: register-resident while a thread holds at most 8
      elements (or the kernel writes a rotary result in place, which needs
      the whole row; or, for a row of two or more reductions in CTAs of at
      most 256 threads without rotary embedding or groups, at most 32
      elements, each loaded predicated from an unclamped index), else
      streamed; streamed general variants of
      consecutive schedules with the same threads are one function. A
      schedule of more than 4 chunks per thread whose next schedule is a
      one-CTA register-resident one gets no streamed general variant: its
      misaligned rows and rows past its peeled bound take the next
      schedule's variants. In a
      kernel with group reductions its chunks stay of consecutive elements
      (loaded one by one), so that a group spans as few lanes as in the
      vectorized variant; vectorized variants whose chunks a group would
      span more than a warp or the row's threads with are left out.

    Variants are ordered by the longest row they serve (a peeled one by its
    schedule's capacity), vectorized first (the twins after their
    schedule's 16-byte variant), then peeled, then general; the last has no
    bound on D (except for in-place rotary kernels, whose longest rows the
    runtime refuses). Where the kernel writes a `[B, S, D]` result in place
    and a thread of a row of more than a warp holds 3 or more chunks, a
    schedule's peeled variant comes right after its 16-byte one, before its
    twins: such kernels ran faster
    on it than on the twins (docs/Rationale.md, "Peeled before twins where
    a result is written in place").

    Each variant also says how the lowering emits its rows where the
    schedule alone does not (`#nf.variant`'s flags; their measurements in
    docs/Rationale.md, "Decisions the variant carries"):

    - `joint_rows` in a vectorized variant of two or more rows per thread
      (not persistent, no rotary embedding) where each chain loads after
      its reductions a `[B, S, D]` input of 16-byte chunks (seed #2's x):
      the thread's rows share each exchange;
    - `l2_prefetch` (for a `chip` of sm_90 or newer) in the vectorized and
      peeled variants of a register-resident row of one CTA of 32 to 256
      threads, or of fewer threads with `joint_rows`, neither staged nor
      persistent, in a kernel with such an input: its chunks are
      prefetched into L2 before the first exchange;
    - `third_cta` in the vectorized variant of a LayerNorm-like 512 x 4 or
      512 x 5 row of 16-bit elements (one `[B, S, D]` input, two or more
      reductions, operands along the row that no later reduction reads,
      no select or rotary embedding; a `chip` holding three such CTAs per
      SM): the row is recomputed between reductions.

    `drop` lists GPU functions (`<kernel>_<variant>`) to leave out, for
    variants of a family (D dynamic) that hold rows in registers with 16-byte
    accesses (vectorized or peeled): the next variant of the family serves
    their rows.
    A short launch's twin may always be left out (the variant after it
    serves its launches), for a static D too.
    `nf-compile` drops a variant that ptxas spills even at one CTA per SM,
    unless it is persistent, not a short launch's twin, and spills at most
    8 bytes (stored, and loaded back; docs/Rationale.md);
    names of other variants are ignored.

    ```mlir
    nf.kernel @k(...) attributes {nf.variants = [
        #nf.variant<name = "v0_warp32x2", vectorized = true, max_d = 512,
          schedule = #nf.schedule<threads_per_row = 32, rows_per_cta = 4,
                                  chunk = 8, chunks_per_thread = 2>>,
        ...]}
    ```
  }];
  let options = [
    ListOption<"drop", "drop", "std::string",
               "GPU functions of register-resident vectorized variants of a "
               "family (D dynamic) to leave out">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "target SM (sm_80, sm_90a, ...): l2_prefetch needs sm_90 or "
           "newer, third_cta three CTAs of 512 threads per SM (every "
           "target but sm_75); empty: no L2 prefetch, 2048 threads per SM; "
           "a chip nf-compile does not list is an error">,
  ];
  let dependentDialects = ["::mlir::nf::NfDialect"];
}

def NfFactorRowScalars : Pass<"nf-factor-row-scalars"> {
  let summary = "take per-row scalar factors out of max-|x| reductions";
  let description = [{
    A quantizing kernel reduces `max |y|` of a normalized row `y = x * rstd
    * w` to find its scale, then multiplies `y` by `1 / scale`. As written,
    the maximum waits for `rstd`, the first reduction's result: the row is
    reduced twice, one exchange after the other. This pass rewrites
    `reduce max (abs p)`, where `p` is a product (nested `nf.mul`) of f32
    rows and per-row scalars whose scalars multiply to `s` and rows to `t`,
    into `|s| * reduce max (abs t)`, and every other use of `p` into
    `t * s`. Then, `(t * s1) * s2` and `(t * s1) / s2`, `t` a row, `s1` and
    `s2` per-row scalars and the inner product used once, become
    `t * (s1 * s2)` and `t * (s1 / s2)`. The lowering then reduces the
    row's sum of squares and `max |x * w|` in one exchange, and the
    epilogue multiplies each element once.

    nf-lower-to-gpu applies these rewrites (to a copy of the kernel) for the
    variants whose rows one CTA holds in registers, and lowers cluster and
    streamed variants from the kernel as written: there ptxas took 6 to 32
    registers more for the factored form (docs/Rationale.md). This pass
    applies them to every kernel, for lit tests and nf-opt pipelines.

    Rounding: products are reassociated, so an element may differ from the
    unfactored program's in its last f32 bits (the interpreter and the
    PyTorch fallback compute the unfactored program). The maximum is that
    of the row the kernel scales: rounding is monotonic, so
    `max |fl(t * s)| = fl(|s| * max |t|)`. Where `s` is infinite and `t`
    has both zero and nonzero elements, the maximum is infinite where the
    unfactored one is NaN; and a product or quotient of per-row scalars
    beyond the f32 range is infinite even where the row's elements times
    them one after the other would not be.

    Before:
    ```mlir
    %n = nf.mul %x, %rstd : !nf.row<f32>, f32
    %y = nf.mul %n, %w : !nf.row<f32>
    %a = nf.abs %y : !nf.row<f32>
    %amax = nf.reduce max %a : !nf.row<f32>
    %q = nf.div %y, %scale : !nf.row<f32>, f32
    ```
    After:
    ```mlir
    %t = nf.mul %x, %w : !nf.row<f32>
    %a = nf.abs %t : !nf.row<f32>
    %m = nf.reduce max %a : !nf.row<f32>
    %r = nf.abs %rstd : f32
    %amax = nf.mul %m, %r : f32
    %k = nf.div %rstd, %scale : f32
    %q = nf.mul %t, %k : !nf.row<f32>, f32
    ```
  }];
  let dependentDialects = ["::mlir::nf::NfDialect"];
}

def NfLowerToGPU : Pass<"nf-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "lower each scheduled nf.kernel to GPU kernels";
  let description = [{
    Turns every variant (`nf.variants`) of every decomposed `nf.kernel`
    into a `gpu.func @<kernel>_<variant>` in one `gpu.module @nf_kernels`:
    a vectorized variant uses vector loads and stores of its chunk (16
    bytes of the narrowest type, 8 or 4 for a twin; aligned bases, row strides
    and D multiples of the chunk), a general one element accesses (any
    alignment, any D). The runtime picks one at
    launch. Parameters follow passes/KernelABI.h; all variants of a kernel
    take the same.

    Each CTA runs `rows_per_cta` rows of one chain (chains own disjoint CTA
    ranges, so barriers stay uniform). A thread owns chunks `lane`,
    `lane + T`, ... of its row. Reductions accumulate in f32: a partial per
    thread, combined with the row's other threads (and CTAs) by one
    `nfgpu.row_reduce` (lowered by `-nf-lower-row-reductions`);
    consecutive reductions none of which reads another's result share that
    exchange (one op of several values). A thread that holds two rows
    (`rows_per_thread` = 2) issues both rows' `[B, S, D]` loads first; in a
    variant with `joint_rows` the rows also share each exchange (their
    shuffles alternate) before each stores in turn, elsewhere each row
    reduces and stores in turn. In a streamed row, a softmax's
    maximum and sum of `exp(x - max)` take one pass over the row and one
    exchange (`exp_sum`: each thread's running maximum and sum). In a
    register-resident row, an
    output that depends on no reduction (fused add + RMSNorm's residual
    stream) is stored before the first exchange, after the loads it needs
    of every chunk; a tensor it overwrites in place is then never loaded
    again in that row. Written in place in a row of a warp or less, it is
    stored after the exchange instead. A `[B, S, D]` input that no
    reduction reads is loaded after the last exchange; in a variant with
    `l2_prefetch` its chunks are prefetched into L2 (`nvvm.prefetch`)
    after the row's own loads, before the first exchange (an error for a
    `chip` below sm_90, and when empty). A variant with `third_cta`
    recomputes its row between reductions. LayerNorm's two
    reductions run as two passes over the register-resident row (a
    `streaming` row is re-read per pass; the streamed general variant of a
    row with one reduction takes 8 elements per thread and iteration, from
    unclamped indices except in the last iteration, and with three or more
    loads per element issues them all before the iteration's first store,
    up to 64 loaded values in CTAs of at most 256 threads, 32 in larger
    ones). A `staged` row reads its chunks back from shared memory in
    every pass and keeps across an exchange only the f32 results of
    transcendentals, while a thread holds at most 32 (softmax's
    exponentials). `exp` is `ex2.approx.ftz` of `x * log2(e)`; `rsqrt` is
    `rsqrt.approx` refined by one Newton step.
    Modulation operands are loaded per row; `select_load` loads only the
    chosen operand; a rotary partner in another lane of the warp is
    exchanged with `gpu.shuffle xor`, otherwise it is recomputed from its
    own inputs. A rotary row written in place is computed whole before it
    is stored, with a `gpu.barrier` in between only where a partner is
    recomputed from memory (another thread may store it first).
    A group reduction is reduced per chunk:
    in the thread, then across the group's lanes by an
    `nfgpu.group_reduce` (at most 32 lanes and the row's threads; a larger
    group is an error), which takes the thread's lane in its warp where
    the other lanes of the warp may not reach it (general variants).

    ```mlir
    gpu.module @nf_kernels {
      gpu.func @rms_v0_multi_row16x1(%x: !llvm.ptr<1>, ...) kernel
          attributes {known_block_size = array<i32: 64, 4, 1>} { ... }
    }
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "target SM (sm_80, sm_90a, ...): casts to fp8 use "
           "cvt.rn.satfinite from sm_90 on, the same rounding in integer "
           "arithmetic before (and when empty); a variant's l2_prefetch "
           "needs sm_90 or newer; a chip nf-compile does not list is an "
           "error">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nfgpu::NfGpuDialect"
  ];
}

def NfLowerRowReductions : Pass<"nf-lower-row-reductions",
                                "::mlir::ModuleOp"> {
  let summary = "lower the row exchanges of the GPU level and allocate "
                "their shared memory";
  let description = [{
    Rewrites each `nfgpu.row_reduce` of a `gpu.func` into the exchange it
    stands for: a butterfly of `gpu.shuffle xor` among the row's lanes of a
    warp (the values of one op step together); with more than 32 threads
    per row, lane 0 of each warp stores its values into a workgroup buffer,
    one `gpu.barrier`, and every thread combines the warps' values in
    order; in a cluster, thread 0 of each CTA sends the CTA's value to
    every CTA of the cluster (`nvvm.mapa`, `st.async` counted on that CTA's
    mbarrier of the slot) and every thread waits on its own mbarrier and
    combines the N values in rank order. `nfgpu.cluster_arrive` becomes the
    initialization of the mbarriers of the exchanges in its region (by
    thread 0, predicated inside the PTX), `fence.mbarrier_init` and a
    relaxed cluster arrive; the exchange marked `cluster_wait` waits on the
    cluster barrier before its first write into another CTA. An `exp_sum`
    value is combined with the maximum before it (`s_a e^(m_a - M) + s_b
    e^(m_b - M)`, on `ex2.approx.ftz`), so at each step all of the op's values
    are exchanged before any is combined.
    Each `nfgpu.group_reduce` becomes a butterfly of `nvvm.shfl.sync bfly`
    over its lanes (clamp 31), whose member mask is the whole warp, or,
    where the op has the thread's lane in its warp, the group's lanes
    (`(1 << lanes) - 1` shifted to the group's first lane).

    The pass allocates what the exchanges use, from their slots: a
    workgroup attribution of `slots * rows_per_cta * warps` f32 (16-byte
    aligned, read back 16 bytes at a time), and in a cluster the globals
    `@<func>_cluster` (`slots * cluster_size` f32) and
    `@<func>_cluster_mbar` (`slots` mbarriers) in shared memory. All
    exchanges of one function must map rows onto threads alike.

    ```mlir
    %t = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
        {threads_per_row = 64 : i64, rows_per_cta = 2 : i64,
         cluster_size = 1 : i64, slot = 0 : i64} : f32
    // becomes
    %s0 = gpu.shuffle xor %p, %c16_i32, %c32_i32 : f32
    ...
    scf.if %lane_is_0 { memref.store %v, %wg[%i] : memref<4xf32, #gpu.address_space<workgroup>> }
    gpu.barrier
    ```
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::math::MathDialect"
  ];
}

def NfAllowContraction : Pass<"nf-allow-contraction", "::mlir::ModuleOp"> {
  let summary = "let f32 multiplies and adds of the kernels fuse into FMA";
  let description = [{
    Marks every `arith.mulf`, `arith.addf` and `arith.subf` of the GPU
    functions of register-resident variants with `fastmath<contract>`, so
    that LLVM may fuse a multiply and the add or subtraction that consumes
    it into one `fma.rn.f32` (the product is then not rounded on its own). Without the flag the NVPTX
    backend emits `mul.rn.f32` and `add.rn.f32`, which ptxas may not fuse
    either. Contraction is what nvcc (`--fmad=true`) and Triton do by
    default; normalization chains are made of such pairs (`x * rstd * w + b`,
    `n * (1 + scale) + shift`, `x * cos - y * sin`), and on the kernels that
    are issue-bound (quantizing, modulated LayerNorm) each saved instruction
    counts. Nothing else changes rounding: divisions, square roots,
    reciprocals and conversions keep theirs. Functions of streamed
    schedules (`nf.variants` of the kernels name them) are left alone:
    contracted, ptxas gave their chunk loops more registers (32 -> 54 for
    the modulated LayerNorm + fp8 kernel) and the SM one CTA of 1024 threads
    instead of two, 8 to 20 points slower at D = 24576 and 32768 (H200,
    docs/benchmarks.md "Fused multiply-add"). The interpreter and the
    PyTorch fallback round every operation, so results may differ from them
    in the last bit of an f32 intermediate.

    Before:
    ```mlir
    %p = arith.mulf %x, %w : vector<8xf32>
    %y = arith.addf %p, %b : vector<8xf32>
    ```
    After:
    ```mlir
    %p = arith.mulf %x, %w fastmath<contract> : vector<8xf32>
    %y = arith.addf %p, %b fastmath<contract> : vector<8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // NF_PASSES_TD
