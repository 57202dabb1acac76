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
  let summary = "choose how each kernel's rows map onto threads";
  let description = [{
    Chooses threads per row, rows per CTA, the chunk (16 bytes of the
    narrowest row element type) and whether the row stays in registers, from
    D and the dtypes, and stores the choice on the kernel as `nf.schedule`:

    - static D: the fewest threads per row (a power of two, at most 512: a
      1024-thread CTA leaves 64 registers per thread) that hold the row
      in at most `max-chunks` chunks per thread. Under 32 threads several
      rows share a warp (`multi_row`); 32 is one warp per row (`warp`); more
      is one CTA per row with a shared-memory step (`cta`).
    - static D too long for 512 threads' registers, with `max-cluster` > 1
      (an option, sm_90 and newer; measured slower than streaming):
      `cluster`, the row shared by
      the fewest CTAs of a thread-block cluster (2, 4 or 8) that hold it in
      registers, reductions combined through distributed shared memory.
    - dynamic D, or a row too long for registers: `streaming`, 256 threads
      per row for a dynamic D and 1024 for a static one, the row read from
      memory once per reduction; with `stage-rows` (an option, measured no
      faster as it stands) `staged`: the vectorized variant copies the
      row's `[B, S, D]` tensors that feed a reduction into dynamic shared
      memory once and reads them from there, when the launch provides
      `rows_per_cta * D * <their bytes per element>` bytes of it (else it
      streams).

    Options force each choice, so every schedule can be tested at any D.

    ```mlir
    nf.kernel @k(...) attributes {nf.schedule = {chunk = 8 : i64,
        chunks_per_thread = 3 : i64, kind = "cta", rows_per_cta = 4 : i64,
        threads_per_row = 64 : i64}}
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
    Option<"asyncCopy", "async-copy", "bool", /*default=*/"false",
           "take a thread group's rows one after the other, copying the "
           "next row into shared memory with cp.async (register-resident "
           "schedules, sm_80+; rows-per-thread defaults to 4)">,
    Option<"maxChunks", "max-chunks", "int64_t", /*default=*/"4",
           "most 16-byte chunks of a row a thread keeps in registers">,
    Option<"forceStreaming", "streaming", "bool", /*default=*/"false",
           "stream the row from memory even when D is static">,
    Option<"maxCluster", "max-cluster", "int64_t", /*default=*/"1",
           "most CTAs of a thread-block cluster that may share a row too "
           "long for one CTA's registers (sm_90+; 2, 4 or 8; 1: none, the "
           "row is streamed)">,
    Option<"stageRows", "stage-rows", "bool", /*default=*/"false",
           "streaming schedules: stage the row in dynamic shared memory "
           "with cp.async (sm_80+) when the launch provides it">,
  ];
  let dependentDialects = ["::mlir::nf::NfDialect"];
}

def NfLowerToGPU : Pass<"nf-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "lower each scheduled nf.kernel to GPU kernels";
  let description = [{
    Turns every decomposed, scheduled `nf.kernel` into two `gpu.func`
    kernels in one `gpu.module @nf_kernels`: `@<name>` uses 16-byte vector
    loads and stores and needs 16-byte aligned bases, row strides that are
    multiples of the chunk and D a multiple of the chunk; `@<name>_general`
    takes any alignment and any D with element accesses. The runtime picks
    one at launch. Parameters follow passes/KernelABI.h.

    Each CTA runs `rows_per_cta` rows of one chain (chains own disjoint CTA
    ranges, so barriers stay uniform). A thread owns chunks `lane`,
    `lane + T`, ... of its row. Reductions accumulate in f32: a partial per
    thread, a butterfly of `gpu.shuffle xor` inside the row's lanes, then a
    shared-memory step across the warps of a CTA row, and for a `cluster`
    schedule a step across the cluster's CTAs through distributed shared
    memory. LayerNorm's two reductions run as two passes over the
    register-resident row (a `streaming` row is re-read per pass; a `staged`
    one is copied into dynamic shared memory with `cp.async` first, when the
    launch provides it). Modulation operands are loaded per row;
    `select_load` loads only the chosen operand; a rotary partner in another
    lane of the warp is exchanged with `gpu.shuffle xor`, otherwise it is
    recomputed from its own inputs.

    ```mlir
    gpu.module @nf_kernels {
      gpu.func @rms(%x: !llvm.ptr<1>, ...) kernel
          attributes {known_block_size = array<i32: 64, 4, 1>} { ... }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect"
  ];
}

#endif // NF_PASSES_TD
