"""Random arguments for a kernel from its metadata (tests and benchmarks)."""

import torch

from . import _NF_TORCH


def make_args(kernel, B, S, D, F=1, P=64, device="cpu", seed=0, offset=3,
              layout="contiguous"):
    """Arguments for `kernel` (a normfuse.Kernel) at sizes B, S, D (F frames,
    P rotary cache rows), seeded.

    layout: "contiguous"; "offset" (every tensor starts one element into its
    storage, so no base pointer is 16-byte aligned); "padded" (rows of every
    tensor of rank >= 2 are 8 elements apart more than D, and the leading
    strides follow)."""
    gen = torch.Generator().manual_seed(seed)
    sizes = {"B": B, "S": S, "D": D, "F": F, "1": 1, "P": P}
    args = []
    for info in kernel.meta.args:
        dtype = _NF_TORCH[info.dtype]
        if not info.is_tensor:
            args.append(offset)
            continue
        if info.role == "rope_cache":
            shape = [P, info.shape[1]]
        else:
            shape = [sizes[l] for l in info.letters] or \
                [1 if d < 0 else d for d in info.shape]
        if info.role == "select_index":
            t = torch.randint(0, 2, shape, generator=gen, dtype=dtype)
        elif info.role == "rope_positions":
            t = torch.randint(0, max(P - offset, 1), shape, generator=gen,
                              dtype=dtype)
        elif dtype.is_floating_point:
            t = torch.randn(shape, generator=gen).to(dtype)
        else:
            t = torch.randint(-3, 4, shape, generator=gen, dtype=dtype)
        args.append(_relayout(t, layout).to(device) if device == "cpu"
                    else _relayout(t.to(device), layout))
    return args


def _relayout(t, layout):
    if layout == "contiguous" or t.dim() == 0:
        return t
    if layout == "offset":
        buf = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
        view = buf[1:].view(t.shape)
        view.copy_(t)
        return view
    if layout == "padded":
        if t.dim() < 2:
            return t
        shape = list(t.shape)
        big = torch.empty(shape[:-1] + [shape[-1] + 8], dtype=t.dtype,
                          device=t.device)
        view = big[..., :shape[-1]]
        view.copy_(t)
        return view
    raise ValueError(f"unknown layout '{layout}'")


def rel_error(out, ref):
    """||out - ref|| / ||ref|| in float64; NaN where exactly one is NaN."""
    o, r = out.double(), ref.double()
    if not torch.equal(torch.isnan(o), torch.isnan(r)):
        return float("nan")
    o, r = o.nan_to_num(0.0), r.nan_to_num(0.0)
    den = r.norm().item()
    num = (o - r).norm().item()
    return num / den if den > 0 else num


def tolerance(dtype):
    return 1e-5 if dtype == torch.float32 else 1e-2
