#!/usr/bin/env python3
"""Device-to-device copy bandwidth at several sizes (read + write counted),
timed as bench.py times kernels (CUDA-graph replay over 4 rotating buffer
pairs): how much of the 256 MiB copy bandwidth a memory-bound kernel that
moves fewer bytes can reach at all.

    python3 bench/copy_sizes.py
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import SETS, graph_time_us  # noqa: E402

for n in [256 << 20, 192 << 20, 96 << 20, 48 << 20, 24 << 20]:
    pairs = [(torch.empty(n, dtype=torch.uint8, device="cuda"),
              torch.empty(n, dtype=torch.uint8, device="cuda"))
             for _ in range(SETS)]
    t = graph_time_us(lambda d, s: d.copy_(s), pairs, 20)
    print(f"copy of {n / 1e6:6.1f} MB: {2 * n / t / 1e6:.3f} TB/s")
    del pairs
