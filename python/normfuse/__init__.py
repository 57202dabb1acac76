"""normfuse from PyTorch: compile or load a kernel, call it.

    import normfuse
    mod = normfuse.compile("examples/fused_add_gate_norm.mlir")  # or IR text
    mod = normfuse.load("fused_add_gate_norm.nfa")   # a prebuilt artifact
    out = mod.fused_add_gate_norm(x, residual, gate, weight)

Every kernel of an artifact is registered as the torch.library custom op
``torch.ops.normfuse.<kernel>`` (or ``<prefix>_<kernel>`` with
``load(..., prefix=...)``) with

- a CUDA implementation that launches the compiled kernel on the caller's
  current stream: no host synchronization, no allocation but the outputs,
  so calls can be captured in CUDA graphs;
- a fake implementation (output shapes from the artifact's metadata), so
  torch.compile traces models that call it without a graph break;
- a CPU implementation that runs the PyTorch function nf-compile generated
  from the same IR (the artifact's ``torch`` section), so the fallback and
  the kernel cannot drift apart.

Inputs are checked by the runtime's own launch checks (nf_launch_packed and,
for CPU tensors, nf_artifact_check): counts, dtypes, ranks, sizes, strides,
in-place results, overlaps. Any alignment, storage offset and row stride is
accepted (unaligned tensors run the kernel's general variant). Results that
the IR writes in place (``nf.in_place``) are written into the argument and
returned as that argument. Kernels are inference-only: no autograd formula.
"""

import array
import builtins
import keyword
import os
import threading

import torch

from . import _capi
from ._artifact import DTYPES, ArtifactError, read_artifact

# The ops' CUDA implementation in C++ (python/normfuse/_ext.cpp), where
# setup.py could build it; else the ctypes path below. NF_NO_EXTENSION=1
# turns it off (tests of the ctypes path, comparisons).
_ext = None
if not os.environ.get("NF_NO_EXTENSION"):
    try:
        from . import _normfuse_ext as _ext
    except ImportError as e:
        _ext = None
        # Built but not loadable (another torch than the one it was built
        # against): say so rather than be silently slower.
        import glob
        if glob.glob(os.path.join(os.path.dirname(__file__),
                                  "_normfuse_ext*.so")):
            import warnings
            warnings.warn(f"normfuse: the C++ extension does not load ({e}); "
                          "launching through ctypes", RuntimeWarning)
from ._compile import CompileError, compile_artifact, find_compiler
from ._tune import TuneError, find_tuner, tune

# True while torch.compile traces (then Kernel.__call__ goes through
# torch.ops, which it can trace); torch before 2.3 lacks it and has no
# extension either.
try:
    from torch.compiler import is_compiling as _is_compiling
except ImportError:
    def _is_compiling():
        return False

__all__ = ["compile", "load", "Module", "Kernel", "NormfuseError",
           "ArtifactError", "CompileError", "find_compiler", "tune",
           "TuneError", "find_tuner"]


class NormfuseError(RuntimeError):
    """A call the kernel cannot take (the message says what was expected)."""


# The IR's dtype names and torch's dtypes; the 8-bit floats where this
# torch has them (2.1 and later).
_NF_TORCH = {
    "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
    "i8": torch.int8, "i32": torch.int32, "i64": torch.int64,
}
for _name, _attr in (("f8E4M3FN", "float8_e4m3fn"),
                      ("f8E5M2", "float8_e5m2")):
    if hasattr(torch, _attr):
        _NF_TORCH[_name] = getattr(torch, _attr)
# torch dtype -> dtype code of nf_runtime.h (its index in DTYPES).
_TORCH_CODES = {_NF_TORCH[name]: code for code, name in enumerate(DTYPES)
                if name in _NF_TORCH}

_NF_NAMES = {v: k for k, v in _NF_TORCH.items()}


def _nf_name(dtype):
    """The IR's name of a torch dtype ("bf16"), or torch's for the others."""
    return _NF_NAMES.get(dtype, str(dtype).replace("torch.", ""))


# One library object holds every op this process defines.
_LIBRARY = torch.library.Library("normfuse", "DEF")
_DEFINED = {}  # op name -> artifact digest
_MODULES = {}  # (real path, prefix) -> Module
_LOCK = threading.Lock()
_TLS = threading.local()

_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _current_stream(index):
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


def _error_buffer():
    buf = getattr(_TLS, "error", None)
    if buf is None:
        buf = _TLS.error = _capi.error_buffer()
    return buf


def _register_fake(qualname, fn):
    lib = torch.library
    if hasattr(lib, "register_fake"):  # torch >= 2.4
        lib.register_fake(qualname, fn, lib=_LIBRARY)
    elif hasattr(lib, "impl_abstract"):  # torch 2.1 - 2.3
        lib.impl_abstract(qualname, fn, lib=_LIBRARY)
    else:  # torch 1.13: a Meta kernel
        _LIBRARY.impl(qualname.split("::")[1], fn, "Meta")


class Kernel:
    """One kernel of an artifact, callable with torch tensors.

    ``kernel(*args)`` goes through the custom op (torch.compile, CUDA graphs,
    CPU fallback); ``kernel.launch(*args)`` calls the CUDA launcher directly,
    skipping the dispatcher (the lowest host overhead, CUDA tensors only).
    Both return the results in the IR's order: one tensor, or a tuple.
    """

    def __init__(self, module, meta, op_name, combination=False):
        for dtype in [a.dtype for a in meta.args] + \
                [r.dtype for r in meta.results]:
            if dtype not in _NF_TORCH:
                raise NormfuseError(
                    f"error: kernel '{meta.name}' uses dtype {dtype}, which "
                    f"this torch ({torch.__version__}) does not have (the "
                    "8-bit floats need torch 2.1 or later)")
        self._module = module
        self.meta = meta
        self.name = meta.name
        self.op_name = op_name
        self._name_bytes = meta.name.encode()
        self._num_args = len(meta.args)
        self._num_results = len(meta.results)
        self._fresh = [r for r in meta.results if r.in_place < 0]
        self._fresh_dtypes = [_NF_TORCH[r.dtype] for r in self._fresh]
        self._in_place_args = {r.index: r.in_place for r in meta.results
                               if r.in_place >= 0}
        self._size_sources = [_size_sources(meta, r) for r in self._fresh]
        self._fallback = None
        self._fast = None  # made at the first CUDA call
        self._dtype_key = tuple(_NF_TORCH[a.dtype] for a in meta.args
                                if a.is_tensor)
        # A --types build: one Kernel per dtype combination, this one
        # dispatching to them by the tensors' dtypes.
        self._combos = None
        if not combination and len(meta.combos) > 1:
            self._combos = [Kernel(module, c, op_name, combination=True)
                            for c in meta.combos]
            self._by_dtypes = {}
            for c in self._combos:
                self._by_dtypes.setdefault(c._dtype_key, c)
        self._spec = None  # the extension's description of this kernel
        if module._modules is not None and not self._combos and \
                all(src is not None for src in self._size_sources):
            self._spec = _ext.Kernel(
                module._modules, meta.name, [a.name for a in meta.args],
                [a.is_tensor for a in meta.args],
                [r.in_place for r in meta.results],
                [_TORCH_CODES[_NF_TORCH[r.dtype]] for r in self._fresh],
                [[(-1, src, 1) if isinstance(src, int) else src
                  for src in sources] for sources in self._size_sources],
                NormfuseError,
                [_TORCH_CODES[_NF_TORCH[a.dtype]] if a.is_tensor else -1
                 for a in meta.args],
                meta.types)
        self._ext = None
        specs = [c._spec for c in self._combos] if self._combos \
            else [self._spec]
        if not combination and all(spec is not None for spec in specs):
            self._ext = _ext.Dispatch(specs)
            # The extension's launch is Kernel.launch itself: no Python
            # frame between the caller and the C++ launcher.
            self.launch = self._ext.launch
        self.op = None  # set by _define
        self._call = None  # the extension's eager path, set by _define

    # -- calling ------------------------------------------------------------
    def __call__(self, *args):
        try:
            # Eager, with the extension: the op through the dispatcher from
            # C++ (NotImplemented where only torch.ops' binding will do).
            # torch.compile traces torch.ops instead.
            if self._call is not None and not _is_compiling():
                out = self._call(*args)
                if out is not NotImplemented:
                    return out
            fresh = self.op(*args)
        except (RuntimeError, TypeError) as e:
            if isinstance(e, NormfuseError):
                raise
            if str(e).startswith("error: "):  # the C++ implementation's
                raise NormfuseError(str(e).split("\nException raised")[0]) \
                    from None
            # The dispatcher's schema check fired first (wrong count or
            # kind of argument): say it in the kernel's terms.
            self._check_light(args)
            raise
        return self._assemble(args, fresh)

    def launch(self, *args):
        # (With the C++ extension, __init__ replaces this by its launcher.)
        return self._assemble(args, self._cuda(*args))

    def fallback(self, *args):
        """The generated PyTorch function itself (any device); all results
        fresh, nothing written in place."""
        if self._combos:
            return self._select(args).fallback(*args)
        return self._fallback_fn()(*args)

    def _assemble(self, args, fresh):
        if self._num_results == 1 and not self._in_place_args:
            return fresh
        if fresh is None:
            fresh = ()
        elif isinstance(fresh, torch.Tensor):
            fresh = (fresh,)
        it = iter(fresh)
        out = tuple(args[self._in_place_args[i]] if i in self._in_place_args
                    else next(it) for i in range(self._num_results))
        return out[0] if len(out) == 1 else out

    def _ret(self, outs):
        if len(outs) == 1:
            return outs[0]
        return tuple(outs) if outs else None

    def _select(self, args):
        """The combination of a --types build for the tensors' dtypes."""
        self._check_count(args)
        key = tuple(a.dtype if isinstance(a, torch.Tensor) else None
                    for a, info in zip(args, self.meta.args) if info.is_tensor)
        combo = self._by_dtypes.get(key)
        if combo is None:
            call = ", ".join(
                f"{info.name}: {_nf_name(a.dtype)}"
                for a, info in zip(args, self.meta.args)
                if info.is_tensor and isinstance(a, torch.Tensor))
            built = "; ".join(c.meta.types for c in self._combos)
            self._fail(f"was not built for the dtypes of this call ({call}); "
                       f"it was built for {built} (nf-compile --types)")
        return combo

    # -- sizes and checks shared by every implementation --------------------
    def _fail(self, message):
        raise NormfuseError(f"error: kernel '{self.name}': {message}")

    def _check_count(self, args):
        if len(args) != self._num_args:
            names = ", ".join(a.name for a in self.meta.args)
            self._fail(f"expected {self._num_args} arguments ({names}), "
                       f"found {len(args)}")

    def _result_shapes(self, args):
        """[B, S, D] (or [B, S] for a per-row result) of every fresh result,
        read where _size_sources says; None if an argument there is not a
        tensor of the expected rank."""
        shapes = []
        for sources in self._size_sources:
            if sources is None:
                return None
            dims = []
            for src in sources:
                if isinstance(src, int):
                    dims.append(src)
                    continue
                a = args[src[0]] if src[0] < len(args) else None
                rank = len(self.meta.args[src[0]].letters)
                if not isinstance(a, torch.Tensor) or a.dim() != rank:
                    return None
                dims.append(a.shape[src[1]] // src[2])
            shapes.append(tuple(dims))
        return shapes

    def _check_light(self, args):
        """Dtype, kind and rank of every argument: the part of the runtime's
        checks that needs no data pointer (used by the fake implementation,
        whose tensors have none)."""
        if self._combos:
            return self._select(args)._check_light(args)
        self._check_count(args)
        for a, info in zip(args, self.meta.args):
            if not info.is_tensor:
                if isinstance(a, torch.Tensor):
                    self._fail(f"argument '{info.name}' must be a Python int "
                               f"({info.dtype} scalar), found a tensor")
                continue
            if not isinstance(a, torch.Tensor):
                self._fail(f"argument '{info.name}' must be a tensor, found "
                           f"{type(a).__name__}")
            if a.dtype != _NF_TORCH[info.dtype]:
                self._fail(f"argument '{info.name}' must be {info.dtype}, "
                           f"found {_nf_name(a.dtype)}")
            rank = len(info.letters) or len(info.shape)
            if info.role != "unused" and a.dim() != rank:
                self._fail(f"argument '{info.name}' must have rank {rank}, "
                           f"found {a.dim()} (shape {list(a.shape)})")

    def _pack(self, args, results, device_type):
        words = []
        device = None
        for a, info in zip(args, self.meta.args):
            if not info.is_tensor:
                if isinstance(a, torch.Tensor) or isinstance(a, float):
                    self._fail(f"argument '{info.name}' must be a Python int "
                               f"({info.dtype} scalar), found "
                               f"{type(a).__name__}")
                words += (_capi.PACKED_SCALAR, int(a))
                continue
            if not isinstance(a, torch.Tensor):
                self._fail(f"argument '{info.name}' must be a tensor, found "
                           f"{type(a).__name__}")
            if device is None:
                device = a.device
            elif a.device != device:
                self._fail(f"argument '{info.name}' is on {a.device}, "
                           f"expected {device} like the arguments before it")
            code = _TORCH_CODES.get(a.dtype)
            if code is None:
                self._fail(f"argument '{info.name}' must be {info.dtype}, "
                           f"found {_nf_name(a.dtype)}")
            words += (code, a.dim(), a.data_ptr())
            words += a.shape
            words += a.stride()
        if device is not None and device.type != device_type:
            self._fail(f"tensors are on {device}, expected {device_type}")
        for t in results:
            words += (_TORCH_CODES[t.dtype], t.dim(), t.data_ptr())
            words += t.shape
            words += t.stride()
        return words, device

    def _allocate(self, args, device):
        shapes = self._result_shapes(args)
        if shapes is None:
            # Sizes could not be read: let the runtime's checks say why.
            self._check_light(args)
            self._fail("cannot tell the result sizes from the arguments")
        outs = [torch.empty(s, dtype=dt, device=device)
                for s, dt in zip(shapes, self._fresh_dtypes)]
        results = []
        it = iter(outs)
        for i in range(self._num_results):
            k = self._in_place_args.get(i)
            results.append(args[k] if k is not None else next(it))
        return outs, results

    def _first_device(self, args):
        for a in args:
            if isinstance(a, torch.Tensor):
                return a.device
        self._fail("no tensor arguments")

    # -- implementations ---------------------------------------------------
    def _cuda(self, *args):
        if self._combos:
            return self._select(args)._cuda(*args)
        fast = self._fast
        if fast is None:
            fast = self._fast = _make_fast_launcher(self)
        try:
            outs = fast(*args)
        except (AttributeError, KeyError, TypeError, IndexError):
            outs = _SLOW  # not tensors, a dtype without a code, a count...
        if outs is not _SLOW:
            return outs
        return self._cuda_checked(*args)

    def _cuda_checked(self, *args):
        """The launch with Python-side checks first: for calls the fast
        launcher could not read, so that the error names the argument."""
        self._check_count(args)
        device = self._first_device(args)
        outs, results = self._allocate(args, device)
        words, device = self._pack(args, results, "cuda")
        packed = array.array("q", words)
        index = device.index if device.index is not None else 0
        err = _error_buffer()
        handle = self._module._handle(index)
        rc = _capi.library().nf_launch_packed(
            handle, self._name_bytes, packed.buffer_info()[0], len(packed),
            self._num_args, self._num_results, _current_stream(index), err,
            len(err))
        if rc:
            raise NormfuseError("error: " + err.value.decode(errors="replace"))
        return self._ret(outs)

    def _cpu(self, *args):
        if self._combos:
            return self._select(args)._cpu(*args)
        self._check_count(args)
        device = self._first_device(args)
        outs, results = self._allocate(args, device)
        words, device = self._pack(args, results, "cpu")
        packed = array.array("q", words)
        err = _error_buffer()
        rc = _capi.library().nf_artifact_check(
            self._module._checker(), self._name_bytes,
            packed.buffer_info()[0], len(packed), self._num_args,
            self._num_results, err, len(err))
        if rc:
            raise NormfuseError("error: " + err.value.decode(errors="replace"))
        computed = self._fallback_fn()(*args)
        it = iter(outs)
        for i, value in enumerate(computed):
            k = self._in_place_args.get(i)
            (args[k] if k is not None else next(it)).copy_(value)
        return self._ret(outs)

    def _fake(self, *args):
        if self._combos:
            return self._select(args)._fake(*args)
        self._check_light(args)
        shapes = self._result_shapes(args)
        if shapes is None:
            self._fail("cannot tell the result sizes from the arguments")
        first = next(a for a in args if isinstance(a, torch.Tensor))
        return self._ret([first.new_empty(s, dtype=dt)
                          for s, dt in zip(shapes, self._fresh_dtypes)])

    def _fallback_fn(self):
        if self._fallback is None:
            self._fallback = self._module._fallback(self.meta.symbol or
                                                    self.name)
        return self._fallback

    def __repr__(self):
        args = ", ".join(a.name for a in self.meta.args)
        return f"<normfuse kernel {self.name}({args}) as {self.op_name}>"


_SLOW = object()


def _size_sources(meta, result):
    """Where each of a fresh result's [B, S, D] (or [B, S]: one value per
    row) comes from: a static size, or (argument, dimension, divisor) of
    the first argument of its chain that has that size (the runtime checks
    that the others agree), the divisor being G for the D / G values of a
    group result, else 1. None if a size has no argument to come from."""
    sources = []
    for letter in result.letters:
        if letter == "D" and result.shape[2] >= 0:
            sources.append(result.shape[2])
            continue
        src = next(((a.index, a.letters.index(letter)) for a in meta.args
                    if result.chain in a.chains and letter in a.letters),
                   None)
        if src is None:
            return None
        sources.append(src + ((result.group or 1) if letter == "D" else 1,))
    return sources

def _make_fast_launcher(kernel):
    """A launcher specialized to `kernel`'s signature, as Python source: no
    loops, no per-argument type tests, result sizes read from the argument
    dimensions the metadata says they equal. It reads and packs; the
    runtime's launch checks (nf_launch_packed) then check everything. Calls
    it cannot read (a non-tensor, a dtype without a code, a wrong count)
    raise a Python error before anything is launched, and tensors on
    different devices return _SLOW: _cuda then takes the checked path,
    whose messages name the argument."""
    meta = kernel.meta
    n = len(meta.args)
    names = [f"a{i}" for i in range(n)]
    tensors = [i for i, a in enumerate(meta.args) if a.is_tensor]
    first = tensors[0]
    lines = [f"def launch({', '.join(names)}):",
             f"    dev = a{first}.get_device()"]
    others = " or ".join(f"a{i}.get_device() != dev" for i in tensors[1:])
    lines.append(f"    if dev < 0{' or ' + others if others else ''}:")
    lines.append("        return SLOW")
    fresh = {}
    for r, sources in zip(kernel._fresh, kernel._size_sources):
        if sources is None:
            return lambda *args: _SLOW
        dims = [str(src) if isinstance(src, int)
                else f"a{src[0]}.shape[{src[1]}] // {src[2]}" if src[2] > 1
                else f"a{src[0]}.shape[{src[1]}]" for src in sources]
        fresh[r.index] = f"o{r.index}"
        lines.append(f"    o{r.index} = EMPTY(({', '.join(dims)}), "
                     f"dtype=DT{r.index}, device=a{first}.device)")
    words = []
    for a in meta.args:
        i = a.index
        if a.is_tensor:
            words.append(f"CODES[a{i}.dtype], a{i}.dim(), a{i}.data_ptr(), "
                         f"*a{i}.shape, *a{i}.stride()")
        else:
            words.append(f"{_capi.PACKED_SCALAR}, INDEX(a{i})")
    for r in meta.results:
        t = fresh.get(r.index, f"a{r.in_place}")
        words.append(f"CODES[{t}.dtype], {t}.dim(), {t}.data_ptr(), "
                     f"*{t}.shape, *{t}.stride()")
    lines.append(f"    w = ARRAY('q', ({', '.join(words)},))")
    lines.append("    err = ERROR()")
    lines.append(f"    if LAUNCH(HANDLE(dev), NAME, w.buffer_info()[0], len(w), "
                 f"{n}, {len(meta.results)}, STREAM(dev), err, len(err)):")
    lines.append("        FAIL(err)")
    outs = [fresh[i] for i in sorted(fresh)]
    ret = outs[0] if len(outs) == 1 else \
        ("(" + ", ".join(outs) + ",)" if outs else "None")
    lines.append(f"    return {ret}")
    import operator

    def fail(err):
        raise NormfuseError("error: " + err.value.decode(errors="replace"))

    env = dict(SLOW=_SLOW, EMPTY=torch.empty, CODES=_TORCH_CODES,
               INDEX=operator.index, ARRAY=array.array, ERROR=_error_buffer,
               LAUNCH=_capi.library().nf_launch_packed,
               HANDLE=kernel._module._handle, NAME=kernel._name_bytes,
               STREAM=_current_stream, FAIL=fail)
    for r in meta.results:
        env[f"DT{r.index}"] = _NF_TORCH[r.dtype]
    source = "\n".join(lines) + "\n"
    # builtins.compile: this module's compile() is normfuse.compile.
    exec(builtins.compile(source, f"<normfuse launcher of {meta.name}>",
                          "exec"), env)
    launch = env["launch"]
    launch.source = source
    return launch


def _schema_name(name, index):
    return name if name.isidentifier() and not keyword.iskeyword(name) \
        else f"arg{index}"


class Module:
    """The kernels of one artifact. Loaded on a GPU lazily, once per device,
    at the first CUDA call."""

    def __init__(self, path, meta, prefix):
        self.path = path
        self.meta = meta
        self.target = meta.target
        self._handles = {}
        # With the extension, one module per device serves both paths.
        self._modules = _ext.ModuleSet(str(path)) if _ext else None
        self._namespace = None
        self.kernels = {}
        for name, kmeta in meta.kernels.items():
            op = f"{prefix}_{name}" if prefix else name
            if not op.isidentifier():
                raise NormfuseError(
                    f"error: kernel name '{name}' is not a valid op name; "
                    "load the artifact with prefix=... and a kernel name "
                    "made of letters, digits and '_'")
            self.kernels[name] = Kernel(self, kmeta, op)

    def __getattr__(self, name):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(
            f"artifact '{self.__dict__.get('path')}' has no kernel '{name}' "
            f"(it has: {', '.join(kernels) or 'none'})")

    def __getitem__(self, name):
        return self.kernels[name]

    def _handle(self, index):
        if self._modules is not None:
            return self._modules.handle(index)
        handle = self._handles.get(index)
        if handle is None:
            with _LOCK:
                handle = self._handles.get(index)
                if handle is None:
                    with torch.cuda.device(index):
                        torch.cuda.current_stream(index)  # context current
                        handle = _capi.load_module(self.path)
                    self._handles[index] = handle
        return handle

    def _checker(self):
        return self.meta.handle.value

    def _fallback(self, name):
        if self._namespace is None:
            source = self.meta.torch_source
            if source is None:
                raise NormfuseError(
                    f"error: artifact '{self.path}' has no PyTorch fallback "
                    "(written by an older nf-compile); recompile it")
            namespace = {}
            exec(builtins.compile(source, f"<fallback of {self.path}>",
                                  "exec"),
                 namespace)
            self._namespace = namespace
        return self._namespace["KERNELS"][name]


def _define(kernel, digest):
    name = kernel.op_name
    meta = kernel.meta
    params = []
    alias = iter("abcdefghijklmnopqrstuvwxyz")
    in_place = set(kernel._in_place_args.values())
    for info in meta.args:
        pname = _schema_name(info.name, info.index)
        if not info.is_tensor:
            params.append(f"int {pname}")
        elif info.index in in_place:
            params.append(f"Tensor({next(alias)}!) {pname}")
        else:
            params.append(f"Tensor {pname}")
    n = len(kernel._fresh)
    ret = "()" if n == 0 else "Tensor" if n == 1 else \
        "(" + ", ".join(["Tensor"] * n) + ")"
    _LIBRARY.define(f"{name}({', '.join(params)}) -> {ret}")
    if kernel._ext is not None:
        kernel._ext.register_cuda(name)
        kernel._call = kernel._ext.call
    else:
        _LIBRARY.impl(name, kernel._cuda, "CUDA")
    _LIBRARY.impl(name, kernel._cpu, "CPU")
    _register_fake(f"normfuse::{name}", kernel._fake)
    _DEFINED[name] = digest
    kernel.op = getattr(torch.ops.normfuse, name)


def load(path, prefix=None):
    """Reads the artifact at `path` and registers its kernels as custom ops.

    Loading the same file again returns the same Module. Two artifacts with
    a kernel of the same name (e.g. the bf16 and the f32 build of one IR file)
    need different prefixes: ops are named ``normfuse::<prefix>_<kernel>``.
    No GPU is touched until a kernel is called with CUDA tensors.
    """
    key = (os.path.realpath(path), prefix)
    with _LOCK:
        module = _MODULES.get(key)
        if module is not None:
            return module
        meta = read_artifact(path)
        module = Module(str(path), meta, prefix)
        for kernel in module.kernels.values():
            if kernel.op_name in _DEFINED:
                raise NormfuseError(
                    f"error: op 'normfuse::{kernel.op_name}' is already "
                    "defined by another artifact; load this one with "
                    "prefix='...' to name its ops '<prefix>_<kernel>'")
        for kernel in module.kernels.values():
            _define(kernel, meta.digest)
        _MODULES[key] = module
        return module


def compile(source, sm=None, dims=None, cubin=False, options=(), prefix=None,
            cache=None):
    """Compiles nf IR with nf-compile and loads it: the Module load() gives.

    source: a path to an .mlir file, or the IR text itself.
    sm: the target ("sm_90" or 90); default the current GPU's, sm_90 when
        there is none (the CPU fallback does not depend on it).
    dims: fixed sizes, e.g. {"D": 4096} (nf-compile --dim); default none:
        one artifact for every D.
    cubin: also assemble the cubin (no JIT at load; needs ptxas).
    options: further nf-compile options, e.g. ["--threads-per-row=256"].
    prefix: as in load(): op names normfuse::<prefix>_<kernel>.
    cache: the cache folder; default $NF_CACHE_DIR, else
        $XDG_CACHE_HOME/normfuse, else ~/.cache/normfuse.

    The artifact is cached under a key of the IR text, the options and the
    compiler binary, so compiling the same thing again (in any process)
    reads the cached file. Raises CompileError with nf-compile's diagnostics
    when the IR is refused, or when no nf-compile is found (the package
    itself has no compiler: it needs MLIR); prebuilt artifacts load with
    load() on machines without one.
    """
    return load(compile_artifact(source, sm=sm, dims=dims, cubin=cubin,
                                 options=options, cache=cache),
                prefix=prefix)
