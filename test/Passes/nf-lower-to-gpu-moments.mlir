// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -split-input-file | FileCheck %s

// LayerNorm's mean and the mean square of the row centred on it, in a row of
// 128 threads (4 warps): one barrier instead of two. A butterfly gives each
// warp its count and sum (their shuffles interleaved), the warp's mean
// (rcp.approx of its count) centres its elements, a second butterfly sums
// their squares; each warp stores its count, sum and centred sum of squares
// into shared memory, and after the one barrier lane l of every warp loads
// warp l's (l mod 4) and a butterfly over 4 lanes (offsets 2 and 1, three
// values each) merges them.
// CHECK-LABEL: gpu.func @ln_v0_cta128x4(
// CHECK-SAME: workgroup(%{{.*}} : memref<12xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK: llvm.nvvm.rcp.approx.ftz.f
// CHECK-COUNT-4: arith.subf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK-COUNT-3: memref.store
// CHECK: gpu.barrier
// CHECK: arith.remui %{{.*}}, %c4_i64
// CHECK-COUNT-3: memref.load
// CHECK-COUNT-3: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK-COUNT-3: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-NOT: gpu.barrier
// CHECK-NOT: gpu.shuffle
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>
// CHECK: gpu.return

// A row of one warp has no barrier to save: two butterflies, as written.
// CHECK-LABEL: gpu.func @ln_v3_warp32x2(
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: arith.subf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
nf.kernel @ln(%x: tensor<?x?x?xbf16>, %w: tensor<?xf32>, %b: tensor<?xf32>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>, #nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wl = nf.load %w [D] : tensor<?xf32>
  %bl = nf.load %b [D] : tensor<?xf32>
  %eps = nf.constant 1.000000e-06 : f32
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %mean = nf.reduce mean %xf : !nf.row<f32>
  %c = nf.sub %xf, %mean : !nf.row<f32>, f32
  %var = nf.reduce mean_sq %c : !nf.row<f32>
  %v = nf.add %var, %eps : f32
  %r = nf.rsqrt %v : f32
  %n = nf.mul %c, %r : !nf.row<f32>, f32
  %nw = nf.mul %n, %wl : !nf.row<f32>
  %y = nf.add %nw, %bl : !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// The mean square of a row centred on something other than its own mean is
// reduced as written: two exchanges, two barriers.
// CHECK-LABEL: gpu.func @other_v0_cta128x4(
// CHECK-SAME: workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
nf.kernel @other(%x: tensor<?x?x?xbf16>, %z: tensor<?x?x?xbf16>)
    -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %zb = nf.load %z [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %zf = nf.cast %zb : !nf.row<bf16> to !nf.row<f32>
  %mean = nf.reduce mean %xf : !nf.row<f32>
  %c = nf.sub %zf, %mean : !nf.row<f32>, f32
  %var = nf.reduce mean_sq %c : !nf.row<f32>
  %n = nf.mul %c, %var : !nf.row<f32>, f32
  %yb = nf.cast %n : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// A cluster exchanges one value per reduction between its CTAs: its variant
// keeps the two exchanges (a CTA barrier, then the cluster's mbarrier,
// each).
// CHECK-LABEL: gpu.func @lnc_v0_cluster512x4c2(
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: gpu.return
nf.kernel @lnc(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, cluster_size = 2>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %mean = nf.reduce mean %xf : !nf.row<f32>
  %c = nf.sub %xf, %mean : !nf.row<f32>, f32
  %var = nf.reduce mean_sq %c : !nf.row<f32>
  %n = nf.mul %c, %var : !nf.row<f32>, f32
  %yb = nf.cast %n : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
