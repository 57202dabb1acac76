#!/usr/bin/env bash
# Builds, on the CPU machine, what tools/gpu-quant-check.sh needs on the GPU
# machine (which has no MLIR): gpu-q/roofline (the quantizing examples for
# sm_90 with cubins: hardware fp8 conversion), gpu-q/sm80 (the same for
# sm_80 as PTX only, JIT-compiled on the GPU: the integer fp8 rounding),
# gpu-q/fallback (their generated PyTorch fallbacks and nf-interp reference
# data, for test/Python/check_fallback.py --check-only: the fp8 fallbacks
# need torch >= 2.1, which the CPU machine may lack).
#
#   tools/make-quant-cases.sh [BUILD_BIN]    -> gpu-q/
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin}
rm -rf gpu-q
mkdir -p gpu-q/roofline gpu-q/sm80 gpu-q/examples
for ex in examples/*quant*.mlir; do
  name=$(basename "$ex" .mlir)
  "$bin/nf-compile" "$ex" --sm sm_90 --cubin -o "gpu-q/roofline/$name.nfa"
  "$bin/nf-compile" "$ex" --sm sm_80 -o "gpu-q/sm80/$name.nfa"
  cp "$ex" gpu-q/examples/
done
# Group reductions of every shape (python/tests/gpu_matrix.py checks it
# against its fallback).
"$bin/nf-compile" test/Codegen/ptx-groups.mlir --sm sm_90 --cubin \
  -o gpu-q/roofline/groups_mixed.nfa
# Loads of every quantized type (python/tests/gpu_quant.py checks all codes).
deq=test/runtime/Inputs/dequantize.mlir
"$bin/nf-compile" "$deq" --sm sm_90 --cubin -o gpu-q/roofline/dequantize.nfa
"$bin/nf-compile" "$deq" --sm sm_80 -o gpu-q/sm80/dequantize.nfa
# check_fallback.py imports numpy and torch even to prepare.
py=
for p in python3 /usr/bin/python3; do
  if "$p" -c "import numpy, torch" 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "error: no python3 with numpy and torch" >&2; exit 1; }
"$py" test/Python/check_fallback.py --bin "$bin" --examples gpu-q/examples \
  --work gpu-q/fallback --prepare-only
git rev-parse --short HEAD > gpu-q/COMMIT
