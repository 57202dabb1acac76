#!/usr/bin/env bash
# The one entry point of normfuse on a Debian 12 machine.
#   ./make.sh        install what is missing, build, run the main job
#   ./make.sh test   install what is missing, build, run every test
# The main job compiles every example (see tools/run-examples.sh).
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
case "$mode" in
  run|test) ;;
  *) echo "error: unknown mode '$mode' (expected 'run' or 'test')" >&2; exit 2 ;;
esac

# 1. Packages: Debian's LLVM/MLIR 22, Ninja, GoogleTest, and Debian's PyTorch
#    (1.13, for /usr/bin/python3) for the CPU tests of the generated PyTorch
#    fallback and of the Python package (python/); venv, pip, setuptools and
#    wheel for the test that pip-installs that package offline.
packages=(cmake g++ ninja-build python3 libmlir-22-dev mlir-22-tools llvm-22-dev
          llvm-22-tools libgtest-dev python3-torch python3-venv python3-pip
          python3-setuptools python3-wheel)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "-- installing: ${missing[*]}"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi

# 2. Build (Ninja, Release; the first build takes a few minutes on 2 cores).
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
ninja -C build

# 3. The job.
if [ "$mode" = test ]; then
  ninja -C build check-nf
else
  tools/run-examples.sh build/bin
fi
