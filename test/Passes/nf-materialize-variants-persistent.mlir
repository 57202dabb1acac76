// The variants of a persistent schedule: only its vectorized variant is
// persistent (its CTAs walk rows); the 8- and 4-byte twins, the peeled and
// the general variant run one row per CTA, bounded like the schedule's.
// RUN: nf-opt %s -split-input-file -verify-diagnostics -nf-materialize-variants | FileCheck %s

// CHECK-LABEL: nf.kernel @rmsnorm_quant
// CHECK-SAME: name = "v0_persistent512x4", vectorized = true, max_d = 16384, schedule = <threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>>
// CHECK-SAME: name = "v1_cta512x8", vectorized = true, max_d = 16384, schedule = <threads_per_row = 512, rows_per_cta = 1, chunk = 4, chunks_per_thread = 8>>
// CHECK-SAME: name = "v2_cta512x16", vectorized = true, max_d = 16384, schedule = <threads_per_row = 512, rows_per_cta = 1, chunk = 2, chunks_per_thread = 16>>
// CHECK-SAME: name = "p3_cta512x4", vectorized = false, max_d = 16377, schedule = <threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>, peeled = true>
// CHECK-SAME: name = "g4_streaming512", vectorized = false, max_d = 16384
// CHECK-NOT: #nf.variant
nf.kernel @rmsnorm_quant(%x: tensor<?x?x?xbf16>, %weight: tensor<?xbf16>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?xf32>)
    attributes {nf.schedules = [
      #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %weight [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf weight %wf eps 1.0e-6 : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %y, %amax : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %amax : !nf.row<f8E4M3FN>, f32
}

// -----

// A static D beyond a persistent schedule's rows is refused.
// expected-error@+1 {{schedule holds 16384 elements per row, fewer than D = 16392}}
nf.kernel @too_long(%x: tensor<?x?x16392xbf16>) -> tensor<?x?x16392xbf16>
    attributes {nf.schedules = [
      #nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, persistent = true>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x16392xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %y = nf.rms_norm %xf eps 1.0e-6 : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
