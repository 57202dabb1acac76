#!/usr/bin/env bash
# Compiles every example for every supported SM through ptxas, with D as
# the file has it and with D fixed (3072, 8192, 32768). With --no-spills it
# also requires ptxas to report no spill stores or loads for any function.
# Used by test/Codegen/examples-ptxas.test (with --no-spills).
#   tools/check-examples-ptxas.sh BIN_DIR EXAMPLES_DIR [--no-spills]
set -euo pipefail
bin=$1; examples=$2; spills=${3:-}
sms="sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_120"
status=0
for f in "$examples"/*.mlir; do
  name=$(basename "$f" .mlir)
  # Examples with a static head_dim cannot be re-specialized.
  if grep -q 'x128x' "$f"; then dims=("") ; else dims=("" "--dim D=3072" "--dim D=8192" "--dim D=32768"); fi
  for sm in $sms; do
    for dim in "${dims[@]}"; do
      if ! info=$("$bin/nf-compile" "$f" --sm "$sm" $dim --ptxas-info -o /dev/null 2>&1); then
        echo "FAIL $name $sm $dim: $info"; status=1; continue
      fi
      # Every function line ("  name: Used N registers ...; <frame and
      # spills>") must report no spill stores and no spill loads, except a
      # function nf-compile asked for two CTAs per SM (not for a spill),
      # which may spill up to 16 bytes (docs/Rationale.md, "Two CTAs of 512
      # threads per SM").
      funcs=$(echo "$info" | grep -c '^  .*: Used' || true)
      clean=$(echo "$info" | grep '^  .*: Used' | grep -c -E ' 0 bytes spill stores, 0 bytes spill loads|[ ,]([1-9]|1[0-6]) bytes spill stores, [0-9]+ bytes spill loads; \.minnctapersm 2 \(two CTAs per SM asked for\)$' || true)
      if [ -n "$spills" ] && { [ "$funcs" -eq 0 ] || [ "$funcs" -ne "$clean" ]; }; then
        echo "SPILL $name $sm $dim"; echo "$info"; status=1; continue
      fi
      echo "ok $name $sm $dim"
    done
  done
done
exit $status
