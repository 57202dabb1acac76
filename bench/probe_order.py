#!/usr/bin/env python3
"""Probe: does the position of a kernel in the timing order change its time?

    python3 bench/probe_order.py DIR [D]     (DIR/rmsnorm.nfa, D default 8192)

Times the RMSNorm kernel of DIR with bench.py's graph_time_us (one graph
captured and timed per call) in sequences: right after the copy kernel of
roofline.py and again, after torch.compile, many times in a row, on fresh
inputs. It found that whatever is timed right after another kernel runs
slower (docs/benchmarks.md, "Timing order"), which is why roofline.py times
every contender in interleaved rounds.
"""
import gc
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import SETS, graph_time_us  # noqa: E402
import normfuse  # noqa: E402
import roofline as R  # noqa: E402

art = sys.argv[1]
D = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
case = [c for c in R.CASES if c.name == "rmsnorm"][0]
k = normfuse.load(f"{art}/rmsnorm.nfa", prefix="p").kernels["rmsnorm"]
M = R.rows_for(D, 2)
gen = torch.Generator(device="cuda").manual_seed(D)
sets = [case.inputs(M, D, gen, "cuda") for _ in range(SETS)]
moved = 2 * M * D * 2 + D * 2
eager = torch.compile(case.eager, dynamic=False)


def copy():
    return R.copy_time_us(moved, 20, "cuda")


def t(fn):
    return graph_time_us(fn, sets, 20)


print("sequence A: copy, K, K, K, copy, K")
c1 = copy()
for label, fn in [("K", k), ("K", k), ("K", k)]:
    print(f"  {label}: {100 * c1 / t(fn):.1f}%")
c2 = copy()
print(f"  copy again: {100 * c1 / c2:.1f}% of the first copy")
print(f"  K: {100 * c2 / t(k):.1f}%")
print("sequence B: torch.compile, K, torch.compile")
for label, fn in [("compile", eager), ("K", k), ("compile", eager)]:
    print(f"  {label}: {100 * c2 / t(fn):.1f}%")
print("sequence C: 5 x K with 60 replays")
for _ in range(5):
    print(f"  K: {100 * c2 / graph_time_us(k, sets, 60):.1f}%")
print("sequence D: fresh inputs, then K, K")
del sets
gc.collect()
torch.cuda.empty_cache()
sets = [case.inputs(M, D, gen, "cuda") for _ in range(SETS)]
for _ in range(2):
    print(f"  K: {100 * c2 / t(k):.1f}%")
print("sequence E: 4 copies in a row")
for _ in range(4):
    print(f"  copy: {copy():.1f} us")
