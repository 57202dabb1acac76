#!/usr/bin/env python3
"""The correctness matrix on a GPU, against the generated PyTorch fallback.

    python3 python/tests/gpu_matrix.py DIR     (DIR: tools/make-python-cases.sh's gpu-py/matrix)

Every artifact in DIR (row-length examples in bf16/f16/f32 with D dynamic and
fixed; QK-norm+RoPE examples in bf16/f16) is launched at many sizes and three
layouts (contiguous; every base pointer one element off, so the general
variant; rows padded by 8 elements), and contiguous again with rows far from
zero mean that vary along D (ramp_rows), with hundreds to tens of thousands of
rows, and each output is compared with the kernel's own fallback (the
PyTorch function nf-compile generated from the same IR, itself checked
against nf-interp by test/Python/fallback-matches-interp.test) run on the
same GPU inputs: ||out - ref|| / ||ref|| <= 1e-5 (f32) or 1e-2 (f16/bf16),
int8 and fp8 results at most one step off in at most 0.1% of the elements
(normfuse.testing.close), NaN only where the reference has NaN, in-place
results written in place, inputs not written. No reference data travels:
it runs anywhere the artifacts do. Prints one line per failure and a
summary; exits 1 on any.
"""

import glob
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import normfuse  # noqa: E402
from normfuse.testing import close, equal, make_args, rel_error  # noqa: E402

# D dynamic runs a family of variants, each serving rows up to its capacity
# (docs/Artifact.md): every capacity of the bf16 (8-element chunks) and f32
# (4-element chunks) families, the first size past it, odd sizes (general
# variants), multiples of 4 but not 8 (the 8-byte twins of the bf16/f16
# variants), even sizes not a multiple of 4 (their 4-byte twins, and the
# 8-byte twins of f32 variants), the 5-chunk steps of kernels that compute
# much per byte (640, 1280, 2560, 5120, 10240 in bf16; 512 x 5 = 20480 for
# every kernel) and the sizes between steps, and rows past one CTA
# (clusters, streamed). Odd sizes run the peeled variants in the contiguous
# and padded layouts (each row's body in 16-byte chunks), the general ones
# in the offset layout: each peeled bound (capacity - chunk + 1: 1017,
# 4089, 16377, 20473 in bf16; 1021 and 4093 in f32), the sizes just past
# it, which take the next schedule's peeled variant (1023, 4095, 16383,
# 20479), and odd sizes in between. Softmax's one-CTA rows staged in
# shared memory (12289 to 16384 in 16-bit: 256 x 7 and 256 x 8 chunks) at
# 13312, 14336 and 15000, their peeled bound 14329 and the size past 14336.
# Staged cluster rows of 7 and 8 chunks per CTA (24584, 28672, 30000) and
# the first size that takes four CTAs of 5 chunks (40960).
ROW_D = [1, 2, 6, 7, 8, 10, 12, 16, 24, 33, 64, 100, 102, 128, 130, 136, 192,
         252, 255, 256, 264, 320, 384, 512, 520, 640, 648, 768, 1000, 1001,
         1017, 1021, 1023, 1024, 1028, 1030, 1152, 1279, 1280, 1288, 1532,
         1536, 2048, 2056, 2240, 2559, 2560, 2568, 3072, 3073, 3074, 3076,
         3840, 4089, 4093, 4095, 4096, 4104, 5120, 5128, 6144, 8191, 8192,
         8200, 10239, 10240, 10248, 12288, 12290, 12292, 13312, 14329, 14336,
         14344, 15000, 16377, 16383, 16384,
         16392, 20473, 20479, 20480, 20488, 24576, 24584, 28672, 30000,
         32768, 40960, 49152, 65536]
if os.environ.get("NF_MATRIX_D"):  # a subset, e.g. under compute-sanitizer
    ROW_D = [int(d) for d in os.environ["NF_MATRIX_D"].split(",")]
LAYOUTS = ("contiguous", "offset", "padded")
# cpu only to try the script itself: there the call runs the fallback too.
DEVICE = os.environ.get("NF_MATRIX_DEVICE", "cuda")


def rows_for(D):
    if D <= 8192:
        # 1000 rows in eight batch entries: a row's entry and token come
        # from the runtime's divisor of S (runtime/Divisor.h).
        return 8, 125
    return 1, 48


def clone(args):
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


FLOAT_ROWS = (torch.float32, torch.float16, torch.bfloat16)


def ramp_rows(args, D):
    """Rows far from zero mean that differ along D: 20 + a ramp from -4 to 4
    + noise/2 in every float tensor whose rows have D elements. The partial
    sums that threads, warps and CTAs merge then differ widely, and a
    variance is small against the square of the mean (a variance computed
    as E[x^2] - E[x]^2, or from partials merged wrongly, shows there), which
    zero-mean noise hardly exercises."""
    ramp = None
    for a in args:
        if isinstance(a, torch.Tensor) and a.dim() >= 1 and \
                a.shape[-1] == D and a.dtype in FLOAT_ROWS:
            if ramp is None:
                ramp = torch.linspace(-4, 4, D, device=a.device) + 20
            a.copy_(a.float() * 0.5 + ramp)
    return args


def check(kernel, sizes, layout, seed, stats, ramp=False):
    args = make_args(kernel, **sizes, device=DEVICE, seed=seed, layout=layout)
    if ramp:
        args = ramp_rows(args, sizes["D"])
        layout += " ramp"
    before = clone(args)
    ref = kernel.fallback(*clone(args))
    got = as_tuple(kernel(*args))
    label = f"{kernel.op_name} {sizes} {layout}"
    if os.environ.get("NF_MATRIX_VERBOSE"):  # the case a crash stopped at
        print(f"launch {label}", flush=True)
    ok = True
    for i, (g, r) in enumerate(zip(got, ref)):
        meta = kernel.meta.results[i]
        err = rel_error(g, r)
        stats["worst"][r.dtype] = max(stats["worst"].get(r.dtype, 0.0),
                                      err if err == err else 0.0)
        within, what = close(g, r)
        if not within:
            print(f"FAIL {label}: result {i} {what}")
            ok = False
        if meta.in_place >= 0 and g is not args[meta.in_place]:
            print(f"FAIL {label}: result {i} not written in place")
            ok = False
    written = {m.in_place for m in kernel.meta.results if m.in_place >= 0}
    for i, (a, b) in enumerate(zip(args, before)):
        if isinstance(a, torch.Tensor) and i not in written and \
                not equal(a, b):
            print(f"FAIL {label}: input {i} was written")
            ok = False
    stats["checks"] += len(got)
    stats["launches"] += 1
    stats["failed"] += 0 if ok else 1


def main():
    directory = sys.argv[1]
    stats = dict(checks=0, launches=0, failed=0, worst={})
    paths = sorted(glob.glob(os.path.join(directory, "*.nfa")))
    if not paths:
        sys.exit(f"error: no artifacts in {directory}")
    for path in paths:
        stem = Path(path).stem
        mod = normfuse.load(path, prefix="m_" + stem)
        kernel = next(iter(mod.kernels.values()))
        rope = any(a.role == "rope_cache" for a in kernel.meta.args)
        frames = any(a.bcast == "BF1D" for a in kernel.meta.args)
        if rope:
            # Q and K with different head counts (S), many tokens (B).
            size_list = [dict(B=1000, S=24, D=128, P=4096),
                         dict(B=1, S=3, D=128, P=16),
                         dict(B=4096, S=32, D=128, P=4096)]
        elif kernel.meta.row_length > 0:
            D = kernel.meta.row_length
            size_list = [dict(zip("BSD", (*rows_for(D), D))),
                         dict(B=3, S=7, D=D)]
            if D == 1536 and "bf16" in stem:
                size_list.append(dict(B=1, S=32760, D=D))
        else:
            # Group reductions need D to be a multiple of their group.
            multiple = kernel.meta.row_multiple
            size_list = [dict(zip("BSD", (*rows_for(D), D))) for D in ROW_D
                         if D % multiple == 0]
        for n, sizes in enumerate(size_list):
            if frames:
                sizes["F"] = 4 if sizes["S"] % 4 == 0 else 1
            for layout in LAYOUTS:
                check(kernel, sizes, layout, seed=n, stats=stats)
            if not rope:
                check(kernel, sizes, "contiguous", seed=n, stats=stats,
                      ramp=True)
        if rope:
            # K with fewer heads than Q in one launch.
            args = make_args(kernel, B=64, S=24, D=128, P=256, device=DEVICE,
                             seed=9)
            k_args = make_args(kernel, B=64, S=8, D=128, P=256,
                               device=DEVICE, seed=10)
            args[1] = k_args[1]
            ref = kernel.fallback(*clone(args))
            got = kernel(*args)
            for i, (g, r) in enumerate(zip(got, ref)):
                stats["checks"] += 1
                within, what = close(g, r)
                if not within:
                    print(f"FAIL {kernel.op_name} Hq=24 Hk=8: result {i} "
                          f"{what}")
                    stats["failed"] += 1
            stats["launches"] += 1
        if DEVICE == "cuda":
            torch.cuda.synchronize()
    worst = ", ".join(f"{str(k).replace('torch.', '')} {v:.2g}"
                      for k, v in stats["worst"].items())
    print(f"matrix: {len(paths)} artifacts, {stats['launches']} launches, "
          f"{stats['checks']} checks, {stats['failed']} failed launches; "
          f"largest errors: {worst}")
    sys.exit(1 if stats["failed"] else 0)


if __name__ == "__main__":
    main()
