"""An nf-compile artifact's metadata, as the runtime reads it.

The runtime's C++ reader (runtime/Artifact.cpp) is the only parser of the
file: ``read_artifact`` opens the artifact through the C API
(nf_artifact_read, which also checks the file's digest) and builds these
records from nf_artifact_describe's JSON. The handle stays open: it is what
nf_artifact_check validates CPU calls against.
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

# Indexed by the dtype codes of nf_runtime.h (NF_F32 = 0 ... NF_F8E5M2 = 7);
# the 8-bit floats spelled as MLIR prints them, as the artifact does.
DTYPES = ("f32", "f16", "bf16", "i8", "i32", "i64", "f8E4M3FN", "f8E5M2")


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
    # [B, S, D], [B, S] (one value per row) or [B, S, D / G] (group values);
    # -1: dynamic
    shape: List[int]
    chain: int
    in_place: int  # argument index, or -1
    group: int = 0  # G of a [B, S, D / G] result of group values, else 0

    @property
    def letters(self):
        """The sizes its dimensions stand for: "BSD", or "BS" per row."""
        return "BS" if len(self.shape) == 2 else "BSD"


@dataclass
class KernelMeta:
    name: str
    row_length: int  # -1 when D is dynamic
    row_multiple: int = 1  # D must be a multiple of it (group reductions)
    num_chains: int = 0
    args: List[Argument] = field(default_factory=list)
    results: List[Result] = field(default_factory=list)
    symbol: str = ""  # the fallback's name (<name>__<types> for --types)
    types: str = ""  # its dtype combination ("act=bf16 w=f32") or ""
    # Every combination of a --types build (this one first); [self] else.
    combos: List["KernelMeta"] = field(default_factory=list)


@dataclass
class ArtifactMeta:
    path: str
    target: str = ""
    kernels: Dict[str, KernelMeta] = field(default_factory=dict)
    torch_source: Optional[str] = None
    digest: str = ""  # the file's digest line (16 hex digits)
    handle: object = None  # the C API's nf_artifact, for nf_artifact_check


def read_artifact(path) -> ArtifactMeta:
    import json

    from . import _capi

    try:
        handle = _capi.read_artifact(path)
    except _capi.RuntimeNotFound:
        raise
    except RuntimeError as e:
        raise ArtifactError(str(e)) from None
    data = json.loads(_capi.describe(handle))
    meta = ArtifactMeta(path=str(path), target=data["target"],
                        torch_source=data["torch_source"],
                        digest=data["digest"], handle=handle)
    for k in data["kernels"]:
        kernel = KernelMeta(name=k["name"], row_length=k["row_length"],
                            row_multiple=k["row_multiple"],
                            num_chains=k["num_chains"], symbol=k["symbol"],
                            types=k["types"])
        kernel.args = [Argument(a["index"], a["name"], a["is_tensor"],
                                a["dtype"], a["shape"], a["role"], a["bcast"],
                                a["chains"]) for a in k["args"]]
        kernel.results = [Result(r["index"], r["dtype"], r["shape"],
                                 r["chain"], r["in_place"], r["group"])
                          for r in k["results"]]
        # The combinations of a --types build share a name: the first
        # stands for them all and lists them.
        first = meta.kernels.setdefault(kernel.name, kernel)
        first.combos.append(kernel)
    if not meta.kernels:
        raise ArtifactError(f"error: artifact '{path}' has no kernel")
    return meta
