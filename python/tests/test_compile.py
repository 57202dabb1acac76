"""Tests of normfuse.compile (needs an nf-compile: normfuse.find_compiler)."""

import os
import sys
import tempfile
import unittest
from pathlib import Path

import torch

if not os.environ.get("NF_TEST_INSTALLED"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import normfuse  # noqa: E402
from normfuse._compile import compile_artifact  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RMSNORM = EXAMPLES / "rmsnorm.mlir"


@unittest.skipIf(normfuse.find_compiler() is None, "no nf-compile")
class CompileTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cache = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_compile_path_and_run_on_cpu(self):
        mod = normfuse.compile(RMSNORM, cache=self.cache, prefix="c_path")
        x = torch.randn(2, 3, 100, dtype=torch.bfloat16)
        w = torch.randn(100, dtype=torch.bfloat16)
        out = mod.rmsnorm(x, w)
        ref = mod.rmsnorm.fallback(x, w)[0]
        self.assertTrue(torch.equal(out, ref))
        # An independent float64 reference of y = x / rms(x) * w.
        xf = x.double()
        expect = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) \
            * w.double()
        self.assertLess((out.double() - expect).abs().max().item(), 0.05)

    def test_second_compile_reads_the_cache(self):
        first = compile_artifact(RMSNORM, sm="sm_90", cache=self.cache)
        stamp = first.stat().st_mtime_ns
        again = compile_artifact(RMSNORM, sm=90, cache=self.cache)
        self.assertEqual(first, again)
        self.assertEqual(again.stat().st_mtime_ns, stamp)
        # The key has the text and the options in it.
        text = RMSNORM.read_text()
        self.assertEqual(compile_artifact(text, sm=90, cache=self.cache),
                         first)
        other = compile_artifact(RMSNORM, sm=90, dims={"D": 256},
                                 cache=self.cache)
        self.assertNotEqual(other, first)
        self.assertNotEqual(
            compile_artifact(RMSNORM, sm="sm_80", cache=self.cache), first)
        self.assertEqual(len(list(Path(self.cache).glob("*.nfa"))), 3)
        meta = normfuse.load(other, prefix="c_dims").meta
        self.assertEqual(meta.kernels["rmsnorm"].row_length, 256)

    def test_compile_text(self):
        text = RMSNORM.read_text().replace("@rmsnorm", "@rmsnorm_text")
        mod = normfuse.compile(text, cache=self.cache)
        self.assertIn("rmsnorm_text", mod.kernels)

    def test_errors(self):
        with self.assertRaises(normfuse.CompileError) as ctx:
            normfuse.compile("nf.kernel @k(%x: tensor<?xbf16>) -> () {}",
                             cache=self.cache)
        self.assertIn("error:", str(ctx.exception))
        self.assertIn("<string>", str(ctx.exception))
        with self.assertRaises(normfuse.CompileError) as ctx:
            normfuse.compile("/nonexistent/k.mlir", cache=self.cache)
        self.assertIn("cannot read IR file", str(ctx.exception))
        with self.assertRaises(normfuse.CompileError) as ctx:
            normfuse.compile(RMSNORM, dims={"D": "4096"}, cache=self.cache)
        self.assertIn("must be an int", str(ctx.exception))
        self.assertEqual(list(Path(self.cache).glob("*.nfa")), [])

    def test_no_compiler(self):
        saved = os.environ.get("NF_COMPILE")
        os.environ["NF_COMPILE"] = "/nonexistent/nf-compile"
        try:
            with self.assertRaises(normfuse.CompileError) as ctx:
                normfuse.compile(RMSNORM, cache=self.cache)
            self.assertIn("nf-compile not found", str(ctx.exception))
            self.assertIn("normfuse.load", str(ctx.exception))
        finally:
            if saved is None:
                del os.environ["NF_COMPILE"]
            else:
                os.environ["NF_COMPILE"] = saved


if __name__ == "__main__":
    unittest.main()
