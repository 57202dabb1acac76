"""Random arguments for a kernel from its metadata (tests and benchmarks)."""

import torch

from . import _NF_TORCH

# torch's 8-bit floats (torch 2.1 and later).
_FLOAT8 = tuple(getattr(torch, name) for name in
                ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, name))


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
        elif dtype in _FLOAT8:
            # Within the format's range (e4m3fn has no infinity), then
            # rounded to it.
            big = torch.finfo(dtype).max
            t = torch.randn(shape, generator=gen).clamp(-big, big).to(dtype)
        elif dtype.is_floating_point:
            t = torch.randn(shape, generator=gen).to(dtype)
        elif dtype == torch.int8 and info.role == "data":
            # Quantized data: the symmetric int8 range.
            t = torch.randint(-127, 128, shape, generator=gen, dtype=dtype)
        else:
            t = torch.randint(-3, 4, shape, generator=gen, dtype=dtype)
        args.append(relayout(t, layout).to(device) if device == "cpu"
                    else relayout(t.to(device), layout))
    return args


def relayout(t, layout):
    """`t` in one of make_args's layouts (a copy unless contiguous)."""
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


def _float64(t):
    # Through float32: the one conversion every torch has for the 8-bit
    # floats, exact for them and for the 16-bit and 8-bit types.
    if t.dtype in _FLOAT8:
        t = t.float()
    return t.double()


def rel_error(out, ref):
    """||out - ref|| / ||ref|| in float64; NaN where exactly one is NaN.
    Any dtype, the 8-bit ones included (compared through float)."""
    o, r = _float64(out), _float64(ref)
    if not torch.equal(torch.isnan(o), torch.isnan(r)):
        return float("nan")
    o, r = o.nan_to_num(0.0), r.nan_to_num(0.0)
    den = r.norm().item()
    num = (o - r).norm().item()
    return num / den if den > 0 else num


def is_quantized_dtype(dtype):
    """int8 and the 8-bit floats: results compared with quantized_mismatch
    (a relative error says little about values on so coarse a grid)."""
    return dtype == torch.int8 or dtype in _FLOAT8


def tolerance(dtype):
    """The rel_error a result of `dtype` may have against its reference.
    For the quantized dtypes, one step relative to the values (int8: 1/127;
    fp8: the format's eps): a bound on the average error only; check them
    with quantized_ok."""
    if dtype == torch.float32:
        return 1e-5
    if dtype == torch.int8:
        return 1 / 127
    if dtype in _FLOAT8:
        return torch.finfo(dtype).eps
    return 1e-2


def _grid_index(t):
    """Each element's position on its format's grid, as int64: adjacent
    values (neighbours on the grid) are one apart. int8: the value itself.
    fp8: sign and magnitude bits, which order the values of each sign
    (both formats are IEEE-like), made signed, so that +0 and -0 are both
    0 and the smallest values of either sign are neighbours of zero."""
    if t.dtype == torch.int8:
        return t.to(torch.int64)
    bits = t.contiguous().view(torch.uint8).to(torch.int64)
    magnitude = bits & 0x7F
    return torch.where(bits >= 0x80, -magnitude, magnitude)


def quantized_mismatch(got, expect):
    """Compares two int8 or two fp8 tensors of one dtype and shape, value by
    value on the format's grid: returns (far, differ, numel), `far` the
    number of elements more than one step apart (not equal and not grid
    neighbours), `differ` the number not equal, numel their count. NaN
    equals NaN (any NaN pattern), and is far from any number. A kernel that
    rounds its f32 values like its reference, except for values that land
    within float noise of a rounding boundary, has far == 0 and few
    differences (quantized_ok)."""
    if got.dtype != expect.dtype or not is_quantized_dtype(got.dtype):
        raise ValueError(
            f"quantized_mismatch compares two int8 or two fp8 tensors of "
            f"one dtype, found {got.dtype} and {expect.dtype}")
    if got.shape != expect.shape:
        raise ValueError(f"quantized_mismatch: shapes {list(got.shape)} and "
                         f"{list(expect.shape)} differ")
    g, e = got.detach().cpu(), expect.detach().cpu()
    steps = (_grid_index(g) - _grid_index(e)).abs()
    if g.dtype in _FLOAT8:
        gnan, enan = torch.isnan(g.float()), torch.isnan(e.float())
        steps = torch.where(gnan & enan, torch.zeros_like(steps), steps)
        steps = torch.where(gnan ^ enan, torch.full_like(steps, 2), steps)
    return (int((steps > 1).sum()), int((steps != 0).sum()), g.numel())


def mismatch_ok(far, differ, numel, fraction=1e-3):
    """The tolerance of quantized results on quantized_mismatch's counts:
    none more than one step off, at most `fraction` of them (at least one
    element) one step off."""
    return far == 0 and differ <= max(1, int(fraction * numel))


def max_relative_error(got, expect):
    """The largest |got - expect| / |expect| over the elements (per-token
    scales, where every element matters, not an average)."""
    return float(((got.double() - expect.double()).abs()
                  / expect.double().abs()).max())


def quantized_ok(got, expect, fraction=1e-3):
    """mismatch_ok of quantized_mismatch(got, expect)."""
    return mismatch_ok(*quantized_mismatch(got, expect), fraction)


def close(got, expect):
    """Whether a result matches its reference within its dtype's tolerance:
    quantized_ok for int8 and fp8, rel_error <= tolerance(dtype) for the
    others. Returns (ok, a description of the error for messages)."""
    if is_quantized_dtype(expect.dtype) and got.dtype == expect.dtype:
        far, differ, numel = quantized_mismatch(got, expect)
        return (mismatch_ok(far, differ, numel),
                f"{far} of {numel} more than one step off, {differ} differ")
    err = rel_error(got, expect)
    return err <= tolerance(expect.dtype), f"relative error {err:.3g}"


def equal(a, b):
    """torch.equal for every dtype: the 8-bit floats bit for bit (as
    bytes), which torch.equal may not take."""
    if a.dtype in _FLOAT8 and b.dtype == a.dtype:
        a = a.contiguous().view(torch.uint8)
        b = b.contiguous().view(torch.uint8)
    return torch.equal(a, b)
