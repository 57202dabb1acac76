"""Host time per call of a normfuse kernel, next to eager torch ops.

    python3 bench/host_time.py ARTIFACT [--calls N] [--json FILE]

Times a loop of calls of a tiny launch (1 x 1 x D): the GPU finishes each
kernel before the host issues the next, so the wall time per call is host
time. Reports the op through the package (`mod.<kernel>(...)`) and called
as `torch.ops.normfuse.<op>(...)`, Kernel.launch, and in the same run `x.add_(1)` and `torch.empty` (one eager
op each), with the path the package took (the C++ extension or ctypes;
NF_NO_EXTENSION=1 forces ctypes); with the extension also the op through
torch.ops' Python binding ("op via torch.ops", what Kernel.__call__ did
before its C++ eager path). Median of --rounds rounds per entry, the entries
interleaved in every round.
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


def per_call_us(fns, calls, rounds):
    """Median per label of `rounds` timed loops, the labels interleaved in
    every round (so that a drift of the machine's speed hits all alike)."""
    for fn in fns.values():
        for _ in range(200):
            fn()
    torch.cuda.synchronize()
    times = {label: [] for label in fns}
    for _ in range(rounds):
        for label, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            times[label].append((t1 - t0) * 1e6 / calls)
    return {label: statistics.median(t) for label, t in times.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("artifact")
    p.add_argument("--calls", type=int, default=5000)
    p.add_argument("--D", type=int, default=3840)
    p.add_argument("--rounds", type=int, default=7)
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
    fns = {"op": lambda: kernel(*args),
           "torch.ops": lambda: kernel.op(*args),
           "launch": lambda: kernel.launch(*args),
           "x.add_(1)": lambda: x.add_(1),
           "torch.empty": lambda: torch.empty((1, 1, opts.D),
                                              dtype=torch.bfloat16,
                                              device="cuda")}
    if kernel._call is not None:
        # The op through Python's torch.ops binding (Kernel.__call__
        # without the extension's eager path), for comparison.
        plain = normfuse.Kernel.__new__(normfuse.Kernel)
        plain.__dict__.update(kernel.__dict__, _call=None)
        fns["op via torch.ops"] = lambda: plain(*args)
    result.update(per_call_us(fns, opts.calls, opts.rounds))
    print(f"host time per call ({path}, {kernel.name}, {result['device']}): "
          + ", ".join(f"{k} {result[k]:.2f} us"
                      for k in fns))
    if opts.json:
        Path(opts.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
