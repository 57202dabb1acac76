#!/usr/bin/env python3
"""Checks the PyTorch fallback (nf-compile --emit=torch) against nf-interp.

For every example (and its f16 and f32 variants, made as
tools/make-gpu-cases.sh makes them: every "bf16" replaced), at a few sizes
(an odd D, several rows, frames, several rotary positions with and without
an offset), it writes the fallback with nf-compile and seeded inputs and
reference results with nf-interp --write-dir, runs the fallback with torch,
and compares each result with the tolerance of the GPU check:
||out - ref|| / ||ref|| <= 1e-5 for f32 results, <= 1e-2 for f16/bf16, NaN
exactly where the reference is NaN; int8 and fp8 results at most one step
apart, in at most 0.1% of the elements (at least one). Kernels with dtypes
this torch lacks (the 8-bit floats before torch 2.1) are skipped, and the
summary line counts them. Each case runs twice: on contiguous
inputs and on strided copies (padded rows, every other element). It also
checks the contract: a tuple of new contiguous tensors of the result's
dtype and shape, arguments left as they were; and, for rotary kernels, that
a position outside the cache gives NaN in the rotated elements only.

  check_fallback.py --bin build/bin --examples examples --work /tmp/w
  check_fallback.py ... --prepare-only       # tools here, torch elsewhere
  check_fallback.py --work /tmp/w --check-only --device cuda

Exit status 1 on any mismatch.
"""

import argparse
import glob
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import torch

TOLERANCE = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}
TORCH_DTYPE = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "i8": torch.int8,
    "i32": torch.int32,
    "i64": torch.int64,
}
for _name, _attr in (("f8E4M3FN", "float8_e4m3fn"), ("f8E5M2", "float8_e5m2")):
    if hasattr(torch, _attr):
        TORCH_DTYPE[_name] = getattr(torch, _attr)
QUANTIZED = ("i8", "f8E4M3FN", "f8E5M2")


def grid_index(t):
    """Position of each int8 or fp8 value on its format's ordered grid
    (neighbouring values differ by one): the integer itself, or the fp8
    bits as sign and magnitude."""
    if t.dtype == torch.int8:
        return t.long()
    bits = t.view(torch.uint8).long()
    magnitude = bits & 0x7F
    return torch.where(bits >= 0x80, -magnitude, magnitude)


def quantized_far(out, ref):
    """(elements more than one step apart or NaN at different places,
    elements that differ) of two int8 or fp8 tensors."""
    steps = (grid_index(out.cpu()) - grid_index(ref)).abs()
    if out.dtype != torch.int8:
        onan, rnan = torch.isnan(out.cpu().float()), torch.isnan(ref.float())
        steps = torch.where(onan & rnan, torch.zeros_like(steps), steps)
        steps = torch.where(onan ^ rnan, torch.full_like(steps, 2), steps)
    return int((steps > 1).sum()), int((steps != 0).sum())


def sizes_for(source):
    """(dims, offset) cases for a file. Every size is given; a size fixed
    in a kernel's types (head_dim 128 of the QK examples) stays as it is.
    Several B (tokens) and S (heads) each, an odd D, frames of several
    tokens and of one, rotary caches of P rows, positions with and without
    an offset."""
    cases = [("B=2,S=6,D=7,F=3,P=16", 0), ("B=3,S=8,D=100,F=2,P=40", 7),
             ("B=1,S=5,D=64,F=5,P=1", 0), ("B=4,S=3,D=33,F=1,P=9", 2)]
    if "nf.rope" not in source:  # a rope needs rotary_dim <= D
        cases.append(("B=1,S=1,D=1,F=1,P=1", 0))
    # Group reductions need D a multiple of the group: one group, and three.
    groups = [int(g) for g in re.findall(r"\bgroup (\d+)", source)]
    if groups:
        g = max(groups)
        cases = [("B=2,S=6,D=%d,F=3,P=16" % g, 0),
                 ("B=3,S=4,D=%d,F=2,P=40" % (3 * g), 7)]
    return cases


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)
    if result.returncode != 0:
        sys.exit("error: %s failed:\n%s%s" % (" ".join(cmd), result.stdout,
                                               result.stderr))


def prepare(args):
    """Writes the fallbacks and reference cases; returns the case list."""
    sources = sorted(glob.glob(os.path.join(args.examples, "*.mlir")))
    if not sources:
        sys.exit("error: no examples in " + args.examples)
    sources += args.extra
    os.makedirs(args.work, exist_ok=True)
    cases = []
    seed = 1
    for path in sources:
        name = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            text = f.read()
        for dtype in ("bf16", "f16", "f32"):
            variant = "%s_%s" % (name, dtype)
            mlir = os.path.join(args.work, variant + ".mlir")
            with open(mlir, "w") as f:
                f.write(text.replace("bf16", dtype))
            py = os.path.join(args.work, variant + ".py")
            run([os.path.join(args.bin, "nf-compile"), mlir, "--emit=torch",
                 "-o", py])
            for i, (dims, offset) in enumerate(sizes_for(text)):
                case = os.path.join(args.work, "%s.%d" % (variant, i))
                seed += 1
                run([os.path.join(args.bin, "nf-interp"), mlir, "--dims=" + dims,
                     "--seed=%d" % seed, "--offset=%d" % offset,
                     "--write-dir=" + case])
                cases.append((variant + ".py", os.path.basename(case), dims))
    with open(os.path.join(args.work, "cases.txt"), "w") as f:
        for case in cases:
            f.write(" ".join(case) + "\n")
    return cases


def read_manifest(case_dir):
    """{kernel: {"inputs": [...], "outputs": [...]}} in manifest order."""
    kernels = {}
    with open(os.path.join(case_dir, "manifest.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            words = line.split()
            kernel, kind, name, dtype, shape, file = words[:6]
            extra = dict(w.split("=", 1) for w in words[6:])
            shape = () if shape == "scalar" else tuple(
                int(d) for d in shape.split("x"))
            entry = {"name": name, "dtype": dtype, "shape": shape,
                     "path": os.path.join(case_dir, file), "extra": extra}
            k = kernels.setdefault(kernel, {"inputs": [], "outputs": []})
            k["inputs" if kind == "input" else "outputs"].append(entry)
    return kernels


def load_tensor(entry):
    """The tensor (on the CPU) nf-interp wrote, exactly."""
    dtype = entry["dtype"]
    raw = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "i8": "i1",
           "i32": "<i4", "i64": "<i8", "f8E4M3FN": "u1", "f8E5M2": "u1"}[dtype]
    data = np.fromfile(entry["path"], dtype=raw)
    if dtype == "bf16":
        data = (data.astype(np.uint32) << 16).view(np.float32)
    if raw == "u1":  # fp8 bits
        t = torch.from_numpy(data.copy()).view(TORCH_DTYPE[dtype])
        return t.reshape(entry["shape"])
    t = torch.from_numpy(data.copy()).to(TORCH_DTYPE[dtype])
    return t.reshape(entry["shape"])


def strided(t):
    """A copy of t with padded leading rows and every other element; the
    padding is NaN (floats) or 77 (ints), so that reading it shows."""
    if t.dim() == 0:
        return t.clone()
    big = list(t.shape)
    if t.dim() > 1:
        big[0] += 1
    big[-1] *= 2
    fill = float("nan") if t.is_floating_point() else 77
    base = torch.full(big, fill, dtype=t.dtype, device=t.device)
    view = (base[: t.shape[0]] if t.dim() > 1 else base)[..., ::2]
    view.copy_(t)
    assert not view.is_contiguous() or t.numel() <= 1
    return view


def rel_error(out, ref):
    """||out - ref|| / ||ref|| over the elements where ref is not NaN, or
    inf when the NaNs are not at the same places."""
    out = out.double().cpu()
    ref = ref.double()
    if not torch.equal(torch.isnan(out), torch.isnan(ref)):
        return float("inf")
    keep = ~torch.isnan(ref)
    diff = (out[keep] - ref[keep]).norm().item()
    norm = ref[keep].norm().item()
    if diff == 0:
        return 0.0
    return diff / norm if norm > 0 else float("inf")


def same_values(a, b):
    """Bit-for-bit equal values (NaN equal to NaN)."""
    a, b = a.cpu(), b.cpu()
    if a.is_floating_point():
        a, b = a.double(), b.double()
        return torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(
            torch.nan_to_num(a), torch.nan_to_num(b))
    return torch.equal(a, b)


class Checker:
    def __init__(self, device, verbose=False):
        self.device = device
        self.verbose = verbose
        self.failures = 0
        self.results = 0
        self.kernels = set()
        self.skipped = set()

    def fail(self, message):
        self.failures += 1
        print("FAIL " + message)

    def call(self, fn, args):
        try:
            return fn(*args)
        except Exception as e:  # report, keep checking the other cases
            return e

    def check_case(self, module, case_dir, label):
        for kernel, io in read_manifest(case_dir).items():
            self.kernels.add(kernel)
            fn = module.KERNELS.get(kernel)
            if fn is None:
                self.fail("%s: no KERNELS[%r]" % (label, kernel))
                continue
            missing = {e["dtype"] for e in io["inputs"] + io["outputs"]
                       if e["dtype"] not in TORCH_DTYPE}
            if missing:
                self.skipped.add(kernel)
                continue
            inputs = []
            for entry in io["inputs"]:
                if entry["shape"] == ():
                    # Scalars (rotary offsets) are Python ints.
                    inputs.append(int(load_tensor(entry).item()))
                else:
                    inputs.append(load_tensor(entry).to(self.device))
            refs = [load_tensor(e) for e in io["outputs"]]
            for layout in ("contiguous", "strided"):
                args = [strided(a) if isinstance(a, torch.Tensor) and
                        layout == "strided" else a for a in inputs]
                self.check_call(fn, args, io, refs,
                                "%s @%s %s" % (label, kernel, layout))
            positions = [i for i, e in enumerate(io["inputs"])
                         if e["extra"].get("role") == "positions"]
            if positions:
                self.check_out_of_range(fn, inputs, io, refs, positions,
                                        "%s @%s" % (label, kernel))

    def check_call(self, fn, args, io, refs, label):
        before = [a.clone() if isinstance(a, torch.Tensor) else a
                  for a in args]
        outs = self.call(fn, args)
        if isinstance(outs, Exception):
            self.fail("%s: raised %s: %s" % (label, type(outs).__name__, outs))
            return
        if not isinstance(outs, tuple) or len(outs) != len(refs):
            self.fail("%s: expected a tuple of %d tensors, got %r" %
                      (label, len(refs), type(outs)))
            return
        for r, (out, ref, entry) in enumerate(zip(outs, refs, io["outputs"])):
            self.results += 1
            what = "%s result #%d %s %s" % (label, r, entry["dtype"],
                                            "x".join(map(str, entry["shape"])))
            if not isinstance(out, torch.Tensor):
                self.fail("%s: not a tensor" % what)
                continue
            if (out.dtype != TORCH_DTYPE[entry["dtype"]] or
                    tuple(out.shape) != entry["shape"] or
                    not out.is_contiguous() or
                    out.device.type != torch.device(self.device).type):
                self.fail("%s: got %s %s on %s (contiguous: %s)" %
                          (what, out.dtype, tuple(out.shape), out.device,
                           out.is_contiguous()))
                continue
            if entry["dtype"] in QUANTIZED:
                far, differ = quantized_far(out, ref)
                if far or differ > max(1, ref.numel() // 1000):
                    self.fail("%s: %d elements more than one step off, %d "
                              "of %d differ" % (what, far, differ,
                                                ref.numel()))
                elif self.verbose:
                    print("ok %s: %d of %d one step off" % (what, differ,
                                                            ref.numel()))
                continue
            error = rel_error(out, ref)
            tolerance = TOLERANCE[entry["dtype"]]
            if not error <= tolerance:
                self.fail("%s: rel_error %.2e > %.0e" % (what, error,
                                                         tolerance))
            elif self.verbose:
                print("ok %s: rel_error %.2e" % (what, error))
        for i, (a, b) in enumerate(zip(args, before)):
            if isinstance(a, torch.Tensor) and not same_values(a, b):
                self.fail("%s: argument %s was written" %
                          (label, io["inputs"][i]["name"]))
        # The results are new tensors: writing them leaves the arguments.
        for out in outs:
            if isinstance(out, torch.Tensor) and out.is_floating_point():
                out.fill_(123.0)
        for i, (a, b) in enumerate(zip(args, before)):
            if isinstance(a, torch.Tensor) and not same_values(a, b):
                self.fail("%s: a result aliases argument %s" %
                          (label, io["inputs"][i]["name"]))

    def check_out_of_range(self, fn, inputs, io, refs, positions, label):
        """Batch row 0 at max_pos and batch row 1 at -1 (with the offset):
        their rotated elements are NaN, the rest as before. Assumes every
        result of the kernel goes through the rope, as in the files here."""
        caches = [e for e in io["inputs"]
                  if e["extra"].get("role") == "cache"]
        rotary = caches[0]["shape"][1]
        max_pos = caches[0]["shape"][0]
        offsets = [a for a, e in zip(inputs, io["inputs"])
                   if e["extra"].get("role") == "offset"]
        offset = offsets[0] if offsets else 0
        args = list(inputs)
        bad_rows = []
        for p in positions:
            pos = args[p].clone()
            pos[0] = max_pos - offset  # position max_pos: one past the cache
            if pos.shape[0] > 1:
                pos[1] = -1 - offset  # position -1
            args[p] = pos
            bad_rows = [0, 1][: pos.shape[0]]
        outs = self.call(fn, args)
        if isinstance(outs, Exception):
            self.fail("%s out of range: raised %s" % (label, outs))
            return
        for r, (out, ref) in enumerate(zip(outs, refs)):
            self.results += 1
            out = out.cpu()
            what = "%s out-of-range positions result #%d" % (label, r)
            tolerance = TOLERANCE[io["outputs"][r]["dtype"]]
            rotated = out[bad_rows, :, :rotary]
            if not bool(torch.isnan(rotated).all()):
                self.fail("%s: rotated elements are not all NaN" % what)
            expected = ref.clone().double()
            expected[bad_rows, :, :rotary] = float("nan")
            error = rel_error(out, expected)
            if not error <= tolerance:
                self.fail("%s: rel_error %.2e > %.0e (elements that do not "
                          "rotate, or other rows)" % (what, error, tolerance))


def load_module(path):
    spec = importlib.util.spec_from_file_location(
        "nf_fallback_" + re.sub(r"\W", "_", os.path.basename(path)), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", help="directory of nf-compile and nf-interp")
    parser.add_argument("--examples", help="directory of the examples")
    parser.add_argument("--extra", nargs="*", default=[],
                        help="more .mlir files to check like the examples")
    parser.add_argument("--work", required=True, help="work directory")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--prepare-only", action="store_true")
    parser.add_argument("--check-only", action="store_true",
                        help="use the cases an earlier --prepare-only wrote")
    parser.add_argument("-v", action="store_true", help="print every result")
    args = parser.parse_args()

    if args.check_only:
        with open(os.path.join(args.work, "cases.txt")) as f:
            cases = [tuple(line.split()) for line in f if line.strip()]
    else:
        if not args.bin or not args.examples:
            parser.error("--bin and --examples are needed to prepare cases")
        cases = prepare(args)
    if args.prepare_only:
        print("prepared %d cases in %s" % (len(cases), args.work))
        return 0

    checker = Checker(args.device, args.v)
    modules = {}
    for py, case, dims in cases:
        if py not in modules:
            modules[py] = load_module(os.path.join(args.work, py))
        checker.check_case(modules[py], os.path.join(args.work, case),
                           "%s %s" % (py[:-3], dims))
    print("torch %s on %s: %d cases, %d kernels, %d results checked, "
          "%d failures; %d kernels skipped (dtypes this torch lacks)"
          % (torch.__version__, args.device, len(cases),
             len(checker.kernels - checker.skipped), checker.results,
             checker.failures, len(checker.skipped)))
    return 1 if checker.failures or not checker.results else 0


if __name__ == "__main__":
    sys.exit(main())
