// RUN: nf-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the nf dialect (NfOps.td, NfOps.cpp,
// NfDialect.cpp), in the order the rules appear there.

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

nf.kernel @row_of_int(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{row element type must be f32, f16, bf16, f8E4M3FN, f8E5M2 or i8, found 'i32'}}
  %1 = nf.cast %0 : !nf.row<f32> to !nf.row<i32>
  nf.return %0 : !nf.row<f32>
}

// -----

//===----------------------------------------------------------------------===//
// Attributes: #nf.schedule and #nf.variant
//===----------------------------------------------------------------------===//

// expected-error@+1 {{threads_per_row must be a power of two <= 1024, found 48}}
module attributes {s = #nf.schedule<threads_per_row = 48, rows_per_cta = 1, chunk = 8, chunks_per_thread = 1>} {}

// -----

// expected-error@+1 {{a CTA of threads_per_row * rows_per_cta = 512 * 4 threads exceeds 1024}}
module attributes {s = #nf.schedule<threads_per_row = 512, rows_per_cta = 4, chunk = 8, chunks_per_thread = 1>} {}

// -----

// expected-error@+1 {{chunk must be a power of two <= 16, found 6}}
module attributes {s = #nf.schedule<threads_per_row = 32, rows_per_cta = 1, chunk = 6, chunks_per_thread = 1>} {}

// -----

// expected-error@+1 {{chunks_per_thread must be >= 0 (0: streamed), found -1}}
module attributes {s = #nf.schedule<threads_per_row = 32, rows_per_cta = 1, chunk = 8, chunks_per_thread = -1>} {}

// -----

// expected-error@+1 {{rows_per_thread must be 1 to 8, found 9}}
module attributes {s = #nf.schedule<threads_per_row = 32, rows_per_cta = 1, chunk = 8, chunks_per_thread = 1, rows_per_thread = 9>} {}

// -----

// The parameters of removed schedules (staged rows) are unknown.
// expected-error@+1 {{duplicate or unknown struct parameter name: stage_rows}}
module attributes {s = #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, stage_rows = 1>} {}

// -----

// expected-error@+1 {{cluster_size must be 1, 2, 4 or 8, found 3}}
module attributes {s = #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, cluster_size = 3>} {}

// -----

// expected-error@+1 {{a cluster schedule (cluster_size = 2) holds one register-resident row per CTA: it needs chunks_per_thread > 0 and rows_per_cta = rows_per_thread = 1}}
module attributes {s = #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0, cluster_size = 2>} {}

// -----

// expected-error@+1 {{a cluster schedule (cluster_size = 2) holds one register-resident row per CTA}}
module attributes {s = #nf.schedule<threads_per_row = 256, rows_per_cta = 2, chunk = 8, chunks_per_thread = 4, cluster_size = 2>} {}

// -----

// expected-error@+1 {{a staged schedule holds one row per CTA in shared memory: it needs chunks_per_thread > 0 and rows_per_cta = rows_per_thread = 1}}
module attributes {s = #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0, staged = true>} {}

// -----

// expected-error@+1 {{a staged schedule holds one row per CTA in shared memory}}
module attributes {s = #nf.schedule<threads_per_row = 128, rows_per_cta = 2, chunk = 8, chunks_per_thread = 8, staged = true>} {}

// -----

// expected-error@+1 {{a persistent schedule walks one register-resident row per row group at a time: it needs chunks_per_thread > 0, rows_per_thread = cluster_size = 1, no staged, and rows_per_cta = 1 for rows of more than 32 threads}}
module attributes {s = #nf.schedule<threads_per_row = 128, rows_per_cta = 2, chunk = 8, chunks_per_thread = 4, persistent = true>} {}

// -----

// expected-error@+1 {{a persistent schedule walks one register-resident row per row group at a time}}
module attributes {s = #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 4, rows_per_thread = 2, persistent = true>} {}

// -----

// expected-error@+1 {{a persistent schedule walks one register-resident row per row group at a time}}
module attributes {s = #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0, persistent = true>} {}

// -----

// expected-error@+1 {{short_launch_rows must be >= 0 (0: no persistent twin), found -8}}
module attributes {s = #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, short_launch_rows = -8>} {}

// -----

// expected-error@+1 {{short_launch_rows gives a schedule that is not persistent a persistent twin: it needs persistent = false and a schedule that could be persistent}}
module attributes {s = #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true, short_launch_rows = 8>} {}

// -----

// expected-error@+1 {{short_launch_rows gives a schedule that is not persistent a persistent twin}}
module attributes {s = #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0, short_launch_rows = 8>} {}

// -----

// expected-error@+1 {{max_rows_per_cta must be >= 0 (0: any launch), found -1}}
module attributes {v = #nf.variant<name = "v", vectorized = true, max_d = 4096, schedule = #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, max_rows_per_cta = -1>} {}

// -----

// expected-error@+1 {{variant 'v' has max_rows_per_cta, which only a vectorized variant of a persistent schedule may have (its CTAs walk the rows)}}
module attributes {v = #nf.variant<name = "v", vectorized = true, max_d = 4096, schedule = #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>, max_rows_per_cta = 8>} {}

// -----

// expected-error@+1 {{variant 'v' has max_rows_per_cta}}
module attributes {v = #nf.variant<name = "v", vectorized = false, max_d = 4096, schedule = #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, max_rows_per_cta = 8>} {}

// -----

// The lowering flags, each where the rows it is about are in registers.
// expected-error@+1 {{variant 'g' has l2_prefetch, which only a vectorized or peeled variant of a register-resident schedule without a cluster may have, not a vectorized variant of a staged or persistent one}}
module attributes {v = #nf.variant<name = "g", vectorized = false, max_d = 0, schedule = #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 1, chunks_per_thread = 0>, l2_prefetch = true>} {}

// -----

// expected-error@+1 {{variant 'v' has l2_prefetch}}
module attributes {v = #nf.variant<name = "v", vectorized = true, max_d = 4096, schedule = #nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>, l2_prefetch = true>} {}

// -----

// expected-error@+1 {{variant 'v' has joint_rows, which only a vectorized variant of a register-resident schedule of two or more rows per thread, not persistent, may have}}
module attributes {v = #nf.variant<name = "v", vectorized = true, max_d = 128, schedule = #nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1>, joint_rows = true>} {}

// -----

// expected-error@+1 {{variant 'v' has third_cta, which only a vectorized variant of a register-resident schedule of 512 threads and one row per thread, neither staged nor in a cluster, may have}}
module attributes {v = #nf.variant<name = "v", vectorized = true, max_d = 8192, schedule = #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>, third_cta = true>} {}

// -----

// expected-error@+1 {{variant name must be letters, digits and '_', found 'a-b'}}
module attributes {v = #nf.variant<name = "a-b", vectorized = true, max_d = 0, schedule = #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>>} {}

// -----

// expected-error@+1 {{max_d must be >= 0 (0: any D), found -1}}
module attributes {v = #nf.variant<name = "v", vectorized = true, max_d = -1, schedule = #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>>} {}

// -----

// A register-resident variant is wrong past its capacity, so it must say
// how far it goes: 32 threads x 2 chunks x 8 elements.
// expected-error@+1 {{variant 'v' keeps rows in registers, at most 512 elements, so max_d must be 1 to 512, found 0}}
module attributes {v = #nf.variant<name = "v", vectorized = true, max_d = 0, schedule = #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2>>} {}

// -----

// expected-error@+1 {{variant 'v' keeps rows in registers, at most 512 elements, so max_d must be 1 to 512, found 1024}}
module attributes {v = #nf.variant<name = "v", vectorized = true, max_d = 1024, schedule = #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2>>} {}

// -----

// A peeled variant accesses chunks of its rows (not elements): not with
// vectorized = true, nor streamed.
// expected-error@+1 {{variant 'p' is peeled, which needs vectorized = false and a register-resident schedule of chunks of two or more elements, without a cluster}}
module attributes {v = #nf.variant<name = "p", vectorized = true, max_d = 505, schedule = #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2>, peeled = true>} {}

// -----

// expected-error@+1 {{variant 'p' is peeled, which needs vectorized = false and a register-resident schedule of chunks of two or more elements, without a cluster}}
module attributes {v = #nf.variant<name = "p", vectorized = false, max_d = 0, schedule = #nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 0>, peeled = true>} {}

// -----

// Its rows may start 7 elements into a chunk: 512 - 7 at most.
// expected-error@+1 {{variant 'p' is peeled: a row may start 7 elements into a chunk, so max_d must be at most 505, found 512}}
module attributes {v = #nf.variant<name = "p", vectorized = false, max_d = 512, schedule = #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2>, peeled = true>} {}

// -----

//===----------------------------------------------------------------------===//
// nf.load and broadcast kinds
//===----------------------------------------------------------------------===//

// -----

nf.kernel @kind_wrong_rank(%x: tensor<?x?x?xf32>, %w: tensor<?x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{broadcast kind [B, 1, D] expects a rank-3 tensor, %w is 'tensor<?x?xf32>'}}
  %1 = nf.load %w [B, 1, D] : tensor<?x?xf32>
  %2 = nf.add %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @kind_one_wrong_rank(%x: tensor<?x?x?xf32>, %c: tensor<1x1xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{broadcast kind [1] expects a rank-1 tensor}}
  %1 = nf.load %c [1] : tensor<1x1xf32>
  %2 = nf.add %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @unit_dim_not_one(%x: tensor<?x?x?xf32>, %g: tensor<?x4x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{broadcast kind [B, 1, D] expects dimension 1 of %g to be 1, found 4}}
  %1 = nf.load %g [B, 1, D] : tensor<?x4x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @frames_unit_dim_not_one(%x: tensor<?x?x?xf32>,
                                   %g: tensor<?x?x2x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{expects dimension 2 of %g to be 1, found 2}}
  %1 = nf.load %g [B, F, 1, D] : tensor<?x?x2x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @scalar_kind_not_one(%x: tensor<?x?x?xf32>, %c: tensor<3xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{broadcast kind [1] expects dimension 0 of %c to be 1, found 3}}
  %1 = nf.load %c [1] : tensor<3xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @unknown_kind(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error@+1 {{unknown broadcast kind; expected one of [1], [D], [B, D], [B, 1, D], [B, S, D], [B, F, 1, D]}}
  %0 = nf.load %x [S, B, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @kind_bad_number(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error@+1 {{a broadcast dimension must be B, S, F, D or 1, found 2}}
  %0 = nf.load %x [B, 2, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @load_int_tensor(%x: tensor<?x?x?xf32>, %i: tensor<?x?x?xi32>)
    -> tensor<?x?x?xf32> {
  // expected-error@+1 {{expected a ranked tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8 elements, found 'tensor<?x?x?xi32>'}}
  %0 = nf.load %i [B, S, D] : tensor<?x?x?xi32>
  nf.return %0 : !nf.row<f32>
}

// -----

// The generic form skips type inference; the verifier still refuses the
// element type.
nf.kernel @load_int_tensor_generic(%x: tensor<?x?x?xf32>,
                                   %i: tensor<?x?x?xi32>)
    -> tensor<?x?x?xf32> {
  // expected-error@+1 {{expected a tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8 elements, %i is 'tensor<?x?x?xi32>'}}
  %0 = "nf.load"(%i) <{kind = 4 : i32}> : (tensor<?x?x?xi32>) -> !nf.row<f32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @load_result_type(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xf32> {
  // expected-error@+2 {{'nf.load' op inferred type(s) '!nf.row<bf16>' are incompatible with return type(s) of operation '!nf.row<f32>'}}
  // expected-error@+1 {{failed to infer returned types}}
  %0 = "nf.load"(%x) <{kind = 4 : i32}> : (tensor<?x?x?xbf16>) -> !nf.row<f32>
  nf.return %0 : !nf.row<f32>
}

//===----------------------------------------------------------------------===//
// Sizes shared within a chain
//===----------------------------------------------------------------------===//

// -----

nf.kernel @d_mismatch(%x: tensor<?x?x1536xf32>, %w: tensor<3072xf32>)
    -> tensor<?x?x1536xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x1536xf32>
  // expected-error@+1 {{D mismatch: %x dimension 2 sets D = 1536, but %w dimension 0 is 3072}}
  %1 = nf.load %w [D] : tensor<3072xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @d_mismatch_result(%x: tensor<?x?x1536xf32>)
    -> tensor<?x?x3072xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x1536xf32>
  // expected-error@+1 {{D mismatch: %x dimension 2 sets D = 1536, but result #0 dimension 2 is 3072}}
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @s_mismatch(%x: tensor<?x4096x?xf32>, %r: tensor<?x2048x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x4096x?xf32>
  // expected-error@+1 {{S mismatch: %x dimension 1 sets S = 4096, but %r dimension 1 is 2048}}
  %1 = nf.load %r [B, S, D] : tensor<?x2048x?xf32>
  %2 = nf.add %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @b_mismatch(%x: tensor<2x?x?xf32>, %scale: tensor<1x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<2x?x?xf32>
  // expected-error@+1 {{B mismatch: %x dimension 0 sets B = 2, but %scale dimension 0 is 1}}
  %1 = nf.load %scale [B, D] : tensor<1x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @frames_not_divisible(%x: tensor<1x100x?xf32>,
                                %g: tensor<1x3x1x?xf32>)
    -> tensor<1x100x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<1x100x?xf32>
  // expected-error@+1 {{frames: S = 100 is not divisible by F = 3 (token s uses frame s / (S / F))}}
  %1 = nf.load %g [B, F, 1, D] : tensor<1x3x1x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @frames_zero(%x: tensor<1x100x?xf32>, %g: tensor<1x0x1x?xf32>)
    -> tensor<1x100x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<1x100x?xf32>
  // expected-error@+1 {{frames: S = 100 is not divisible by F = 0}}
  %1 = nf.load %g [B, F, 1, D] : tensor<1x0x1x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

// Chains have their own [B, S] but share D.
nf.kernel @d_mismatch_between_chains(%q: tensor<?x?x128xf32>,
                                     %k: tensor<?x?x64xf32>)
    -> (tensor<?x?x128xf32>, tensor<?x?x64xf32>) {
  %q0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{D mismatch between chains: %q dimension 2 sets D = 128, but %k dimension 2 is 64; the chains of a kernel share D}}
  %k0 = nf.load %k [B, S, D] : tensor<?x?x64xf32>
  nf.return %q0, %k0 : !nf.row<f32>, !nf.row<f32>
}

//===----------------------------------------------------------------------===//
// nf.select_load
//===----------------------------------------------------------------------===//

// -----

nf.kernel @select_index_element(%x: tensor<?x?x?xf32>, %idx: tensor<?x?xf32>,
                                %s0: tensor<?x?xf32>, %s1: tensor<?x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{index must be a [B, S] tensor of i8, i32 or i64, %idx is 'tensor<?x?xf32>'}}
  %1 = nf.select_load %idx, %s0, %s1 [B, D] : tensor<?x?xf32>, tensor<?x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @select_index_rank(%x: tensor<?x?x?xf32>, %idx: tensor<?xi32>,
                             %s0: tensor<?x?xf32>, %s1: tensor<?x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{index must be a [B, S] tensor of i8, i32 or i64, %idx is 'tensor<?xi32>'}}
  %1 = nf.select_load %idx, %s0, %s1 [B, D] : tensor<?xi32>, tensor<?x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @select_same_operand(%x: tensor<?x?x?xf32>, %idx: tensor<?x?xi32>,
                               %s0: tensor<?x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{selects between %s0 and itself; use nf.load}}
  %1 = nf.select_load %idx, %s0, %s0 [B, D] : tensor<?x?xi32>, tensor<?x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @select_candidate_kind(%x: tensor<?x?x?xf32>, %idx: tensor<?x?xi32>,
                                 %s0: tensor<?x?xf32>, %s1: tensor<?x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{broadcast kind [B, 1, D] expects a rank-3 tensor, %s0 is 'tensor<?x?xf32>'}}
  %1 = nf.select_load %idx, %s0, %s1 [B, 1, D] : tensor<?x?xi32>, tensor<?x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @select_candidate_types(%x: tensor<?x?x?xf32>, %idx: tensor<?x?xi32>,
                                  %s0: tensor<?x?xf32>, %s1: tensor<?x?xbf16>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{'nf.select_load' op failed to verify that all of {first, second} have same type}}
  %1 = "nf.select_load"(%idx, %s0, %s1) <{kind = 2 : i32}>
      : (tensor<?x?xi32>, tensor<?x?xf32>, tensor<?x?xbf16>) -> !nf.row<f32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @select_s_mismatch(%x: tensor<?x4096x?xf32>, %idx: tensor<?x2048xi32>,
                             %s0: tensor<?x?xf32>, %s1: tensor<?x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x4096x?xf32>
  // expected-error@+1 {{S mismatch: %x dimension 1 sets S = 4096, but %idx dimension 1 is 2048}}
  %1 = nf.select_load %idx, %s0, %s1 [B, D] : tensor<?x2048xi32>, tensor<?x?xf32>
  %2 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

//===----------------------------------------------------------------------===//
// nf.constant, nf.cast
//===----------------------------------------------------------------------===//

// -----

// nf.constant's own "value must be a floating-point attribute" check is
// defensive: an integer value already fails the result type constraint.
nf.kernel @constant_int(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error@+1 {{'nf.constant' op result #0 must be 32-bit float or 16-bit float or bfloat16 type, but got 'i32'}}
  %c = nf.constant 1 : i32
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @constant_type_mismatch(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error@+1 {{'nf.constant' op failed to verify that all of {value, result} have same type}}
  %c = "nf.constant"() <{value = 1.0 : f16}> : () -> f32
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @cast_row_to_scalar(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{casts a row to a row and a scalar to a scalar; found '!nf.row<f32>' to 'f32'}}
  %1 = nf.cast %0 : !nf.row<f32> to f32
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @cast_scalar_to_row(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c = nf.constant 1.0 : f32
  // expected-error@+1 {{casts a row to a row and a scalar to a scalar; found 'f32' to '!nf.row<f32>'}}
  %0 = nf.cast %c : f32 to !nf.row<f32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @cast_int(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce sum %0 : !nf.row<f32>
  // expected-error@+1 {{'nf.cast' op result #0 must be row or per-row f32/f16/bf16 scalar, but got 'i32'}}
  %2 = nf.cast %1 : f32 to i32
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @cast_quantized_from_bf16(%x: tensor<?x?x?xbf16>)
    -> tensor<?x?x?xi8> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  // expected-error@+1 {{f8E4M3FN, f8E5M2 and i8 rows are cast from and to f32 rows only; found '!nf.row<bf16>' to '!nf.row<i8>' (cast through !nf.row<f32>)}}
  %1 = nf.cast %0 : !nf.row<bf16> to !nf.row<i8>
  nf.return %1 : !nf.row<i8>
}

// -----

nf.kernel @cast_between_quantized(%x: tensor<?x?x?xi8>)
    -> tensor<?x?x?xf8E4M3FN> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xi8>
  // expected-error@+1 {{f8E4M3FN, f8E5M2 and i8 rows are cast from and to f32 rows only; found '!nf.row<i8>' to '!nf.row<f8E4M3FN>' (cast through !nf.row<f32>)}}
  %1 = nf.cast %0 : !nf.row<i8> to !nf.row<f8E4M3FN>
  nf.return %1 : !nf.row<f8E4M3FN>
}

//===----------------------------------------------------------------------===//
// Elementwise ops and reductions
//===----------------------------------------------------------------------===//

// -----

// Quantized rows take no arithmetic: cast them to f32 first.
nf.kernel @add_quantized(%x: tensor<?x?x?xi8>) -> tensor<?x?x?xi8> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xi8>
  // expected-error@+1 {{'nf.add' op operand #0 must be f32/f16/bf16 row, per-row scalar or group value, but got '!nf.row<i8>'}}
  %1 = nf.add %0, %0 : !nf.row<i8>
  nf.return %1 : !nf.row<i8>
}

// -----

nf.kernel @norm_quantized(%x: tensor<?x?x?xf8E5M2>)
    -> tensor<?x?x?xf8E5M2> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf8E5M2>
  // expected-error@+1 {{'nf.rms_norm' op operand #0 must be row of f32, f16 or bf16, but got '!nf.row<f8E5M2>'}}
  %1 = nf.rms_norm %0 eps 1.0e-6 : !nf.row<f8E5M2>
  nf.return %1 : !nf.row<f8E5M2>
}

// -----

nf.kernel @binary_dtype_mix(%x: tensor<?x?x?xbf16>, %g: tensor<?x1x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %1 = nf.load %g [B, 1, D] : tensor<?x1x?xf32>
  // expected-error@+1 {{operands have different element types, 'bf16' and 'f32'; nf converts only through nf.cast}}
  %2 = nf.mul %0, %1 : !nf.row<bf16>, !nf.row<f32>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @binary_row_scalar_mix(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %c = nf.constant 2.0 : f32
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  // expected-error@+1 {{operands have different element types, 'bf16' and 'f32'}}
  %1 = nf.mul %0, %c : !nf.row<bf16>, f32
  nf.return %0 : !nf.row<bf16>
}

// -----

nf.kernel @binary_result_type(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %s = nf.reduce sum %0 : !nf.row<f32>
  // expected-error@+2 {{'nf.add' op inferred type(s) '!nf.row<f32>' are incompatible with return type(s) of operation 'f32'}}
  // expected-error@+1 {{failed to infer returned types}}
  %1 = "nf.add"(%0, %s) : (!nf.row<f32>, f32) -> f32
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @unary_type_change(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{'nf.exp' op requires the same type for all operands and results}}
  %1 = "nf.exp"(%0) : (!nf.row<f32>) -> !nf.row<bf16>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @reduce_bf16(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  // expected-error@+1 {{'nf.reduce' op operand #0 must be row of f32, but got '!nf.row<bf16>'}}
  %1 = nf.reduce sum %0 : !nf.row<bf16>
  nf.return %0 : !nf.row<bf16>
}

//===----------------------------------------------------------------------===//
// Norms and modulation
//===----------------------------------------------------------------------===//

// -----

nf.kernel @eps_negative(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{eps must be finite and non-negative, found -1.000000e-05}}
  %1 = nf.rms_norm %0 eps -1.0e-5 : !nf.row<f32>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @eps_infinite(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{eps must be finite and non-negative}}
  %1 = nf.layer_norm %0 eps 0x7F800000 : !nf.row<f32>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @norm_weight_type(%x: tensor<?x?x?xf32>, %w: tensor<?xbf16>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %w [D] : tensor<?xbf16>
  // expected-error@+1 {{weight and bias must have the input's type '!nf.row<f32>', found '!nf.row<bf16>'}}
  %2 = "nf.layer_norm"(%0, %1) <{eps = 1.0e-6 : f32, operandSegmentSizes = array<i32: 1, 1, 0>}>
      : (!nf.row<f32>, !nf.row<bf16>) -> !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @norm_weight_type_custom(%x: tensor<?x?x?xf32>, %w: tensor<?xbf16>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-note@+1 {{prior use here}}
  %1 = nf.load %w [D] : tensor<?xbf16>
  // expected-error@+1 {{use of value '%1' expects different type than prior uses: '!nf.row<f32>' vs '!nf.row<bf16>'}}
  %2 = nf.rms_norm %0 weight %1 eps 1.0e-6 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @modulate_types(%x: tensor<?x?x?xbf16>, %s: tensor<?x1x?xf32>)
    -> tensor<?x?x?xbf16> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %1 = nf.load %s [B, 1, D] : tensor<?x1x?xf32>
  // expected-error@+1 {{'nf.modulate' op failed to verify that all of {input, scale, shift, result} have same type}}
  %2 = "nf.modulate"(%0, %1, %1)
      : (!nf.row<bf16>, !nf.row<f32>, !nf.row<f32>) -> !nf.row<bf16>
  nf.return %2 : !nf.row<bf16>
}

//===----------------------------------------------------------------------===//
// nf.rope
//===----------------------------------------------------------------------===//

// -----

nf.kernel @rotary_odd(%q: tensor<?x?x128xf32>, %cs: tensor<?x?xf32>,
                      %pos: tensor<?xi64>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{rotary_dim must be positive and even, found 63}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 63
      : !nf.row<f32>, tensor<?x?xf32>, tensor<?xi64>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @rotary_zero(%q: tensor<?x?x128xf32>, %cs: tensor<?x?xf32>,
                       %pos: tensor<?xi64>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{rotary_dim must be positive and even, found 0}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 0
      : !nf.row<f32>, tensor<?x?xf32>, tensor<?xi64>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @rotary_larger_than_d(%q: tensor<?x?x128xf32>, %cs: tensor<?x256xf32>,
                                %pos: tensor<?xi64>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{rotary_dim 256 is larger than the row length D = 128}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 256
      : !nf.row<f32>, tensor<?x256xf32>, tensor<?xi64>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @cache_width(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                       %pos: tensor<?xi64>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{cache width must equal rotary_dim = 64, %cs is 'tensor<?x128xf32>'}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 64
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @cache_rank(%q: tensor<?x?x128xf32>, %cs: tensor<?x2x64xf32>,
                      %pos: tensor<?xi64>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{cache must be a [max_pos, rotary_dim] tensor, %cs is 'tensor<?x2x64xf32>'}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 128
      : !nf.row<f32>, tensor<?x2x64xf32>, tensor<?xi64>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @cache_dtype(%q: tensor<?x?x128xbf16>, %cs: tensor<?x128xf32>,
                       %pos: tensor<?xi64>) -> tensor<?x?x128xbf16> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xbf16>
  // expected-error@+1 {{cache elements must have the row's element type 'bf16', %cs is 'tensor<?x128xf32>' (cast the row instead)}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 128
      : !nf.row<bf16>, tensor<?x128xf32>, tensor<?xi64>
  nf.return %1 : !nf.row<bf16>
}

// -----

nf.kernel @positions_element(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                             %pos: tensor<?xf32>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{positions must be a [B] tensor of i32 or i64, %pos is 'tensor<?xf32>'}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xf32>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @positions_rank(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                          %pos: tensor<?x?xi32>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{positions must be a [B] tensor of i32 or i64, %pos is 'tensor<?x?xi32>'}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?x?xi32>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @positions_i8(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                        %pos: tensor<?xi8>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{positions must be a [B] tensor of i32 or i64}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi8>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @positions_b_mismatch(%q: tensor<4096x?x128xf32>, %cs: tensor<?x128xf32>,
                                %pos: tensor<2048xi64>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<4096x?x128xf32>
  // expected-error@+1 {{B mismatch: %q dimension 0 sets B = 4096, but %pos dimension 0 is 2048}}
  %1 = nf.rope neox %0, %cs[%pos] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<2048xi64>
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @offset_i16(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                      %pos: tensor<?xi32>, %off: i16) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{offset must be an i32 or i64 scalar, found 'i16'}}
  %1 = nf.rope neox %0, %cs[%pos + %off] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi32>, i16
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @offset_tensor(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                         %pos: tensor<?xi32>, %off: tensor<1xi32>)
    -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  // expected-error@+1 {{'nf.rope' op operand #3 must be signless integer, but got 'tensor<1xi32>'}}
  %1 = nf.rope neox %0, %cs[%pos + %off] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi32>, tensor<1xi32>
  nf.return %1 : !nf.row<f32>
}

//===----------------------------------------------------------------------===//
// nf.return
//===----------------------------------------------------------------------===//

// -----

nf.kernel @return_count(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{returns 1 rows, but @return_count has 2 results}}
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @return_element_type(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %1 = nf.cast %0 : !nf.row<bf16> to !nf.row<f32>
  // expected-error@+1 {{row #0 has element type 'f32', but result #0 is 'tensor<?x?x?xbf16>' (insert nf.cast)}}
  nf.return %1 : !nf.row<f32>
}

// -----

nf.kernel @return_scalar(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce sum %0 : !nf.row<f32>
  // expected-error@+1 {{per-row value #0 is stored into a [B, S] f32 result, but result #0 is 'tensor<?x?x?xf32>'}}
  nf.return %1 : f32
}

// -----

nf.kernel @return_row_into_per_row(%x: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{row #0 is stored into a [B, S, D] result, but result #0 is 'tensor<?x?xf32>'}}
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @return_f16_scalar(%x: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce sum %0 : !nf.row<f32>
  %2 = nf.cast %1 : f32 to f16
  // expected-error@+1 {{'nf.return' op operand #0 must be variadic of row, per-row f32 scalar or group value, but got 'f16'}}
  nf.return %2 : f16
}

// -----

nf.kernel @return_constant(%x: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %c = nf.constant 1.0 : f32
  // expected-error@+1 {{per-row value #0 is a constant; a per-row result must be computed from a row (it takes the row's [B, S])}}
  nf.return %c : f32
}

// -----

// expected-error@+1 {{'nf.return' op expects parent op 'nf.kernel'}}
"nf.return"() : () -> ()

//===----------------------------------------------------------------------===//
// nf.kernel: signature
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{result #0 must be a [B, S, D] tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8, a [B, S] tensor of f32 (one value per row), or a [B, S, D / G] tensor of f32 (one value per group), found 'tensor<?x?x?x?xf32>'}}
nf.kernel @result_rank(%x: tensor<?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// A per-row result holds f32 values.
// expected-error@+1 {{result #0 must be a [B, S, D] tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8, a [B, S] tensor of f32 (one value per row), or a [B, S, D / G] tensor of f32 (one value per group), found 'tensor<?x?xbf16>'}}
nf.kernel @per_row_result_bf16(%x: tensor<?x?x?xf32>) -> tensor<?x?xbf16> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce sum %0 : !nf.row<f32>
  nf.return %1 : f32
}

// -----

// expected-error@+1 {{result #0 must be a [B, S, D] tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8, a [B, S] tensor of f32 (one value per row), or a [B, S, D / G] tensor of f32 (one value per group), found 'tensor<?x?x?xi32>'}}
nf.kernel @result_int(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xi32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// A result that is not a tensor (nf.return used to crash on it).
// expected-error@+1 {{result #0 must be a [B, S, D] tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8, a [B, S] tensor of f32 (one value per row), or a [B, S, D / G] tensor of f32 (one value per group), found 'f32'}}
nf.kernel @result_scalar(%x: tensor<?x?x?xf32>) -> f32 {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// expected-error@+1 {{argument %eps must be a ranked tensor of f32, f16, bf16, f8E4M3FN, f8E5M2, i8, i32 or i64, or an i32/i64 scalar; found 'f32'}}
nf.kernel @argument_float_scalar(%x: tensor<?x?x?xf32>, %eps: f32)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// expected-error@+1 {{argument %x must be a ranked tensor of f32, f16, bf16, f8E4M3FN, f8E5M2, i8, i32 or i64, or an i32/i64 scalar; found 'tensor<*xf32>'}}
nf.kernel @argument_unranked(%x: tensor<*xf32>) {
  nf.return
}

// -----

// expected-error@+1 {{argument %m must be a ranked tensor of f32, f16, bf16, f8E4M3FN, f8E5M2, i8, i32 or i64, or an i32/i64 scalar; found 'memref<?xf32>'}}
nf.kernel @argument_memref(%x: tensor<?x?x?xf32>, %m: memref<?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// expected-error@+1 {{argument %h must be a ranked tensor of f32, f16, bf16, f8E4M3FN, f8E5M2, i8, i32 or i64, or an i32/i64 scalar; found 'tensor<?xf64>'}}
nf.kernel @argument_f64(%x: tensor<?x?x?xf32>, %h: tensor<?xf64>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// expected-error@+1 {{has 1 argument names for 2 arguments}}
nf.kernel @argument_names_count(%x: tensor<?x?x?xf32>, %y: tensor<?x?x?xf32>)
    -> tensor<?x?x?xf32> attributes {arg_names = ["x"]} {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// The body/signature agreement is checked by FunctionOpInterface before the
// kernel's own checks run.
// expected-error@+1 {{entry block must have 1 arguments to match function signature}}
"nf.kernel"() <{sym_name = "body_arguments",
               function_type = (tensor<?x?x?xf32>) -> ()}> ({
  "nf.return"() : () -> ()
}) : () -> ()

// -----

// expected-error@+1 {{type of entry block argument #0('tensor<?x?x?xbf16>') must match the type of the corresponding argument in function signature('tensor<?x?x?xf32>')}}
"nf.kernel"() <{sym_name = "body_argument_type",
               function_type = (tensor<?x?x?xf32>) -> ()}> ({
^bb0(%x: tensor<?x?x?xbf16>):
  "nf.return"() : () -> ()
}) : () -> ()

//===----------------------------------------------------------------------===//
// nf.kernel: argument roles
//===----------------------------------------------------------------------===//

// -----

nf.kernel @two_kinds(%x: tensor<?x?x?xf32>, %g: tensor<?x1x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %g [B, 1, D] : tensor<?x1x?xf32>
  // expected-error@+1 {{loads %g as [B, S, D], but another load of it uses [B, 1, D]; an argument has one broadcast kind}}
  %2 = nf.load %g [B, S, D] : tensor<?x1x?xf32>
  %3 = nf.mul %0, %1 : !nf.row<f32>
  nf.return %3, %2 : !nf.row<f32>, !nf.row<f32>
}

// -----

nf.kernel @two_kinds_select(%x: tensor<?x?x?xf32>, %idx: tensor<?x?xi32>,
                            %s0: tensor<?x1x?xf32>, %s1: tensor<?x1x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.select_load %idx, %s0, %s1 [B, 1, D]
      : tensor<?x?xi32>, tensor<?x1x?xf32>
  // expected-error@+1 {{loads %s1 as [B, S, D], but another load of it uses [B, 1, D]}}
  %2 = nf.load %s1 [B, S, D] : tensor<?x1x?xf32>
  %3 = nf.mul %0, %1 : !nf.row<f32>
  %4 = nf.mul %3, %2 : !nf.row<f32>
  nf.return %4 : !nf.row<f32>
}

// -----

// An argument cannot be both a select index and loaded data: an index is an
// integer tensor and loaded data a float one, so the op verifiers refuse the
// second use before the kernel's role check sees it.
nf.kernel @index_and_data(%x: tensor<?x?x?xf32>, %idx: tensor<?x?xi32>,
                          %s0: tensor<?x?xf32>, %s1: tensor<?x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.select_load %idx, %s0, %s1 [B, D] : tensor<?x?xi32>, tensor<?x?xf32>
  // expected-error@+1 {{expected a ranked tensor of f32, f16, bf16, f8E4M3FN, f8E5M2 or i8 elements, found 'tensor<?x?xi32>'}}
  %2 = nf.load %idx [B, D] : tensor<?x?xi32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @data_and_index(%x: tensor<?x?x?xf32>, %idx: tensor<?x?xf32>,
                          %s0: tensor<?x?xf32>, %s1: tensor<?x?xf32>)
    -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %idx [B, D] : tensor<?x?xf32>
  // expected-error@+1 {{index must be a [B, S] tensor of i8, i32 or i64}}
  %2 = nf.select_load %idx, %s0, %s1 [B, D] : tensor<?x?xf32>, tensor<?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @cache_and_data(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                          %pos: tensor<?xi64>) -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  %1 = nf.rope neox %0, %cs[%pos] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  // expected-error@+1 {{uses %cs as loaded data, but it is already a rotary cache}}
  %2 = nf.load %cs [B, D] : tensor<?x128xf32>
  %3 = nf.add %1, %2 : !nf.row<f32>
  nf.return %3 : !nf.row<f32>
}

// -----

nf.kernel @cache_and_select(%q: tensor<?x?x128xf32>, %cs: tensor<?x128xf32>,
                            %pos: tensor<?xi64>, %idx: tensor<?x?xi32>,
                            %s0: tensor<?x128xf32>)
    -> tensor<?x?x128xf32> {
  %0 = nf.load %q [B, S, D] : tensor<?x?x128xf32>
  %1 = nf.select_load %idx, %s0, %cs [B, D] : tensor<?x?xi32>, tensor<?x128xf32>
  // expected-error@+1 {{uses %cs as a rotary cache, but it is already loaded data}}
  %2 = nf.rope neox %1, %cs[%pos] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  nf.return %2 : !nf.row<f32>
}

//===----------------------------------------------------------------------===//
// nf.kernel: in-place results
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{result #0: nf.in_place must be the index of an argument (0 to 0), found 1 : i64}}
nf.kernel @in_place_out_of_range(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32> {nf.in_place = 1 : i64}) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// expected-error@+1 {{result #0: nf.in_place must be the index of an argument (0 to 0), found "x"}}
nf.kernel @in_place_not_integer(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32> {nf.in_place = "x"}) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  nf.return %0 : !nf.row<f32>
}

// -----

// expected-error@+1 {{result #0 is written in place into %x, which must then have the result's type 'tensor<?x?x?xf32>', found 'tensor<?x?x?xbf16>'}}
nf.kernel @in_place_type(%x: tensor<?x?x?xbf16>)
    -> (tensor<?x?x?xf32> {nf.in_place = 0 : i64}) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %1 = nf.cast %0 : !nf.row<bf16> to !nf.row<f32>
  nf.return %1 : !nf.row<f32>
}

// -----

// expected-error@+1 {{results #0 and #1 are both written into %x}}
nf.kernel @in_place_twice(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32> {nf.in_place = 0 : i64},
        tensor<?x?x?xf32> {nf.in_place = 0 : i64}) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.neg %0 : !nf.row<f32>
  nf.return %0, %1 : !nf.row<f32>, !nf.row<f32>
}

// -----

// The aliased argument is read under a broadcast: row (b, s) would overwrite
// data that other rows still read.
// expected-error@+1 {{result #0 is written in place into %y, which is read as loaded data [B, 1, D]; only a [B, S, D] operand read by the same row can be overwritten}}
nf.kernel @in_place_broadcast(%x: tensor<?x?x?xf32>, %y: tensor<?x1x?xf32>)
    -> (tensor<?x1x?xf32> {nf.in_place = 1 : i64}) {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.load %y [B, 1, D] : tensor<?x1x?xf32>
  %2 = nf.add %0, %1 : !nf.row<f32>
  nf.return %2 : !nf.row<f32>
}

// -----

nf.kernel @in_place_other_chain(%q: tensor<?x?x?xf32>, %k: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32> {nf.in_place = 0 : i64}, tensor<?x?x?xf32>) {
  %q0 = nf.load %q [B, S, D] : tensor<?x?x?xf32>
  %q1 = nf.neg %q0 : !nf.row<f32>
  %k0 = nf.load %k [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{reads %q, which another chain overwrites in place (result #0)}}
  %k1 = nf.load %q [B, S, D] : tensor<?x?x?xf32>
  %k2 = nf.add %k0, %k1 : !nf.row<f32>
  nf.return %q1, %k2 : !nf.row<f32>, !nf.row<f32>
}

// -----

nf.kernel @group_not_power_of_two(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  // expected-error@+1 {{group size must be a power of two from 1 to 2^30, found 96}}
  %1 = nf.reduce max %0 group 96 : !nf.row<f32>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @group_type_size(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce max %0 group 64 : !nf.row<f32>
  // expected-error@+1 {{group size must be a power of two, found 96}}
  %2 = nf.abs %1 : !nf.group<f32, 96>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @group_type_element(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce max %0 group 64 : !nf.row<f32>
  // expected-error@+1 {{group values are f32, found 'bf16'}}
  %2 = nf.abs %1 : !nf.group<bf16, 64>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @group_does_not_divide(%x: tensor<?x?x1000xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x1000xf32>
  %1 = nf.reduce max %0 group 128 : !nf.row<f32>
  // expected-error@+1 {{group size 128 of result #0 does not divide the row length D = 1000}}
  nf.return %1 : !nf.group<f32, 128>
}

// -----

nf.kernel @group_result_size(%x: tensor<?x?x1024xf32>) -> tensor<?x?x1024xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x1024xf32>
  %1 = nf.reduce max %0 group 128 : !nf.row<f32>
  // expected-error@+1 {{result #0 holds one value per group of 128 elements: its last dimension must be D / 128 = 8, found 1024}}
  nf.return %1 : !nf.group<f32, 128>
}

// -----

nf.kernel @group_result_rank(%x: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce sum %0 group 64 : !nf.row<f32>
  // expected-error@+1 {{group value #0 is stored into a [B, S, D / 64] f32 result, but result #0 is 'tensor<?x?xf32>'}}
  nf.return %1 : !nf.group<f32, 64>
}

// -----

nf.kernel @group_sizes_differ(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce max %0 group 64 : !nf.row<f32>
  %2 = nf.reduce sum %0 group 128 : !nf.row<f32>
  // expected-error@+1 {{combines group values of groups of 64 and 128 elements; group values combine with the same group size only}}
  %3 = nf.add %1, %2 : !nf.group<f32, 64>, !nf.group<f32, 128>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @group_reduced_again(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce max %0 group 64 : !nf.row<f32>
  // expected-error@+1 {{'nf.reduce' op operand #0 must be row of f32, but got '!nf.group<f32, 64>'}}
  %2 = nf.reduce max %1 : !nf.group<f32, 64>
  nf.return %0 : !nf.row<f32>
}

// -----

nf.kernel @group_cast(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = nf.load %x [B, S, D] : tensor<?x?x?xf32>
  %1 = nf.reduce max %0 group 64 : !nf.row<f32>
  // expected-error@+1 {{'nf.cast' op operand #0 must be row or per-row f32/f16/bf16 scalar, but got '!nf.group<f32, 64>'}}
  %2 = nf.cast %1 : !nf.group<f32, 64> to f32
  nf.return %0 : !nf.row<f32>
}
