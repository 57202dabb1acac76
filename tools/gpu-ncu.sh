#!/usr/bin/env bash
# ncu over the normfuse kernels of roofline cases, on the device machine (no
# MLIR): builds the runtime library, then profiles `bench/roofline.py
# --profile` (each kernel launched twice per case and D, nothing else) with
# the sections that tell what bounds a memory-bound kernel: DRAM and L1/L2
# throughput and hit rates, occupancy and its limit, warp stall reasons.
#
#   CASES=c1,c2 DIMS=d1,d2 [ARTS=gpu-prof] [KERNELS=regex] [PEERS=1] \
#     tools/gpu-ncu.sh OUT
#
# ARTS/<case>.nfa: the artifacts (file name = roofline case name). KERNELS:
# the functions profiled (default `_v[0-9]+_`, the vectorized variants;
# `_g[0-9]+_` for the general ones, which odd D runs). PEERS=1: also
# torch.compile's kernels (Triton) and the floor's copy kernel, profiled in
# the same report; the code Inductor generated is written to OUT/compiled/.
# Only launches in the NVTX range "profile" are profiled (not those that
# make inputs, nor torch.compile's compiling and autotuning). The full
# report is OUT/ncu.txt; the lines worth reading are printed.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-ncu.sh OUT}
: "${CASES:?CASES=comma-separated roofline cases}" "${DIMS:?DIMS=comma-separated D}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
{ cmake -S runtime -B build-runtime -G Ninja -DCMAKE_BUILD_TYPE=Release \
    && ninja -C build-runtime; } > "$out/build.log" 2>&1 \
  || { cat "$out/build.log"; exit 1; }
kernels=${KERNELS:-_v[0-9]+_}
compile=--no-compile
if [ -n "${PEERS:-}" ]; then
  kernels="$kernels|^triton_|vectorized_elementwise_kernel"
  compile="--compiled-code $out/compiled"
fi
ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
  --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats \
  --section WarpStateStats --nvtx --nvtx-include "profile/" -k "regex:$kernels" \
  python3 bench/roofline.py --artifacts "${ARTS:-gpu-prof}" --profile $compile \
  --cases "$CASES" --dims "$DIMS" > "$out/ncu.txt" 2>&1
rc=$?
grep -E "^  [a-z_0-9]+_[vg][0-9]+_.*\(|^  triton_|^  void at::native::vectorized_elem|Duration|Grid Size|Block Size|DRAM Throughput|L1/TEX Hit|L2 Hit|L1/TEX Cache Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per|Block Limit Reg|Block Limit Shared|Warp Cycles Per Issued|Stall Long|Stall Barrier" \
  "$out/ncu.txt" | head -200
exit $rc
