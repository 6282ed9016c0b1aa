"""The machine a GPU check runs on, printed as one JSON object: Python, torch and the CUDA it was built with,
the GPU and its driver, transformers, and where this package is imported from.

    python benchmarks/gpu_environment.py [FILE]     # into FILE, else on stdout

``benchmarks/gpu_check.py`` runs it as its first step, in its own process, so that a torch that fails to
import is reported as such, not as the check's own crash.  The package is imported from this tree, which the
install step installs only after this one.  A package that cannot be imported is ``null``,
with the reason in ``errors``; the exit status is 0 either way (the check judges what is there).
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

#: The tree this script belongs to: the package the GPU check checks, importable before it is installed.
ROOT = Path(__file__).resolve().parent.parent


def _torch(info):
    import torch
    info.update(torch=torch.__version__, cuda=torch.version.cuda, cuda_available=torch.cuda.is_available())
    if info["cuda_available"]:
        props = torch.cuda.get_device_properties(0)
        info.update(gpu=torch.cuda.get_device_name(0), gpu_count=torch.cuda.device_count(),
                    gpu_memory_gib=round(props.total_memory / 2 ** 30, 1),
                    compute_capability=f"{props.major}.{props.minor}")


def _transformers(info):
    import transformers
    info["transformers"] = transformers.__version__


def _package(info):
    """The tree's package, imported from the tree (this step runs before the install step), and the version
    pip has installed here, if any."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import formal
    import reference
    try:
        installed = metadata.version("formal-transformers")
    except metadata.PackageNotFoundError:
        installed = None
    info["package"] = {"formal": formal.__file__, "reference": reference.__file__, "installed": installed}


def _driver(info):
    """The driver's version as nvidia-smi reports it (torch does not know it)."""
    if shutil.which("nvidia-smi") is None:
        info["driver"] = None
        return
    done = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                          capture_output=True, text=True, timeout=20)
    if done.returncode != 0:
        raise RuntimeError(f"nvidia-smi exited {done.returncode}: {done.stderr.strip()[:200]}")
    info["driver"] = done.stdout.strip().splitlines()[0] if done.stdout.strip() else None


def probe() -> dict:
    """Everything this module reports; each part that fails is ``null`` with its reason in ``errors``."""
    info = {"python": platform.python_version(), "executable": sys.executable, "platform": platform.platform(),
            "torch": None, "cuda": None, "cuda_available": False, "gpu": None, "driver": None,
            "transformers": None, "package": None}
    errors = {}
    for name, part in (("torch", _torch), ("transformers", _transformers), ("package", _package),
                       ("driver", _driver)):
        try:
            part(info)
        except Exception as exc:  # an import or a query that fails is what this probe is there to report
            errors[name] = f"{type(exc).__name__}: {exc}"
    info["errors"] = errors
    return info


def main(argv) -> int:
    """Probe, and write the JSON to ``argv[0]`` (else stdout); a FILE that cannot be written is one line on stderr
    and exit status 2, before anything is probed."""
    if len(argv) > 1:
        sys.stderr.write(f"gpu_environment: one FILE expected, got {len(argv)}\n")
        return 2
    if argv:
        from gpu_steps import unwritable  # this script's folder is on the path when it runs as a script
        why = unwritable(argv[0])
        if why is not None:
            sys.stderr.write(f"gpu_environment: {argv[0]!r} cannot be written: {why}\n")
            return 2
    text = json.dumps(probe(), indent=2) + "\n"
    if argv:
        with open(argv[0], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
