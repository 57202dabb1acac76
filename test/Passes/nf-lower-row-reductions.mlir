// RUN: nf-opt %s -nf-lower-row-reductions -split-input-file -verify-diagnostics | FileCheck %s

// A row of 16 lanes: a butterfly of xor shuffles (offsets 8, 4, 2, 1) in
// the warp, nothing in shared memory, no barrier.
// CHECK-LABEL: gpu.func @warp(
// CHECK-NOT: workgroup
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @warp(%p: f32, %lane: i64, %row: i64, %out: !llvm.ptr<1>) kernel {
    %t = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
        {threads_per_row = 16 : i64, rows_per_cta = 8 : i64,
         cluster_size = 1 : i64, slot = 0 : i64} : f32
    llvm.store %t, %out : f32, !llvm.ptr<1>
    gpu.return
  }
}
}

// -----

// Rows of 4 warps, 2 rows per CTA: one exchange of a sum and a maximum
// (their shuffles step together), then a second exchange in slot 2. The
// workgroup buffer holds 3 slots x 2 rows x 4 warps, 16-byte aligned; each
// exchange has one barrier, after lane 0 of each warp stored its values at
// ((slot * rows_per_cta) + row) * warps + warp. The thread's warp and lane
// in it are computed once, where its coordinates are (here the function's
// start).
// CHECK-LABEL: gpu.func @cta(
// CHECK-SAME: %[[LANE:[^:]*]]: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr<1>)
// CHECK-SAME: workgroup(%[[WG:.*]] : memref<24xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: %[[WARP:.*]] = arith.divui %[[LANE]], %c32_i64
// CHECK: %[[INWARP:.*]] = arith.remui %[[LANE]], %c32_i64
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.addf
// CHECK-NEXT: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK-NEXT: arith.maximumf
// CHECK: %[[LEAD:.*]] = arith.cmpi eq, %[[INWARP]]
// CHECK: scf.if %[[LEAD]] {
// CHECK-COUNT-2: memref.store %{{.*}}, %[[WG]]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: memref.load %[[WG]]
// CHECK-COUNT-4: memref.load %[[WG]]
// CHECK-NOT: memref.store
// CHECK: scf.if
// CHECK-COUNT-1: memref.store %{{.*}}, %[[WG]]
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @cta(%a: f32, %m: f32, %lane: i64, %row: i64, %out: !llvm.ptr<1>) kernel {
    %s, %x = nfgpu.row_reduce [#nfgpu.combining<sum>, #nfgpu.combining<max>]
        %a, %m lane %lane row %row
        {threads_per_row = 128 : i64, rows_per_cta = 2 : i64,
         cluster_size = 1 : i64, slot = 0 : i64} : f32, f32
    %y = arith.addf %s, %x : f32
    %t = nfgpu.row_reduce [#nfgpu.combining<sum>] %y lane %lane row %row
        {threads_per_row = 128 : i64, rows_per_cta = 2 : i64,
         cluster_size = 1 : i64, slot = 2 : i64} : f32
    llvm.store %t, %out : f32, !llvm.ptr<1>
    gpu.return
  }
}
}

// -----

// A row over a cluster of 2 CTAs. The pass allocates one f32 per slot and
// rank and one mbarrier per slot as shared globals beside the function.
// nfgpu.cluster_arrive: thread 0 initializes both mbarriers (predicated in
// the PTX), then a relaxed arrive. The first exchange waits on the cluster
// barrier after its CTA step and before its first st.async; each exchange
// sends the CTA's value to both CTAs and waits on its own mbarrier.
// CHECK: llvm.mlir.global internal @cluster_cluster() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<4 x f32>
// CHECK: llvm.mlir.global internal @cluster_cluster_mbar() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>
// CHECK-LABEL: gpu.func @cluster(
// CHECK-SAME: workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK: llvm.inline_asm has_side_effects {{.*}}"{\0A.reg .pred p;\0Asetp.eq.u32 p, $0, 0;\0A@p mbarrier.init.shared.b64 [$1], 1;\0A@p mbarrier.init.shared.b64 [$2], 1;\0A@p fence.mbarrier_init.release.cluster;\0A}", "r,l,l"
// CHECK-NEXT: nvvm.cluster.arrive.relaxed
// CHECK: gpu.barrier
// CHECK: nvvm.cluster.wait
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8_i32
// CHECK: nvvm.mapa
// CHECK: "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [$0], $1, [$2];"
// CHECK: "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [$0], $1, [$2];"
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: arith.addf
// CHECK: gpu.barrier
// CHECK-NOT: nvvm.cluster.wait
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: arith.maximumf
// CHECK: gpu.return
module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @cluster(%p: f32, %lane: i64, %row: i64, %rank: i64, %tid: i32, %out: !llvm.ptr<1>) kernel {
    nfgpu.cluster_arrive %tid
    %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
        rank %rank {threads_per_row = 512 : i64, rows_per_cta = 1 : i64,
        cluster_size = 2 : i64, slot = 0 : i64, cluster_wait} : f32
    %t = nfgpu.row_reduce [#nfgpu.combining<max>] %s lane %lane row %row
        rank %rank {threads_per_row = 512 : i64, rows_per_cta = 1 : i64,
        cluster_size = 2 : i64, slot = 1 : i64} : f32
    llvm.store %t, %out : f32, !llvm.ptr<1>
    gpu.return
  }
}
}

// -----

// The exchanges of one function share its buffer: they must map rows onto
// threads alike.
module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @mixed(%p: f32, %lane: i64, %row: i64) kernel {
    %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
        {threads_per_row = 64 : i64, rows_per_cta = 2 : i64,
         cluster_size = 1 : i64, slot = 0 : i64} : f32
    // expected-error@+1 {{'nfgpu.row_reduce' op maps rows onto threads unlike the function's first exchange (threads_per_row, rows_per_cta and cluster_size must agree in one gpu.func)}}
    %t = nfgpu.row_reduce [#nfgpu.combining<sum>] %s lane %lane row %row
        {threads_per_row = 128 : i64, rows_per_cta = 1 : i64,
         cluster_size = 1 : i64, slot = 1 : i64} : f32
    gpu.return
  }
}
}

// -----

module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @arrive_alone(%tid: i32) kernel {
    // expected-error@+1 {{'nfgpu.cluster_arrive' op has no exchange between CTAs (nfgpu.row_reduce with cluster_size > 1) in its function to start}}
    nfgpu.cluster_arrive %tid
    gpu.return
  }
}
}

// -----

llvm.func @outside(%p: f32, %lane: i64, %row: i64) -> f32 {
  // expected-error@+1 {{'nfgpu.row_reduce' op must be inside a gpu.func}}
  %s = nfgpu.row_reduce [#nfgpu.combining<sum>] %p lane %lane row %row
      {threads_per_row = 64 : i64, rows_per_cta = 1 : i64,
       cluster_size = 1 : i64, slot = 0 : i64} : f32
  llvm.return %s : f32
}

// -----

// A group's lanes: a butterfly of nvvm.shfl.sync (offsets 4, 2, 1 over 8
// lanes; clamp 31), no shared memory, no barrier. Without a lane the
// member mask is the whole warp (-1); with the thread's lane in its warp,
// the group's 8 lanes (0xff shifted to the group's first lane).
// CHECK-LABEL: gpu.func @group(
// CHECK-NOT: workgroup
// CHECK: nvvm.shfl.sync  bfly %[[ALL:c-1_i32[_0-9]*]], %{{.*}}, %c4_i32{{.*}}, %c31_i32{{.*}} : f32 -> f32
// CHECK: arith.maximumf
// CHECK: nvvm.shfl.sync  bfly %[[ALL]], %{{.*}}, %c2_i32
// CHECK: nvvm.shfl.sync  bfly %[[ALL]], %{{.*}}, %c1_i32
// CHECK: %[[FIRST:.*]] = arith.andi %{{.*}}, %c-8_i32 : i32
// CHECK: %[[MASK:.*]] = arith.shli %c255_i32, %[[FIRST]] : i32
// CHECK: nvvm.shfl.sync  bfly %[[MASK]], %{{.*}}, %c4_i32
// CHECK: arith.addf
// CHECK: nvvm.shfl.sync  bfly %[[MASK]], %{{.*}}, %c2_i32
// CHECK: nvvm.shfl.sync  bfly %[[MASK]], %{{.*}}, %c1_i32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: nfgpu.group_reduce
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
module attributes {gpu.container_module} {
gpu.module @k {
  gpu.func @group(%p: f32, %lane: i32, %out: !llvm.ptr<1>) kernel {
    %m = nfgpu.group_reduce <max> %p lanes 8 : f32
    %s = nfgpu.group_reduce <sum> %m lanes 8 warp_lane %lane : f32
    llvm.store %s, %out : f32, !llvm.ptr<1>
    gpu.return
  }
}
}
