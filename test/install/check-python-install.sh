#!/usr/bin/env bash
# The Python package as a user gets it: `pip install` of this source tree
# into a fresh virtual environment (with the system's site packages, for
# Debian's torch, setuptools and wheel: offline, --no-build-isolation),
# then, from another folder and with no path or normfuse variable set,
# `import normfuse` and normfuse.compile() of an example run a kernel (its
# CPU fallback here), and the package's tests run against the installed
# copy. Run by lit (test/Python/pip-install.test); no GPU.
#
#   test/install/check-python-install.sh PYTHON NF_COMPILE
#
# PYTHON must have torch; NF_COMPILE is the build's compiler (the installed
# package finds it through the source tree it was built from; it is used
# here only to make the tests' artifacts).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
python=${1:?usage: check-python-install.sh PYTHON NF_COMPILE}
nf_compile=$(realpath "${2:?usage: check-python-install.sh PYTHON NF_COMPILE}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nf-pyinstall.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

step() {
  local log=$tmp/$1.log
  shift
  "$@" >"$log" 2>&1 || { cat "$log"; echo "error: failed: $*" >&2; exit 1; }
}

step venv "$python" -m venv --system-site-packages "$tmp/venv"
step pip-install "$tmp/venv/bin/python" -m pip install --no-build-isolation \
  --no-deps --no-index --no-cache-dir "$src"

# Nothing points at the source tree: not the cwd, not PYTHONPATH, not the
# runtime library's variable; the cache is the default one under HOME.
cd "$tmp"
env -u PYTHONPATH -u NF_RUNTIME_LIBRARY -u NF_COMPILE -u NF_CACHE_DIR \
  HOME="$tmp/home" "$tmp/venv/bin/python" - "$src" <<'PY'
import sys
from pathlib import Path

import torch

import normfuse

src = Path(sys.argv[1])
package = Path(normfuse.__file__).resolve().parent
assert src not in package.parents, f"imported the source tree: {package}"
assert (package / "libnfruntime.so.0").is_file(), "no library in the package"
mod = normfuse.compile(str(src / "examples" / "rmsnorm.mlir"))
x = torch.randn(4, 5, 96, dtype=torch.bfloat16)
w = torch.randn(96, dtype=torch.bfloat16)
y = mod.rmsnorm(x, w)
xd = x.double()
ref = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()
err = (y.double() - ref).abs().max().item()
assert err < 0.05, f"rmsnorm differs from the reference by {err}"
cached = list((Path.home() / ".cache" / "normfuse").glob("*.nfa"))
assert len(cached) == 1, cached
print(f"installed normfuse at {package} compiled and ran rmsnorm "
      f"(max error {err:.3g})")
PY

# The package's tests, against the installed copy, on a few artifacts.
mkdir -p "$tmp/artifacts"
for name in rmsnorm fused_add_gate_norm select01_residual_layernorm_modulate \
    qk_rmsnorm_rope_neox_partial; do
  step "compile-$name" "$nf_compile" "$src/examples/$name.mlir" \
    -o "$tmp/artifacts/$name.nfa"
done
env -u PYTHONPATH -u NF_RUNTIME_LIBRARY NF_TEST_INSTALLED=1 \
  NF_TEST_ARTIFACTS="$tmp/artifacts" NF_CACHE_DIR="$tmp/cache" \
  "$tmp/venv/bin/python" -m unittest discover -s "$src/python/tests" \
  >"$tmp/unittest.log" 2>&1 || { cat "$tmp/unittest.log"; exit 1; }
tail -n 1 "$tmp/unittest.log" | grep -q '^OK' ||
  { cat "$tmp/unittest.log"; echo "error: the package's tests failed" >&2; exit 1; }
echo "check-python-install: $(grep -E '^Ran ' "$tmp/unittest.log") against the installed package: OK"
