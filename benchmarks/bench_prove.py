"""Speed of ``formal-transformers prove``: whole processes, medians, against the budgets.

    python benchmarks/bench_prove.py [--repeats N] [--full]

- ``prove`` (every theorem and its twin; budget 60 s on 2 cores), and its slowest theorem (from ``--json``);
- ``prove --mutants --about`` (every catalogued bug in a fresh process, the theorems it is about checked);
- with ``--full``, ``prove --mutants`` (every theorem's statement under every bug), once.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from bench_core import _table

CLI = [sys.executable, "-m", "formal"]


def _run(argv):
    start = time.perf_counter()
    done = subprocess.run(CLI + argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stdout[-400:]}{done.stderr[-400:]}")
    return time.perf_counter() - start, done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="also time the full campaign (every theorem, once)")
    args = parser.parse_args()
    prove, slowest, about = [], [], []
    for _ in range(args.repeats):     # interleaved: the machines are shared and noisy
        seconds, out = _run(["prove", "--json"])
        prove.append(seconds)
        slowest.append(max(t["seconds"] for t in json.loads(out)["theorems"]))
        about.append(_run(["prove", "--mutants", "--about"])[0])
    rows = [("prove (every theorem and twin)", statistics.median(prove), 60.0),
            ("  its slowest theorem", statistics.median(slowest), None),
            ("prove --mutants --about", statistics.median(about), None)]
    if args.full:
        rows.append(("prove --mutants (every theorem, once)", _run(["prove", "--mutants"])[0], None))
    _table(rows, args.repeats)


if __name__ == "__main__":
    main()
