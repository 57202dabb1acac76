"""Host time per call of a normfuse kernel, next to eager torch ops.

    python3 bench/host_time.py ARTIFACT [--calls N] [--json FILE]

Times a loop of calls of a tiny launch (1 x 1 x D): the GPU finishes each
kernel before the host issues the next, so the wall time per call is host
time. Reports the op through the package (`mod.<kernel>(...)`) and called
as `torch.ops.normfuse.<op>(...)`, Kernel.launch, and in the same run `x.add_(1)` and `torch.empty` (one eager
op each), with the path the package took (the C++ extension or ctypes;
NF_NO_EXTENSION=1 forces ctypes). Median of 5 rounds per entry.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

try:  # the installed package, else the source tree's
    import normfuse
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    import normfuse
from normfuse.testing import make_args  # noqa: E402


def per_call_us(fn, calls):
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        rounds.append((t1 - t0) * 1e6 / calls)
    return statistics.median(rounds)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("artifact")
    p.add_argument("--calls", type=int, default=5000)
    p.add_argument("--D", type=int, default=3840)
    p.add_argument("--json")
    opts = p.parse_args()
    mod = normfuse.load(opts.artifact, prefix="host")
    kernel = next(iter(mod.kernels.values()))
    args = make_args(kernel, B=1, S=1, D=opts.D, device="cuda")
    x = torch.zeros(16, device="cuda")
    path = "C++ extension" if kernel._ext is not None else "ctypes"
    result = {"path": path, "kernel": kernel.name,
              "device": torch.cuda.get_device_name(),
              "torch": torch.__version__}
    for label, fn in (
            ("op", lambda: kernel(*args)),
            ("torch.ops", lambda: kernel.op(*args)),
            ("launch", lambda: kernel.launch(*args)),
            ("x.add_(1)", lambda: x.add_(1)),
            ("torch.empty", lambda: torch.empty((1, 1, opts.D),
                                                dtype=torch.bfloat16,
                                                device="cuda"))):
        result[label] = per_call_us(fn, opts.calls)
    print(f"host time per call ({path}, {kernel.name}, {result['device']}): "
          + ", ".join(f"{k} {result[k]:.2f} us"
                      for k in ("op", "torch.ops", "launch", "x.add_(1)",
                                  "torch.empty")))
    if opts.json:
        Path(opts.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
