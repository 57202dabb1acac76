#!/usr/bin/env bash
# On the GPU machine (torch with CUDA, no MLIR, no package registry): installs
# the package offline with its C++ extension, runs the package's tests
# against the installed copy (the CUDA ones, and the two-GPU ones where
# there are two GPUs), and measures the host time per call with the
# extension and with ctypes, next to eager torch ops.
#
#   tools/gpu-install-check.sh OUT_DIR       (artifacts: gpu-py/test, from
#                                             tools/make-python-cases.sh)
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-gpu-out}" && cd "${1:-gpu-out}" && pwd)
status=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
echo "artifacts of commit $(cat "$repo/gpu-py/COMMIT" 2>/dev/null || echo unknown); tree $(git -C "$repo" rev-parse --short HEAD 2>/dev/null)" | tee -a "$out/device.txt"
date -u | tee -a "$out/device.txt"

site=/tmp/nf-install
rm -rf "$site"
echo "== pip install (offline, with the extension)"
# Into a folder on PYTHONPATH: the machine's python3 has torch where a
# venv does not see it (not in the system site packages).
python3 -c "import torch, setuptools, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, torch.__file__, 'setuptools', setuptools.__version__)" | tee -a "$out/device.txt"
py=python3
NF_BUILD_EXTENSION=1 python3 -m pip install --no-build-isolation --no-deps \
  --no-index --no-cache-dir --target "$site/target" "$repo" \
  > "$out/pip.log" 2>&1 || status=1
export PYTHONPATH=$site/target
tail -3 "$out/pip.log"
cd /tmp
"$py" -c "import normfuse, sys; print('installed at', normfuse.__file__, '; extension:', normfuse._ext is not None)" | tee -a "$out/device.txt"
# NF_BUILD_EXTENSION=1: the extension must have been built and must load.
"$py" -c "import normfuse._normfuse_ext" || { echo "error: the extension does not load"; status=1; }

echo "== the package's tests, installed copy"
NF_TEST_INSTALLED=1 NF_TEST_ARTIFACTS=$repo/gpu-py/test "$py" -m unittest \
  discover -s "$repo/python/tests" -v > "$out/tests.log" 2>&1 || status=1
tail -4 "$out/tests.log"; grep -E "^(FAIL|ERROR):|skipped" "$out/tests.log" | head -20
echo "== the same with ctypes (NF_NO_EXTENSION=1)"
NF_NO_EXTENSION=1 NF_TEST_INSTALLED=1 NF_TEST_ARTIFACTS=$repo/gpu-py/test \
  "$py" -m unittest discover -s "$repo/python/tests" -v \
  > "$out/tests-ctypes.log" 2>&1 || status=1
tail -4 "$out/tests-ctypes.log"; grep -E "^(FAIL|ERROR):" "$out/tests-ctypes.log" | head -20

echo "== host time per call"
art=$repo/gpu-py/test/fused_add_gate_norm.nfa
"$py" "$repo/bench/host_time.py" "$art" --json "$out/host-ext.json" || status=1
NF_NO_EXTENSION=1 "$py" "$repo/bench/host_time.py" "$art" --json "$out/host-ctypes.json" || status=1
# The same kernel built for five dtype combinations (--types): the cost of
# picking one by the tensors' dtypes.
types=$repo/gpu-py/test/fused_add_gate_norm_types.nfa
if [ -f "$types" ]; then
  "$py" "$repo/bench/host_time.py" "$types" --json "$out/host-ext-types.json" || status=1
fi
exit $status
