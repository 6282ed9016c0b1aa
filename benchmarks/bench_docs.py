"""Time to build the docs (the budget: a fresh build under 30 s on 2 cores), fresh and with nothing changed:
``sphinx-build -W -b html docs OUT`` in a subprocess, medians of ``--repeats`` runs.

    python benchmarks/bench_docs.py [--repeats N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _build(out: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(DOCS), str(out)], check=True)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    fresh, again = [], []
    for _ in range(args.repeats):
        out = Path(tempfile.mkdtemp(prefix="docs-bench-"))
        try:
            fresh.append(_build(out))
            again.append(_build(out))
        finally:
            shutil.rmtree(out, ignore_errors=True)
    print(f"docs build, fresh:          median {statistics.median(fresh):6.1f} s  (runs: "
          f"{', '.join(f'{t:.1f}' for t in fresh)})")
    print(f"docs build, nothing changed: median {statistics.median(again):6.1f} s  (runs: "
          f"{', '.join(f'{t:.1f}' for t in again)})")


if __name__ == "__main__":
    main()
