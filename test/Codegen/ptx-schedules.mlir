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
// D left dynamic: the row is streamed, 256 threads per row:
// RUN: nf-compile %s --sm sm_80 --emit=ptx | FileCheck %s --check-prefix=STREAM
// D fixed but too long for one CTA's registers: streamed by 1024 threads;
// with --max-cluster 8 (sm_90+), a cluster of 4 CTAs of 256 threads shares
// the row (distributed shared memory for the reductions).
// RUN: nf-compile %s --sm sm_90 --dim D=32768 --emit=ptx | FileCheck %s --check-prefix=LONG
// RUN: nf-compile %s --sm sm_90 --dim D=32768 --max-cluster 8 --emit=ptx | FileCheck %s --check-prefix=CLUSTER
// --stage-rows: when the launch gives enough dynamic shared memory, x's row
// is copied there with cp.async once and the reduction and the output pass
// read it back; else the streaming passes.
// RUN: nf-compile %s --sm sm_80 --stage-rows --emit=ptx | FileCheck %s --check-prefix=STAGED
// sm_75 has no cp.async: streamed.
// RUN: nf-compile %s --sm sm_75 --stage-rows --emit=ptx | FileCheck %s --check-prefix=NOSTAGE

nf.kernel @rms(%x: tensor<?x?x?xbf16>, %w: tensor<?xbf16>) -> tensor<?x?x?xbf16> {
  %xb = nf.load %x [B, S, D] : tensor<?x?x?xbf16>
  %wb = nf.load %w [D] : tensor<?xbf16>
  %y = nf.rms_norm %xb weight %wb eps 1.0e-6 : !nf.row<bf16>
  nf.return %y : !nf.row<bf16>
}

// MULTI-LABEL: .entry rms(
// MULTI: .maxntid 128, 1, 1
// MULTI-NOT: bar.sync
// MULTI: ld.global.nc.v4.b32
// MULTI: shfl.sync.bfly.b32
// MULTI-NOT: bar.sync
// MULTI: st.global.v4.b32
// MULTI-LABEL: .entry rms_general(

// WARP-LABEL: .entry rms(
// WARP: .maxntid 128, 1, 1
// WARP-NOT: bar.sync
// WARP: ld.global.nc.v4.b32
// WARP-COUNT-5: shfl.sync.bfly.b32
// WARP-NOT: bar.sync
// WARP: st.global.v4.b32
// WARP-LABEL: .entry rms_general(

// CTA-LABEL: .entry rms(
// CTA: .maxntid 128, 1, 1
// CTA: ld.global.nc.v4.b32
// CTA: shfl.sync.bfly.b32
// CTA: bar.sync
// CTA: st.global.v4.b32
// CTA-LABEL: .entry rms_general(

// STREAM-LABEL: .entry rms(
// STREAM: .maxntid 256, 1, 1
// STREAM: ld.global.nc.v4.b32
// STREAM: shfl.sync.bfly.b32
// STREAM: bar.sync
// STREAM: st.global.v4.b32
// STREAM-LABEL: .entry rms_general(
// STREAM-NOT: ld.global{{(.nc)?}}.v4.b32
// STREAM-NOT: cp.async

// LONG-LABEL: .entry rms(
// LONG: .maxntid 1024, 1, 1
// LONG: ld.global.nc.v4.b32
// LONG: bar.sync
// LONG: st.global.v4.b32

// The cross-warp scratch is read 16 bytes at a time: 16-byte aligned even
// behind the cluster's slots.
// CLUSTER-LABEL: .entry rms(
// CLUSTER: .maxntid 256, 1, 1
// CLUSTER: .reqnctapercluster 4, 1, 1
// CLUSTER: .shared .align 4 .b8 rms_cluster[4];
// CLUSTER: .shared .align 16 .b8 __wg_rms_0[
// CLUSTER: ld.global.nc.v4.b32
// CLUSTER: shfl.sync.bfly.b32
// CLUSTER: bar.sync
// CLUSTER: barrier.cluster.arrive;
// CLUSTER-NEXT: barrier.cluster.wait;
// CLUSTER: mapa.shared::cluster.u64
// CLUSTER: ld.shared::cluster.b32
// CLUSTER: st.global.v4.b32
// CLUSTER: barrier.cluster.arrive;

// STAGED: .extern .shared .align 16 .b8 rms_rows[];
// STAGED-LABEL: .entry rms(
// STAGED: .maxntid 256, 1, 1
// STAGED: %dynamic_smem_size
// STAGED: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// STAGED: cp.async.wait_group 0;
// STAGED: ld.shared.v4.b32
// STAGED: shfl.sync.bfly.b32
// STAGED: bar.sync
// STAGED: st.global.v4.b32
// STAGED-LABEL: .entry rms_general(
// STAGED-NOT: cp.async

// NOSTAGE-NOT: cp.async
// NOSTAGE-NOT: dynamic_smem_size

// The general variant of a cluster schedule streams its elements, spread
// over the cluster's CTAs like the chunks; one cluster barrier per
// reduction and one before exit.
// CLUSTER-LABEL: .entry rms_general(
// CLUSTER: .reqnctapercluster 4, 1, 1
// CLUSTER-COUNT-2: barrier.cluster.arrive;
// CLUSTER-NOT: barrier.cluster.arrive;
