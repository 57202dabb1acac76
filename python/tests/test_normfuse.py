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
from normfuse.testing import make_args, rel_error, tolerance  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = os.environ.get("NF_TEST_ARTIFACTS", str(REPO / "build" / "artifacts"))
HAVE_CUDA = torch.cuda.is_available()
TORCH2 = int(torch.__version__.split(".")[0]) >= 2


def artifacts():
    paths = sorted(glob.glob(os.path.join(ARTIFACTS, "*.nfa")))
    if not paths:
        raise unittest.SkipTest(f"no artifacts in {ARTIFACTS}")
    return paths


def load(path):
    # Artifacts of one IR file at several D or dtypes share kernel names.
    return normfuse.load(path, prefix=Path(path).stem.replace("-", "_"))


def sizes_for(kernel):
    """B, S, D, F for a kernel: several rows, an odd D where D is dynamic,
    frames when the kernel has a [B, F, 1, D] operand."""
    frames = any(a.bcast == "BF1D" for a in kernel.meta.args)
    rope = any(a.role == "rope_cache" for a in kernel.meta.args)
    D = kernel.meta.row_length if kernel.meta.row_length > 0 else 100
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
                        self.assertTrue(torch.equal(g, e), f"result {i}")

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
        path = next(p for p in artifacts() if "fused_add_gate_norm" in p)
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
            err = rel_error(g, e)
            self.assertLessEqual(err, tolerance(e.dtype),
                                 f"{k.op_name} result {i} {layout}: {err}")
        # The CPU path agrees with the GPU up to the same tolerance.
        cpu = as_tuple(k(*[a.cpu() if isinstance(a, torch.Tensor) else a
                           for a in make_args(c, **sizes, seed=2)]))
        # .launch gives the same results.
        again = as_tuple(k.launch(*make_args(c, **sizes, device="cuda",
                                             seed=2, layout=layout)))
        for i, (g, a) in enumerate(zip(got, again)):
            self.assertEqual(g.dtype, a.dtype)
            self.assertLessEqual(rel_error(a, g), tolerance(g.dtype))
        for i, (g, c) in enumerate(zip(got, cpu)):
            self.assertLessEqual(rel_error(g.cpu(), c), tolerance(c.dtype))

    def test_every_kernel_every_layout(self):
        for path in artifacts():
            for k in load(path).kernels.values():
                for c in combinations(k):
                    for layout in ("contiguous", "offset", "padded"):
                        with self.subTest(kernel=k.op_name,
                                          types=c.meta.types, layout=layout):
                            self.check_kernel(k, layout, c)
        torch.cuda.synchronize()

    def test_mixed_devices_rejected(self):
        path = next(p for p in artifacts() if "fused_add_gate_norm" in p)
        k = next(iter(load(path).kernels.values()))
        args = make_args(k, **sizes_for(k), device="cuda")
        args[2] = args[2].cpu()
        with self.assertRaises((normfuse.NormfuseError, RuntimeError)):
            k(*args)

    def test_cuda_graph_capture_and_replay(self):
        path = next(p for p in artifacts() if "scale_residual_layernorm_scale_shift" in p
                    and "frames" not in p)
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
        path = next(p for p in artifacts() if "scale_residual_layernorm_scale_shift" in p
                    and "frames" not in p)
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
        path = next(p for p in artifacts() if "fused_add_gate_norm" in p)
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
        path = next(p for p in artifacts() if "qk_rmsnorm_rope_neox" in p
                    and "partial" not in p)
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
