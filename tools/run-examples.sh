#!/usr/bin/env bash
# The main job: parse, verify and print every example through nf-opt.
set -euo pipefail
bin=${1:-build/bin}
cd "$(dirname "$0")/.."
status=0
for f in examples/*.mlir; do
  if "$bin/nf-opt" "$f" > /dev/null; then
    echo "ok    $f"
  else
    echo "FAIL  $f"; status=1
  fi
done
exit $status
