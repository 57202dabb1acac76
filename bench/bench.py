#!/usr/bin/env python3
"""normfuse vs torch eager vs torch.compile at the seed shapes of ANCHORS.md.

    python3 bench/bench.py --artifacts DIR [--json out.json] [--markdown out.md]

DIR holds the artifacts tools/make-python-cases.sh writes (bench_*.nfa).
In one process, for every case: the floor (an SM copy kernel moving the
bytes that must move, timed in this run), then each contender
timed by CUDA-graph replay over 4 rotating input sets, each checked against
the kernel's generated PyTorch function (the same check for every
contender: ||out - ref|| / ||ref|| <= 1e-2 for bf16, 1e-5 for f32).
Also the host overhead of one launch through the package.
"""

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import normfuse  # noqa: E402
from normfuse.testing import rel_error, tolerance  # noqa: E402

SETS = 4  # rotating input sets: together larger than the 50 MB L2
EPS = 1e-6
bf16, f32 = torch.bfloat16, torch.float32


def randn(shape, dtype, gen):
    return torch.randn(shape, generator=gen, device="cuda").to(dtype)


# ---------------------------------------------------------------------------
# The cases. Each: inputs(gen) -> args; eager(*args) -> outputs, written the
# way a PyTorch user would (the reference implementations of the seed PRs).
# Rounding follows the IR files in examples/ (see their comments).


def srn_inputs(B, S, D, act=bf16):
    def make(gen):
        return [randn((B, S, D), act, gen), randn((B, S, D), act, gen),
                randn((B, 1, D), f32, gen), randn((B, 1, D), f32, gen),
                randn((B, 1, D), f32, gen)]
    return make


def srn_eager(x, residual, gate, scale, shift):
    r = residual.float() + gate * x.float()
    y = F.layer_norm(r, r.shape[-1:], eps=EPS) * (1 + scale) + shift
    return y.to(x.dtype), r.to(x.dtype)


def srn_affine_inputs(B, S, D):
    def make(gen):
        return [randn((B, S, D), f32, gen), randn((B, S, D), f32, gen),
                randn((1, 1, D), f32, gen).view(-1), randn((D,), f32, gen),
                randn((D,), f32, gen), randn((B, 1, D), f32, gen),
                randn((B, 1, D), f32, gen)]
    return make


def srn_affine_eager(x, residual, gate, weight, bias, scale, shift):
    r = residual + gate * x
    y = F.layer_norm(r, r.shape[-1:], weight, bias, eps=EPS)
    return y * (1 + scale) + shift, r


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def fagn_inputs(B, S, D):
    def make(gen):
        return [randn((B, S, D), bf16, gen), randn((B, S, D), bf16, gen),
                randn((B, 1, D), f32, gen), randn((D,), f32, gen)]
    return make


def fagn_eager(x, residual, gate, weight):
    return (x.float() + gate * rms(residual.float(), weight)).to(x.dtype)


def ntma_inputs(B, S, D):
    def make(gen):
        return [randn((B, S, D), bf16, gen), randn((B, S, D), bf16, gen),
                randn((B, 1, D), f32, gen), randn((D,), f32, gen),
                randn((D,), f32, gen), randn((B, 1, D), f32, gen)]
    return make


def ntma_eager(x, residual, gate, weight1, weight2, scale):
    r = (residual.float() + torch.tanh(gate) * rms(x.float(), weight1))
    r = r.to(x.dtype)
    y = rms(r.float(), weight2) * (1 + scale)
    return y.to(x.dtype), r


def qk_inputs(T, H, P=4096):
    def make(gen):
        angle = torch.rand((P, 64), generator=gen, device="cuda") * 6.3
        cache = torch.cat([angle.cos(), angle.sin()], -1)
        pos = torch.randint(0, P, (T,), generator=gen, device="cuda")
        return [randn((T, H, 128), bf16, gen), randn((T, H, 128), bf16, gen),
                randn((128,), bf16, gen), randn((128,), bf16, gen), cache, pos]
    return make


def rope_neox(x, cos, sin):
    x1, x2 = x[..., :64], x[..., 64:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


def qk_eager(q, k, wq, wk, cos_sin, positions):
    cs = cos_sin[positions].unsqueeze(1)  # [T, 1, 128]
    cos, sin = cs[..., :64], cs[..., 64:]
    qo = rope_neox(rms(q.float(), wq.float()), cos, sin).to(q.dtype)
    ko = rope_neox(rms(k.float(), wk.float()), cos, sin).to(k.dtype)
    return qo, ko


def sel_inputs(B, S, D):
    def make(gen):
        idx = torch.randint(0, 2, (B, S), generator=gen, device="cuda",
                            dtype=torch.int32)
        return [randn((B, S, D), bf16, gen), idx] + \
            [randn((B, D), bf16, gen) for _ in range(6)]
    return make


def sel_eager(x, index, scale0, shift0, gate0, scale1, shift1, gate1):
    pick = (index == 1).unsqueeze(-1)  # [B, S, 1]
    scale = torch.where(pick, scale1.unsqueeze(1), scale0.unsqueeze(1))
    shift = torch.where(pick, shift1.unsqueeze(1), shift0.unsqueeze(1))
    gate = torch.where(pick, gate1.unsqueeze(1), gate0.unsqueeze(1))
    n = F.layer_norm(x.float(), x.shape[-1:], eps=EPS)
    y = n * (1 + scale.float()) + shift.float()
    return y.to(x.dtype), gate


CASES = [
    # name, shape, artifact, inputs, eager
    ("#1", "1,32760,1536", "bench_srn_bf16_D1536", srn_inputs(1, 32760, 1536),
     srn_eager),
    ("#1 fp32, LN weight+bias, gate [1,1,D]", "1,32760,1536",
     "bench_srn_affine_f32_D1536", srn_affine_inputs(1, 32760, 1536),
     srn_affine_eager),
    ("#1", "2,2048,3072", "bench_srn_bf16_D3072", srn_inputs(2, 2048, 3072),
     srn_eager),
    ("#2 RMSNorm", "1,4096,3840", "bench_fagn_D3840", fagn_inputs(1, 4096, 3840),
     fagn_eager),
    ("#3 with norm_scale", "1,4096,3840", "bench_ntma_D3840",
     ntma_inputs(1, 4096, 3840), ntma_eager),
    ("#4 NeoX, full rotary", "T=4096,H=24,Dh=128", "bench_qk_neox",
     qk_inputs(4096, 24), qk_eager),
    ("#4 NeoX, full rotary", "T=4096,H=32,Dh=128", "bench_qk_neox",
     qk_inputs(4096, 32), qk_eager),
    ("#5 select01", "2,2048,3072", "bench_sel_D3072", sel_inputs(2, 2048, 3072),
     sel_eager),
    # D left dynamic: the streaming schedule (what a kernel compiled without
    # --dim costs).
    ("#1 D dynamic", "2,2048,3072", "bench_srn_bf16_dyn",
     srn_inputs(2, 2048, 3072), srn_eager),
    # Long rows: 512 threads x 4 chunks in registers up to D = 16384 (bf16);
    # beyond, streamed by 1024 threads.
    ("#1 long rows", "1,4096,16384", "bench_srn_bf16_D16384",
     srn_inputs(1, 4096, 16384), srn_eager),
    ("#1 long rows", "1,1024,49152", "bench_srn_bf16_D49152",
     srn_inputs(1, 1024, 49152), srn_eager),
    ("#2 RMSNorm long rows", "1,2048,32768", "bench_fagn_D32768",
     fagn_inputs(1, 2048, 32768), fagn_eager),
    ("#2 RMSNorm long rows", "1,1024,65536", "bench_fagn_D65536",
     fagn_inputs(1, 1024, 65536), fagn_eager),
]


# ---------------------------------------------------------------------------


def capture(fn, arg_sets):
    """`fn` on each set, warmed up (compilation, module loading), captured in
    one CUDA graph and replayed once. The graph keeps the sets alive."""
    for args in arg_sets:
        fn(*args)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for args in arg_sets:
            fn(*args)
    graph.replay()
    torch.cuda.synchronize()
    graph.keep = arg_sets
    return graph


def replay_time_us(graph, replays, calls):
    """Mean time of one of the `calls` calls of `graph`, over `replays`
    replays."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / (replays * calls)


def graph_time_us(fn, arg_sets, replays):
    """Mean time of one call: `fn` on each set, captured in one CUDA graph,
    replayed `replays` times."""
    return replay_time_us(capture(fn, arg_sets), replays, len(arg_sets))


def copy_graph(moved, device="cuda"):
    """The floor of a case: an SM copy kernel (a multiply by 1) reading
    moved / 2 bytes and writing moved / 2, over SETS rotating buffer pairs,
    captured (bench.py and roofline.py time it). Not `copy_` (cudaMemcpy):
    on the H200 it ran at 2.6 TB/s for buffers of 256 MiB and more and for
    sizes not a multiple of 4 KiB, where a copy kernel of the same bytes ran
    at 3.95-4.26."""
    n = max(1, moved // 4)  # bf16 elements read (and written)
    pairs = [(torch.empty(n, dtype=bf16, device=device),
              torch.ones(n, dtype=bf16, device=device)) for _ in range(SETS)]
    return capture(lambda dst, src: torch.mul(src, 1.0, out=dst), pairs)


def nbytes(args, outs):
    ins = sum(a.numel() * a.element_size() for a in args
              if isinstance(a, torch.Tensor))
    return ins + sum(o.numel() * o.element_size() for o in outs)


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def check(outs, refs):
    worst = 0.0
    for o, r in zip(as_tuple(outs), refs):
        err = rel_error(o, r)
        if not err <= tolerance(r.dtype):
            return False, err
        worst = max(worst, err)
    return True, worst


def host_overhead_us(kernel, args, calls=3000):
    """Wall time per call of a tiny launch loop: the GPU finishes each tiny
    kernel faster than the host issues the next, so this is host time."""
    result = {}
    x = torch.zeros(16, device="cuda")
    # The C launch alone (ctypes call, checks, cuLaunchKernel), arguments
    # packed once: the rest of a call's time is Python.
    import array
    from normfuse import _capi, _current_stream, _error_buffer
    out = torch.empty_like(args[0])
    words, _ = kernel._pack(list(args), [out], "cuda")
    packed = array.array("q", words)
    handle = kernel._module._handle(0)
    lib = _capi.library()
    err = _error_buffer()

    def c_only(*_):
        lib.nf_launch_packed(handle, kernel._name_bytes,
                             packed.buffer_info()[0], len(packed),
                             len(args), 1, _current_stream(0), err, len(err))

    for label, fn in (("op", kernel), ("launch", kernel.launch),
                      ("nf_launch_packed", c_only),
                      ("torch.empty", lambda *a: torch.empty(
                          (1, 1, 3840), dtype=bf16, device="cuda")),
                      ("x.add_(1)", lambda *a: x.add_(1))):
        for _ in range(100):
            fn(*args)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        result[label] = (t1 - t0) * 1e6 / calls
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("--artifacts", required=True)
    p.add_argument("--json")
    p.add_argument("--markdown")
    p.add_argument("--replays", type=int, default=20)
    p.add_argument("--only", type=lambda t: [int(i) for i in t.split(",")],
                   help="case numbers (0-based, comma-separated) to run")
    p.add_argument("--profile", action="store_true",
                   help="launch the normfuse kernel of each case 3 times, "
                   "nothing else (run under ncu)")
    p.add_argument("--suffix", default="",
                   help="load <artifact><SUFFIX>.nfa instead (schedule "
                   "variants; cases without one are skipped)")
    p.add_argument("--no-compile", action="store_true",
                   help="skip torch.compile (its compile time is minutes)")
    opts = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("error: bench.py needs a CUDA GPU")

    # The commit the artifacts were made at (tools/make-python-cases.sh
    # writes it next to them; the device machine's copy of the tree may have
    # no usable git history).
    artifact_commit = ""
    commit_file = Path(opts.artifacts).parent / "COMMIT"
    if commit_file.exists():
        artifact_commit = commit_file.read_text().strip()
    info = dict(device=torch.cuda.get_device_name(),
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
                artifacts_commit=artifact_commit,
                torch=torch.__version__,
                sets=SETS, replays=opts.replays, cases=[])
    print(f"device: {info['device']}  torch {torch.__version__}  "
          "floor: an SM copy kernel of each case's bytes")

    header = (f"{'case':40} {'shape':20} {'floor us':>9} {'normfuse':>16} "
              f"{'eager':>16} {'torch.compile':>16}")
    print(header)
    for number, (name, shape, tag, inputs, eager) in enumerate(CASES):
        if opts.only is not None and number not in opts.only:
            continue
        path = os.path.join(opts.artifacts, tag + opts.suffix + ".nfa")
        if opts.suffix and not os.path.exists(path):
            continue
        mod = normfuse.load(path, prefix=tag + opts.suffix)
        kernel = next(iter(mod.kernels.values()))
        gen = torch.Generator(device="cuda").manual_seed(0)
        sets = [inputs(gen) for _ in range(SETS)]
        if opts.profile:
            for args in sets[:3]:
                kernel(*args)
            torch.cuda.synchronize()
            continue
        refs = kernel.fallback(*[a.clone() if isinstance(a, torch.Tensor)
                                 else a for a in sets[0]])
        # In-place results count as written once, like any output.
        moved = nbytes(sets[0], refs)
        floor = replay_time_us(copy_graph(moved), opts.replays, SETS)
        contenders = [("normfuse", kernel), ("eager", eager)]
        if not opts.no_compile:
            torch._dynamo.reset()
            contenders.append(("torch.compile", torch.compile(eager)))
        row = dict(case=name, shape=shape, artifact=tag + opts.suffix,
                   bytes=moved, floor_us=floor,
                   copy_TBps=moved / floor / 1e6)
        # Every check before any timing: an in-place kernel changes its
        # inputs while it is timed.
        for label, fn in contenders:
            fresh = [a.clone() if isinstance(a, torch.Tensor) else a
                     for a in sets[0]]
            ok, err = check(fn(*fresh), refs)
            row[label] = dict(correct=ok, max_rel_error=err)
        for label, fn in contenders:
            t = graph_time_us(fn, sets, opts.replays)
            row[label].update(us=t, pct_floor=100 * floor / t)
        info["cases"].append(row)
        cells = []
        for label, _ in contenders:
            c = row[label]
            mark = "" if c["correct"] else " WRONG"
            cells.append(f"{c['us']:7.1f} ({c['pct_floor']:5.1f}%){mark}")
        print(f"{name:40} {shape:20} {floor:9.1f} " + " ".join(
            f"{c:>16}" for c in cells), flush=True)
        del sets

    if opts.profile:
        return
    # Host overhead: a 1-row launch, inputs on the GPU.
    host_path = os.path.join(opts.artifacts, "bench_fagn_D3840.nfa")
    if os.path.exists(host_path):
        mod = normfuse.load(host_path, prefix="bench_fagn_D3840")
        kernel = next(iter(mod.kernels.values()))
        gen = torch.Generator(device="cuda").manual_seed(1)
        host = host_overhead_us(kernel, fagn_inputs(1, 1, 3840)(gen))
        info["host_overhead_us"] = host
        print("host time per call: " + ", ".join(
            f"{k} {v:.1f} us" for k, v in host.items()))
    else:
        print(f"host time per call: not measured ({host_path} missing)")

    if opts.json:
        Path(opts.json).write_text(json.dumps(info, indent=2))
    if opts.markdown:
        Path(opts.markdown).write_text(markdown(info))
    if not all(r[label]["correct"] for r in info["cases"]
               for label in ("normfuse", "eager", "torch.compile")
               if label in r):
        sys.exit("error: a contender gave a wrong result (see the table)")


def markdown(info):
    lines = [
        f"- Device: {info['device']}; torch {info['torch']}",
        f"- Date: {info['date']}; artifacts and tree of commit "
        f"`{info['artifacts_commit'] or 'unknown'}`",
        "- Floor: an SM copy kernel moving each case's bytes (half read, "
        "half written), timed in this run",
        "- Host time per call (1-row launch loop): " + (", ".join(
            f"{k} {v:.1f} us" for k, v in info["host_overhead_us"].items())
            if "host_overhead_us" in info else "not measured"),
        "",
        "| case | shape | floor us | normfuse us (% floor) | torch eager us "
        "(% floor) | torch.compile us (% floor) |",
        "|---|---|---|---|---|---|",
    ]
    for r in info["cases"]:
        cells = []
        for label in ("normfuse", "eager", "torch.compile"):
            c = r.get(label)
            if c is None:
                cells.append("-")
            else:
                cells.append(f"{c['us']:.1f} ({c['pct_floor']:.1f}%)"
                             + ("" if c["correct"] else " WRONG"))
        lines.append(f"| {r['case']} | {r['shape']} | {r['floor_us']:.1f} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
