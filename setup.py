"""Builds the normfuse wheel: the Python package plus libnfruntime.so.

pyproject.toml has the metadata; this file only adds the native step: the
runtime (runtime/, MLIR-free) is configured and built with CMake into the
build folder and its shared library copied into the package, so that an
installed `import normfuse` needs no path or environment variable. It also
records where this source tree's compiler would be (build/bin/nf-compile),
one of the places normfuse.compile looks.
"""

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = Path(__file__).resolve().parent


class BuildWithRuntime(build_py):
    def run(self):
        super().run()
        package = Path(self.build_lib) / "normfuse"
        runtime = Path(self.get_finalized_command("build").build_temp) / "runtime"
        cmake = os.environ.get("CMAKE", "cmake")
        if shutil.which(cmake) is None:
            raise SystemExit(
                "error: building normfuse needs cmake and a C++17 compiler "
                "(the runtime library is built from runtime/); install them "
                "or set CMAKE")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.check_call([cmake, "-S", str(ROOT / "runtime"), "-B",
                               str(runtime), "-DCMAKE_BUILD_TYPE=Release",
                               *generator])
        subprocess.check_call([cmake, "--build", str(runtime), "--target",
                               "nfruntime", "--parallel"])
        # The real file, not the soname links: a wheel holds no symlinks.
        library = (runtime / "libnfruntime.so").resolve()
        shutil.copyfile(library, package / "libnfruntime.so")
        compiler = ROOT / "build" / "bin" / "nf-compile"
        (package / "_build_info.py").write_text(
            '"""Written by setup.py at build time."""\n'
            f"SOURCE_COMPILER = {str(compiler)!r}\n")


class NativeDistribution(Distribution):
    """A wheel with a native library is specific to the platform."""

    def has_ext_modules(self):
        return True


(ROOT / "build-python").mkdir(exist_ok=True)
setup(
    cmdclass={"build_py": BuildWithRuntime},
    distclass=NativeDistribution,
    # setuptools' default build folder, build/, is the CMake build's.
    options={"build": {"build_base": "build-python"},
             "egg_info": {"egg_base": "build-python"}},
)
