# -*- Python -*-
# lit configuration of the normfuse test suite.

import os
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "NORMFUSE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.nf_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%examples", os.path.join(config.nf_src_root, "examples")))
config.substitutions.append(("%nf_src_root", config.nf_src_root))
config.substitutions.append(("%nf_obj_root", config.nf_obj_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.nf_tools_dir, config.llvm_tools_dir]
tools = ["nf-opt", "nf-interp", "nf-compile", "nf-run"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], tool_dirs)

# ptxas checks need the CUDA toolkit (present on the CPU machines; no GPU).
cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
if os.path.exists(os.path.join(cuda, "bin", "ptxas")):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", os.path.join(cuda, "bin", "ptxas")))
    config.substitutions.append(("%cuda_root", cuda))

# The PyTorch fallback tests need a Python that can import torch: the first
# of the candidates CMake lists (NF_TORCH_PYTHON, Python3_EXECUTABLE,
# /usr/bin/python3), then lit's own.
def find_torch_python(candidates):
    for python in candidates:
        if not python or not os.path.exists(python):
            continue
        try:
            subprocess.run([python, "-c", "import torch"], check=True,
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)
            return python
        except (OSError, subprocess.SubprocessError):
            continue
    return None


torch_python = find_torch_python(
    config.nf_torch_python_candidates.split(";") + [sys.executable])
if torch_python:
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", torch_python))
