"""The quantizing examples' semantics in PyTorch, written independently of
the IR (examples/rmsnorm_quant_fp8.mlir, fused_add_rmsnorm_quant_i8.mlir,
layernorm_modulate_quant_fp8.mlir, rmsnorm_quant_fp8_group128.mlir): inputs, an eager function for
torch.compile, and a reference whose norm is computed in float64.

Per token: y = the normalized (and weighted or modulated) row in f32;
scale = max(max|y| / qmax, min_scale) in f32; q = y / scale rounded to
nearest even and saturated (fp8 e4m3: +-448; int8: [-128, 127], NaN to 0).
Per group (rmsnorm_quant_fp8_group128): the same for each block of 128
elements of a token, one scale per block.
Used by bench/roofline.py and python/tests/gpu_quant.py.
"""

import torch
import torch.nn.functional as F

EPS = 1e-6
bf16, f32 = torch.bfloat16, torch.float32
FP8 = getattr(torch, "float8_e4m3fn", None)
# The IR's constants (f32): 1 / (448 * 512) and 1 / (127 * 512).
FP8_MIN_SCALE, I8_MIN_SCALE = 4.35965e-06, 1.53789e-05


def quantize_rows(y, dtype):
    """(q, scale): y (f32, [..., D]) quantized per row to `dtype`."""
    qmax, min_scale = (448.0, FP8_MIN_SCALE) if dtype == FP8 else \
        (127.0, I8_MIN_SCALE)
    amax = y.abs().amax(-1, keepdim=True)
    scale = torch.maximum(amax / qmax,
                          torch.tensor(min_scale, dtype=f32, device=y.device))
    q = y / scale
    if dtype == torch.int8:
        q = torch.nan_to_num(q, nan=0.0).round().clamp(-128, 127)
    else:
        q = q.clamp(-qmax, qmax)
    return q.to(dtype), scale.squeeze(-1)


def randn(shape, dtype, gen, device):
    return torch.randn(shape, generator=gen, device=device).to(dtype)


def _rms32(x, weight):
    """RMSNorm(x) * weight in f32, as the eager functions compute it."""
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) \
        * weight.float()


def _rms64(x, weight):
    x = x.double()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) \
        * weight.double()


# rmsnorm_quant_fp8(x [B,S,D] bf16, weight [D] bf16) -> (q fp8, scale [B,S])
def rmsnorm_quant_fp8_inputs(M, D, gen, device):
    return [randn((1, M, D), bf16, gen, device), randn((D,), bf16, gen, device)]


def rmsnorm_quant_fp8_eager(x, weight):
    return quantize_rows(_rms32(x, weight), FP8)


def rmsnorm_quant_fp8_ref(x, weight):
    return quantize_rows(_rms64(x, weight).float(), FP8)


# fused_add_rmsnorm_quant_i8(x, residual [B,S,D] bf16, weight [D] bf16)
#   -> (q int8, residual updated in place, scale [B,S])
def fused_add_rmsnorm_quant_i8_inputs(M, D, gen, device):
    return [randn((1, M, D), bf16, gen, device),
            randn((1, M, D), bf16, gen, device), randn((D,), bf16, gen, device)]


def fused_add_rmsnorm_quant_i8_eager(x, residual, weight):
    r = (x.float() + residual.float()).to(residual.dtype)
    residual.copy_(r)
    q, scale = quantize_rows(_rms32(r, weight), torch.int8)
    return q, residual, scale


def fused_add_rmsnorm_quant_i8_ref(x, residual, weight):
    r = (x.double() + residual.double()).to(bf16)  # the stored residual
    q, scale = quantize_rows(_rms64(r, weight).float(), torch.int8)
    return q, r, scale


# layernorm_modulate_quant_fp8(x [B,S,D] bf16, scale, shift [B,1,D] f32)
#   -> (q fp8, s [B,S])
def layernorm_modulate_quant_fp8_inputs(M, D, gen, device):
    return [randn((1, M, D), bf16, gen, device),
            randn((1, 1, D), f32, gen, device),
            randn((1, 1, D), f32, gen, device)]


def layernorm_modulate_quant_fp8_eager(x, scale, shift):
    n = F.layer_norm(x.float(), x.shape[-1:], eps=EPS)
    return quantize_rows(n * (1 + scale) + shift, FP8)


def layernorm_modulate_quant_fp8_ref(x, scale, shift):
    # The norm is rounded to f32, the modulation computed from it in float64.
    n = F.layer_norm(x.double(), x.shape[-1:], eps=EPS).float().double()
    y = (n * (1 + scale.double()) + shift.double()).float()
    return quantize_rows(y, FP8)


# rmsnorm_quant_fp8_group128(x [B,S,D] bf16, weight [D] bf16)
#   -> (q fp8, scale [B,S,D/128]); D a multiple of 128
GROUP = 128


def quantize_groups(y, dtype, group=GROUP):
    """(q, scale): y (f32, [..., D]) quantized per block of `group`."""
    q, scale = quantize_rows(y.unflatten(-1, (-1, group)), dtype)
    return q.flatten(-2), scale


def rmsnorm_quant_fp8_group128_inputs(M, D, gen, device):
    return rmsnorm_quant_fp8_inputs(M, D, gen, device)


def rmsnorm_quant_fp8_group128_eager(x, weight):
    return quantize_groups(_rms32(x, weight), FP8)


def rmsnorm_quant_fp8_group128_ref(x, weight):
    return quantize_groups(_rms64(x, weight).float(), FP8)


NAMES = ("rmsnorm_quant_fp8", "fused_add_rmsnorm_quant_i8",
         "layernorm_modulate_quant_fp8", "rmsnorm_quant_fp8_group128")


def functions(name):
    """(inputs, eager, ref) of a quantizing example."""
    g = globals()
    return g[name + "_inputs"], g[name + "_eager"], g[name + "_ref"]
