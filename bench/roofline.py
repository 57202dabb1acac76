#!/usr/bin/env python3
"""One D-dynamic artifact against specialized kernels at every D, as % of a copy.

    python3 bench/roofline.py --artifacts gpu-py/roofline [--json out.json]
        [--markdown out.md] [--cases rmsnorm,softmax] [--dims 256,4096]
        [--baseline OTHER_DIR] [--no-compile] [--rounds 5] [--quick]
    python3 bench/roofline.py --artifacts DIR --dry-run     # CPU, no timing

The question: does one artifact compiled with D dynamic (what a user ships)
run at the speed of kernels specialized for each D? For every case and every
D of D_LIST, with M rows chosen so that x is about 128 MiB (inputs far larger
than L2, every kernel memory-bound), in one process:

- the floor: an SM copy kernel, torch.mul(src, 1.0, out=dst) on bf16
  buffers, moving the case's bytes (inputs read once + outputs written once;
  an in-place result counts as read and as written), timed like the rest;
- the contenders: normfuse (DIR/<kernel>.nfa, D dynamic), torch.compile
  (dynamic=False: it specializes on D, one compile per shape) of an eager
  function with exactly the IR's semantics, Quack and Liger where importable
  (both compile per D too); each first checked against a float64 reference
  computed here (||out - ref|| / ||ref|| <= 1e-2 for bf16/f16 results,
  normfuse.testing.tolerance), then timed by CUDA-graph replay over 4
  rotating input sets: every contender and the copy captured first, then
  timed in --rounds interleaved rounds with the order rotated, the best
  round kept (what is timed right after another kernel runs slower).

Reported per contender: copy_time / contender_time * 100 (100% = as fast as
copying the bytes the kernel must move). A contender that fails or does not
support a case or D is recorded with the reason ("n/a: ..."), never fatal.
The JSON and markdown files are rewritten after every row, so a run cut
short keeps what it measured.

--dry-run builds the inputs on the CPU at a few rows and checks the float64
references against the artifacts' generated PyTorch functions (fallback and
the op's CPU path, which writes in-place results into their argument) and
the eager functions: the script's semantics and bookkeeping without a GPU.
"""

import argparse
import datetime
import gc
import importlib
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
# bench.py puts python/ on the path and imports normfuse.
from bench import (SETS, capture, copy_graph, fagn_eager,  # noqa
                   ntma_eager, replay_time_us, rms, srn_affine_eager,
                   srn_eager)
import normfuse  # noqa: E402
import quant_cases  # noqa: E402
from normfuse.testing import (is_quantized_dtype, max_relative_error,  # noqa
                              mismatch_ok, quantized_mismatch, rel_error,
                              tolerance)

D_LIST = [64, 100, 256, 768, 1000, 1152, 1536, 2240, 3072, 4096, 5120, 6144,
          8192, 12288, 16384, 24576, 32768, 65536]
X_BYTES = 128 << 20  # size of x: every input set far larger than L2
EPS = 1e-6
bf16, f16, f32 = torch.bfloat16, torch.float16, torch.float32
CONTENDERS = ("normfuse", "baseline", "torch.compile", "Quack", "Liger")
# "baseline": the same kernel from the artifacts of --baseline (another
# commit's), timed in the same run to measure a change.


class NotAvailable(Exception):
    """A contender that has no kernel for this case (or D): recorded as n/a."""


# ---------------------------------------------------------------------------
# The cases. Arguments are in the IR's order, activations [1, M, D]; every
# function returns the results in the IR's order. `eager` is what
# torch.compile compiles and rounds where the IR file rounds; `ref` is the
# float64 reference (rounding only where a stored value is read back).


def randn(shape, dtype, gen, device):
    return torch.randn(shape, generator=gen, device=device).to(dtype)


def rmsnorm_inputs(M, D, gen, device):
    return [randn((1, M, D), bf16, gen, device), randn((D,), bf16, gen, device)]


def rmsnorm_eager(x, weight):
    return rms(x.float(), weight.float()).to(x.dtype)


def rmsnorm_ref(x, weight):
    return (x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True)
                                     + EPS) * weight.double(),)


def layernorm_inputs(M, D, gen, device):
    return [randn((1, M, D), bf16, gen, device), randn((D,), f32, gen, device),
            randn((D,), f32, gen, device)]


def layernorm_eager(x, weight, bias):
    return F.layer_norm(x.float(), x.shape[-1:], weight, bias,
                        eps=EPS).to(x.dtype)


def layernorm_ref(x, weight, bias):
    return (F.layer_norm(x.double(), x.shape[-1:], weight.double(),
                         bias.double(), eps=EPS),)


def fused_add_rmsnorm_inputs(M, D, gen, device):
    return [randn((1, M, D), bf16, gen, device),
            randn((1, M, D), bf16, gen, device), randn((D,), bf16, gen, device)]


def fused_add_rmsnorm_eager(x, residual, weight):
    # The residual stream is stored in bf16 and the norm reads the stored
    # value (examples/fused_add_rmsnorm.mlir); residual is updated in place.
    r = (x.float() + residual.float()).to(residual.dtype)
    residual.copy_(r)
    return rms(r.float(), weight.float()).to(x.dtype), residual


def fused_add_rmsnorm_ref(x, residual, weight):
    r = x.double() + residual.double()
    rr = r.to(bf16).double()  # what the norm reads: r as stored
    y = rr * torch.rsqrt(rr.pow(2).mean(-1, keepdim=True) + EPS) \
        * weight.double()
    return y, r


def softmax_inputs(M, D, gen, device):
    return [randn((1, M, D), f16, gen, device)]


def softmax_eager(x):
    return torch.softmax(x.float(), -1).to(x.dtype)


def softmax_ref(x):
    return (torch.softmax(x.double(), -1),)


def srn_inputs(M, D, gen, device):
    # bench.py's srn_inputs (seed #1) at B=1, S=M, on any device.
    return [randn((1, M, D), bf16, gen, device),
            randn((1, M, D), bf16, gen, device)] + \
        [randn((1, 1, D), f32, gen, device) for _ in range(3)]


def srn_ref(x, residual, gate, scale, shift):
    r = residual.double() + gate.double() * x.double()
    y = F.layer_norm(r, r.shape[-1:], eps=EPS) * (1 + scale.double()) \
        + shift.double()
    return y, r


def srrn_eager(x, residual, gate, scale, shift):
    # examples/scale_residual_rmsnorm_scale_shift.mlir: f32 throughout, the
    # norm reads the unrounded r.
    r = residual.float() + gate * x.float()
    y = rms(r, 1.0) * (1 + scale) + shift
    return y.to(x.dtype), r.to(x.dtype)


def srrn_ref(x, residual, gate, scale, shift):
    r = residual.double() + gate.double() * x.double()
    y = r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + EPS) \
        * (1 + scale.double()) + shift.double()
    return y, r


def srn_affine_inputs(M, D, gen, device):
    # bench.py's srn_affine_inputs (seed #1, f32 affine) at B=1, S=M.
    return [randn((1, M, D), f32, gen, device),
            randn((1, M, D), f32, gen, device)] + \
        [randn((D,), f32, gen, device) for _ in range(3)] + \
        [randn((1, 1, D), f32, gen, device) for _ in range(2)]


def srn_affine_ref(x, residual, gate, weight, bias, scale, shift):
    r = residual.double() + gate.double() * x.double()
    y = F.layer_norm(r, r.shape[-1:], weight.double(), bias.double(),
                     eps=EPS) * (1 + scale.double()) + shift.double()
    return y, r


def fagn_inputs(M, D, gen, device):
    # bench.py's fagn_inputs (seed #2) at B=1, S=M, on any device.
    return [randn((1, M, D), bf16, gen, device),
            randn((1, M, D), bf16, gen, device),
            randn((1, 1, D), f32, gen, device), randn((D,), f32, gen, device)]


def fagn_ref(x, residual, gate, weight):
    res = residual.double()
    n = res * torch.rsqrt(res.pow(2).mean(-1, keepdim=True) + EPS) \
        * weight.double()
    return (x.double() + gate.double() * n,)


def ntma_inputs(M, D, gen, device):
    # bench.py's ntma_inputs (seed #3 with norm_scale) at B=1, S=M.
    return [randn((1, M, D), bf16, gen, device),
            randn((1, M, D), bf16, gen, device),
            randn((1, 1, D), f32, gen, device),
            randn((D,), f32, gen, device), randn((D,), f32, gen, device),
            randn((1, 1, D), f32, gen, device)]


def ntma_ref(x, residual, gate, weight1, weight2, scale):
    # The second norm reads r rounded to x's dtype, as the kernel does
    # (examples/norm_tanh_mul_add_norm_scale.mlir).
    r = residual.double() + torch.tanh(gate.double()) \
        * rms(x.double(), weight1.double())
    r = r.to(x.dtype).double()
    return rms(r, weight2.double()) * (1 + scale.double()), r


# -- Quack and Liger: 2-D [M, D] APIs, specialized (compiled) per D ----------

_modules = {}


def optional_module(name):
    """The module, or NotAvailable with the import error (cached)."""
    if name not in _modules:
        try:
            _modules[name] = importlib.import_module(name)
        except Exception as e:  # ImportError, or a broken install
            _modules[name] = NotAvailable(f"{name} not importable: "
                                          f"{type(e).__name__}: {e}")
    m = _modules[name]
    if isinstance(m, NotAvailable):
        raise m
    return m


def rows2d(t):
    return t.reshape(-1, t.shape[-1])


def quack_rmsnorm(D):
    fwd = optional_module("quack.rmsnorm").rmsnorm_fwd
    return lambda x, w: fwd(rows2d(x), w)[0]


def quack_layernorm(D):
    fwd, reasons = None, []
    for name in ("quack.rmsnorm", "quack.layernorm"):  # newer, older Quack
        try:
            fwd = getattr(optional_module(name), "layernorm_fwd")
            break
        except (NotAvailable, AttributeError) as e:
            reasons.append(str(e))
    if fwd is None:
        raise NotAvailable("no quack layernorm_fwd: " + "; ".join(reasons))

    def run(x, w, b):
        out = fwd(rows2d(x), w, b)  # TypeError where it takes no bias
        return out[0] if isinstance(out, tuple) else out
    return run


def quack_fused_add_rmsnorm(D):
    # Quack writes the new residual to a fresh tensor (same bytes moved as
    # the in-place update) and normalizes the f32 sum before rounding it.
    fwd = optional_module("quack.rmsnorm").rmsnorm_fwd

    def run(x, residual, w):
        out, residual_out, _ = fwd(rows2d(x), w, residual=rows2d(residual))
        return out, residual_out
    return run


def quack_softmax(D):
    fwd = optional_module("quack.softmax").softmax_fwd
    return lambda x: fwd(rows2d(x))


def liger_rmsnorm(D):
    fn = optional_module("liger_kernel.ops.rms_norm").LigerRMSNormFunction
    # casting_mode "gemma" with offset 0: everything in f32, rounded once
    # (the IR's semantics; Liger's default "llama" rounds before the weight).
    return lambda x, w: fn.apply(rows2d(x), w, EPS, 0.0, "gemma")


def liger_layernorm(D):
    fn = optional_module("liger_kernel.ops.layer_norm").LigerLayerNormFunction
    return lambda x, w, b: fn.apply(rows2d(x), w, b, EPS)


def liger_fused_add_rmsnorm(D):
    fn = optional_module(
        "liger_kernel.ops.fused_add_rms_norm").LigerFusedAddRMSNormFunction

    def run(x, residual, w):
        out = fn.apply(rows2d(x), rows2d(residual), w, EPS, 0.0, "gemma")
        return tuple(out) if isinstance(out, (tuple, list)) else out
    return run


def liger_softmax(D):
    fn = optional_module("liger_kernel.ops.softmax").LigerSoftmaxFunction
    return lambda x: fn.apply(rows2d(x))


def no_kernel(library):
    def make(D):
        raise NotAvailable(f"{library} has no fused kernel for this pattern")
    return make


def as_f32(inputs):
    """`inputs` with every floating-point tensor in f32: the activations,
    and a weight that has their type (RMSNorm's; LayerNorm's weight and bias
    are f32 already)."""
    def make(M, D, gen, device):
        return [a.float() if a.is_floating_point() else a
                for a in inputs(M, D, gen, device)]
    return make


class Case:
    def __init__(self, name, x_dtype, inputs, eager, ref, quack, liger, note,
                 kernel=None):
        self.name = name  # = the artifact's file name
        self.kernel = kernel or name  # the kernel's name in the artifact
        self.x_dtype = x_dtype  # sizes M: x is about X_BYTES
        self.inputs = inputs
        self.eager = eager
        self.ref = ref
        self.quack = quack
        self.liger = liger
        self.note = note


CASES = [
    Case("rmsnorm", bf16, rmsnorm_inputs, rmsnorm_eager, rmsnorm_ref,
         quack_rmsnorm, liger_rmsnorm, "x bf16, weight bf16"),
    Case("layernorm", bf16, layernorm_inputs, layernorm_eager, layernorm_ref,
         quack_layernorm, liger_layernorm, "x bf16, weight and bias f32"),
    Case("fused_add_rmsnorm", bf16, fused_add_rmsnorm_inputs,
         fused_add_rmsnorm_eager, fused_add_rmsnorm_ref,
         quack_fused_add_rmsnorm, liger_fused_add_rmsnorm,
         "x, residual, weight bf16; residual updated in place"),
    Case("softmax", f16, softmax_inputs, softmax_eager, softmax_ref,
         quack_softmax, liger_softmax, "x f16"),
    # The same kernels built with `!act = f32` (nf-compile --types act=f32
    # or the alias edited), in <name>.nfa.
    Case("rmsnorm_f32", f32, as_f32(rmsnorm_inputs), rmsnorm_eager,
         rmsnorm_ref, quack_rmsnorm, liger_rmsnorm, "x, weight f32",
         kernel="rmsnorm"),
    Case("layernorm_f32", f32, as_f32(layernorm_inputs), layernorm_eager,
         layernorm_ref, quack_layernorm, liger_layernorm,
         "x f32, weight and bias f32", kernel="layernorm"),
    Case("softmax_f32", f32, as_f32(softmax_inputs), softmax_eager,
         softmax_ref, quack_softmax, liger_softmax, "x f32",
         kernel="softmax"),
    Case("scale_residual_layernorm_scale_shift", bf16, srn_inputs, srn_eager,
         srn_ref, no_kernel("Quack"), no_kernel("Liger"),
         "seed #1: x, residual bf16; gate, scale, shift [1, 1, D] f32"),
    Case("scale_residual_layernorm_affine_scale_shift", f32,
         srn_affine_inputs, srn_affine_eager, srn_affine_ref,
         no_kernel("Quack"), no_kernel("Liger"),
         "seed #1, f32: x, residual f32; gate, weight, bias [D], scale, "
         "shift [1, 1, D] f32"),
    Case("scale_residual_rmsnorm_scale_shift", bf16, srn_inputs,
         srrn_eager, srrn_ref, no_kernel("Quack"), no_kernel("Liger"),
         "seed #1 with RMSNorm (sglang's norm_type=\"rms\"): x, residual "
         "bf16; gate, scale, shift [1, 1, D] f32"),
    Case("fused_add_gate_norm", bf16, fagn_inputs, fagn_eager, fagn_ref,
         no_kernel("Quack"), no_kernel("Liger"),
         "seed #2: x, residual bf16; gate [1, 1, D], weight [D] f32"),
    Case("norm_tanh_mul_add_norm_scale", bf16, ntma_inputs, ntma_eager,
         ntma_ref, no_kernel("Quack"), no_kernel("Liger"),
         "seed #3 with norm_scale: x, residual bf16; gate, scale [1, 1, D], "
         "weight1, weight2 [D] f32"),
] + [
    # Quantized outputs (bench/quant_cases.py): the references are the
    # quantized values and f32 scales themselves.
    Case(name, bf16, *quant_cases.functions(name), no_kernel("Quack"),
         no_kernel("Liger"), description)
    for name, description in (
        ("rmsnorm_quant_fp8", "x, weight bf16 -> fp8 e4m3 + f32 scale per "
         "token"),
        ("fused_add_rmsnorm_quant_i8", "x, residual, weight bf16 -> int8 + "
         "residual in place + f32 scale per token"),
        ("layernorm_modulate_quant_fp8", "x bf16, scale, shift [1, 1, D] f32 "
         "-> fp8 e4m3 + f32 scale per token"),
        ("rmsnorm_quant_fp8_group128", "x, weight bf16 -> fp8 e4m3 + f32 "
         "scale per 128 elements (D a multiple of 128)"))
]


# ---------------------------------------------------------------------------


def as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def clone(args):
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def itemsize(dtype):
    return torch.empty((), dtype=dtype).element_size()


def nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors
               if isinstance(t, torch.Tensor))


def bytes_moved(kernel, args, refs):
    """Inputs read once + results written once, in the kernel's result
    dtypes (its metadata); an in-place result counts as written once, like
    any output, and its argument as read once."""
    dtypes = [normfuse._NF_TORCH[r.dtype] for r in kernel.meta.results]
    return dtypes, nbytes(args) + sum(r.numel() * itemsize(dt)
                                      for r, dt in zip(refs, dtypes))


def check(outs, refs, dtypes):
    """(correct, worst relative error) of outputs against float64 refs;
    outputs of 2-D APIs are compared in the reference's shape."""
    outs = as_tuple(outs)
    if len(outs) != len(refs):
        return False, float("nan")
    # The f32 results of a quantizing kernel are its scales.
    quantized = any(is_quantized_dtype(dt) for dt in dtypes)
    worst = 0.0
    for o, r, dt in zip(outs, refs, dtypes):
        if o.dtype != dt or o.numel() != r.numel():
            return False, float("nan")
        o = o.reshape(r.shape)
        if is_quantized_dtype(dt):
            # At most one step off, in at most 0.1% of the elements; the
            # fraction off is reported as the error.
            far, differ, numel = quantized_mismatch(o, r)
            if not mismatch_ok(far, differ, numel):
                return False, differ / numel
            worst = max(worst, differ / numel)
            continue
        if r.dtype == torch.float32 and r.dim() >= 2 and \
                quantized:  # per-token or per-group scales
            err = max_relative_error(o, r)
            if not err <= 1e-5:
                return False, err
        else:
            err = rel_error(o, r)
            if not err <= tolerance(dt):
                return False, err
        worst = max(worst, err)
    return True, worst


def short(e):
    text = f"{type(e).__name__}: {e}" if not isinstance(e, NotAvailable) \
        else str(e)
    return " ".join(text.split())[:2000]


def rows_for(D, elem_bytes):
    return max(1, round(X_BYTES / (D * elem_bytes)))


def time_graphs(graphs, replays, rounds):
    """{label: best time} of captured graphs, timed in `rounds` interleaved
    rounds, the order rotated every round. Whatever is timed right after
    another kernel runs measurably slower (docs/benchmarks.md, "Timing
    order": the same normfuse kernel ran at 90-92% of a copy timed first
    after the copy and 95-98% timed second), so no contender may always come
    first; the best of the rounds is each one's time."""
    labels = list(graphs)
    best = {}
    for r in range(rounds):
        order = labels[r % len(labels):] + labels[:r % len(labels)]
        for label in order:
            t = replay_time_us(graphs[label], replays, SETS)
            best[label] = min(best.get(label, t), t)
    return best


def make_contenders(case, D, kernel, opts):
    """[(label, callable or NotAvailable)] in CONTENDERS order."""
    out = [("normfuse", kernel)]
    if opts.baseline:
        out.append(("baseline", baseline_kernel(case, opts.baseline)))
    if not opts.no_compile:
        torch._dynamo.reset()  # a fresh specialization for this shape
        out.append(("torch.compile", torch.compile(case.eager, dynamic=False)))
    for label, factory in (("Quack", case.quack), ("Liger", case.liger)):
        try:
            out.append((label, factory(D)))
        except NotAvailable as e:
            out.append((label, e))
    return out


_baselines = {}


def baseline_kernel(case, folder):
    """The kernel of `case` in DIR/<case name>.nfa, loaded once."""
    name = case.name
    if name not in _baselines:
        path = Path(folder) / f"{name}.nfa"
        try:
            _baselines[name] = normfuse.load(
                str(path), prefix=f"baseline_{name}").kernels[case.kernel]
        except Exception as e:
            _baselines[name] = NotAvailable(f"cannot load {path}: {short(e)}")
    return _baselines[name]


def run_case(case, D, kernel, opts, device):
    M = rows_for(D, itemsize(case.x_dtype))
    gen = torch.Generator(device=device).manual_seed(D)
    sets = [case.inputs(M, D, gen, device) for _ in range(SETS)]
    refs = case.ref(*sets[0])
    dtypes, moved = bytes_moved(kernel, sets[0], refs)
    row = dict(case=case.name, D=D, M=M, bytes=moved, contenders={})
    contenders = make_contenders(case, D, kernel, opts)
    # Every check before any timing: an in-place kernel changes its inputs
    # while it is timed.
    timed = []
    for label, fn in contenders:
        if isinstance(fn, NotAvailable):
            row["contenders"][label] = dict(error="n/a: " + short(fn))
            continue
        try:
            ok, err = check(fn(*clone(sets[0])), refs, dtypes)
        except Exception as e:
            # Quack and Liger refuse some shapes and dtypes: unsupported,
            # not broken. A failure of normfuse or torch.compile is an error.
            na = "n/a: " if label in ("Quack", "Liger") else ""
            row["contenders"][label] = dict(error=na + short(e))
            continue
        row["contenders"][label] = dict(correct=ok, max_rel_error=err)
        timed.append((label, fn))
    del refs
    graphs = {"copy": copy_graph(moved, device)}
    for label, fn in timed:
        try:
            graphs[label] = capture(fn, sets)
        except Exception as e:  # e.g. not capturable in a CUDA graph
            try:
                torch.cuda.synchronize()
            except Exception:
                pass
            row["contenders"][label].update(error=short(e))
    best = time_graphs(graphs, opts.replays, opts.rounds)
    copy_us = best.pop("copy")
    row["copy_us"] = copy_us
    for label, t in best.items():
        row["contenders"][label].update(us=t, pct=100.0 * copy_us / t)
    del sets, contenders, timed, graphs
    return row


def profile_compiled(case, D, args, code_dir):
    """Launches torch.compile's kernels of `case` twice (after one call that
    compiles, and autotunes where Inductor does) and writes the code it
    generated to code_dir: what the peer's kernel is, for ncu to compare."""
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    fn = torch.compile(case.eager, dynamic=False)
    _, code = run_and_get_code(fn, *clone(args))
    if code_dir:
        Path(code_dir).mkdir(parents=True, exist_ok=True)
        Path(code_dir, f"{case.name}_{D}.py").write_text("\n".join(code))
    with torch.cuda.nvtx.range("profile"):
        for _ in range(2):
            fn(*args)


def dry_run_case(case, D, kernel, rows):
    """CPU: the references against the generated fallback, the op's CPU path
    (runtime checks, in-place writes) and the eager function."""
    gen = torch.Generator().manual_seed(D)
    args = case.inputs(rows, D, gen, "cpu")
    refs = case.ref(*args)
    dtypes, moved = bytes_moved(kernel, args, refs)
    row = dict(case=case.name, D=D, M=rows, bytes=moved, contenders={})
    for label, fn in (("normfuse fallback", kernel.fallback),
                      ("normfuse op (CPU)", kernel), ("eager", case.eager)):
        try:
            a = clone(args)
            outs = as_tuple(fn(*a))
            ok, err = check(outs, refs, dtypes)
            if label == "normfuse op (CPU)":
                for i, r in enumerate(kernel.meta.results):
                    if r.in_place >= 0 and outs[i] is not a[r.in_place]:
                        ok = False  # in-place result not in its argument
            row["contenders"][label] = dict(correct=ok, max_rel_error=err)
        except Exception as e:
            row["contenders"][label] = dict(error=short(e))
    return row


def cell(c):
    if c is None:
        return "-"
    if "us" in c:
        return f"{c['pct']:5.1f}%" + ("" if c.get("correct") else " WRONG")
    if "error" in c:
        return c["error"].split(":")[0] if c["error"].startswith("n/a") \
            else "error"
    return ("ok" if c["correct"] else "WRONG") + f" {c['max_rel_error']:.1e}"


def markdown(info):
    lines = [
        "# Roofline: one D-dynamic artifact against specialized kernels",
        "",
        f"- Device: {info['device']}; torch {info['torch']}; "
        f"Quack {info['quack']}; Liger {info['liger']}",
        f"- Date: {info['date']}; artifacts of commit "
        f"`{info['artifacts_commit'] or 'unknown'}`",
        "- Dry run on the CPU: M rows each, checks against the float64 "
        "references only, no timing." if info["dry_run"] else
        f"- x about {X_BYTES >> 20} MiB (M = rows); {info['sets']} rotating "
        f"input sets, {info['replays']} graph replays. % = time of an SM copy "
        "kernel moving the same bytes / the contender's time.",
        "",
    ]
    by_case = {}
    for r in info["rows"]:
        by_case.setdefault(r["case"], []).append(r)
    notes = {c.name: c.note for c in CASES}
    for name, rows in by_case.items():
        labels = [l for l in CONTENDERS + ("normfuse fallback",
                                           "normfuse op (CPU)", "eager")
                  if any(l in r["contenders"] for r in rows)]
        lines += [f"## {name}", "", notes.get(name, ""), "",
                  "| D | M | MB moved | copy us | " + " | ".join(labels) + " |",
                  "|---" * (4 + len(labels)) + "|"]
        errors = {}  # (contender, text) -> the D it happened at
        for r in rows:
            cells = []
            for l in labels:
                c = r["contenders"].get(l)
                if c and "us" in c:
                    cells.append(f"{c['pct']:.1f}% ({c['us']:.1f} us)"
                                 + ("" if c["correct"] else " WRONG"))
                elif c and "error" in c:
                    cells.append("n/a" if c["error"].startswith("n/a")
                                 else "error")
                    errors.setdefault((l, c["error"][:300]), []).append(
                        str(r["D"]))
                elif c:
                    cells.append(("ok" if c["correct"] else "WRONG")
                                 + f" ({c['max_rel_error']:.1e})")
                else:
                    cells.append("-")
            copy = f"{r['copy_us']:.1f}" if "copy_us" in r else "-"
            lines.append(f"| {r['D']} | {r['M']} | {r['bytes'] / 1e6:.1f} | "
                         f"{copy} | " + " | ".join(cells) + " |")
            if "error" in r:
                errors.setdefault(("row", r["error"][:300]), []).append(
                    str(r["D"]))
        if errors:
            lines += [""] + [f"- {l} at D = {', '.join(ds)}: {text}"
                             for (l, text), ds in errors.items()]
        lines.append("")
    return "\n".join(lines)


def version(name):
    try:
        from importlib.metadata import version as v
        return v(name)
    except Exception:
        return "not installed"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--artifacts", default="gpu-py/roofline",
                   help="folder of <kernel>.nfa, D dynamic "
                   "(tools/make-python-cases.sh writes gpu-py/roofline)")
    p.add_argument("--cases", type=lambda t: t.split(","),
                   default=[c.name for c in CASES],
                   help="comma-separated: " + ",".join(c.name for c in CASES))
    p.add_argument("--dims", type=lambda t: [int(d) for d in t.split(",")],
                   help="comma-separated D (default: the D_LIST of the issue)")
    p.add_argument("--json")
    p.add_argument("--markdown")
    p.add_argument("--replays", type=int, default=20)
    p.add_argument("--rounds", type=int, default=5,
                   help="interleaved timing rounds (best of them is kept)")
    p.add_argument("--quick", action="store_true",
                   help="3 graph replays instead of --replays")
    p.add_argument("--baseline", metavar="DIR",
                   help="also time the kernels of DIR/<kernel>.nfa (e.g. "
                   "another commit's artifacts) in the same run")
    p.add_argument("--no-compile", action="store_true",
                   help="skip torch.compile (one compile per case and D)")
    p.add_argument("--dry-run", action="store_true",
                   help="CPU only: check references against the artifacts' "
                   "generated PyTorch functions at a few rows, no timing")
    p.add_argument("--dry-run-rows", type=int, default=5)
    p.add_argument("--profile", action="store_true",
                   help="launch the normfuse kernel, torch.compile's (unless "
                   "--no-compile) and the floor's copy kernel twice per case "
                   "and D, nothing else (run under ncu)")
    p.add_argument("--compiled-code", metavar="DIR",
                   help="with --profile: write the code torch.compile "
                   "generated to DIR/<case>_<D>.py")
    opts = p.parse_args()
    if opts.quick:
        opts.replays = 3
        opts.rounds = 2
    unknown = set(opts.cases) - {c.name for c in CASES}
    if unknown:
        sys.exit(f"error: unknown case(s) {', '.join(sorted(unknown))}")
    dims = opts.dims or ([64, 100, 1000] if opts.dry_run else D_LIST)
    device = "cpu" if opts.dry_run else "cuda"
    if not opts.dry_run and not torch.cuda.is_available():
        sys.exit("error: roofline.py needs a CUDA GPU (or --dry-run)")

    commit_file = Path(opts.artifacts).parent / "COMMIT"
    info = dict(
        device=torch.cuda.get_device_name() if device == "cuda" else "cpu "
        "(dry run)",
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"),
        artifacts_commit=commit_file.read_text().strip()
        if commit_file.exists() else "",
        torch=torch.__version__, quack=version("quack-kernels"),
        liger=version("liger-kernel"), sets=SETS, replays=opts.replays,
        dry_run=opts.dry_run, rows=[])
    print(f"device: {info['device']}  torch {info['torch']}  Quack "
          f"{info['quack']}  Liger {info['liger']}", flush=True)

    def save():
        if opts.json:
            Path(opts.json).write_text(json.dumps(info, indent=2))
        if opts.markdown:
            Path(opts.markdown).write_text(markdown(info))

    labels = ("normfuse fallback", "normfuse op (CPU)", "eager") \
        if opts.dry_run else tuple(
            l for l in CONTENDERS if l != "baseline" or opts.baseline)
    print(f"{'case':38} {'D':>6} {'M':>8} {'MB moved':>9} {'copy us':>8} "
          + " ".join(f"{l:>17}" for l in labels), flush=True)
    for case in CASES:
        if case.name not in opts.cases:
            continue
        path = Path(opts.artifacts) / f"{case.name}.nfa"
        try:
            # One prefix per case: two cases may build the same kernel.
            kernel = normfuse.load(
                str(path), prefix=f"roofline_{case.name}").kernels[
                case.kernel]
        except Exception as e:
            print(f"{case.name}: cannot load {path}: {short(e)}", flush=True)
            kernel = None
        for D in dims:
            if kernel is None:
                row = dict(case=case.name, D=D, M=0, bytes=0, contenders={
                    "normfuse": dict(error=f"cannot load {path}")})
            elif opts.dry_run:
                row = dry_run_case(case, D, kernel, opts.dry_run_rows)
            elif opts.profile:
                M = rows_for(D, itemsize(case.x_dtype))
                gen = torch.Generator(device=device).manual_seed(D)
                args = case.inputs(M, D, gen, device)
                # Only the launches inside the NVTX range "profile" are
                # profiled (tools/gpu-ncu.sh): not those that make inputs,
                # compile or autotune.
                outs = as_tuple(kernel(*args))
                with torch.cuda.nvtx.range("profile"):
                    for _ in range(2):
                        kernel(*args)
                if not opts.no_compile:
                    profile_compiled(case, D, args, opts.compiled_code)
                # The floor's copy kernel, for the same ncu report.
                moved = bytes_moved(kernel, args, outs)[1]
                n = max(1, moved // 4)
                src = torch.ones(n, dtype=bf16, device=device)
                dst = torch.empty_like(src)
                with torch.cuda.nvtx.range("profile"):
                    for _ in range(2):
                        torch.mul(src, 1.0, out=dst)
                torch.cuda.synchronize()
                print(f"{case.name} D={D}: launched", flush=True)
                del args, outs, src, dst
                continue
            else:
                try:
                    row = run_case(case, D, kernel, opts, device)
                except Exception as e:  # inputs or the copy: the whole row
                    row = dict(case=case.name, D=D, M=0, bytes=0,
                               contenders={}, error=short(e))
                gc.collect()
                torch.cuda.empty_cache()
            info["rows"].append(row)
            copy = f"{row['copy_us']:8.1f}" if "copy_us" in row else \
                f"{'-':>8}"
            print(f"{case.name:38} {D:6d} {row['M']:8d} "
                  f"{row['bytes'] / 1e6:9.1f} {copy} " + " ".join(
                      f"{cell(row['contenders'].get(l)):>17}" for l in labels)
                  + (f"  error: {row['error']}" if "error" in row else ""),
                  flush=True)
            for l in labels:
                c = row["contenders"].get(l)
                if c and "error" in c and not c["error"].startswith("n/a"):
                    print(f"    {l}: {c['error'][:300]}", flush=True)
            save()
    save()
    # A peer outside the tolerance (torch.compile's int8 rounding) is marked
    # in the tables; only wrong normfuse results fail the run.
    wrong = [(r["case"], r["D"], l) for r in info["rows"]
             for l, c in r["contenders"].items()
             if c.get("correct") is False and l in ("normfuse", "baseline")]
    if wrong:
        sys.exit("error: wrong results: " + ", ".join(
            f"{c} D={d} {l}" for c, d, l in wrong))


if __name__ == "__main__":
    main()
