#!/usr/bin/env python3
"""A DiT attention-input block from torch ops plus two normfuse kernels,
compiled with torch.compile(fullgraph=True) and checked against eager.

    PYTHONPATH=python python3 examples/python/dit_block.py --artifacts DIR

DIR holds scale_residual_layernorm_scale_shift.nfa and qk_rmsnorm_rope_neox.nfa
(nf-compile of the files in examples/; tools/make-python-cases.sh writes them
to gpu-py/test). The block:

    gate, scale, shift = Linear(c)                        adaLN modulation
    y, r = scale_residual_layernorm_scale_shift(x, residual, gate, scale, shift)
    q, k, v = Linear(y)                                   [T, H, 128] views
    q, k = qk_rmsnorm_rope_neox(q, k, wq, wk, cos_sin, positions)   in place
    out = Linear(attention(q, k, v))

and the same block with the two kernels written as plain torch ops.
"""

import argparse
import os
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import normfuse  # noqa: E402

HEAD = 128


class Block(torch.nn.Module):
    def __init__(self, dim, kernels=None):
        super().__init__()
        self.heads = dim // HEAD
        self.ada = torch.nn.Linear(dim, 3 * dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.proj = torch.nn.Linear(dim, dim)
        self.wq = torch.nn.Parameter(1 + 0.1 * torch.randn(HEAD))
        self.wk = torch.nn.Parameter(1 + 0.1 * torch.randn(HEAD))
        self.kernels = kernels  # None: the torch-ops version

    def forward(self, x, residual, c, cos_sin, positions):
        B, S, D = x.shape
        # [B, 1, D] f32 views of one [B, 1, 3D] tensor (stride 3D): the
        # kernel takes strided operands, no copy needed.
        gate, scale, shift = self.ada(c).float().chunk(3, dim=-1)
        if self.kernels:
            y, r = self.kernels["norm"](x, residual, gate, scale, shift)
        else:
            r = residual.float() + gate * x.float()
            y = F.layer_norm(r, (D,), eps=1e-6) * (1 + scale) + shift
            y, r = y.to(x.dtype), r.to(x.dtype)
        qkv = self.qkv(y).view(B * S, 3, self.heads, HEAD)
        q, k, v = qkv.unbind(1)  # [T, H, 128], rows 3*D apart
        if self.kernels:
            self.kernels["qk"](q, k, self.wq, self.wk, cos_sin, positions)
        else:
            q, k = qk_reference(q, k, self.wq, self.wk, cos_sin, positions)
        heads = [t.view(B, S, self.heads, HEAD).transpose(1, 2)
                 for t in (q, k, v)]
        o = F.scaled_dot_product_attention(*heads)
        return self.proj(o.transpose(1, 2).reshape(B, S, D)), r


def qk_reference(q, k, wq, wk, cos_sin, positions):
    cs = cos_sin[positions].unsqueeze(1)
    cos, sin = cs[..., :HEAD // 2], cs[..., HEAD // 2:]

    def one(t, w):
        t = t.float()
        t = t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()
        a, b = t[..., :HEAD // 2], t[..., HEAD // 2:]
        return torch.cat([a * cos - b * sin, b * cos + a * sin], -1).to(q.dtype)

    return one(q, wq), one(k, wk)


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm()).item()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--artifacts", required=True)
    p.add_argument("--tokens", type=int, default=1024)
    p.add_argument("--dim", type=int, default=1536)
    opts = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("error: this example needs a CUDA GPU")

    def kernel(name):
        return normfuse.load(os.path.join(opts.artifacts, name + ".nfa"))[name]

    kernels = {"norm": kernel("scale_residual_layernorm_scale_shift"),
               "qk": kernel("qk_rmsnorm_rope_neox")}
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    fused = Block(opts.dim, kernels).to(dev, dt)
    plain = Block(opts.dim).to(dev, dt)
    plain.load_state_dict(fused.state_dict())

    T, D, P = opts.tokens, opts.dim, 4096
    x = torch.randn(1, T, D, device=dev, dtype=dt)
    residual = torch.randn(1, T, D, device=dev, dtype=dt)
    c = torch.randn(1, 1, D, device=dev, dtype=dt)
    angle = torch.rand(P, HEAD // 2, device=dev) * 6.3
    cos_sin = torch.cat([angle.cos(), angle.sin()], -1)
    positions = torch.randint(0, P, (T,), device=dev)
    args = (x, residual, c, cos_sin, positions)

    with torch.no_grad():
        eager = fused(*args)
        compiled = torch.compile(fused, fullgraph=True)(*args)
        reference = plain(*args)
    worst = 0.0
    for name, a, b, tol in (
            ("compiled vs eager, out", compiled[0], eager[0], 1e-2),
            ("compiled vs eager, r", compiled[1], eager[1], 1e-2),
            ("kernels vs torch ops, out", eager[0], reference[0], 2e-2),
            ("kernels vs torch ops, r", eager[1], reference[1], 1e-2)):
        err = rel(a, b)
        print(f"{name:28} ||a-b||/||b|| = {err:.2e} (limit {tol:.0e})")
        if not err <= tol:
            worst = float("inf")
    if worst == float("inf"):
        sys.exit("error: the compiled block disagrees")
    print("ok: torch.compile(fullgraph=True) of the block matches eager")


if __name__ == "__main__":
    main()
