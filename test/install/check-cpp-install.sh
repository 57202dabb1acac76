#!/usr/bin/env bash
# The C++ install, as a user gets it: builds runtime/ on its own, installs it
# into a temporary prefix, builds examples/cpp against that prefix through
# find_package(normfuse) (normfuse::runtime), and a one-file program against
# normfuse::runtime_static, then runs both with the CUDA driver pointed at
# nothing: each must exit 1 with an `error:` line saying so (a program that
# cannot find libnfruntime, or crashes, exits otherwise). Run by check-nf
# (check-nf-install), which sets CMAKE and CXX to its own; needs cmake and a
# C++ compiler, no GPU.
#
#   test/install/check-cpp-install.sh [NF_COMPILE]
#
# With NF_COMPILE the example gets an artifact of examples/rmsnorm.mlir, so
# it gets as far as opening the driver; without, it gets no artifact and
# only the reader's error is checked.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
nf_compile=${1:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nf-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake=${CMAKE:-cmake}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# A missing driver on every machine, with or without a GPU.
export NF_CUDA_DRIVER=/nonexistent/nf-install-test/libcuda.so.1

# step NAME COMMAND...: runs quietly, prints the log if it fails.
step() {
  local log=$tmp/$1.log
  shift
  "$@" >"$log" 2>&1 || { cat "$log"; echo "error: failed: $*" >&2; exit 1; }
}
# expect_error NAME PATTERN COMMAND...: COMMAND must exit 1 and print
# `error:` and PATTERN.
expect_error() {
  local name=$1 pattern=$2 rc=0
  shift 2
  "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  if [ "$rc" -ne 1 ] || ! grep -q "^error: .*$pattern" "$tmp/$name.out"; then
    cat "$tmp/$name.out"
    echo "error: $name: expected exit 1 and 'error: ...$pattern', got exit $rc" >&2
    exit 1
  fi
}

step runtime-configure "$cmake" -S "$src/runtime" -B "$tmp/runtime" \
  "${generator[@]}"
step runtime-build "$cmake" --build "$tmp/runtime" --parallel
step runtime-install "$cmake" --install "$tmp/runtime" --prefix "$prefix"
for f in lib/libnfruntime.so lib/libnfruntime.so.0 lib/libNfRuntime.a \
    include/normfuse/runtime/nf_runtime.h include/normfuse/runtime/Runtime.h \
    lib/cmake/normfuse/normfuseConfig.cmake; do
  [ -e "$prefix/$f" ] || { echo "error: not installed: $f" >&2; exit 1; }
done

step example-configure "$cmake" -S "$src/examples/cpp" -B "$tmp/example" \
  "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix"
step example-build "$cmake" --build "$tmp/example" --parallel
if [ -n "$nf_compile" ]; then
  step nf-compile "$nf_compile" "$src/examples/rmsnorm.mlir" -o "$tmp/rmsnorm.nfa"
  expect_error example "CUDA driver" "$tmp/example/nf-launch-example" \
    "$tmp/rmsnorm.nfa"
else
  expect_error example "artifact" "$tmp/example/nf-launch-example" \
    "$tmp/missing.nfa"
fi

# normfuse::runtime_static: the C++ API, with libdl from the package.
mkdir "$tmp/static-src"
cat >"$tmp/static-src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(nf-static LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(normfuse 0.1 REQUIRED)
add_executable(nf-static main.cpp)
target_link_libraries(nf-static PRIVATE normfuse::runtime_static)
CMAKE
cat >"$tmp/static-src/main.cpp" <<'CPP'
#include "runtime/Runtime.h"
#include <cstdio>
int main() {
  std::string error;
  if (nf::rt::getCudaDriver(error))
    return 0;
  std::fprintf(stderr, "error: %s\n", error.c_str());
  return 1;
}
CPP
step static-configure "$cmake" -S "$tmp/static-src" -B "$tmp/static" \
  "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix"
step static-build "$cmake" --build "$tmp/static" --parallel
expect_error static "CUDA driver" "$tmp/static/nf-static"
echo "check-cpp-install: installed, built against the package, both error as expected"
