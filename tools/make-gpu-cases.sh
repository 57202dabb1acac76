#!/usr/bin/env bash
# Builds, on the CPU machine, everything the GPU correctness suite needs:
# artifacts (cubin for the target SM) compiled with D dynamic and with D
# fixed, and reference inputs/outputs from nf-interp for each case. The GPU
# machine has no MLIR; tools/gpu-check.sh runs these there.
#
#   tools/make-gpu-cases.sh [BUILD_BIN] [SM]     -> gpu-cases/
#   ONLY=long tools/make-gpu-cases.sh ...        (only the long-row cases
#        at the end)
#
# The device tool carries at most 64 MiB, so large-D cases use few rows;
# gpu-cases/ is still larger (about 190 MB, 2026-12-03): pack it
# (`tar -cf - gpu-cases | xz -T2 > gpu-z/cases.tar.xz`, about 25 MB), carry
# gpu-z and unpack it there before tools/gpu-check.sh (python3's tarfile
# reads it where tar has no xz).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin}
sm=${2:-sm_90}
out=gpu-cases
rm -rf "$out"; mkdir -p "$out/art" "$out/cases"
list="$out/cases.txt"; : > "$list"

# Activation dtype variants of an example: its `!act` alias set to the
# dtype (a file without one, the f32 affine seeds, is copied as it is).
variant() { # example dtype -> path
  local src=$1 dt=$2 name; name=$(basename "$src" .mlir)
  sed "s/^!act = .*/!act = $dt/" "$src" > "$out/art/${name}_$dt.mlir"
  echo "$out/art/${name}_$dt.mlir"
}

compile() { # file tag [--dim D=n] -> artifact path
  local f=$1 tag=$2; shift 2
  local a="$out/art/$tag.nfa"
  [ -f "$a" ] || "$bin/nf-compile" "$f" --sm "$sm" --cubin "$@" -o "$a"
  echo "$a"
}

case_() { # file tag artifact dims flags...
  local f=$1 tag=$2 art=$3 dims=$4; shift 4
  local dir="$out/cases/$tag"
  if [ ! -d "$dir" ]; then
    "$bin/nf-interp" "$f" --dims "$dims" --seed 7 --write-dir "$dir" > /dev/null
  fi
  for flags in "" "--misalign" "--pad 8" "--pad 3" "$@"; do
    echo "$art $dir $flags" >> "$list"
  done
}

rowdims() { # D -> B,S giving few rows for long rows
  local d=$1
  if [ "$d" -le 128 ]; then echo "B=3,S=50"
  elif [ "$d" -le 4096 ]; then echo "B=1,S=3"
  else echo "B=1,S=1"; fi
}

only=${ONLY:-all}
# Row-length examples: every dtype at a few sizes, bf16 at every size.
[ "$only" = all ] && for ex in examples/scale_residual_*.mlir examples/fused_add_gate_norm.mlir \
          examples/norm_tanh_mul_add*.mlir examples/select01_*.mlir; do
  name=$(basename "$ex" .mlir)
  for dt in bf16 f16 f32; do
    f=$(variant "$ex" "$dt")
    dyn=$(compile "$f" "${name}_${dt}_dyn")
    if [ "$dt" = bf16 ]; then sizes="1 7 64 100 128 1000 1536 2240 3072 3840 4096 5120 8192"
    else sizes="7 100 1536 3072"; fi
    case "$name" in scale_residual_layernorm_scale_shift|fused_add_gate_norm)
      [ "$dt" = bf16 ] && sizes="$sizes 16384 65536";; esac
    for d in $sizes; do
      rows=$(rowdims "$d"); extra=""
      [[ $name == *frames* ]] && extra=",F=3" && rows=$( [ "$d" -le 128 ] && echo "B=3,S=51" || echo "B=1,S=3")
      fix=$(compile "$f" "${name}_${dt}_D$d" --dim "D=$d")
      case_ "$f" "${name}_${dt}_D$d" "$fix" "$rows,D=$d$extra" "--graph"
      # The family too; with --pad 3 (rows D + 3 apart) rows start off the
      # chunk grid and take its peeled variants (a static D that is a
      # multiple of the chunk has none).
      echo "$dyn $out/cases/${name}_${dt}_D$d" >> "$list"
      echo "$dyn $out/cases/${name}_${dt}_D$d --pad 3" >> "$list"
    done
    # Odd rows, D dynamic only: peeled variants where every operand
    # allows them (aligned, --pad 3), the general variant where not.
    for d in 121 1001 4097; do
      [ "$dt" = bf16 ] || [ "$d" = 1001 ] || continue
      rows=$(rowdims "$d"); extra=""
      [[ $name == *frames* ]] && extra=",F=3" && rows=$( [ "$d" -le 128 ] && echo "B=3,S=51" || echo "B=1,S=3")
      case_ "$f" "${name}_${dt}_D$d" "$dyn" "$rows,D=$d$extra"
    done
  done
done
# QK-norm + RoPE: head_dim 128 fixed in the files; T tokens x H heads.
[ "$only" = all ] && for ex in examples/qk_rmsnorm_rope_*.mlir; do
  name=$(basename "$ex" .mlir)
  for dt in bf16 f16; do
    f=$(variant "$ex" "$dt")
    art=$(compile "$f" "${name}_$dt")
    case_ "$f" "${name}_${dt}_T16H24" "$art" "B=16,S=24,P=256"
    case_ "$f" "${name}_${dt}_T1H3" "$art" "B=1,S=3,P=16"
  done
done
# D dynamic at long rows (register-resident to 16384, streamed past it)
# and static rows too long for registers (streamed by 1024 threads).
for ex in examples/scale_residual_layernorm_scale_shift.mlir \
          examples/fused_add_gate_norm.mlir; do
  name=$(basename "$ex" .mlir)
  for dt in bf16 f32; do
    f=$(variant "$ex" "$dt")
    dynamic=$(compile "$f" "${name}_${dt}_long_dyn")
    for d in 100 3072 16384 65536; do
      rows=$(rowdims "$d")
      [ -d "$out/cases/${name}_${dt}_D$d" ] \
        || "$bin/nf-interp" "$f" --dims "$rows,D=$d" --seed 7 \
             --write-dir "$out/cases/${name}_${dt}_D$d" > /dev/null
      for flags in "" "--misalign" "--pad 8" "--pad 3" "--graph"; do
        echo "$dynamic $out/cases/${name}_${dt}_D$d $flags" >> "$list"
      done
    done
    long=$(compile "$f" "${name}_${dt}_D32768" --dim D=32768)
    case_ "$f" "${name}_${dt}_D32768" "$long" "B=1,S=2,D=32768" "--graph"
  done
done
du -sh "$out"; wc -l < "$list"
