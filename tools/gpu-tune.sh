#!/usr/bin/env bash
# Tuning on the device machine (no MLIR): builds the runtime and nf-run,
# runs `nf-run --tune` for each roofline case and D (the shapes of
# bench/roofline.py: about 128 MiB of x), which writes ARTS/<case>.nfa.tune,
# then times the tuned artifacts against the same artifacts without their
# tune files (--baseline) in one roofline run.
#
#   CASES=c1,c2 DIMS=d1,d2 [ARTS=gpu-tune] [ROUNDS=3] tools/gpu-tune.sh OUT
#
# ARTS/<case>.nfa: the artifacts (file name = roofline case name; D
# dynamic). Writes OUT/tune.txt (nf-run's TUNE lines), the tune files, and
# OUT/roofline.md.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu-tune.sh OUT}
: "${CASES:?CASES=comma-separated roofline cases}" "${DIMS:?DIMS=comma-separated D}"
arts=${ARTS:-gpu-tune}
mkdir -p "$out" "$out/untuned"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
{ cmake -S runtime -B build-runtime -G Ninja -DCMAKE_BUILD_TYPE=Release \
    && ninja -C build-runtime; } > "$out/build.log" 2>&1 \
  || { cat "$out/build.log"; exit 1; }
rc=0
for c in ${CASES//,/ }; do
  cp "$arts/$c.nfa" "$out/untuned/$c.nfa"
  # 2-byte rows except the f32 cases.
  bytes=2; case $c in *_f32) bytes=4 ;; esac
  for d in ${DIMS//,/ }; do
    rows=$(( (128 << 20) / (d * bytes) ))
    build-runtime/bin/nf-run "$arts/$c.nfa" --tune --dims "B=1,S=$rows,D=$d" \
      >> "$out/tune.txt" 2>&1 || rc=1
  done
  cp "$arts/$c.nfa.tune" "$out/" 2>/dev/null
done
grep -E '^(TUNED|MISMATCH)' "$out/tune.txt"
python3 bench/roofline.py --artifacts "$arts" --baseline "$out/untuned" \
  --no-compile --rounds "${ROUNDS:-3}" --cases "$CASES" --dims "$DIMS" \
  --markdown "$out/roofline.md" 2>&1 | grep -v '^ *$' || rc=1
exit $rc
