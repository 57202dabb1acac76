"""normfuse.tune: measures an artifact's variants on this GPU, through nf-run.

`nf-run ARTIFACT --tune --dims ...` (MLIR-free; setup.py builds it into the
package) times every variant of a kernel whose guard holds for the given
shapes, checks each against the default variant's results, and records the
fastest for that row length in ARTIFACT.tune, which the runtime reads when
it loads the artifact (docs/Artifact.md, "Tune files").
"""

import os
import shutil
import subprocess
from pathlib import Path


class TuneError(RuntimeError):
    """nf-run could not tune (no nf-run, no GPU, bad shapes, or a variant
    whose results differ from the default's)."""


def find_tuner():
    """The nf-run that tune() runs, or None: $NF_RUN, else the one shipped
    in the package, else `nf-run` on PATH, else the build of the source tree
    the package is used from."""
    env = os.environ.get("NF_RUN")
    if env:
        return env if os.access(env, os.X_OK) else None
    here = Path(__file__).resolve().parent
    root = here.parents[1]
    candidates = [here / "nf-run"]
    on_path = shutil.which("nf-run")
    if on_path:
        candidates.append(Path(on_path))
    candidates += [root / "build-runtime" / "bin" / "nf-run",
                   root / "build" / "bin" / "nf-run"]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def tune(artifact, dims, kernel=None, iters=50):
    """Tunes one kernel of `artifact` (a path, or a Module from load() or
    compile()) for the shapes `dims`, e.g. {"B": 1, "S": 8192, "D": 4096},
    on the current machine's GPU 0.

    Returns a dict: "function" (the variant recorded for that D), "default"
    (the one the runtime would launch untuned) and "times" ({function: us}
    of every candidate). The choice is written to <artifact>.tune; modules
    loaded afterwards (another process, or this one before its first launch
    of that artifact) launch it at that D. Raises TuneError with nf-run's
    message when it cannot tune.
    """
    path = getattr(artifact, "path", artifact)
    if not dims or not all(isinstance(v, int) and not isinstance(v, bool)
                           for v in dims.values()):
        raise TuneError("error: dims must map size names to ints, e.g. "
                        "{'B': 1, 'S': 8192, 'D': 4096}")
    tuner = find_tuner()
    if tuner is None:
        raise TuneError(
            "error: no nf-run found to tune with (set NF_RUN, put nf-run on "
            "PATH, or install normfuse from a source tree: setup.py builds "
            "it into the package)")
    command = [tuner, str(path), "--tune", "--dims",
               ",".join(f"{k}={v}" for k, v in dims.items()),
               "--iters", str(int(iters))]
    if kernel:
        command += ["--kernel", kernel]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        message = (run.stderr.strip() or run.stdout.strip()
                   or f"nf-run exited with status {run.returncode}")
        raise TuneError(message if message.startswith(("error", "nf-run"))
                        else "error: " + message)
    result = {"function": None, "default": None, "times": {}}
    for line in run.stdout.splitlines():
        words = line.split()
        fields = dict(w.split("=", 1) for w in words if "=" in w)
        if words[:1] == ["TUNE"]:
            result["times"][fields["variant"]] = float(fields["kernel_us"])
            if "default" in words:
                result["default"] = fields["variant"]
            if "chosen" in words:
                result["function"] = fields["variant"]
    if result["function"] is None:
        raise TuneError("error: nf-run --tune printed no choice:\n" +
                        run.stdout)
    return result
