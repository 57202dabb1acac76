"""ctypes binding of the runtime's C API (runtime/nf_runtime.h).

ctypes rather than a compiled extension: the GPU machine has torch but no
MLIR, the CPU machines have MLIR and maybe no torch, and a C ABI loaded with
ctypes works on both without building anything against torch.
"""

import ctypes
import os
from pathlib import Path

PACKED_SCALAR = -1
_ERROR_SIZE = 1024

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parents[1]
# The library an installed package carries (setup.py puts it there), then,
# for the package used from a source tree, where the two builds of README.md
# put it: the standalone runtime (GPU machine) and the whole project.
_CANDIDATES = (
    _PACKAGE / "libnfruntime.so.0",
    _REPO / "build-runtime" / "libnfruntime.so",
    _REPO / "build" / "lib" / "libnfruntime.so",
)


class RuntimeNotFound(RuntimeError):
    pass


_lib = None


def library():
    """Loads libnfruntime.so once: $NF_RUNTIME_LIBRARY, else the package's
    own, else the source tree's builds."""
    global _lib
    if _lib is not None:
        return _lib
    env = os.environ.get("NF_RUNTIME_LIBRARY")
    paths = [Path(env)] if env else [p for p in _CANDIDATES if p.exists()]
    if not paths:
        raise RuntimeNotFound(
            "error: libnfruntime.so not found; install the package with "
            "'pip install .' from the source tree, or build the library "
            "with 'cmake -S runtime -B build-runtime -G Ninja && ninja -C "
            "build-runtime' (or ./make.sh), or point NF_RUNTIME_LIBRARY at it "
            f"(looked in {', '.join(str(p) for p in _CANDIDATES)})")
    try:
        lib = ctypes.CDLL(str(paths[0]))
    except OSError as e:
        raise RuntimeNotFound(f"error: cannot load {paths[0]}: {e}")
    vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    lib.nf_module_load.argtypes = [cp, ctypes.POINTER(vp), cp, sz]
    lib.nf_module_load.restype = ctypes.c_int
    lib.nf_module_unload.argtypes = [vp]
    lib.nf_module_unload.restype = None
    lib.nf_launch_packed.argtypes = [vp, cp, vp, sz, sz, sz, vp, cp, sz]
    lib.nf_launch_packed.restype = ctypes.c_int
    lib.nf_artifact_read.argtypes = [cp, ctypes.POINTER(vp), cp, sz]
    lib.nf_artifact_read.restype = ctypes.c_int
    lib.nf_artifact_free.argtypes = [vp]
    lib.nf_artifact_free.restype = None
    lib.nf_artifact_check.argtypes = [vp, cp, vp, sz, sz, sz, cp, sz]
    lib.nf_artifact_check.restype = ctypes.c_int
    lib.nf_artifact_describe.argtypes = [vp, ctypes.POINTER(cp),
                                         ctypes.POINTER(sz)]
    lib.nf_artifact_describe.restype = ctypes.c_int
    _lib = lib
    return lib


def error_buffer():
    return ctypes.create_string_buffer(_ERROR_SIZE)


def _open(function, path):
    lib = library()
    handle = ctypes.c_void_p()
    err = error_buffer()
    if getattr(lib, function)(str(path).encode(), ctypes.byref(handle), err,
                              _ERROR_SIZE):
        raise RuntimeError("error: " + err.value.decode(errors="replace"))
    return handle


def load_module(path):
    """Loads an artifact into the current CUDA context; returns a handle."""
    return _open("nf_module_load", path)


class ArtifactHandle:
    """An nf_artifact, freed with the object."""

    def __init__(self, handle):
        self.value = handle.value
        self._free = library().nf_artifact_free

    def __del__(self):
        if self.value:
            self._free(self.value)
            self.value = None


def read_artifact(path):
    """Reads an artifact without a GPU (metadata, nf_artifact_check)."""
    return ArtifactHandle(_open("nf_artifact_read", path))


def describe(handle):
    """The artifact's metadata as JSON text (nf_artifact_describe)."""
    text = ctypes.c_char_p()
    size = ctypes.c_size_t()
    if library().nf_artifact_describe(handle.value, ctypes.byref(text),
                                      ctypes.byref(size)):
        raise RuntimeError("error: nf_artifact_describe failed")
    return ctypes.string_at(text, size.value).decode("utf-8")
