#!/usr/bin/env bash
# One change to the kernels, checked and timed on the device machine in one
# call (CUDA, torch, no MLIR): builds the runtime library, runs the
# correctness matrix (python/tests/gpu_matrix.py) over the changed families,
# compute-sanitizer (memcheck, racecheck, synccheck) over them at a few D,
# then times the new artifacts against the baseline's in the same run
# (bench/roofline.py --baseline), each against a same-size SM copy kernel.
#
#   CASES=c1,c2 DIMS=d1,d2 [SAN_D=d1,d2] [AB=gpu-ab] tools/gpu-ab.sh OUT [roofline args]
#
# AB/new/<case>.nfa and AB/base/<case>.nfa: the artifacts of the change and
# of its baseline (D dynamic; file name = roofline case name); AB/mx/: the
# matrix artifacts of the changed families (<kernel>_<dtype>_dyn.nfa).
# Extra arguments go to roofline.py (e.g. --no-compile --rounds 3).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-ab.sh OUT [roofline args]}; shift
ab=${AB:-gpu-ab}
: "${CASES:?CASES=comma-separated roofline cases}" "${DIMS:?DIMS=comma-separated D}"
mkdir -p "$out"
status=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "tree $(git rev-parse --short HEAD 2>/dev/null); $(date -u)" | tee -a "$out/device.txt"
{ cmake -S runtime -B build-runtime -G Ninja -DCMAKE_BUILD_TYPE=Release \
    && ninja -C build-runtime; } > "$out/build.log" 2>&1 \
  || { cat "$out/build.log"; exit 1; }

if [ -d "$ab/mx" ]; then
  echo "== correctness matrix over $ab/mx"
  python3 python/tests/gpu_matrix.py "$ab/mx" > "$out/matrix.log" 2>&1 || status=1
  grep -E "^FAIL" "$out/matrix.log" | head -20; tail -1 "$out/matrix.log"
  if [ -n "${SAN_D:-}" ]; then
    for tool in memcheck racecheck synccheck; do
      echo "== compute-sanitizer $tool at D = $SAN_D"
      NF_MATRIX_D=$SAN_D compute-sanitizer --tool "$tool" --error-exitcode 9 \
        python3 python/tests/gpu_matrix.py "$ab/mx" > "$out/san-$tool.log" 2>&1 \
        || status=1
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^FAIL" "$out/san-$tool.log" | tail -3
    done
  fi
fi

echo "== roofline, $ab/new against $ab/base"
python3 bench/roofline.py --artifacts "$ab/new" --baseline "$ab/base" \
  --cases "$CASES" --dims "$DIMS" --json "$out/roofline.json" \
  --markdown "$out/roofline.md" "$@" 2>&1 | tee "$out/roofline.log" \
  | grep -v "^W1\|^I1"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status
