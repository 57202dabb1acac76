"""Tests of the normfuse Python package.

    NF_TEST_ARTIFACTS=<dir of .nfa files> python3 -m unittest discover -s python/tests

The CUDA tests run where torch sees a GPU (tools/gpu-python.sh on the device
machine); the CPU tests (fallback path, checks) run everywhere torch does.
"""

import glob
import os
import sys
import unittest
from pathlib import Path

import torch

if not os.environ.get("NF_TEST_INSTALLED"):  # else: the installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import normfuse  # noqa: E402
from normfuse._artifact import read_artifact  # noqa: E402
from normfuse.testing import close, equal, make_args  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = os.environ.get("NF_TEST_ARTIFACTS", str(REPO / "build" / "artifacts"))
HAVE_CUDA = torch.cuda.is_available()
TORCH2 = int(torch.__version__.split(".")[0]) >= 2


def usable_with_this_torch(path):
    """False for an artifact whose dtypes this torch lacks (the 8-bit
    floats before torch 2.1): normfuse refuses to load it, as
    test_missing_dtype_is_refused checks."""
    meta = read_artifact(path)
    return all(d in normfuse._NF_TORCH for k in meta.kernels.values()
               for d in [a.dtype for a in k.args] +
               [r.dtype for r in k.results])


def artifacts():
    paths = sorted(glob.glob(os.path.join(ARTIFACTS, "*.nfa")))
    if not paths:
        raise unittest.SkipTest(f"no artifacts in {ARTIFACTS}")
    return [p for p in paths if usable_with_this_torch(p)]


def artifact_named(test, name, excluding=None):
    """The first artifact whose name has `name` (and not `excluding`); the
    test is skipped where NF_TEST_ARTIFACTS has none (a subset of them)."""
    for p in artifacts():
        stem = Path(p).stem
        if name in stem and not (excluding and excluding in stem):
            return p
    test.skipTest(f"no {name} artifact in {ARTIFACTS}")


def load(path):
    # Artifacts of one IR file at several D or dtypes share kernel names.
    return normfuse.load(path, prefix=Path(path).stem.replace("-", "_"))


def sizes_for(kernel):
    """B, S, D, F for a kernel: several rows, an odd D where D is dynamic
    (three groups where the kernel has group reductions: D a multiple of
    their size), frames when the kernel has a [B, F, 1, D] operand."""
    frames = any(a.bcast == "BF1D" for a in kernel.meta.args)
    rope = any(a.role == "rope_cache" for a in kernel.meta.args)
    multiple = kernel.meta.row_multiple
    D = kernel.meta.row_length if kernel.meta.row_length > 0 else \
        100 if multiple == 1 else 3 * multiple
    if rope:
        return dict(B=5, S=3, D=D, F=1)
    return dict(B=2, S=6, D=D, F=3 if frames else 1)


def combinations(kernel):
    """The kernel of each dtype combination of a --types build (arguments
    are made from its metadata, the call goes through `kernel`), or the
    kernel itself."""
    return kernel._combos or [kernel]


def clone(args):
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


class CpuTest(unittest.TestCase):
    """The CPU path: the runtime's checks, then the generated fallback."""

    def test_missing_dtype_is_refused(self):
        # Where torch has no 8-bit floats, an artifact that uses them is
        # refused with the reason, not loaded to fail at the first call.
        paths = sorted(glob.glob(os.path.join(ARTIFACTS, "*.nfa")))
        unusable = [p for p in paths if not usable_with_this_torch(p)]
        if not unusable:
            self.skipTest("this torch has every dtype the artifacts use")
        with self.assertRaisesRegex(normfuse.NormfuseError,
                                    "does not have"):
            load(unusable[0])

    def test_cpu_call_runs_fallback_and_writes_in_place(self):
        for path in artifacts():
            mod = load(path)
            for k, c in ((k, c) for k in mod.kernels.values()
                         for c in combinations(k)):
                with self.subTest(kernel=k.op_name, types=c.meta.types):
                    args = make_args(c, **sizes_for(k), seed=1)
                    expected = k.fallback(*clone(args))
                    got = as_tuple(k(*args))
                    self.assertEqual(len(got), len(expected))
                    for i, (g, e) in enumerate(zip(got, expected)):
                        r = c.meta.results[i]
                        if r.in_place >= 0:
                            self.assertIs(g, args[r.in_place])
                        self.assertEqual(g.dtype, normfuse._NF_TORCH[r.dtype])
                        self.assertTrue(equal(g, e), f"result {i}")

    def test_dtype_combinations(self):
        # A --types artifact: one op per kernel, the combination picked by
        # the tensors' dtypes; a combination not built is refused, naming
        # those that were.
        multi = [k for p in artifacts() for k in load(p).kernels.values()
                 if k._combos]
        if not multi:
            self.skipTest("no artifact built with --types")
        for k in multi:
            built = {c._dtype_key for c in k._combos}
            for c in k._combos:
                args = make_args(c, **sizes_for(k), seed=4)
                out = as_tuple(k(*args))
                self.assertEqual(out[0].dtype, normfuse._NF_TORCH[
                    c.meta.results[0].dtype])
            args = make_args(k._combos[0], **sizes_for(k))
            for i, a in enumerate(args):
                if not isinstance(a, torch.Tensor) or \
                        not a.is_floating_point():
                    continue
                for dt in (torch.float32, torch.float16, torch.bfloat16):
                    bad = list(args)
                    bad[i] = a.to(dt)
                    key = tuple(b.dtype for b, info in zip(bad, k.meta.args)
                                if info.is_tensor)
                    if key in built:
                        continue
                    with self.assertRaises(normfuse.NormfuseError) as ctx:
                        k(*bad)
                    self.assertIn("was not built for the dtypes of this call",
                                  str(ctx.exception))
                    self.assertIn(k._combos[-1].meta.types, str(ctx.exception))
                    break

    def test_bad_calls_raise_clear_errors(self):
        for device in ["cpu"] + (["cuda"] if HAVE_CUDA else []):
            with self.subTest(device=device):
                self.check_bad_calls(device)

    def check_bad_calls(self, device):
        path = artifact_named(self, "fused_add_gate_norm")
        k = next(iter(load(path).kernels.values()))
        args = make_args(k, **sizes_for(k), device=device)
        D = args[0].shape[-1]
        cases = {
            "expected 4 arguments": args[:3],
            "argument 'x' must be bf16, found f32": [args[0].float()] + args[1:],
            "residual": [args[0], args[1][:, :2]] + args[2:],
            "argument 'residual' must be a tensor": [args[0], 3.0] + args[2:],
        }
        if k.meta.row_length < 0:
            cases["weight"] = args[:3] + [torch.ones(D + 1, device=device)]
        for needle, bad in cases.items():
            with self.subTest(needle=needle):
                with self.assertRaises((normfuse.NormfuseError,
                                        RuntimeError)) as ctx:
                    k(*bad)
                self.assertIn(needle, str(ctx.exception))

    def test_load_errors(self):
        with self.assertRaises(normfuse.ArtifactError) as ctx:
            normfuse.load(__file__)
        self.assertIn("not a normfuse artifact", str(ctx.exception))
        with self.assertRaises(normfuse.ArtifactError):
            normfuse.load("/nonexistent.nfa")

    def test_damaged_artifacts_are_refused(self):
        # A copy cut short or with one byte changed never gets loaded: the
        # runtime's reader checks the digest that ends the file.
        import tempfile
        with open(artifacts()[0], "rb") as f:
            data = f.read()
        at = data.index(b"\nptx ") + 200
        changed = data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1:]
        cases = [(data[:len(data) // 2], "no digest line"),
                 (changed, "digest mismatch")]
        with tempfile.TemporaryDirectory() as tmp:
            for i, (bytes_, reason) in enumerate(cases):
                path = os.path.join(tmp, f"damaged{i}.nfa")
                with open(path, "wb") as f:
                    f.write(bytes_)
                with self.assertRaises(normfuse.ArtifactError) as ctx:
                    normfuse.load(path)
                self.assertIn(reason, str(ctx.exception))

    def test_same_kernel_twice_needs_a_prefix(self):
        path = artifacts()[0]
        mod = load(path)
        self.assertIs(load(path), mod)
        kernel = next(iter(mod.kernels))
        others = [p for p in artifacts() if p != path
                  and kernel in normfuse.read_artifact(p).kernels]
        if not others:
            self.skipTest("no second artifact with the same kernel name")
        normfuse.load(path, prefix="dup")
        with self.assertRaises(normfuse.NormfuseError) as ctx:
            normfuse.load(others[0], prefix="dup")
        self.assertIn("prefix", str(ctx.exception))


HAVE_FLOAT8 = hasattr(torch, "float8_e4m3fn") and hasattr(torch,
                                                          "float8_e5m2")

# A hand-written artifact of one kernel with the quantized dtypes, as
# nf-compile writes them (docs/Artifact.md): 8-bit data arguments x
# (f8E4M3FN), r (f8E5M2), bias (i8), and results q (i8), scale (f32 [B, S]:
# one value per row), e4 (f8E4M3FN), e5 (f8E5M2). Its PTX has empty
# kernels (they write nothing); its fallback computes every result.
QUANT_LINES = """normfuse-artifact 5
target sm_90
kernel quant
row_length ?
variant quant_v0 vectorized max_d 0 schedule streaming threads_per_row 128 \
rows_per_cta 1 chunk 16 chunks_per_thread 0 block 128 shared 16
variant quant_g1 general max_d 0 schedule streaming threads_per_row 128 \
rows_per_cta 1 chunk 1 chunks_per_thread 0 block 128 shared 16
chains 1
arg 0 x tensor f8E4M3FN ?x?x? data BSD 0
arg 1 r tensor f8E5M2 ?x?x? data BSD 0
arg 2 bias tensor i8 ? data D 0
arg 3 w tensor f32 ? data D 0
result 0 i8 ?x?x? chain 0 in_place - group -
result 1 f32 ?x? chain 0 in_place - group -
result 2 f8E4M3FN ?x?x? chain 0 in_place - group -
result 3 f8E5M2 ?x?x? chain 0 in_place - group -
""" + "".join(
    f"param {p}\n" for p in [
        "arg_ptr 0 0 !llvm.ptr<1> x", "arg_ptr 1 0 !llvm.ptr<1> r",
        "arg_ptr 2 0 !llvm.ptr<1> bias", "arg_ptr 3 0 !llvm.ptr<1> w",
        "result_ptr 0 0 !llvm.ptr<1> out0", "result_ptr 1 0 !llvm.ptr<1> out1",
        "result_ptr 2 0 !llvm.ptr<1> out2", "result_ptr 3 0 !llvm.ptr<1> out3",
        "chain_rows 0 0 i64 rows.0", "chain_s 0 0 i64 S.0",
        "chain_f 0 0 i64 F.0", "row_length 0 0 i64 D",
        "arg_stride 0 0 i64 stride.x.0", "arg_stride 0 1 i64 stride.x.1",
        "arg_stride 1 0 i64 stride.r.0", "arg_stride 1 1 i64 stride.r.1",
        "result_stride 0 0 i64 stride.out0.0",
        "result_stride 0 1 i64 stride.out0.1",
        "result_stride 1 0 i64 stride.out1.0",
        "result_stride 2 0 i64 stride.out2.0",
        "result_stride 2 1 i64 stride.out2.1",
        "result_stride 3 0 i64 stride.out3.0",
        "result_stride 3 1 i64 stride.out3.1"]) + "end\n"
QUANT_PTX = "".join(f""".visible .entry quant_{v}()
{{
\tret;
}}
""" for v in ("v0", "g1"))
QUANT_PTX = ".version 7.8\n.target sm_90\n.address_size 64\n\n" + QUANT_PTX
QUANT_TORCH = """import torch


def quant(x, r, bias, w):
    v = x.float() + r.float() + bias.float() * w / 128
    scale = v.abs().amax(-1).clamp(min=1e-6) / 127
    q = torch.round(v / scale[..., None]).clamp(-127, 127).to(torch.int8)
    return (q, scale, v.to(torch.float8_e4m3fn), v.to(torch.float8_e5m2))


KERNELS = {"quant": quant}
"""


# A hand-written artifact of one f32 kernel with a group result: x [B, S, D]
# -> q [B, S, D], scale [B, S, D / 128] (one value per group of 128).
GROUP_LINES = """normfuse-artifact 5
target sm_90
kernel blocks
row_length ?
row_multiple 128
variant blocks_v0 vectorized max_d 0 schedule streaming threads_per_row 256 \
rows_per_cta 1 chunk 4 chunks_per_thread 0 block 256 shared 0
variant blocks_g1 general max_d 0 schedule streaming threads_per_row 256 \
rows_per_cta 1 chunk 4 chunks_per_thread 0 block 256 shared 0
chains 1
arg 0 x tensor f32 ?x?x? data BSD 0
result 0 f32 ?x?x? chain 0 in_place - group -
result 1 f32 ?x?x? chain 0 in_place - group 128
""" + "".join(
    f"param {p}\n" for p in [
        "arg_ptr 0 0 !llvm.ptr<1> x", "result_ptr 0 0 !llvm.ptr<1> out0",
        "result_ptr 1 0 !llvm.ptr<1> out1", "chain_rows 0 0 i64 rows.0",
        "chain_s 0 0 i64 S.0", "chain_f 0 0 i64 F.0",
        "row_length 0 0 i64 D", "arg_stride 0 0 i64 stride.x.0",
        "arg_stride 0 1 i64 stride.x.1",
        "result_stride 0 0 i64 stride.out0.0",
        "result_stride 0 1 i64 stride.out0.1",
        "result_stride 1 0 i64 stride.out1.0",
        "result_stride 1 1 i64 stride.out1.1"]) + "end\n"
GROUP_PTX = ".version 7.8\n.target sm_90\n.address_size 64\n\n" + "".join(
    f".visible .entry blocks_{v}()\n{{\n\tret;\n}}\n" for v in ("v0", "g1"))
GROUP_TORCH = """import torch


def blocks(x):
    g = x.unflatten(-1, (-1, 128))
    scale = g.abs().amax(-1)
    return ((g / scale[..., None]).flatten(-2), scale)


KERNELS = {"blocks": blocks}
"""


def write_artifact(path, lines, ptx, torch_source):
    """An artifact file: the metadata, the PTX and fallback sections, and
    the digest line (64-bit FNV-1a of every byte before it)."""
    body = lines.encode()
    for name, blob in (("ptx", ptx), ("torch", torch_source)):
        data = blob.encode()
        body += f"{name} {len(data)}\n".encode() + data + b"\n"
    h = 0xcbf29ce484222325
    for byte in body:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    with open(path, "wb") as f:
        f.write(body + f"digest fnv1a64 {h:016x}\n".encode())


class DtypeTest(unittest.TestCase):
    """The dtype names of the artifact, torch's dtypes and the C API's
    codes, which need no artifact."""

    def test_maps_round_trip(self):
        from normfuse._artifact import DTYPES
        self.assertEqual(DTYPES[:6], ("f32", "f16", "bf16", "i8", "i32",
                                      "i64"))
        expected = {"i8": torch.int8, "f32": torch.float32}
        if HAVE_FLOAT8:
            expected.update(f8E4M3FN=torch.float8_e4m3fn,
                            f8E5M2=torch.float8_e5m2)
            self.assertEqual(DTYPES.index("f8E4M3FN"), 6)  # NF_F8E4M3FN
            self.assertEqual(DTYPES.index("f8E5M2"), 7)  # NF_F8E5M2
            self.assertEqual(len(normfuse._TORCH_CODES), len(DTYPES))
        for name, dtype in expected.items():
            self.assertIs(normfuse._NF_TORCH[name], dtype)
        for code, name in enumerate(DTYPES):
            if name not in normfuse._NF_TORCH:
                continue
            dtype = normfuse._NF_TORCH[name]
            self.assertEqual(normfuse._TORCH_CODES[dtype], code, name)
            self.assertEqual(normfuse._NF_NAMES[dtype], name)
            self.assertEqual(normfuse._nf_name(dtype), name)

    @unittest.skipUnless(HAVE_FLOAT8, "needs torch's float8 dtypes")
    def test_quantized_mismatch(self):
        from normfuse.testing import (is_quantized_dtype, quantized_mismatch,
                                      quantized_ok, rel_error, tolerance)
        # int8: steps of the integer grid.
        e = torch.arange(-100, 100, dtype=torch.int8)
        g = e.clone()
        g[3] += 1
        g[5] -= 1
        g[7] += 2
        self.assertEqual(quantized_mismatch(g, e), (1, 3, 200))
        self.assertEqual(quantized_mismatch(e, e), (0, 0, 200))
        # fp8: neighbours on the format's grid. After 1.0 come 1.125 and
        # 1.25 in e4m3fn (3 mantissa bits), 1.25 and 1.5 in e5m2 (2 bits);
        # 448 is e4m3fn's largest value, 0 has one grid point of either
        # sign.
        cases = {torch.float8_e4m3fn: [(1.0, 1.125, 1), (1.0, 1.25, 2),
                                       (-1.0, -1.125, 1), (448, 416, 1),
                                       (0.0, -0.0, 0), (2**-9, -(2**-9), 2),
                                       (1.0, float("nan"), 2)],
                 torch.float8_e5m2: [(1.0, 1.25, 1), (1.0, 1.5, 2),
                                     (1.0, 0.875, 1), (57344, 49152, 1),
                                     (2**-16, 0.0, 1)]}
        for dtype, pairs in cases.items():
            for a, b, steps in pairs:
                with self.subTest(dtype=dtype, a=a, b=b):
                    g = torch.tensor([a, 2.0]).to(dtype)
                    e = torch.tensor([b, 2.0]).to(dtype)
                    self.assertEqual(quantized_mismatch(g, e),
                                     (int(steps > 1), int(steps > 0), 2))
            nan = torch.tensor([float("nan")]).to(dtype)
            self.assertEqual(quantized_mismatch(nan, nan), (0, 0, 1))
        # The tolerance: nothing more than a step off, at most 0.1% (at
        # least one element) one step off.
        e = torch.randn(4000).to(torch.float8_e4m3fn)
        g = e.clone()
        bits = g.view(torch.uint8)
        bits[:4] += 1  # one step away from zero
        self.assertTrue(quantized_ok(g, e))
        bits[4] += 1
        self.assertFalse(quantized_ok(g, e))
        bits[4] -= 1
        bits[9] += 2
        self.assertFalse(quantized_ok(g, e))
        with self.assertRaises(ValueError):
            quantized_mismatch(g, e.to(torch.float8_e5m2))
        with self.assertRaises(ValueError):
            quantized_mismatch(e.float(), e.float())
        # rel_error and tolerance take them (through float).
        for dtype in (torch.int8, torch.float8_e4m3fn, torch.float8_e5m2):
            self.assertTrue(is_quantized_dtype(dtype))
            t = torch.arange(1.0, 9.0).to(dtype)
            self.assertEqual(rel_error(t, t), 0.0)
            self.assertGreater(tolerance(dtype), 0.0)
        self.assertEqual(tolerance(torch.float8_e4m3fn), 0.125)
        self.assertFalse(is_quantized_dtype(torch.bfloat16))


class GroupKernelTest(unittest.TestCase):
    """A kernel with a [B, S, D / 128] result of group values, from a
    hand-written artifact: its metadata, result sizes and the launch check
    of D."""

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.tmp = tempfile.TemporaryDirectory()
        path = os.path.join(cls.tmp.name, "blocks.nfa")
        write_artifact(path, GROUP_LINES, GROUP_PTX, GROUP_TORCH)
        cls.k = normfuse.load(path, prefix="grouptest").blocks

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_metadata_and_sizes(self):
        self.assertEqual([r.group for r in self.k.meta.results], [0, 128])
        self.assertEqual(self.k.meta.row_multiple, 128)
        self.assertEqual(self.k._size_sources[1],
                         [(0, 0, 1), (0, 1, 1), (0, 2, 128)])
        x = torch.randn(2, 3, 384)
        self.assertEqual(self.k._result_shapes([x]),
                         [(2, 3, 384), (2, 3, 3)])
        source = normfuse._make_fast_launcher(self.k).source
        self.assertIn("o1 = EMPTY((a0.shape[0], a0.shape[1], "
                      "a0.shape[2] // 128), dtype=DT1", source)

    def test_cpu_call_and_checks(self):
        x = torch.randn(2, 3, 384)
        q, scale = self.k(x)
        self.assertEqual((tuple(q.shape), tuple(scale.shape)),
                         ((2, 3, 384), (2, 3, 3)))
        self.assertTrue(torch.equal(scale, x.unflatten(-1, (3, 128))
                                    .abs().amax(-1)))
        with self.assertRaises((normfuse.NormfuseError, RuntimeError)) as ctx:
            self.k(torch.randn(2, 3, 200))
        self.assertIn("row length D = 200 is not a multiple of 128, the "
                      "group size of the kernel's group reductions",
                      str(ctx.exception))


@unittest.skipUnless(HAVE_FLOAT8, "needs torch's float8 dtypes")
class QuantizedKernelTest(unittest.TestCase):
    """A kernel with 8-bit arguments and results and a [B, S] result, from
    a hand-written artifact: result shapes, allocation, checks, fallback."""

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.tmp = tempfile.TemporaryDirectory()
        path = os.path.join(cls.tmp.name, "quant.nfa")
        write_artifact(path, QUANT_LINES, QUANT_PTX, QUANT_TORCH)
        cls.k = normfuse.load(path, prefix="quanttest").quant

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def args(self, B=2, S=3, D=32, device="cpu", **kw):
        return make_args(self.k, B=B, S=S, D=D, device=device, **kw)

    def test_metadata(self):
        meta = self.k.meta
        self.assertEqual([a.dtype for a in meta.args],
                         ["f8E4M3FN", "f8E5M2", "i8", "f32"])
        self.assertEqual([r.dtype for r in meta.results],
                         ["i8", "f32", "f8E4M3FN", "f8E5M2"])
        self.assertEqual([r.shape for r in meta.results],
                         [[-1, -1, -1], [-1, -1], [-1, -1, -1],
                          [-1, -1, -1]])
        self.assertEqual(self.k._fresh_dtypes,
                         [torch.int8, torch.float32, torch.float8_e4m3fn,
                          torch.float8_e5m2])

    def test_make_args(self):
        x, r, bias, w = self.args(B=2, S=3, D=64, layout="offset")
        self.assertEqual((x.dtype, r.dtype, bias.dtype, w.dtype),
                         (torch.float8_e4m3fn, torch.float8_e5m2, torch.int8,
                          torch.float32))
        self.assertEqual(tuple(x.shape), (2, 3, 64))
        self.assertEqual(x.storage_offset(), 1)
        for t in (x, r):
            self.assertTrue(torch.isfinite(t.float()).all())
            self.assertGreater(t.float().abs().max().item(), 1.0)
        # int8 data spans the symmetric int8 range.
        self.assertGreaterEqual(bias.min().item(), -127)
        self.assertGreater(bias.abs().max().item(), 3)

    def test_result_shapes(self):
        args = self.args(B=2, S=3, D=32)
        self.assertEqual(self.k._result_shapes(args),
                         [(2, 3, 32), (2, 3), (2, 3, 32), (2, 3, 32)])
        # The sizes come from x's dimensions: B and S of it for the [B, S]
        # result.
        self.assertEqual(self.k._size_sources[1], [(0, 0, 1), (0, 1, 1)])
        self.assertEqual(len(self.k._size_sources[0]), 3)

    def test_fast_launcher_allocates_per_row_results(self):
        # The CUDA launcher's source (made without a GPU): [B, S] for the
        # per-row result.
        source = normfuse._make_fast_launcher(self.k).source
        self.assertIn("o1 = EMPTY((a0.shape[0], a0.shape[1]), dtype=DT1",
                      source)
        self.assertIn("o0 = EMPTY((a0.shape[0], a0.shape[1], a0.shape[2]), "
                      "dtype=DT0", source)

    def test_cpu_call(self):
        args = self.args(B=2, S=3, D=32, seed=7)
        q, scale, e4, e5 = self.k(*args)
        self.assertEqual([tuple(t.shape) for t in (q, scale, e4, e5)],
                         [(2, 3, 32), (2, 3), (2, 3, 32), (2, 3, 32)])
        self.assertEqual([t.dtype for t in (q, scale, e4, e5)],
                         [torch.int8, torch.float32, torch.float8_e4m3fn,
                          torch.float8_e5m2])
        for g, e in zip((q, scale, e4, e5), self.k.fallback(*args)):
            self.assertTrue(equal(g, e))
            self.assertTrue(close(g, e)[0])
        # Padded rows too.
        padded = self.args(B=2, S=3, D=32, seed=7, layout="padded")
        for g, e in zip(self.k(*padded), (q, scale, e4, e5)):
            self.assertTrue(equal(g, e))

    def test_cpu_checks(self):
        # The runtime's checks, with the 8-bit dtypes by name.
        x, r, bias, w = self.args()
        cases = {
            "argument 'x' must be f8E4M3FN, found f8E5M2":
                [x.float().to(torch.float8_e5m2), r, bias, w],
            "argument 'r' must be f8E5M2, found bf16":
                [x, r.float().to(torch.bfloat16), bias, w],
            "argument 'bias' must be i8, found i32":
                [x, r, bias.int(), w],
            "argument 'bias' [31] gives D = 31, expected 32":
                [x, r, bias[:31], w],
        }
        for needle, bad in cases.items():
            with self.subTest(needle=needle):
                with self.assertRaises((normfuse.NormfuseError,
                                        RuntimeError)) as ctx:
                    self.k(*bad)
                self.assertIn(needle, str(ctx.exception))

    @unittest.skipUnless(TORCH2, "fake tensors need torch 2")
    def test_fake_shapes(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        real = self.args(B=4, S=5, D=48)
        with FakeTensorMode() as mode:
            fake = [mode.from_tensor(a) for a in real]
            out = self.k(*fake)
        self.assertEqual([tuple(t.shape) for t in out],
                         [(4, 5, 48), (4, 5), (4, 5, 48), (4, 5, 48)])
        self.assertEqual(out[1].dtype, torch.float32)
        self.assertEqual(out[2].dtype, torch.float8_e4m3fn)

    @unittest.skipUnless(HAVE_CUDA, "needs a CUDA GPU")
    def test_cuda_allocates_per_row_results(self):
        # The kernels are empty: what is checked is what the launch
        # allocates (the C++ extension's, or the ctypes launcher's) and
        # that the runtime accepts the call.
        args = self.args(B=3, S=7, D=64, device="cuda")
        for launch in (self.k, self.k.launch, self.k._cuda_checked):
            with self.subTest(launch=getattr(launch, "__name__", "op")):
                out = launch(*args)
                self.assertEqual([tuple(t.shape) for t in out],
                                 [(3, 7, 64), (3, 7), (3, 7, 64), (3, 7, 64)])
                self.assertEqual([t.dtype for t in out],
                                 [torch.int8, torch.float32,
                                  torch.float8_e4m3fn, torch.float8_e5m2])
                self.assertTrue(all(t.is_cuda for t in out))
        bad = list(args)
        bad[1] = args[1].float().to(torch.float8_e4m3fn)
        with self.assertRaises((normfuse.NormfuseError, RuntimeError)) as ctx:
            self.k.launch(*bad)
        self.assertIn("argument 'r' must be f8E5M2, found f8E4M3FN",
                      str(ctx.exception))
        torch.cuda.synchronize()


@unittest.skipUnless(HAVE_CUDA, "needs a CUDA GPU")
class CudaTest(unittest.TestCase):

    def check_kernel(self, k, layout, c=None):
        c = c or k  # the combination the arguments are made for
        sizes = sizes_for(k)
        args = make_args(c, **sizes, device="cuda", seed=2, layout=layout)
        ref = k.fallback(*clone(args))
        got = as_tuple(k(*args))
        for i, (g, e) in enumerate(zip(got, ref)):
            r = k.meta.results[i]
            if r.in_place >= 0:
                self.assertIs(g, args[r.in_place])
            self.assertEqual(g.device.type, "cuda")
            self.assertEqual(g.dtype, e.dtype)
            self.assertEqual(tuple(g.shape), tuple(e.shape))
            ok, err = close(g, e)
            self.assertTrue(ok, f"{k.op_name} result {i} {layout}: {err}")
        # The CPU path agrees with the GPU up to the same tolerance.
        cpu = as_tuple(k(*[a.cpu() if isinstance(a, torch.Tensor) else a
                           for a in make_args(c, **sizes, seed=2)]))
        # .launch gives the same results.
        again = as_tuple(k.launch(*make_args(c, **sizes, device="cuda",
                                             seed=2, layout=layout)))
        for i, (g, a) in enumerate(zip(got, again)):
            self.assertEqual(g.dtype, a.dtype)
            ok, err = close(a, g)
            self.assertTrue(ok, f"{k.op_name} launch result {i}: {err}")
        for i, (g, c) in enumerate(zip(got, cpu)):
            ok, err = close(g.cpu(), c)
            self.assertTrue(ok, f"{k.op_name} CPU result {i}: {err}")

    def test_every_kernel_every_layout(self):
        for path in artifacts():
            for k in load(path).kernels.values():
                for c in combinations(k):
                    for layout in ("contiguous", "offset", "padded"):
                        with self.subTest(kernel=k.op_name,
                                          types=c.meta.types, layout=layout):
                            self.check_kernel(k, layout, c)
        torch.cuda.synchronize()

    @unittest.skipUnless(TORCH2, "modes need torch 2")
    def test_eager_call_sees_modes(self):
        # The extension's eager path calls the op from C++: a torch function
        # mode must still see the call (it is then made through torch.ops),
        # and a dispatch mode the op itself, with the results unchanged.
        from torch.overrides import TorchFunctionMode
        from torch.utils._python_dispatch import TorchDispatchMode

        path = artifact_named(self, "fused_add_gate_norm")
        k = next(iter(load(path).kernels.values()))
        args = make_args(k, **sizes_for(k), device="cuda", seed=6)
        want = k(*args)
        if normfuse._ext is not None:  # the eager path takes plain tensors
            self.assertIsNot(k._call(*args), NotImplemented)
        seen = []

        class Functions(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(("function", str(func)))
                return func(*args, **(kwargs or {}))

        class Dispatches(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(("dispatch", str(func)))
                return func(*args, **(kwargs or {}))

        for mode in (Functions(), Dispatches()):
            seen.clear()
            with mode:
                got = k(*args)
            self.assertTrue(any(k.op_name in name for _, name in seen),
                            f"{type(mode).__name__} saw {seen}")
            self.assertTrue(torch.equal(got, want))

    def test_mixed_devices_rejected(self):
        path = artifact_named(self, "fused_add_gate_norm")
        k = next(iter(load(path).kernels.values()))
        args = make_args(k, **sizes_for(k), device="cuda")
        args[2] = args[2].cpu()
        with self.assertRaises((normfuse.NormfuseError, RuntimeError)):
            k(*args)

    def test_cuda_graph_capture_and_replay(self):
        path = artifact_named(self, "scale_residual_layernorm_scale_shift",
                              "frames")
        k = next(iter(load(path).kernels.values()))
        sizes = sizes_for(k)
        static = make_args(k, **sizes, device="cuda", seed=3)
        k(*static)  # load the module before capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            with torch.cuda.graph(graph, stream=stream):
                outs = as_tuple(k(*static))
        fresh = make_args(k, **sizes, device="cuda", seed=4)
        for s, f in zip(static, fresh):
            if isinstance(s, torch.Tensor):
                s.copy_(f)
        graph.replay()
        torch.cuda.synchronize()
        eager = as_tuple(k(*fresh))
        for o, e in zip(outs, eager):
            self.assertTrue(torch.equal(o, e))

    @unittest.skipUnless(TORCH2, "torch.compile needs torch 2")
    def test_torch_compile_fullgraph(self):
        path = artifact_named(self, "scale_residual_layernorm_scale_shift",
                              "frames")
        k = next(iter(load(path).kernels.values()))
        args = make_args(k, **sizes_for(k), device="cuda", seed=5)

        def f(x, residual, gate, scale, shift):
            y, r = k(x * 2, residual, gate, scale, shift)
            return y.float().sum(-1), r + 1

        torch._dynamo.reset()
        compiled = torch.compile(f, fullgraph=True)
        for got, want in zip(compiled(*args), f(*args)):
            self.assertTrue(torch.allclose(got.float(), want.float(),
                                           rtol=1e-2, atol=1e-2))

    @unittest.skipUnless(TORCH2, "torch.compile needs torch 2")
    def test_torch_compile_dynamic_shapes(self):
        # One compiled graph for several B, S and D (the fake implementation
        # sees symbolic sizes); every call agrees with eager.
        path = artifact_named(self, "fused_add_gate_norm")
        k = next(iter(load(path).kernels.values()))
        if k.meta.row_length > 0:
            self.skipTest("needs the artifact with D dynamic")

        def f(x, residual, gate, weight):
            return k(x, residual, gate, weight).float().sum(-1)

        torch._dynamo.reset()
        compiled = torch.compile(f, fullgraph=True, dynamic=True)
        for n, (B, S, D) in enumerate([(2, 6, 64), (3, 11, 100), (1, 40, 7)]):
            args = make_args(k, B=B, S=S, D=D, device="cuda", seed=20 + n)
            got, want = compiled(*args), f(*args)
            self.assertEqual(tuple(got.shape), (B, S))
            self.assertTrue(torch.allclose(got, want, rtol=1e-3, atol=1e-2))

    @unittest.skipUnless(TORCH2, "torch.compile needs torch 2")
    def test_torch_compile_in_place_kernel(self):
        path = artifact_named(self, "qk_rmsnorm_rope_neox", "partial")
        k = next(iter(load(path).kernels.values()))
        args = make_args(k, **sizes_for(k), device="cuda", seed=6)

        def f(q, k_, *rest):
            q = q * 1.0
            k(q, k_, *rest)  # writes q (a temporary) and k_ in place
            return q + 0, k_

        torch._dynamo.reset()
        compiled = torch.compile(f, fullgraph=True)
        a1, a2 = clone(args), clone(args)
        got = compiled(*a1)
        want = f(*a2)
        for g, w in zip(got, want):
            self.assertTrue(torch.equal(g, w))
        self.assertTrue(torch.equal(a1[1], a2[1]))  # k written in place

    @unittest.skipUnless(TORCH2, "fake tensors need torch 2")
    def test_fake_tensor_shapes(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        for path in artifacts():
            for k in load(path).kernels.values():
                real = make_args(k, **sizes_for(k), device="cuda")
                want = as_tuple(k(*clone(real)))
                with FakeTensorMode(allow_non_fake_inputs=False) as mode:
                    fake = [mode.from_tensor(a) if isinstance(a, torch.Tensor)
                            else a for a in real]
                    got = as_tuple(k(*fake))
                for g, w in zip(got, want):
                    self.assertEqual(tuple(g.shape), tuple(w.shape))
                    self.assertEqual(g.dtype, w.dtype)


if __name__ == "__main__":
    unittest.main()
