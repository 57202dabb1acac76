#!/usr/bin/env bash
# The main job: compile every example for one SM (default sm_90) into
# build/artifacts/, and print per kernel its schedule, block size, shared
# memory, and the registers and spills ptxas reports, plus the time from IR
# file to PTX.
#   tools/run-examples.sh [BIN_DIR] [SM]
set -euo pipefail
bin=${1:-build/bin}
sm=${2:-sm_90}
cd "$(dirname "$0")/.."
mkdir -p build/artifacts
status=0
for f in examples/*.mlir; do
  name=$(basename "$f" .mlir)
  start=$(date +%s%N)
  if ! "$bin/nf-compile" "$f" --sm "$sm" --emit=ptx -o /dev/null; then
    echo "FAIL  $f"; status=1; continue
  fi
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "== $f (IR to PTX: ${ms} ms)"
  "$bin/nf-compile" "$f" --sm "$sm" --ptxas-info -o "build/artifacts/$name.nfa" \
    || { echo "FAIL  $f"; status=1; }
done
exit $status
