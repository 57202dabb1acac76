"""Kernels on every GPU of the process (needs two; the nvidia-h200-x2 kind).

    NF_TEST_ARTIFACTS=<dir with rmsnorm.nfa, fused_add_gate_norm.nfa> \\
        python3 -m unittest discover -s python/tests -p test_multidevice.py

Launches go to the device of the tensors whatever the current device is,
through the op and .launch, in CUDA graphs captured on device 1 and from
threads launching on both devices at once; tensors on two devices are
refused with the argument named.
"""

import os
import sys
import threading
import unittest
from pathlib import Path

import torch

if not os.environ.get("NF_TEST_INSTALLED"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import normfuse  # noqa: E402
from normfuse.testing import close, make_args  # noqa: E402

ARTIFACTS = Path(os.environ.get("NF_TEST_ARTIFACTS", "build/artifacts"))
TWO_GPUS = torch.cuda.is_available() and torch.cuda.device_count() >= 2


def kernel(name):
    path = ARTIFACTS / f"{name}.nfa"
    if not path.exists():
        raise unittest.SkipTest(f"no {path}")
    return getattr(normfuse.load(path, prefix=f"md_{name}"), name)


def check(test, k, args, got):
    """`got` (on any device) against the generated fallback on the CPU."""
    cpu = [a.cpu() if isinstance(a, torch.Tensor) else a for a in args]
    expect = k.fallback(*cpu)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expect):
        ok, err = close(g.cpu(), e)
        test.assertTrue(ok, err)


@unittest.skipUnless(TWO_GPUS, "needs two CUDA GPUs")
class MultiDeviceTest(unittest.TestCase):

    def setUp(self):
        torch.cuda.set_device(0)

    def args(self, k, device, seed=0):
        return make_args(k, B=3, S=5, D=1000, device=device, seed=seed)

    def test_other_device_than_current(self):
        k = kernel("rmsnorm")
        for current in (0, 1):
            torch.cuda.set_device(current)
            for device in ("cuda:0", "cuda:1"):
                args = self.args(k, device)
                for call in (k, k.launch):
                    out = call(*args)
                    self.assertEqual(out.device, torch.device(device))
                    torch.cuda.synchronize(device)
                    check(self, k, args, out)

    def test_in_place_result_on_device_1(self):
        k = kernel("fused_add_rmsnorm")
        args = self.args(k, "cuda:1", seed=3)
        before = [a.clone() if isinstance(a, torch.Tensor) else a
                  for a in args]
        got = k(*args)
        torch.cuda.synchronize(1)
        check(self, k, before, got)

    def test_cuda_graph_on_device_1(self):
        k = kernel("rmsnorm")
        args = self.args(k, "cuda:1", seed=1)
        with torch.cuda.device(1):
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                k(*args)  # loads the module on device 1 before capture
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = k(*args)
            fresh = self.args(k, "cuda:1", seed=2)
            for a, b in zip(args, fresh):
                a.copy_(b)
            graph.replay()
            torch.cuda.synchronize()
        check(self, k, fresh, out)

    def test_threads_on_both_devices(self):
        k = kernel("rmsnorm")
        errors = []

        def work(device):
            try:
                torch.cuda.set_device(0)  # a thread's current device is 0
                for i in range(40):
                    args = self.args(k, device, seed=i)
                    out = k(*args) if i % 2 else k.launch(*args)
                    torch.cuda.synchronize(device)
                    check(self, k, args, out)
            except Exception as e:  # reported by the main thread
                errors.append(f"{device}: {e!r}")

        threads = [threading.Thread(target=work, args=(d,))
                   for d in ("cuda:0", "cuda:1", "cuda:1", "cuda:0")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_tensors_on_two_devices(self):
        k = kernel("rmsnorm")
        x, w = self.args(k, "cuda:0")
        for call in (k, k.launch):
            with self.assertRaises(normfuse.NormfuseError) as ctx:
                call(x, w.to("cuda:1"))
            self.assertIn("'weight' is on cuda:1, expected cuda:0",
                          str(ctx.exception))


if __name__ == "__main__":
    unittest.main()
