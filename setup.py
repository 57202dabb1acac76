"""Builds the normfuse wheel: the Python package, libnfruntime, and (where
torch has CUDA) a small torch extension.

pyproject.toml has the metadata; this file adds the native steps:
- the runtime (runtime/, MLIR-free) is built with CMake into the build
  folder and its shared library copied into the package, so that an
  installed `import normfuse` needs no path or environment variable;
- python/normfuse/_ext.cpp is built against the torch of the build
  environment when that torch has CUDA and the CUDA headers are found (pip's
  --no-build-isolation, so that it is the installed torch): the ops' CUDA
  implementation in C++, for the host time of one torch op. Where it cannot
  be built the package launches through ctypes (slower on the host, same
  kernels); NF_BUILD_EXTENSION=0 skips it, =1 makes a failure an error;
- where this source tree's compiler would be (build/bin/nf-compile) is
  recorded, one of the places normfuse.compile looks;
- nf-run (MLIR-free) is built and copied into the package too:
  normfuse.tune() runs it.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent
BUILD = ROOT / "build-python"
RUNTIME_BUILD = BUILD / "runtime"
# The soname: what the extension's loader looks for, and ctypes loads too,
# so that the process has one copy of the runtime.
LIBRARY = "libnfruntime.so.0"


def build_runtime():
    """Configures and builds libnfruntime (once per build)."""
    if getattr(build_runtime, "done", False):
        return RUNTIME_BUILD / LIBRARY
    cmake = os.environ.get("CMAKE", "cmake")
    if shutil.which(cmake) is None:
        raise SystemExit(
            "error: building normfuse needs cmake and a C++17 compiler (the "
            "runtime library is built from runtime/); install them or set "
            "CMAKE")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.check_call([cmake, "-S", str(ROOT / "runtime"), "-B",
                           str(RUNTIME_BUILD), "-DCMAKE_BUILD_TYPE=Release",
                           *generator])
    subprocess.check_call([cmake, "--build", str(RUNTIME_BUILD), "--target",
                           "nfruntime", "nf-run", "--parallel"])
    build_runtime.done = True
    return RUNTIME_BUILD / LIBRARY


class BuildWithRuntime(build_py):
    def run(self):
        super().run()
        package = Path(self.build_lib) / "normfuse"
        # The real file, not the soname link: a wheel holds no symlinks.
        shutil.copyfile(build_runtime().resolve(), package / LIBRARY)
        # nf-run, which normfuse.tune() runs (MLIR-free, like the library).
        shutil.copyfile(RUNTIME_BUILD / "bin" / "nf-run", package / "nf-run")
        os.chmod(package / "nf-run", 0o755)
        compiler = ROOT / "build" / "bin" / "nf-compile"
        (package / "_build_info.py").write_text(
            '"""Written by setup.py at build time."""\n'
            f"SOURCE_COMPILER = {str(compiler)!r}\n")


def extension():
    """(ext_modules, cmdclass) for the torch extension, or ([], {})."""
    wanted = os.environ.get("NF_BUILD_EXTENSION", "auto")
    if wanted == "0":
        return [], {}
    reason = None
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError:
        reason = "torch is not importable here (use --no-build-isolation)"
    else:
        if torch.version.cuda is None:
            reason = "this torch has no CUDA"
        elif cpp_extension.CUDA_HOME is None:
            reason = "no CUDA toolkit headers (CUDA_HOME)"
    if reason:
        if wanted == "1":
            raise SystemExit(f"error: cannot build the extension: {reason}")
        print(f"normfuse: not building the C++ extension: {reason}; the "
              "package launches through ctypes", file=sys.stderr)
        return [], {}

    class BuildExtension(cpp_extension.BuildExtension):
        def run(self):
            build_runtime()
            try:
                super().run()
            except Exception as e:  # the ctypes path still works
                if wanted == "1":
                    raise
                print(f"normfuse: the C++ extension failed to build ({e}); "
                      "the package launches through ctypes", file=sys.stderr)

    ext = cpp_extension.CUDAExtension(
        "normfuse._normfuse_ext", ["python/normfuse/_ext.cpp"],
        include_dirs=[str(ROOT)], library_dirs=[str(RUNTIME_BUILD)],
        extra_link_args=[f"-l:{LIBRARY}", "-Wl,-rpath,$ORIGIN"],
        extra_compile_args={"cxx": ["-O2"]})
    return [ext], {"build_ext": BuildExtension}


class NativeDistribution(Distribution):
    """A wheel with a native library is specific to the platform."""

    def has_ext_modules(self):
        return True


BUILD.mkdir(exist_ok=True)
ext_modules, ext_commands = extension()
setup(
    cmdclass={"build_py": BuildWithRuntime, **ext_commands},
    distclass=NativeDistribution,
    ext_modules=ext_modules,
    # setuptools' default build folder, build/, is the CMake build's.
    options={"build": {"build_base": str(BUILD)},
             "egg_info": {"egg_base": str(BUILD)}},
)
