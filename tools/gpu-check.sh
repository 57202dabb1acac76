#!/usr/bin/env bash
# The whole GPU check, in one command, on a machine with CUDA (no MLIR):
# builds the runtime and nf-run, runs the correctness suite over the cases
# tools/make-gpu-cases.sh prepared, runs compute-sanitizer on a subset, and
# the benchmark at the seed shapes.
#
#   tools/gpu-check.sh [OUT_DIR]        (logs go to OUT_DIR, default gpu-out)
#   CASES=gpu-cases/subset.txt tools/gpu-check.sh   (a subset of the cases)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  | tee "$out/device.txt"
echo "commit $(cat gpu-cases/COMMIT 2>/dev/null || echo unknown)" | tee -a "$out/device.txt"
date -u | tee -a "$out/device.txt"

cmake -S runtime -B /tmp/nf-runtime -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/build.log" 2>&1 \
  && ninja -C /tmp/nf-runtime >> "$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
run=/tmp/nf-runtime/bin/nf-run

# 1. Correctness: every line of cases.txt is one nf-run; eight at a time.
export run out
check_one() {
  local log; log=$("$run" "$@" 2>&1); local rc=$?
  printf '%s\n' "$log"
  [ $rc -eq 0 ] || printf 'FAILED-RUN: %s\n' "$*"
}
export -f check_one
# One case per line; -d '\n' keeps lines whole (trailing blanks would
# otherwise join lines).
awk '{ f=""; for (i = 3; i <= NF; i++) f = f " " $i; print $1 " --case " $2 f }' \
  "${CASES:-gpu-cases/cases.txt}" \
  | xargs -d '\n' -P 8 -I{} bash -c 'check_one {}' > "$out/correctness.log"
# Persistent variants walk several rows per CTA only where an entry has
# more rows than CTAs fit at once, which these small cases do not: their
# artifacts' cases again with one CTA per entry (docs/Artifact.md), every
# row through one CTA's row loop.
while read -r art rest; do
  sed "/^ptx /q" "$art" | grep -q "schedule persistent" && echo "$art $rest"
done < "${CASES:-gpu-cases/cases.txt}" > "$out/persistent-cases.txt"
awk '{ f=""; for (i = 3; i <= NF; i++) f = f " " $i; print $1 " --case " $2 f }' \
  "$out/persistent-cases.txt" \
  | NF_PERSISTENT_CTAS=1 xargs -d '\n' -P 8 -I{} bash -c 'check_one {}' >> "$out/correctness.log"
echo "persistent cases again with NF_PERSISTENT_CTAS=1: $(wc -l < "$out/persistent-cases.txt")" | tee -a "$out/summary.txt"
runs=$(( $(wc -l < "${CASES:-gpu-cases/cases.txt}") + $(wc -l < "$out/persistent-cases.txt") ))
failed_runs=$(grep -c '^FAILED-RUN' "$out/correctness.log")
echo "correctness runs: $runs, failed: $failed_runs" | tee -a "$out/summary.txt"
echo "checks passed: $(grep -c '^PASS' "$out/correctness.log")" | tee -a "$out/summary.txt"
echo "checks failed: $(grep -c '^FAIL ' "$out/correctness.log")" | tee -a "$out/summary.txt"
grep -E '^FAIL|^FAILED-RUN|error' "$out/correctness.log" | head -50 > "$out/failures.log"

# 2. compute-sanitizer on a representative subset.
if command -v compute-sanitizer > /dev/null; then
  for c in "fused_add_gate_norm_bf16_D3072.nfa fused_add_gate_norm_bf16_D3072" \
           "fused_add_gate_norm_bf16_dyn.nfa fused_add_gate_norm_bf16_D100" \
           "scale_residual_layernorm_scale_shift_bf16_D1536.nfa scale_residual_layernorm_scale_shift_bf16_D1536" \
           "select01_residual_layernorm_modulate_bf16_D2240.nfa select01_residual_layernorm_modulate_bf16_D2240" \
           "qk_rmsnorm_rope_neox_partial_bf16.nfa qk_rmsnorm_rope_neox_partial_bf16_T16H24" \
           "fused_add_gate_norm_bf16_long_dyn.nfa fused_add_gate_norm_bf16_D3072" \
           "scale_residual_layernorm_scale_shift_f32_long_dyn.nfa scale_residual_layernorm_scale_shift_f32_D16384" \
           "fused_add_gate_norm_bf16_D32768.nfa fused_add_gate_norm_bf16_D32768"; do
    set -- $c
    # Subsets (make-gpu-cases.sh ONLY=...) lack some of them.
    [ -f "gpu-cases/art/$1" ] && [ -d "gpu-cases/cases/$2" ] || continue
    for tool in memcheck racecheck; do
      for flags in "" "--misalign"; do
        compute-sanitizer --tool $tool --error-exitcode 9 "$run" "gpu-cases/art/$1" \
          --case "gpu-cases/cases/$2" $flags > "$out/sanitizer.tmp" 2>&1
        rc=$?
        echo "sanitizer $tool rc=$rc $1 $2 $flags: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer.tmp" | head -1)" \
          | tee -a "$out/summary.txt"
      done
    done
  done
fi

# 3. Benchmark at the seed shapes (ANCHORS.md), kernels compiled with D fixed.
bench() { [ -f "gpu-cases/art/$1" ] || return 0; "$run" "gpu-cases/art/$1" --bench --dims "$2" --iters 200 2>&1 | tee -a "$out/bench.log"; }
bench scale_residual_layernorm_scale_shift_bf16_D1536.nfa B=1,S=32760,D=1536
bench scale_residual_layernorm_affine_scale_shift_f32_D1536.nfa B=1,S=32760,D=1536
bench scale_residual_layernorm_scale_shift_bf16_D3072.nfa B=2,S=2048,D=3072
bench fused_add_gate_norm_bf16_D3840.nfa B=1,S=4096,D=3840
bench norm_tanh_mul_add_norm_scale_bf16_D3840.nfa B=1,S=4096,D=3840
bench qk_rmsnorm_rope_neox_bf16.nfa B=4096,S=24,P=4096
bench qk_rmsnorm_rope_neox_bf16.nfa B=4096,S=32,P=4096
bench select01_layernorm_modulate_bf16_D3072.nfa B=2,S=2048,D=3072
bench scale_residual_layernorm_scale_shift_bf16_dyn.nfa B=1,S=32760,D=1536
cat "$out/summary.txt"

# 4. Schedule variants (forced threads per row / rows per CTA), if present.
for a in gpu-cases/art/tune_*.nfa; do
  [ -f "$a" ] || continue
  case "$a" in
    *srnss*) d=B=2,S=2048,D=3072 ;;
    *ntman*) d=B=1,S=4096,D=3840 ;;
    *sel*) d=B=2,S=2048,D=3072 ;;
    *qk*) d=B=4096,S=24,P=4096 ;;
  esac
  echo "$(basename "$a"): $("$run" "$a" --bench --dims "$d" --iters 200 2>&1)" | tee -a "$out/bench.log"
done
