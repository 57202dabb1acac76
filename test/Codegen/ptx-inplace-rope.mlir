// An in-place rotary kernel whose partner elements come from registers (a
// NeoX partner chunk by shuffle from lane ^ 8, interleaved pairs swapped
// inside the chunk) stores without a barrier; one that reads the partner
// of an element from memory while other threads store the row (the general
// variant) issues all its loads before a barrier and its stores after it.
// RUN: nf-compile %examples/qk_rmsnorm_rope_neox.mlir --sm sm_90 --emit=ptx | FileCheck %s
// RUN: nf-compile %examples/qk_rmsnorm_rope_interleaved_partial.mlir --sm sm_90 --emit=ptx | FileCheck %s

// The vectorized kernel, then the general one; each chain (Q, K) of each.
// CHECK-LABEL: .entry qk_rmsnorm_rope_{{[a-z_]+}}_v0_multi_row16x1(
// CHECK-NOT: bar.sync
// CHECK: ld.global
// CHECK-NOT: bar.sync
// CHECK: st.global
// CHECK-NOT: bar.sync
// CHECK-LABEL: .entry {{.*}}_g1_multi_row16x8(
// CHECK: ld.global
// CHECK-NOT: st.global
// CHECK: bar.sync
// CHECK: st.global
