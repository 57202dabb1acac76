// Schedules become variants with guards.
// RUN: nf-opt %s -split-input-file -nf-materialize-variants -verify-diagnostics | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-materialize-variants="drop=family_v4_warp32x4,family_p7_warp32x4,family_g8_streaming32,static128_v0_multi_row16x1" -verify-diagnostics | FileCheck %s --check-prefix=DROP

// One register-resident schedule (static D): a vectorized variant guarded
// by its capacity (16 threads x 1 chunk x 8), and the general one with the
// same threads, one element per access (8 elements per thread: still in
// registers). The schedules are replaced. The vectorized variant's two rows
// per thread go through their phases together (joint_rows: its row is read
// by no reduction; nf-materialize-variants-flags.mlir tests the flags).
// CHECK-LABEL: nf.kernel @static128
// CHECK-SAME: nf.variants = [
// CHECK-SAME: #nf.variant<name = "v0_multi_row16x1", vectorized = true, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>, joint_rows = true>,
// CHECK-SAME: #nf.variant<name = "g1_multi_row16x8", vectorized = false, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 1, chunks_per_thread = 8, rows_per_thread = 2>>]
// CHECK-NOT: nf.schedules
nf.kernel @static128(%x: tensor<?x?x128xbf16>) -> tensor<?x?x128xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]} {
  %r = nf.load %x [B, S, D] : tensor<?x?x128xbf16>
  nf.return %r : !nf.row<bf16>
}

// -----

// A static D that is a multiple of half the chunk only (100 bf16 elements):
// the vectorized variant takes 8-byte accesses, twice the chunks per thread
// for the same threads and capacity. D is not a multiple of the chunk, so a
// peeled variant serves rows that start off 8-byte alignment (its bound:
// the capacity less 7, a row starting 7 elements past an aligned address).
// CHECK-LABEL: nf.kernel @static100
// CHECK-SAME: nf.variants = [#nf.variant<name = "v0_multi_row16x2", vectorized = true, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 4, chunks_per_thread = 2, rows_per_thread = 2>>,
// CHECK-SAME: #nf.variant<name = "p1_multi_row16x1", vectorized = false, max_d = 121, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>, peeled = true>,
// CHECK-SAME: #nf.variant<name = "g2_multi_row16x8", vectorized = false, max_d = 128,
nf.kernel @static100(%x: tensor<?x?x100xbf16>) -> tensor<?x?x100xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]} {
  %r = nf.load %x [B, S, D] : tensor<?x?x100xbf16>
  nf.return %r : !nf.row<bf16>
}

// -----

// A static D that is even only (102 bf16 elements): 4-byte accesses of 2
// elements, four times the chunks per thread.
// CHECK-LABEL: nf.kernel @static102
// CHECK-SAME: nf.variants = [#nf.variant<name = "v0_multi_row16x4", vectorized = true, max_d = 128, schedule = <threads_per_row = 16, rows_per_cta = 8, chunk = 2, chunks_per_thread = 4, rows_per_thread = 2>>,
// CHECK-SAME: #nf.variant<name = "p1_multi_row16x1", vectorized = false, max_d = 121,
// CHECK-SAME: #nf.variant<name = "g2_multi_row16x8", vectorized = false, max_d = 128,
nf.kernel @static102(%x: tensor<?x?x102xbf16>) -> tensor<?x?x102xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]} {
  %r = nf.load %x [B, S, D] : tensor<?x?x102xbf16>
  nf.return %r : !nf.row<bf16>
}

// -----

// A family (D dynamic): each schedule's vectorized variant, then, for a
// register-resident one, its 8-byte twin (half the chunk, twice the chunks:
// rows whose length is a multiple of 4 but not 8) and its 4-byte twin (a
// quarter of the chunk: even rows); general variants stream where a thread
// would hold more than 8 elements, and the streamed general variants of
// consecutive schedules with the same threads are one function serving both
// (max_d of the later). A register-resident schedule also has a peeled
// variant (rows of any length whose tensors share their offset within a
// chunk; max_d its capacity less chunk - 1). Ordered by the longest row
// served (a peeled variant by its schedule's capacity), vectorized first,
// wider accesses before narrower, then peeled, then general; the last has
// no bound.
// CHECK-LABEL: nf.kernel @family
// CHECK-SAME: #nf.variant<name = "v0_warp32x3", vectorized = true, max_d = 768, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 3>>,
// CHECK-SAME: #nf.variant<name = "v1_warp32x6", vectorized = true, max_d = 768, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 4, chunks_per_thread = 6>>,
// CHECK-SAME: #nf.variant<name = "v2_warp32x12", vectorized = true, max_d = 768, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 2, chunks_per_thread = 12>>,
// CHECK-SAME: #nf.variant<name = "p3_warp32x3", vectorized = false, max_d = 761, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 3>, peeled = true>,
// CHECK-SAME: #nf.variant<name = "v4_warp32x4", vectorized = true, max_d = 1024,
// CHECK-SAME: #nf.variant<name = "v5_warp32x8", vectorized = true, max_d = 1024,
// CHECK-SAME: #nf.variant<name = "v6_warp32x16", vectorized = true, max_d = 1024,
// CHECK-SAME: #nf.variant<name = "p7_warp32x4", vectorized = false, max_d = 1017, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>, peeled = true>,
// CHECK-SAME: #nf.variant<name = "g8_streaming32", vectorized = false, max_d = 1024, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 1, chunks_per_thread = 0>>,
// CHECK-SAME: #nf.variant<name = "v9_streaming1024", vectorized = true, max_d = 0, schedule = <threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>>,
// CHECK-SAME: #nf.variant<name = "g10_streaming1024", vectorized = false, max_d = 0, schedule = <threads_per_row = 1024, rows_per_cta = 1, chunk = 1, chunks_per_thread = 0>>]
// nf-compile drops a family's register-resident vectorized variant that
// ptxas spills: the next one serves its rows; the others keep their names.
// General variants and variants of a static D are never dropped.
// DROP-LABEL: nf.kernel @static128
// DROP-SAME: name = "v0_multi_row16x1"
// DROP-LABEL: nf.kernel @family
// DROP-SAME: nf.variants = [#nf.variant<name = "v0_warp32x3", {{.*}}>, #nf.variant<name = "v1_warp32x6", {{.*}}>, #nf.variant<name = "v2_warp32x12", {{.*}}>, #nf.variant<name = "p3_warp32x3", {{.*}}>, #nf.variant<name = "v5_warp32x8", {{.*}}>, #nf.variant<name = "v6_warp32x16", {{.*}}>, #nf.variant<name = "g8_streaming32", {{.*}}>, #nf.variant<name = "v9_streaming1024", {{.*}}>, #nf.variant<name = "g10_streaming1024", {{.*}}>]}
nf.kernel @family(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [
      #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 3>,
      #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>,
      #nf.schedule<threads_per_row = 1024, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]} {
  %r = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  nf.return %r : !nf.row<bf16>
}

// -----

// An in-place rotary result needs the whole row before any store: its
// general variant stays in registers however long the row, and a
// streamed schedule is refused.
// CHECK-LABEL: nf.kernel @rope_inplace
// CHECK-SAME: #nf.variant<name = "g1_warp32x16", vectorized = false, max_d = 512, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 1, chunks_per_thread = 16>>
nf.kernel @rope_inplace(%q: tensor<?x?x512xbf16>, %cos_sin: tensor<?x128xf32>,
                        %positions: tensor<?xi64>)
    -> (tensor<?x?x512xbf16> {nf.in_place = 0 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2>]} {
  %qb = nf.load %q [B, S, D] : tensor<?x?x512xbf16>
  %qf = nf.cast %qb : !nf.row<bf16> to !nf.row<f32>
  %qr = nf.rope neox %qf, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %qo = nf.cast %qr : !nf.row<f32> to !nf.row<bf16>
  nf.return %qo : !nf.row<bf16>
}

// -----

// expected-error@+1 {{writes in place and applies rotary embedding, which needs a register-resident schedule}}
nf.kernel @rope_streamed(%q: tensor<?x?x?xbf16>, %cos_sin: tensor<?x128xf32>,
                         %positions: tensor<?xi64>)
    -> (tensor<?x?x?xbf16> {nf.in_place = 0 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>]} {
  %qb = nf.load %q [B, S, D] : tensor<?x?x?xbf16>
  %qf = nf.cast %qb : !nf.row<bf16> to !nf.row<f32>
  %qr = nf.rope neox %qf, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %qo = nf.cast %qr : !nf.row<f32> to !nf.row<bf16>
  nf.return %qo : !nf.row<bf16>
}

// -----

// expected-error@+1 {{schedule holds 256 elements per row, fewer than D = 512}}
nf.kernel @too_small(%x: tensor<?x?x512xbf16>) -> tensor<?x?x512xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 1>]} {
  %r = nf.load %x [B, S, D] : tensor<?x?x512xbf16>
  nf.return %r : !nf.row<bf16>
}

// -----

// expected-error@+1 {{needs a non-empty nf.schedules array of #nf.schedule; run -nf-select-schedule first}}
nf.kernel @unscheduled(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %r = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  nf.return %r : !nf.row<bf16>
}

// -----

// Two reductions over the row (softmax): a general variant of at most 256
// threads keeps up to 32 elements per thread in registers (loaded
// predicated, see nf-lower-to-gpu-general.mlir) instead of streaming the
// row once per reduction; 512 threads still stream.
// CHECK-LABEL: nf.kernel @two_reductions_general
// CHECK-SAME: #nf.variant<name = "g4_cta256x32", vectorized = false, max_d = 8192, schedule = <threads_per_row = 256, rows_per_cta = 1, chunk = 1, chunks_per_thread = 32>>
// CHECK-SAME: #nf.variant<name = "g9_streaming512", vectorized = false, max_d = 16384, schedule = <threads_per_row = 512, rows_per_cta = 1, chunk = 1, chunks_per_thread = 0>>
nf.kernel @two_reductions_general(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>, #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %m = nf.reduce max %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %e = nf.exp %c : !nf.row<f32>
  %s = nf.reduce sum %e : !nf.row<f32>
  %y = nf.div %e, %s : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// No peeled variant where the operands broadcast along the rows that are
// loaded element by element (narrower than 4 bytes) take more than 2 bytes
// per element, nor for a static D that is a multiple of the chunk (its
// rows start aligned when their tensors do). Operands of 4 bytes or more
// are loaded in aligned granules, whatever their broadcast: an f32 weight
// and bias [D] (LayerNorm's) and an f32 [B, 1, D] gate (the seeds'),
// peeled.
// CHECK-LABEL: nf.kernel @wide_broadcast
// CHECK-SAME: #nf.variant<name = "p3_warp32x4", vectorized = false, max_d = 1017, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>, peeled = true>
// CHECK: nf.kernel @wide_gate
// CHECK-SAME: #nf.variant<name = "p3_warp32x4", vectorized = false, max_d = 1017, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>, peeled = true>
// CHECK: nf.kernel @two_narrow
// CHECK-NOT: peeled
// CHECK: nf.kernel @static_aligned
// CHECK-NOT: peeled
// CHECK: nf.kernel @narrow_broadcast
// CHECK-SAME: #nf.variant<name = "p3_warp32x4", vectorized = false, max_d = 1017, schedule = <threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>, peeled = true>
nf.kernel @wide_broadcast(%x: tensor<?x?x?xbf16>, %w: tensor<?xf32>,
                          %b: tensor<?xf32>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.load %w [D] : tensor<?xf32>
  %bf = nf.load %b [D] : tensor<?xf32>
  %m = nf.mul %xf, %wf : !nf.row<f32>, !nf.row<f32>
  %a = nf.add %m, %bf : !nf.row<f32>, !nf.row<f32>
  %y = nf.cast %a : !nf.row<f32> to !nf.row<bf16>
  nf.return %y : !nf.row<bf16>
}
nf.kernel @wide_gate(%x: tensor<?x?x?xbf16>, %g: tensor<?x1x?xf32>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %gf = nf.load %g [B, 1, D] : tensor<?x1x?xf32>
  %m = nf.mul %xf, %gf : !nf.row<f32>, !nf.row<f32>
  %y = nf.cast %m : !nf.row<f32> to !nf.row<bf16>
  nf.return %y : !nf.row<bf16>
}
nf.kernel @two_narrow(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>,
                      %b: tensor<?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %bb = nf.load %b [D] : tensor<?xbf16>
  %m = nf.mul %xb, %wb : !nf.row<bf16>, !nf.row<bf16>
  %a = nf.add %m, %bb : !nf.row<bf16>, !nf.row<bf16>
  nf.return %a : !nf.row<bf16>
}
nf.kernel @static_aligned(%x: tensor<?x?x1024xbf16>) -> tensor<?x?x1024xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>]} {
  %r = nf.load %x [B, S, D] : tensor<?x?x1024xbf16>
  nf.return %r : !nf.row<bf16>
}
nf.kernel @narrow_broadcast(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %y = nf.mul %xb, %wb : !nf.row<bf16>, !nf.row<bf16>
  nf.return %y : !nf.row<bf16>
}
