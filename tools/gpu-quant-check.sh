#!/usr/bin/env bash
# The GPU check of the quantizing examples, in one command, on the device
# machine (CUDA, torch, no MLIR): builds the runtime library; checks the
# three examples against references written independently of the IR
# (python/tests/gpu_quant.py; the per-group example refuses D that are not a
# multiple of its group) from the sm_90 artifacts (cubin, hardware fp8
# conversion) and from the sm_80 ones (PTX, JIT-compiled: the integer fp8
# rounding), the fallback matrix (python/tests/gpu_matrix.py), memcheck on a
# subset, and the roofline benchmark of the three against torch.compile and
# a same-size copy kernel (the per-group example at multiples of 128).
#
#   tools/gpu-quant-check.sh OUT_DIR     (gpu-q/ from tools/make-quant-cases.sh;
#                                         ONLY=check|bench; BASELINE=DIR
#                                         adds another commit's artifacts
#                                         to the roofline run)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-out}
mkdir -p "$out"
status=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "artifacts of commit $(cat gpu-q/COMMIT 2>/dev/null || echo unknown); tree $(git rev-parse --short HEAD 2>/dev/null)" | tee -a "$out/device.txt"
date -u | tee -a "$out/device.txt"
{ cmake -S runtime -B build-runtime -G Ninja -DCMAKE_BUILD_TYPE=Release \
    && ninja -C build-runtime; } > "$out/build.log" 2>&1 \
  || { cat "$out/build.log"; exit 1; }

only=${ONLY:-all}
if [ "$only" = all ] || [ "$only" = check ]; then
  for dir in roofline sm80; do
    echo "== independent references, gpu-q/$dir"
    python3 python/tests/gpu_quant.py "gpu-q/$dir" > "$out/quant-$dir.log" 2>&1 \
      || status=1
    grep -E "^(FAIL|quant|[a-z_0-9]+: )" "$out/quant-$dir.log" | tail -8
  done
  # Persistent variants walk several rows per CTA only where an entry has
  # more rows than CTAs fit at once: again with one CTA per entry, so that
  # every row goes through one CTA's row loop (docs/Artifact.md).
  echo "== independent references, gpu-q/roofline, NF_PERSISTENT_CTAS=1"
  NF_PERSISTENT_CTAS=1 python3 python/tests/gpu_quant.py gpu-q/roofline \
    > "$out/quant-persistent.log" 2>&1 || status=1
  grep -E "^(FAIL|quant|[a-z_0-9]+: )" "$out/quant-persistent.log" | tail -8
  echo "== the generated fallbacks against nf-interp's data"
  python3 test/Python/check_fallback.py --work gpu-q/fallback --check-only \
    --device cuda > "$out/fallback.log" 2>&1 || status=1
  tail -1 "$out/fallback.log"
  echo "== fallback matrix, gpu-q/roofline"
  python3 python/tests/gpu_matrix.py gpu-q/roofline > "$out/matrix.log" 2>&1 \
    || status=1
  tail -3 "$out/matrix.log"
  echo "== memcheck (D = 130, 384, 1028, 1152, 4100, 5120, 16384)"
  NF_QUANT_D=130,384,1028,1152,4100,5120,16384 compute-sanitizer --tool memcheck \
    --error-exitcode 9 python3 python/tests/gpu_quant.py gpu-q/roofline \
    > "$out/memcheck.log" 2>&1 || status=1
  tail -2 "$out/memcheck.log"
fi
if [ "$only" = all ] || [ "$only" = bench ]; then
  echo "== roofline"
  python3 bench/roofline.py --artifacts gpu-q/roofline \
    --cases rmsnorm_quant_fp8,fused_add_rmsnorm_quant_i8,layernorm_modulate_quant_fp8 \
    --rounds 5 ${BASELINE:+--baseline "$BASELINE"} \
    --json "$out/roofline.json" --markdown "$out/roofline.md" \
    > "$out/roofline.log" 2>&1 || status=1
  tail -30 "$out/roofline.md"
  echo "== roofline, per-group quantization (D multiples of 128)"
  python3 bench/roofline.py --artifacts gpu-q/roofline \
    --cases rmsnorm_quant_fp8_group128,rmsnorm_quant_fp8 \
    --dims 256,768,1152,1536,3072,4096,5120,6144,8192,12288,16384 \
    --rounds 5 ${BASELINE:+--baseline "$BASELINE"} \
    --json "$out/roofline-group.json" --markdown "$out/roofline-group.md" \
    > "$out/roofline-group.log" 2>&1 || status=1
  tail -30 "$out/roofline-group.md"
fi
exit $status
