#!/usr/bin/env bash
# Builds, on the CPU machine, the artifacts the Python package's GPU tests and
# bench/bench.py use (the GPU machine has no MLIR): gpu-py/test/ (every
# example with D dynamic, plus two built for every dtype combination with
# --types) and gpu-py/bench/ (the
# seed cases of ANCHORS.md with D fixed). Each artifact carries the cubin for
# SM (default sm_90) and the generated PyTorch fallback.
#
#   tools/make-python-cases.sh [BUILD_BIN] [SM]    -> gpu-py/
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin}
sm=${2:-sm_90}
out=gpu-py
rm -rf "$out"; mkdir -p "$out/test" "$out/bench" "$out/src"
nfc() { "$bin/nf-compile" --sm "$sm" --cubin "$@"; }

for ex in examples/*.mlir; do
  nfc "$ex" -o "$out/test/$(basename "$ex" .mlir).nfa"
done
# Every dtype combination of two seeds in one artifact each (--types).
for name in scale_residual_layernorm_scale_shift fused_add_gate_norm; do
  nfc "examples/$name.mlir" --types act=bf16,f16,f32 --types mod=f32,act \
    -o "$out/test/${name}_types.nfa"
done

nfc examples/scale_residual_layernorm_scale_shift.mlir --dim D=1536 -o "$out/bench/bench_srn_bf16_D1536.nfa"
nfc examples/scale_residual_layernorm_scale_shift.mlir --dim D=3072 -o "$out/bench/bench_srn_bf16_D3072.nfa"
nfc examples/scale_residual_layernorm_affine_scale_shift.mlir --dim D=1536 -o "$out/bench/bench_srn_affine_f32_D1536.nfa"
nfc examples/fused_add_gate_norm.mlir --dim D=3840 -o "$out/bench/bench_fagn_D3840.nfa"
nfc examples/norm_tanh_mul_add_norm_scale.mlir --dim D=3840 -o "$out/bench/bench_ntma_D3840.nfa"
nfc examples/qk_rmsnorm_rope_neox.mlir -o "$out/bench/bench_qk_neox.nfa"
nfc examples/select01_layernorm_modulate.mlir --dim D=3072 -o "$out/bench/bench_sel_D3072.nfa"
# D dynamic; long rows (register-resident to 16384, then streamed).
nfc examples/scale_residual_layernorm_scale_shift.mlir -o "$out/bench/bench_srn_bf16_dyn.nfa"
for d in 16384 49152; do
  nfc examples/scale_residual_layernorm_scale_shift.mlir --dim D=$d -o "$out/bench/bench_srn_bf16_D$d.nfa"
done
for d in 32768 65536; do
  nfc examples/fused_add_gate_norm.mlir --dim D=$d -o "$out/bench/bench_fagn_D$d.nfa"
done
# The roofline benchmark (bench/roofline.py): one artifact per kernel with D
# dynamic, the one a user ships, timed at every D against kernels specialized
# per D. File name = kernel name (roofline.py loads <kernel>.nfa).
mkdir -p "$out/roofline"
for name in rmsnorm layernorm fused_add_rmsnorm softmax \
            scale_residual_layernorm_scale_shift \
            scale_residual_layernorm_affine_scale_shift \
            scale_residual_rmsnorm_scale_shift fused_add_gate_norm; do
  nfc "examples/$name.mlir" -o "$out/roofline/$name.nfa"
done
# The f32 cases (layernorm_f32, softmax_f32): the same kernels in f32.
for name in layernorm softmax; do
  nfc "examples/$name.mlir" --types act=f32 -o "$out/roofline/${name}_f32.nfa"
done
git rev-parse --short HEAD > "$out/COMMIT"
du -sh "$out"

# The correctness matrix (python/tests/gpu_matrix.py): every row-length
# example in bf16/f16/f32, D dynamic and fixed at four sizes; QK examples in
# bf16/f16.
mkdir -p "$out/matrix"
for ex in examples/*.mlir; do
  name=$(basename "$ex" .mlir)
  for dt in bf16 f16 f32; do
    src=$ex
    if [ "$dt" != bf16 ]; then
      case "$name" in *affine*) [ "$dt" = f32 ] && continue;; esac
      # The activation type is the file's `!act` alias (softmax's default
      # is f16: replacing "bf16" in the text left it f16 in every family).
      src="$out/src/${name}_$dt.mlir"; sed "s/^!act = .*/!act = $dt/" "$ex" > "$src"
    fi
    case "$name" in
      qk_*) [ "$dt" = f32 ] && continue
            nfc "$src" -o "$out/matrix/${name}_$dt.nfa" ;;
      *) nfc "$src" -o "$out/matrix/${name}_${dt}_dyn.nfa"
         for d in 1536 3072 3840 8192 32768; do
           nfc "$src" --dim "D=$d" -o "$out/matrix/${name}_${dt}_D$d.nfa"
         done ;;
    esac
  done
done
du -sh "$out"
