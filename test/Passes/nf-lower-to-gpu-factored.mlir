// RUN: nf-opt %s -nf-materialize-variants -nf-lower-to-gpu -nf-lower-row-reductions -split-input-file | FileCheck %s

// Per-token quantization after RMSNorm * w. In a variant whose rows one CTA
// holds in registers, nf-lower-to-gpu lowers the kernel with its per-row
// scalars factored out of the maximum (factorRowScalars): max |x * w| no
// longer waits for rstd, so the sum of squares and the maximum share one
// exchange. 256 threads per row (8 warps): both values go through one
// butterfly (their shuffles interleaved), one store each into shared memory
// and one barrier.
// CHECK-LABEL: gpu.func @quant_v0_cta256x4(
// CHECK-COUNT-2: gpu.shuffle  xor
// CHECK: scf.if
// CHECK-COUNT-2: memref.store
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// So does the general variant of the schedule (one element per chunk, in
// registers too).
// CHECK-LABEL: gpu.func @quant_g4_cta256x32(
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
nf.kernel @quant(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?xf32>)
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 256, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %eps = nf.constant 1.000000e-06 : f32
  %v = nf.add %ms, %eps : f32
  %rstd = nf.rsqrt %v : f32
  %n = nf.mul %xf, %rstd : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %qmax = nf.constant 448.0 : f32
  %scale = nf.div %amax, %qmax : f32
  %q = nf.div %y, %scale : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %scale : !nf.row<f8E4M3FN>, f32
}

// -----

// A cluster variant lowers the kernel as written: one exchange (CTA
// barrier, then the cluster's mbarrier) per reduction. So does the streamed
// general variant of its family.
// CHECK-LABEL: gpu.func @quant_v0_cluster512x4c2(
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @quant_g1_streaming1024(
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: gpu.return
nf.kernel @quant(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>)
    -> (tensor<?x?x?xf8E4M3FN>, tensor<?x?xf32>)
    attributes {nf.schedules = [#nf.schedule<threads_per_row = 512, rows_per_cta = 1, chunk = 8, chunks_per_thread = 4, cluster_size = 2>]} {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %xf = nf.cast %xb : !nf.row<bf16> to !nf.row<f32>
  %wf = nf.cast %wb : !nf.row<bf16> to !nf.row<f32>
  %ms = nf.reduce mean_sq %xf : !nf.row<f32>
  %eps = nf.constant 1.000000e-06 : f32
  %v = nf.add %ms, %eps : f32
  %rstd = nf.rsqrt %v : f32
  %n = nf.mul %xf, %rstd : !nf.row<f32>, f32
  %y = nf.mul %n, %wf : !nf.row<f32>
  %a = nf.abs %y : !nf.row<f32>
  %amax = nf.reduce max %a : !nf.row<f32>
  %qmax = nf.constant 448.0 : f32
  %scale = nf.div %amax, %qmax : f32
  %q = nf.div %y, %scale : !nf.row<f32>, f32
  %q8 = nf.cast %q : !nf.row<f32> to !nf.row<f8E4M3FN>
  nf.return %q8, %scale : !nf.row<f8E4M3FN>, f32
}
