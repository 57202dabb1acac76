#!/usr/bin/env bash
# Compiles every example for every supported SM through ptxas, with D as
# the file has it and with D fixed (3072, 8192, 32768). With --no-spills it
# also requires ptxas to report no spill stores or loads for any function.
# Used by test/Codegen/examples-ptxas.test (with --no-spills).
#   tools/check-examples-ptxas.sh BIN_DIR EXAMPLES_DIR [--no-spills]
# The compilations run in parallel (NF_CHECK_JOBS, default: the number of
# CPUs), since this check is the longest part of CI; the report lists them
# in the same order as a serial run would.
set -euo pipefail
bin=$1; examples=$2; spills=${3:-}
sms="sm_80 sm_86 sm_89 sm_90 sm_90a sm_100 sm_120"
jobs=${NF_CHECK_JOBS:-$(nproc 2>/dev/null || echo 1)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check FILE SM [DIM...]: one compilation; prints its "ok"/"FAIL"/"SPILL"
# report and exits non-zero on a failure.
check() {
  local f=$1 sm=$2; shift 2
  local name dim info funcs clean
  name=$(basename "$f" .mlir); dim="$*"
  if ! info=$("$bin/nf-compile" "$f" --sm "$sm" "$@" --ptxas-info -o /dev/null 2>&1); then
    echo "FAIL $name $sm $dim: $info"; return 1
  fi
  # Every function line ("  name: Used N registers ...; <frame and
  # spills>") must report no spill stores and no spill loads, except a
  # function nf-compile asked for two or three CTAs per SM (not for a
  # spill), on the terms nf-compile keeps such a request: at most 16 bytes
  # stored (docs/Rationale.md, "Two CTAs of 512 threads per SM", "A third
  # CTA for LayerNorm's 512 x 4 and 512 x 5 rows", "Occupancy steps": a
  # third CTA of 512 threads asked for as "one more"), or for two CTAs at
  # most 64 bytes stored and at most 8 more loaded ("A second CTA of 512
  # threads with spill"; the block size is not on the line, so a 1024-thread
  # function on those terms would pass here too), and a persistent variant
  # with at most 8 bytes stored and 8 loaded, which nf-compile keeps in its family
  # ("Persistent CTAs").
  funcs=$(echo "$info" | grep -c '^  .*: Used' || true)
  clean=$(echo "$info" | awk '
    /^  .*: Used/ {
      s = -1; l = -1
      if (match($0, /[0-9]+ bytes spill stores/)) s = substr($0, RSTART, RLENGTH) + 0
      if (match($0, /[0-9]+ bytes spill loads/)) l = substr($0, RSTART, RLENGTH) + 0
      if (s == 0 && l == 0) { n++; next }
      if (s < 1) next
      if (s <= 16 && /\.minnctapersm (2 \(two|3 \(three) CTAs per SM asked for\)$/) { n++; next }
      if (s <= 16 && /\.minnctapersm 3 \(one more CTA per SM asked for\)$/) { n++; next }
      if (s <= 64 && l <= s + 8 && /\.minnctapersm 2 \(two CTAs per SM asked for\)$/) { n++; next }
      if (s <= 8 && l <= 8 && /^  [A-Za-z0-9_]+_persistent[0-9]+x[0-9]+: Used/) n++
    }
    END { print n + 0 }')
  if [ -n "$spills" ] && { [ "$funcs" -eq 0 ] || [ "$funcs" -ne "$clean" ]; }; then
    echo "SPILL $name $sm $dim"; echo "$info"; return 1
  fi
  echo "ok $name $sm $dim"
}

# One line per compilation: index, file, SM, D option (possibly empty).
n=0
for f in "$examples"/*.mlir; do
  # Examples with a static head_dim cannot be re-specialized.
  if grep -q 'x128x' "$f"; then dims=(""); else dims=("" "D=3072" "D=8192" "D=32768"); fi
  for sm in $sms; do
    for dim in "${dims[@]}"; do
      printf '%d\t%s\t%s\t%s\n' "$n" "$f" "$sm" "$dim"; n=$((n + 1))
    done
  done
done > "$work/list"

run_one() {
  local idx f sm dim
  IFS=$'\t' read -r idx f sm dim <<<"$1"
  if [ -n "$dim" ]; then
    check "$f" "$sm" --dim "$dim" > "$work/$idx.out" 2>&1 || touch "$work/$idx.fail"
  else
    check "$f" "$sm" > "$work/$idx.out" 2>&1 || touch "$work/$idx.fail"
  fi
}
export -f check run_one
export bin spills work
tr '\n' '\0' < "$work/list" | xargs -0 -P "$jobs" -I{} bash -c 'run_one "$1"' _ {}

status=0
for ((i = 0; i < n; i++)); do
  cat "$work/$i.out"
  if [ -e "$work/$i.fail" ]; then status=1; fi
done
exit $status
