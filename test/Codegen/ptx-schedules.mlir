// The PTX of each schedule: 16-byte row loads and stores in the vectorized
// kernel, butterfly shuffles for the reduction, a barrier only where the
// row spans several warps, and the block size as .maxntid.
//
// Several rows per warp (D = 128: 16 threads per row, 8 rows per CTA):
// RUN: nf-compile %s --sm sm_90 --dim D=128 --emit=ptx | FileCheck %s --check-prefix=MULTI
// One warp per row:
// RUN: nf-compile %s --sm sm_90 --dim D=1024 --threads-per-row 32 --emit=ptx | FileCheck %s --check-prefix=WARP
// One CTA per row, across warps (D = 4096: 128 threads per row):
// RUN: nf-compile %s --sm sm_90 --dim D=4096 --emit=ptx | FileCheck %s --check-prefix=CTA
// Streamed rows (--streaming; D is dynamic), 256 threads per row:
// RUN: nf-compile %s --sm sm_80 --streaming --emit=ptx | FileCheck %s --check-prefix=STREAM
// D left dynamic: the family, one variant per schedule a static D would
// get (16-byte accesses), each register-resident one with an 8-byte twin
// (rows of a multiple of 4 elements) and a 4-byte one (even rows), and the
// general variants for any alignment; rows longer than 512 threads x 5 chunks
// are held by one CTA of 1024 threads (at most 4 chunks each: one reduction,
// one input), then shared by the CTAs of a cluster (4, 8), then streamed by
// 1024 threads.
// RUN: nf-compile %s --sm sm_90 --emit=ptx | FileCheck %s --check-prefix=FAMILY
// D fixed but too long for one CTA's registers: four CTAs of a cluster share
// the row, combining its sum of squares through distributed shared memory;
// each holds its quarter in shared memory (staged: one [B, S, D] input).
// RUN: nf-compile %s --sm sm_90 --dim D=65536 --emit=ptx | FileCheck %s --check-prefix=CLUSTER
// Without clusters (--max-cluster 1, or before sm_90): streamed by 1024
// threads.
// RUN: nf-compile %s --sm sm_90 --dim D=65536 --max-cluster 1 --emit=ptx | FileCheck %s --check-prefix=LONG
// RUN: nf-compile %s --sm sm_80 --dim D=65536 --emit=ptx | FileCheck %s --check-prefix=LONG

nf.kernel @rms(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>) -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %y = nf.rms_norm %xb weight %wb eps 1.0e-6 : !nf.row<bf16>
  nf.return %y : !nf.row<bf16>
}

// MULTI-LABEL: .entry rms_v0_multi_row16x1(
// MULTI: .maxntid 128, 1, 1
// MULTI-NOT: bar.sync
// MULTI: ld.global.nc.v4.b32
// MULTI: shfl.sync.bfly.b32
// MULTI-NOT: bar.sync
// MULTI: st.global.v4.b32
// MULTI-LABEL: .entry rms_g1_multi_row16x8(

// WARP-LABEL: .entry rms_v0_warp32x4(
// WARP: .maxntid 128, 1, 1
// WARP-NOT: bar.sync
// WARP: ld.global.nc.v4.b32
// WARP-COUNT-5: shfl.sync.bfly.b32
// WARP-NOT: bar.sync
// WARP: st.global.v4.b32
// WARP-LABEL: .entry rms_g1_streaming32(

// CTA-LABEL: .entry rms_v0_cta128x4(
// CTA: .maxntid 128, 1, 1
// CTA: ld.global.nc.v4.b32
// CTA: shfl.sync.bfly.b32
// CTA: bar.sync
// CTA: st.global.v4.b32
// CTA-LABEL: .entry rms_g1_streaming128(

// STREAM-LABEL: .entry rms_v0_streaming256(
// STREAM: .maxntid 256, 1, 1
// STREAM: ld.global.nc.v4.b32
// STREAM: shfl.sync.bfly.b32
// STREAM: bar.sync
// STREAM: st.global.v4.b32
// STREAM-LABEL: .entry rms_g1_streaming256(
// STREAM-NOT: ld.global{{(.nc)?}}.v4.b32
// STREAM-NOT: cp.async

// st.async needs PTX ISA 8.1 (sm_90's default is 7.8).
// CLUSTER: .version 8.1
// CLUSTER-LABEL: .entry rms_v0_cluster256x8c4(
// CLUSTER: .maxntid 256, 1, 1
// CLUSTER: .reqnctapercluster 4, 1, 1
// CLUSTER: @p mbarrier.init.shared.b64
// CLUSTER: @p fence.mbarrier_init.release.cluster
// CLUSTER: barrier.cluster.arrive.relaxed
// CLUSTER-NOT: ld.global
// CLUSTER-COUNT-8: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
// CLUSTER-NEXT: cp.async.commit_group;
// CLUSTER-NEXT: cp.async.wait_group 0;
// CLUSTER-COUNT-8: ld.shared.v4.b32
// CLUSTER-NOT: ld.global
// CLUSTER: bar.sync
// CLUSTER: barrier.cluster.wait
// CLUSTER: mbarrier.arrive.expect_tx.shared.b64
// CLUSTER: mapa.shared::cluster
// CLUSTER: st.async.shared::cluster.mbarrier::complete_tx::bytes.b32
// CLUSTER: st.async.shared::cluster.mbarrier::complete_tx::bytes.b32
// CLUSTER-NOT: barrier.cluster
// CLUSTER: mbarrier.try_wait.parity.shared.b64
// CLUSTER-NOT: barrier.cluster
// The epilogue reads the row back from shared memory, the weight from
// global memory.
// CLUSTER: ld.shared.v4.b32
// CLUSTER: ld.global.nc.v4.b32
// CLUSTER: st.global.v4.b32
// The general variant streams.
// CLUSTER-LABEL: .entry rms_g1_streaming1024(
// CLUSTER-NOT: barrier.cluster

// LONG-LABEL: .entry rms_v0_streaming1024(
// LONG: .maxntid 1024, 1, 1
// LONG: ld.global.nc.v4.b32
// LONG: bar.sync
// LONG: st.global.v4.b32

// FAMILY-LABEL: .entry rms_v0_multi_row1x1(
// FAMILY-LABEL: .entry rms_v1_multi_row1x2(
// FAMILY-LABEL: .entry rms_v2_multi_row1x4(
// FAMILY-LABEL: .entry rms_g3_multi_row1x8(
// FAMILY-LABEL: .entry rms_v16_multi_row16x1(
// FAMILY: .maxntid 128, 1, 1
// FAMILY: ld.global.nc.v4.b32
// FAMILY-LABEL: .entry rms_v17_multi_row16x2(
// FAMILY: ld.global.nc.v2.b32
// FAMILY-LABEL: .entry rms_v38_warp32x4(
// FAMILY-COUNT-4: ld.global.nc.v4.b32
// FAMILY-LABEL: .entry rms_v39_warp32x8(
// FAMILY-COUNT-8: ld.global.nc.v2.b32
// FAMILY-LABEL: .entry rms_v40_warp32x16(
// FAMILY-COUNT-16: ld.global.nc.b32
// The peeled variant of the same schedule: the row in 16-byte loads, the
// weight (misaligned with the row) element by element, and stores of a
// row's first and last chunk element by element.
// FAMILY-LABEL: .entry rms_p41_warp32x4(
// FAMILY-COUNT-4: ld.global.nc.v4.b32
// FAMILY: ld.global.nc.b16
// FAMILY: st.global.v4.b32
// FAMILY: st.global.b16
// FAMILY-LABEL: .entry rms_v56_cta128x4(
// FAMILY: bar.sync
// FAMILY-LABEL: .entry rms_v74_cta512x4(
// FAMILY: .maxntid 512, 1, 1
// FAMILY-LABEL: .entry rms_v79_cta512x5(
// FAMILY: .maxntid 512, 1, 1
// FAMILY-LABEL: .entry rms_v83_cta1024x3(
// FAMILY: .maxntid 1024, 1, 1
// FAMILY-NOT: reqnctapercluster
// FAMILY-LABEL: .entry rms_v87_cta1024x4(
// FAMILY-LABEL: .entry rms_v91_cluster256x5c4(
// FAMILY: .reqnctapercluster 4, 1, 1
// FAMILY-COUNT-5: cp.async.cg.shared.global
// FAMILY-LABEL: .entry rms_v98_cluster256x8c8(
// FAMILY: .reqnctapercluster 8, 1, 1
// FAMILY-COUNT-8: cp.async.cg.shared.global
// FAMILY-LABEL: .entry rms_v99_streaming1024(
// FAMILY: .maxntid 1024, 1, 1
// FAMILY-LABEL: .entry rms_g100_streaming1024(
// FAMILY-NOT: .entry
