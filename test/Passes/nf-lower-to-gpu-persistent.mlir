// RUN: nf-opt %s -split-input-file -nf-materialize-variants -nf-lower-to-gpu -verify-diagnostics | FileCheck %s
// RUN: nf-opt %s -split-input-file -nf-materialize-variants -nf-lower-to-gpu -verify-diagnostics | FileCheck %s --check-prefix=LOOP

// A persistent schedule: the vectorized variant's CTAs walk rows of one
// batch entry (P = gridDim / B CTAs per entry, rows p, p + P, ... < S).
// The [B, 1, D] operands are loaded once, before the row loop; the row is
// copied into one of two shared slots (2 x 128 threads x 2 chunks x 16
// bytes) one row ahead: the first row before the loop, then in each
// iteration the next row (if there is one) into the other slot, after
// which the CTA waits for every copy but the newest and reads its chunks
// of the current row back from shared memory. The slots are dynamic shared
// memory (an extern buffer of no size, 128-byte aligned), whose bytes the
// function states for the launch. Two exchanges (mean, max): no barrier at the end of the row.
// CHECK: llvm.mlir.global external @lmq_v0_persistent128x2_stage() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: gpu.func @lmq_v0_persistent128x2(
// CHECK-SAME: nf.dynamic_shared_bytes = 8192 : i64
// CHECK: gpu.grid_dim x
// CHECK-COUNT-4: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf32>
// A chunk past the row copies nothing (source size 0: a zero fill).
// CHECK: %[[SIZE0:.*]] = arith.select %{{.*}}, %c16_i32, %c0_i32 : i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %[[SIZE0]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: %[[SIZE1:.*]] = arith.select %{{.*}}, %c16_i32{{.*}}, %c0_i32{{.*}} : i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %[[SIZE1]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: scf.if
// CHECK-COUNT-2: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NOT: !llvm.ptr<1> -> vector<8xf32>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: nfgpu.row_reduce
// CHECK: nfgpu.row_reduce
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: gpu.return
// Its twins (4- and 2-element chunks) and general variant run one row per
// CTA.
// The loop walks the tokens of the CTA's batch entry: each row's entry and
// token are known, and no division is left in the loop (the row index's
// division by S was 40 of the 604 SASS instructions per row of
// layernorm_modulate_quant_fp8's 512 x 4 variant).
// LOOP-LABEL: gpu.func @lmq_v0_persistent128x2(
// LOOP: arith.divui
// LOOP: scf.for
// LOOP-NOT: arith.divui
// LOOP-NOT: arith.remui
// LOOP: scf.yield
// CHECK-LABEL: gpu.func @lmq_v1_cta128x4(
// CHECK-NOT: nvvm.cp.async
// CHECK-NOT: scf.for
// CHECK: gpu.return
nf.kernel @lmq(%x: tensor<?x?x?xbf16>, %scale: tensor<?x1x?xf32>,
    %shift: tensor<?x1x?xf32>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 128, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, persistent = true>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %m = nf.reduce mean %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %y = nf.mul %c, %sc : !nf.row<f32>, !nf.row<f32>
  %z = nf.add %y, %sh : !nf.row<f32>, !nf.row<f32>
  %a = nf.abs %z : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %z, %amax : !nf.row<f32>, f32
  %qb = nf.cast %q : !nf.row<f32> to !nf.row<bf16>
  nf.return %qb : !nf.row<bf16>
}

// -----

// One exchange per row: the next row's exchange would write the slot this
// row's threads may still read, so each row ends with a barrier.
// CHECK-LABEL: gpu.func @rms_v0_persistent256x2(
// CHECK: scf.for
// CHECK: nfgpu.row_reduce
// CHECK-NOT: nfgpu.row_reduce
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
nf.kernel @rms(%x: tensor<?x?x?xbf16>, %w: tensor<?xf32>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, persistent = true>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wf = nf.load %w [D] : tensor<?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %n = nf.mul %xf, %ms : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>, !nf.row<f32>
  %yb = nf.cast %y : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}

// -----

// Rows of 32 threads, four per CTA: the CTA walks four consecutive tokens
// at a time, each row group its own with two slots of its own (2 x 4 rows x
// 32 threads x 2 chunks x 16 bytes). The rows run the same iterations (the
// loop's bound is S, or 0 for CTAs past B * P, which a grid of one CTA per
// four rows may have). The modulation's `1 + scale` is computed once,
// before the row loop, from the scale held in registers; the shift is added
// in the loop.
// The chain's CTAs are B * ceil(S / 4), as the runtime launches at most.
// CHECK-LABEL: gpu.func @mod_v0_persistent32x2(
// CHECK-SAME: nf.dynamic_shared_bytes = 8192 : i64
// CHECK: arith.ceildivui %arg6, %c4_i64 : i64
// CHECK: %[[END:.*]] = arith.select %{{.*}}, %arg6, %{{.*}} : i64
// CHECK: %[[SC0:.*]] = llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf32>
// CHECK: %[[SC1:.*]] = llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf32>
// CHECK: %[[SH0:.*]] = llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf32>
// CHECK: arith.addf %[[SC0]], %{{.*}} : vector<8xf32>
// CHECK: arith.addf %[[SC1]], %{{.*}} : vector<8xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END]] step
// CHECK-NOT: arith.addf %[[SC0]]
// CHECK: arith.addf %{{.*}}, %[[SH0]] : vector<8xf32>
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
nf.kernel @mod(%x: tensor<?x?x?xbf16>, %scale: tensor<?x1x?xf32>,
    %shift: tensor<?x1x?xf32>) -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?xf32>)
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 32, rows_per_cta = 4, chunk = 8, chunks_per_thread = 2, persistent = true>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %sc = nf.load %scale [B, 1, D] : tensor<?x1x?xf32>
  %sh = nf.load %shift [B, 1, D] : tensor<?x1x?xf32>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %m = nf.reduce mean %xf : !nf.row<f32>
  %c = nf.sub %xf, %m : !nf.row<f32>, f32
  %one = nf.constant 1.0 : f32
  %sc1 = nf.add %sc, %one : !nf.row<f32>, f32
  %y = nf.mul %c, %sc1 : !nf.row<f32>, !nf.row<f32>
  %z = nf.add %y, %sh : !nf.row<f32>, !nf.row<f32>
  %a = nf.abs %z : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %q = nf.div %z, %amax : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %amax : !nf.row<f8E4M3FN>, f32
}

// -----

// A kernel that cannot walk rows persistently (no operand along the row).
// expected-error@+1 {{has a persistent schedule, which needs a kernel of one chain without select, rotary embedding, group reductions or [B, F, 1, D] operands, with an operand broadcast along the row, whose two staged rows fit in 200 KB of shared memory}}
nf.kernel @plain(%x: tensor<?x?x?xbf16>) -> tensor<?x?x?xbf16>
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 2, persistent = true>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %n = nf.mul %xf, %ms : !nf.row<f32>, f32
  %yb = nf.cast %n : !nf.row<f32> to !nf.row<bf16>
  nf.return %yb : !nf.row<bf16>
}
