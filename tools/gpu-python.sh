#!/usr/bin/env bash
# The Python side of the GPU check, in one command, on the device machine
# (CUDA, torch, no MLIR): builds the runtime library, runs the package's
# tests (CUDA, CUDA graphs, torch.compile, fake tensors, CPU fallback), the
# correctness matrix (python/tests/gpu_matrix.py), the DiT block example,
# and the benchmark against torch eager and torch.compile.
# Artifacts come from tools/make-python-cases.sh (gpu-py/).
#
#   tools/gpu-python.sh [OUT_DIR] [bench args...]
#   ONLY=tests|bench|roofline|profile tools/gpu-python.sh ...   (one part; the tests
#        include the example; profile: ncu of the normfuse kernels of the
#        bench cases in PROFILE, default 2,4,6; PROFILE=... adds it to a run)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-out}; shift || true
mkdir -p "$out"
status=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "artifacts of commit $(cat gpu-py/COMMIT 2>/dev/null || echo unknown); tree $(git rev-parse --short HEAD 2>/dev/null)" | tee -a "$out/device.txt"
date -u | tee -a "$out/device.txt"

{ cmake -S runtime -B build-runtime -G Ninja -DCMAKE_BUILD_TYPE=Release \
    && ninja -C build-runtime; } > "$out/build.log" 2>&1 \
  || { cat "$out/build.log"; exit 1; }

only=${ONLY:-all}
if [ "$only" = all ] || [ "$only" = tests ]; then
echo "== tests"
NF_TEST_ARTIFACTS=gpu-py/test python3 -m unittest discover -s python/tests -v \
  > "$out/tests.log" 2>&1 || status=1
tail -5 "$out/tests.log"; grep -E "^(FAIL|ERROR):" "$out/tests.log" | head -20

echo "== correctness matrix against the generated fallback"
python3 python/tests/gpu_matrix.py gpu-py/matrix > "$out/matrix.log" 2>&1 || status=1
grep -E "^FAIL" "$out/matrix.log" | head -20; tail -1 "$out/matrix.log"

echo "== DiT block example"
python3 examples/python/dit_block.py --artifacts gpu-py/test 2>&1 | tee "$out/dit.log" \
  | tail -5; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1

fi
if [ "$only" = all ] || [ "$only" = bench ]; then
echo "== copy bandwidth by size"
python3 bench/copy_sizes.py 2>&1 | tee "$out/copy_sizes.log"
echo "== benchmark"
python3 bench/bench.py --artifacts gpu-py/bench --json "$out/bench.json" \
  --markdown "$out/bench.md" "$@" 2>&1 | tee "$out/bench.log" | grep -v "^W1\|^I1"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if [ "$only" = all ] || [ "$only" = roofline ]; then
echo "== roofline: the D-dynamic artifacts at every D (Quack, Liger if importable)"
python3 bench/roofline.py --artifacts gpu-py/roofline --json "$out/roofline.json" \
  --markdown "$out/roofline.md" 2>&1 | tee "$out/roofline.log" | grep -v "^W1\|^I1"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if [ "$only" = profile ] || [ -n "${PROFILE:-}" ]; then
echo "== ncu profile of the normfuse kernels of cases ${PROFILE:-2,4,6}"
ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
  --section LaunchStats --section WarpStateStats --section SchedulerStats \
  -k 'regex:^(scale_|fused_add|norm_tanh|qk_rms|select01)' --launch-count 20 \
  python3 bench/bench.py --artifacts gpu-py/bench --profile --only "${PROFILE:-2,4,6}" \
  > "$out/ncu.txt" 2>&1 || status=1
grep -E "^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Theoretical Occ|Block Limit|Warp Cycles Per Issued|Eligible Warps" "$out/ncu.txt" | head -120
fi
exit $status
