"""Tests of normfuse.tune (nf-run --tune through the package).

On a CPU machine: the errors (no nf-run, bad dims, an nf-run that fails).
On the GPU machine (tools/gpu-python.sh, NF_TEST_ARTIFACTS): a real tune of
RMSNorm, whose choice lands in the tune file beside a copy of the artifact.
"""

import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

import torch

if not os.environ.get("NF_TEST_INSTALLED"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import normfuse  # noqa: E402

ARTIFACTS = os.environ.get("NF_TEST_ARTIFACTS")


class TuneErrorsTest(unittest.TestCase):

    def setUp(self):
        self.saved = os.environ.get("NF_RUN")

    def tearDown(self):
        if self.saved is None:
            os.environ.pop("NF_RUN", None)
        else:
            os.environ["NF_RUN"] = self.saved

    def test_no_tuner(self):
        os.environ["NF_RUN"] = "/nonexistent/nf-run"
        self.assertIsNone(normfuse.find_tuner())
        with self.assertRaisesRegex(normfuse.TuneError,
                                    "^error: no nf-run found"):
            normfuse.tune("k.nfa", {"B": 1, "S": 8, "D": 64})

    def test_bad_dims(self):
        for dims in ({}, {"D": "64"}, {"D": True}, {"D": 6.4}):
            with self.assertRaisesRegex(normfuse.TuneError,
                                        "^error: dims must map"):
                normfuse.tune("k.nfa", dims)

    @unittest.skipIf(normfuse.find_tuner() is None, "no nf-run")
    def test_nf_run_errors_are_raised(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "missing.nfa")
            with self.assertRaisesRegex(
                    normfuse.TuneError,
                    "^nf-run: error: cannot open artifact '.*missing.nfa'"):
                normfuse.tune(missing, {"B": 1, "S": 8, "D": 64})


@unittest.skipUnless(torch.cuda.is_available() and ARTIFACTS and
                     normfuse.find_tuner() is not None,
                     "needs a GPU, NF_TEST_ARTIFACTS and nf-run")
class TuneOnGpuTest(unittest.TestCase):

    def test_tune_records_the_choice(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rmsnorm.nfa")
            shutil.copyfile(os.path.join(ARTIFACTS, "rmsnorm.nfa"), path)
            result = normfuse.tune(path, {"B": 1, "S": 4096, "D": 2048},
                                   iters=20)
            self.assertIn(result["function"], result["times"])
            self.assertIn(result["default"], result["times"])
            self.assertGreaterEqual(len(result["times"]), 2)
            text = Path(path + ".tune").read_text()
            self.assertIn(f"rmsnorm 2048 {result['function']}\n", text)
            # A module loaded afterwards runs (the tuned variant) correctly.
            mod = normfuse.load(path, prefix="tuned")
            x = torch.randn(1, 64, 2048, dtype=torch.bfloat16, device="cuda")
            w = torch.randn(2048, dtype=torch.bfloat16, device="cuda")
            out = mod.rmsnorm(x, w)
            ref = mod.rmsnorm.fallback(x.cpu(), w.cpu())[0]
            self.assertLess((out.cpu().float() - ref.float()).abs().max()
                            .item(), 0.05)


if __name__ == "__main__":
    unittest.main()
