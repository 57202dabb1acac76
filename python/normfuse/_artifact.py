"""Reads the header of an nf-compile artifact (docs/Artifact.md).

The C++ reader (runtime/Artifact.cpp) is the one the runtime launches from;
this one reads only what the Python side needs before any launch: argument
and result metadata (to allocate outputs and describe shapes to torch.compile)
and the generated PyTorch fallback. Both follow docs/Artifact.md.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional

# Sizes each dimension of an argument stands for, by role and broadcast kind.
# Mirrors nf::rt::getDimLetters (runtime/Runtime.cpp); "P"/"R" are a rotary
# cache's rows and width, which never size a result.
DIM_LETTERS = {
    ("data", "One"): ("1",),
    ("data", "D"): ("D",),
    ("data", "BD"): ("B", "D"),
    ("data", "B1D"): ("B", "1", "D"),
    ("data", "BSD"): ("B", "S", "D"),
    ("data", "BF1D"): ("B", "F", "1", "D"),
    ("select_index", "BS"): ("B", "S"),
    ("rope_positions", "B"): ("B",),
    ("rope_cache", "-"): ("P", "R"),
}

DTYPES = ("f32", "f16", "bf16", "i8", "i32", "i64")  # codes of nf_runtime.h


class ArtifactError(ValueError):
    """The file is not a readable artifact."""


@dataclass
class Argument:
    index: int
    name: str
    is_tensor: bool
    dtype: str
    shape: List[int]  # -1 where dynamic; empty for scalars
    role: str
    bcast: str
    chains: List[int]

    @property
    def letters(self):
        return DIM_LETTERS.get((self.role, self.bcast), ())


@dataclass
class Result:
    index: int
    dtype: str
    shape: List[int]
    chain: int
    in_place: int  # argument index, or -1


@dataclass
class KernelMeta:
    name: str
    row_length: int  # -1 when D is dynamic
    num_chains: int = 0
    args: List[Argument] = field(default_factory=list)
    results: List[Result] = field(default_factory=list)


@dataclass
class ArtifactMeta:
    path: str
    target: str = ""
    kernels: Dict[str, KernelMeta] = field(default_factory=dict)
    torch_source: Optional[str] = None
    digest: str = ""


def _shape(text):
    if text == "-":
        return []
    return [-1 if d == "?" else int(d) for d in text.split("x")]


def read_artifact(path) -> ArtifactMeta:
    import hashlib

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ArtifactError(f"cannot read artifact '{path}': {e.strerror}")
    meta = ArtifactMeta(path=str(path), digest=hashlib.sha1(data).hexdigest())
    pos = 0
    line_no = 0

    def fail(msg):
        raise ArtifactError(f"{path}:{line_no}: {msg}")

    def next_line():
        nonlocal pos, line_no
        if pos >= len(data):
            return None
        end = data.find(b"\n", pos)
        if end < 0:
            end = len(data)
        line = data[pos:end].decode("utf-8", "replace")
        pos = end + 1
        line_no += 1
        return line

    first = next_line() or ""
    if not first.startswith("normfuse-artifact "):
        fail("not a normfuse artifact (expected 'normfuse-artifact 2')")
    if first != "normfuse-artifact 2":
        fail(f"artifact format '{first[18:]}' is not the one this package "
             "reads (2); recompile it with this version's nf-compile")
    kernel = None
    while True:
        line = next_line()
        if line is None:
            break
        w = line.split()
        if not w:
            continue
        key = w[0]
        try:
            if key in ("ptx", "cubin", "torch") and len(w) == 2:
                size = int(w[1])
                if pos + size > len(data):
                    fail(f"truncated {key} section")
                blob = data[pos:pos + size]
                line_no += blob.count(b"\n") + 1
                pos += size + 1
                if key == "torch":
                    meta.torch_source = blob.decode("utf-8")
            elif key == "target":
                meta.target = w[1]
            elif key == "kernel":
                kernel = KernelMeta(name=w[1], row_length=-1)
                meta.kernels[kernel.name] = kernel
            elif kernel is None:
                fail(f"'{key}' outside a kernel")
            elif key == "row_length":
                kernel.row_length = -1 if w[1] == "?" else int(w[1])
            elif key == "chains":
                kernel.num_chains = int(w[1])
            elif key == "arg" and len(w) == 9:
                kernel.args.append(
                    Argument(int(w[1]), w[2], w[3] == "tensor", w[4],
                             _shape(w[5]), w[6], w[7],
                             [int(c) for c in w[8].split(",")]))
            elif key == "result" and len(w) == 8:
                kernel.results.append(
                    Result(int(w[1]), w[2], _shape(w[3]), int(w[5]),
                           -1 if w[7] == "-" else int(w[7])))
        except (ValueError, IndexError):
            fail(f"malformed line '{line}'")
    if not meta.kernels:
        fail("no kernel")
    for k in meta.kernels.values():
        for r in k.results:
            if len(r.shape) != 3:
                fail(f"kernel '{k.name}': result {r.index} has rank "
                     f"{len(r.shape)}; this package expects [B, S, D] results")
    return meta
