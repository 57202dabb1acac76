// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -nf-lower-row-reductions -split-input-file | FileCheck %s

// Two rows per thread where a [B, S, D] input (x) is read only after the
// reduction (-nf-materialize-variants gives the vectorized variant
// joint_rows): both rows' residual loads come before any shuffle, the two rows
// reduce in one exchange (their shuffles alternate, offsets 8, 8, 4, 4, ...),
// then each row stores in turn. The general variant keeps one row after the
// other.
// CHECK-LABEL: gpu.func @gate_v0_multi_row16x1(
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-NOT: llvm.store
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK-NOT: llvm.store
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c4_i32
// CHECK-NOT: llvm.store
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK-NOT: llvm.store
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>
// CHECK-LABEL: gpu.func @gate_g1_multi_row16x8(
// CHECK-COUNT-4: gpu.shuffle
// CHECK: llvm.store
// CHECK-COUNT-4: gpu.shuffle
nf.kernel @gate(%x: tensor<?x?x128xbf16>, %res: tensor<?x?x128xbf16>)
    -> tensor<?x?x128xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x128xbf16>
  %rb = nf.load %res [B, S, D] : tensor<?x?x128xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %rf = nf.cast %rb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %rf : !nf.row<f32>
  %r = nf.rsqrt %ms : f32
  %n = nf.mul %rf, %r : !nf.row<f32>, f32
  %y = nf.add %xf, %n : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Without such an input (RMSNorm) each row reduces and stores in turn.
// CHECK-LABEL: gpu.func @rms_v0_multi_row16x1(
// CHECK-COUNT-4: gpu.shuffle
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.store
// CHECK-COUNT-4: gpu.shuffle
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.store
nf.kernel @rms(%x: tensor<?x?x128xbf16>) -> tensor<?x?x128xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 16, rows_per_cta = 8, chunk = 8, chunks_per_thread = 1, rows_per_thread = 2>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x128xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %r = nf.rsqrt %ms : f32
  %y = nf.mul %xf, %r : !nf.row<f32>, f32
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
