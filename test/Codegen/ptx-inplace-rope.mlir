// An in-place rotary kernel reads the rotary partner of an element while
// other threads store the row: all loads come before a barrier, all stores
// after it.
// RUN: nf-compile %examples/qk_rmsnorm_rope_neox.mlir --sm sm_90 --emit=ptx | FileCheck %s
// RUN: nf-compile %examples/qk_rmsnorm_rope_interleaved_partial.mlir --sm sm_90 --emit=ptx | FileCheck %s

// The vectorized kernel, then the general one; each chain (Q, K) of each.
// CHECK-LABEL: .entry qk_rmsnorm_rope_{{[a-z_]+}}_v0_multi_row16x1(
// CHECK: ld.global
// CHECK-NOT: st.global
// CHECK: bar.sync
// CHECK: st.global
// CHECK-LABEL: .entry {{.*}}_g1_multi_row16x8(
// CHECK: ld.global
// CHECK-NOT: st.global
// CHECK: bar.sync
// CHECK: st.global
