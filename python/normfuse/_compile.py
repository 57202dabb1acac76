"""normfuse.compile: IR to a loaded Module, through nf-compile, cached.

The compiler is the nf-compile executable (it needs MLIR; the package does
not): $NF_COMPILE, else `nf-compile` on PATH, else the build of the source
tree the package was installed from (or is used from). Artifacts are cached
on disk under a key made of the IR text, the options and the compiler
binary's own hash, so a second compile of the same thing, in this process
or a later one, reads the cached file and runs nothing.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


class CompileError(RuntimeError):
    """nf-compile refused the IR (the message has its diagnostics), or
    there is no nf-compile to run."""


_BINARY_DIGESTS = {}  # (path, size, mtime) -> sha256 of the binary


def find_compiler():
    """The nf-compile that compile() runs, or None; see the module doc."""
    env = os.environ.get("NF_COMPILE")
    if env:
        return env if os.access(env, os.X_OK) else None
    on_path = shutil.which("nf-compile")
    if on_path:
        return on_path
    candidates = []
    try:
        from . import _build_info
        candidates.append(Path(_build_info.SOURCE_COMPILER))
    except ImportError:
        pass
    candidates.append(Path(__file__).resolve().parents[2] / "build" / "bin" /
                      "nf-compile")
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def _compiler_digest(path):
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    digest = _BINARY_DIGESTS.get(key)
    if digest is None:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        digest = _BINARY_DIGESTS[key] = h.hexdigest()
    return digest


def cache_dir():
    """$NF_CACHE_DIR, else $XDG_CACHE_HOME/normfuse, else ~/.cache/normfuse."""
    env = os.environ.get("NF_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "normfuse"


def _read_source(source):
    """(IR text, name for messages): `source` is IR text when it contains
    'nf.kernel', else a path."""
    if isinstance(source, str) and "nf.kernel" in source:
        return source, "<string>"
    path = Path(source)
    try:
        return path.read_text(), str(path)
    except OSError as e:
        raise CompileError(
            f"error: cannot read IR file '{path}': {e.strerror} (compile() "
            "takes a path to an .mlir file or the IR text itself)") from None


def _default_sm():
    import torch
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    # No GPU: the artifact serves the CPU fallback (which does not depend on
    # the target) and machines of the most common data-center SM.
    return "sm_90"


def _options(sm, dims, cubin, extra):
    if isinstance(sm, int):
        sm = f"sm_{sm}"
    options = [f"--sm={sm}"]
    for name, value in sorted((dims or {}).items()):
        if not isinstance(value, int) or isinstance(value, bool):
            raise CompileError(f"error: dims['{name}'] must be an int, found "
                               f"{type(value).__name__}")
        options.append(f"--dim={name}={value}")
    if cubin:
        options.append("--cubin")
    options += [str(o) for o in extra]
    return options


def compile_artifact(source, sm=None, dims=None, cubin=False, options=(),
                     cache=None):
    """Compiles (or finds in the cache) and returns the artifact's path."""
    text, name = _read_source(source)
    options = _options(sm or _default_sm(), dims, cubin, options)
    compiler = find_compiler()
    if compiler is None:
        raise CompileError(
            "error: nf-compile not found (looked at $NF_COMPILE, PATH and "
            "this source tree's build/bin); it needs MLIR: build it with "
            "./make.sh and put build/bin on PATH or set NF_COMPILE, or "
            "compile elsewhere with `nf-compile FILE -o k.nfa` and load the "
            "artifact here with normfuse.load('k.nfa')")
    key = hashlib.sha256("\0".join(
        [text, *options, _compiler_digest(compiler)]).encode()).hexdigest()
    folder = Path(cache) if cache is not None else cache_dir()
    artifact = folder / f"{key[:32]}.nfa"
    if artifact.is_file():
        return artifact
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        ir = Path(tmp) / "input.mlir"
        ir.write_text(text)
        out = Path(tmp) / "out.nfa"
        run = subprocess.run([compiler, str(ir), *options, "-o", str(out)],
                             capture_output=True, text=True)
        if run.returncode != 0 or not out.is_file():
            diagnostics = run.stderr.replace(str(ir), name).strip()
            raise CompileError(diagnostics or
                               f"error: nf-compile exited {run.returncode}")
        # Atomic: a concurrent compile of the same key writes the same
        # bytes, and a reader never sees half a file.
        os.replace(out, artifact)
    return artifact
