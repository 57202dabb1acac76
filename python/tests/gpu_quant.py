#!/usr/bin/env python3
"""The quantizing examples on a GPU against references written independently
of the IR (bench/quant_cases.py: the norm in float64, the per-token scale
and the rounding in PyTorch).

    python3 python/tests/gpu_quant.py DIR    (DIR holds rmsnorm_quant_fp8.nfa,
                                              fused_add_rmsnorm_quant_i8.nfa,
                                              layernorm_modulate_quant_fp8.nfa)

Every D of a sweep from 128 to 16384 (multiples of the 16-byte chunk, of half
of it, and neither; for the per-group example the multiples of 128, the
others must be refused with an error), in three layouts (contiguous; every base pointer one
element off; rows padded by 8 elements), about 2^20 elements per launch.
Passes when no quantized element is more than one step from the reference,
at most 0.1% are one step off (the count is printed: values within f32
noise of a rounding boundary, the kernel dividing by the scale through its
correctly rounded reciprocal), every scale is within 1e-5 relative of the
reference's, and the residual written in place matches. Then, where DIR
has dequantize.nfa (test/runtime/Inputs/dequantize.mlir), every byte value
of f8E4M3FN, f8E5M2 and int8 is loaded and cast to f32, in every layout,
and must equal torch's conversion exactly (NaN where torch gives NaN).
Exits 1 on any failure.
"""

import os
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
import normfuse  # noqa: E402
import quant_cases  # noqa: E402
from normfuse.testing import (max_relative_error, mismatch_ok,  # noqa
                              quantized_mismatch, rel_error, relayout,
                              tolerance)

D_SWEEP = [128, 130, 256, 384, 512, 640, 768, 1000, 1024, 1028, 1152, 1280,
           1288, 1536, 2048, 2240, 2560, 2568, 3072, 4096, 4100, 5120, 5128,
           6144, 8192, 10240, 10248, 12288, 16384, 20480]
if os.environ.get("NF_QUANT_D"):
    D_SWEEP = [int(d) for d in os.environ["NF_QUANT_D"].split(",")]
LAYOUTS = ("contiguous", "offset", "padded")


def check_case(name, kernel, D, layout, seed, totals):
    inputs, _, ref_fn = quant_cases.functions(name)
    M = max(64, (1 << 20) // D)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    args = [relayout(a, layout) for a in inputs(M, D, gen, "cuda")]
    refs = ref_fn(*[a.clone() for a in args])
    got = kernel(*args)
    label = f"{name} D={D} M={M} {layout}"
    failures = []
    for i, (g, r) in enumerate(zip(got, refs)):
        if g.shape != r.shape or g.dtype != r.dtype:
            failures.append(f"result {i}: {g.dtype}{list(g.shape)}, expected "
                            f"{r.dtype}{list(r.shape)}")
        elif g.dtype in (torch.int8, quant_cases.FP8):
            far, differ, numel = quantized_mismatch(g, r)
            totals["differ"] += differ
            totals["elements"] += numel
            if not mismatch_ok(far, differ, numel):
                failures.append(f"result {i}: {far} elements more than one "
                                f"step off, {differ} of {numel} differ")
        elif g.dtype == torch.float32:  # per-token or per-group scales
            err = max_relative_error(g, r)
            totals["scale_err"] = max(totals["scale_err"], err)
            if not err <= 1e-5:
                failures.append(f"result {i}: scale relative error {err:.3g}")
        else:  # the residual written in place
            err = rel_error(g, r)
            if not err <= tolerance(g.dtype):
                failures.append(f"result {i}: relative error {err:.3g}")
    for f in failures:
        print(f"FAIL {label}: {f}")
    totals["launches"] += 1
    totals["failed"] += bool(failures)


def check_refused(name, kernel, D):
    """1 when a call with D not a multiple of the group size raises an error
    naming the group size (and launches nothing), else 0 with a FAIL line."""
    inputs, _, _ = quant_cases.functions(name)
    gen = torch.Generator(device="cuda").manual_seed(D)
    try:
        kernel(*inputs(64, D, gen, "cuda"))
    except Exception as e:  # the runtime's error, through the op
        if "group" in str(e):
            return 1
        print(f"FAIL {name} D={D}: unexpected error: {e}")
        return 0
    print(f"FAIL {name} D={D}: launched with D not a multiple of the group")
    return 0


def check_dequantize(path):
    """Failures of the dequantizing casts over all 256 codes per type."""
    kernel = normfuse.load(path, prefix="q_dequantize").dequantize
    codes = torch.arange(256, dtype=torch.int32, device="cuda")
    # Rows of 256 codes, each row a different rotation of them.
    rows = torch.stack([codes.roll(r) for r in range(6)]).to(torch.uint8)
    failures = 0
    for layout in LAYOUTS:
        for D in (256, 199):  # whole chunks, and a general variant
            bits = rows[:, :D].reshape(2, 3, D).contiguous()
            args = [relayout(bits.view(dtype), layout) for dtype in
                    (quant_cases.FP8, torch.float8_e5m2, torch.int8)]
            for i, (got, a) in enumerate(zip(kernel(*args), args)):
                want = a.float()
                same = torch.equal(torch.isnan(got), torch.isnan(want)) and \
                    torch.equal(torch.nan_to_num(got), torch.nan_to_num(want))
                if not same:
                    failures += 1
                    print(f"FAIL dequantize result {i} D={D} {layout}")
    print(f"dequantize: {2 * len(LAYOUTS)} launches, {failures} failed "
          "(every byte of f8E4M3FN, f8E5M2 and int8)")
    return failures


def main():
    directory = Path(sys.argv[1])
    totals = dict(launches=0, failed=0, differ=0, elements=0, scale_err=0.0,
                  refused=0)
    for name in quant_cases.NAMES:
        mod = normfuse.load(directory / f"{name}.nfa", prefix="q_" + name)
        kernel = getattr(mod, name)
        before = dict(totals)
        group = quant_cases.GROUP if name.endswith("_group128") else 1
        for n, D in enumerate(D_SWEEP):
            if D % group:
                totals["refused"] += check_refused(name, kernel, D)
                continue
            for layout in LAYOUTS:
                check_case(name, kernel, D, layout, n, totals)
        print(f"{name}: {totals['launches'] - before['launches']} launches, "
              f"{totals['failed'] - before['failed']} failed, "
              f"{totals['differ'] - before['differ']} of "
              f"{totals['elements'] - before['elements']} quantized elements "
              f"one step off the reference")
        torch.cuda.synchronize()
    print(f"quant: {totals['launches']} launches, {totals['failed']} failed; "
          f"{totals['differ']} of {totals['elements']} quantized elements one "
          f"step off; largest scale error {totals['scale_err']:.2g}; "
          f"{totals['refused']} calls with D not a multiple of the group "
          "refused with an error")
    failed = totals["failed"]
    if (directory / "dequantize.nfa").exists():
        failed += check_dequantize(directory / "dequantize.nfa")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
