// RUN: nf-opt %s -split-input-file -nf-decompose -nf-materialize-variants -nf-lower-to-gpu | FileCheck %s

// A rotary row written in place (passes/RowPhases.cpp, emitRows) waits at a
// CTA barrier before its stores only where a partner element is loaded from
// memory, which another thread's store could overwrite first. NeoX pairs
// (i, i + 64) in 16-thread rows of one 8-element chunk each: the partner
// chunk is in lane `lane ^ 8`, exchanged by shuffles, so the vectorized
// variant has no barrier; the general variant loads each partner element
// from the row and keeps it.
// CHECK-LABEL: gpu.func @neox_v0_multi_row16x1(
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-8: gpu.shuffle xor %{{.*}}, %c8_i32{{.*}} : f32
// CHECK-NEXT: vector.from_elements
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @neox_g1_
// CHECK: gpu.barrier
// CHECK: gpu.return
nf.kernel @neox(%q: tensor<?x?x128xbf16>, %cos_sin: tensor<?x128xf32>,
                %positions: tensor<?xi64>)
    -> (tensor<?x?x128xbf16> {nf.in_place = 0 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1>]} {
  %qb = nf.load %q [B, S, D] : tensor<?x?x128xbf16>
  %qf = nf.cast %qb : !nf.row<bf16> to !nf.row<f32>
  %qn = nf.rms_norm %qf eps 1.0e-6 : !nf.row<f32>
  %qr = nf.rope neox %qn, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %qo = nf.cast %qr : !nf.row<f32> to !nf.row<bf16>
  nf.return %qo : !nf.row<bf16>
}

// -----

// Interleaved pairs (2i, 2i + 1) lie in one chunk: swapped in registers,
// no barrier in the vectorized variant.
// CHECK-LABEL: gpu.func @interleaved_v0_multi_row16x1(
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
nf.kernel @interleaved(%q: tensor<?x?x128xbf16>, %cos_sin: tensor<?x128xf32>,
                       %positions: tensor<?xi64>)
    -> (tensor<?x?x128xbf16> {nf.in_place = 0 : i64})
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1>]} {
  %qb = nf.load %q [B, S, D] : tensor<?x?x128xbf16>
  %qf = nf.cast %qb : !nf.row<bf16> to !nf.row<f32>
  %qn = nf.rms_norm %qf eps 1.0e-6 : !nf.row<f32>
  %qr = nf.rope interleaved %qn, %cos_sin[%positions] rotary 128
      : !nf.row<f32>, tensor<?x128xf32>, tensor<?xi64>
  %qo = nf.cast %qr : !nf.row<f32> to !nf.row<bf16>
  nf.return %qo : !nf.row<bf16>
}
