"""Speed figures of the formal core (Algorithms 1–7), printed as a table of medians.

    python benchmarks/bench_core.py [--repeats N]

- ``import formal`` as a whole process, and the bare interpreter start beside it;
- deriving the shapes and costs (both conventions) of all seven algorithms, warm (in a process that has
  already derived once), on freshly built objects so no cached derivation is reused; and cold, the first
  derivation in a fresh process;
- ``formal-transformers show attention --json`` as a whole process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def _process(argv, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _median(f, repeats):
    """Median seconds of ``f()`` over ``repeats`` calls, after one call to warm up (imports, sympy caches)."""
    f()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _table(rows, repeats):
    """Print (figure, median seconds, budget seconds or None) rows."""
    width = max(len(name) for name, _, _ in rows)
    print(f"{'figure':<{width}} {'median s':>9} {'budget s':>9}")
    for name, value, budget in rows:
        print(f"{name:<{width}} {value:>9.3f} {('' if budget is None else f'{budget:.1f}'):>9}")
    print(f"(median of {repeats} runs each; python {sys.version.split()[0]})")


def _core():
    from formal.algorithms import ALGORITHMS
    return [a for a in ALGORITHMS.values() if a.number is not None and a.number <= 7]


def _derive_all():
    for algorithm in _core():
        fresh = algorithm._builder(**algorithm.options)  # a new object: nothing cached
        fresh.output_shape
        for convention in ("matmul", "full"):
            fresh.cost(convention)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    py = sys.executable
    bare = _process([py, "-c", "pass"], args.repeats)
    imported = _process([py, "-c", "import formal"], args.repeats)
    show = _process([py, "-m", "formal", "show", "attention", "--json"], args.repeats)
    cold_code = ("import time, formal; from formal.algorithms import ALGORITHMS; t = time.perf_counter(); "
                 "[(a.output_shape, a.cost('matmul'), a.cost('full')) for a in ALGORITHMS.values() "
                 "if a.number is not None and a.number <= 7]; "
                 "print(time.perf_counter() - t)")
    cold = statistics.median(float(subprocess.run([py, "-c", cold_code], check=True, capture_output=True,
                                                  text=True).stdout) for _ in range(args.repeats))
    rows = [
        ("python -c pass (interpreter start)", bare, None),
        ("python -c 'import formal' (process)", imported, 1.0),
        ("derive shapes+costs of Algorithms 1-7 (warm)", _median(_derive_all, args.repeats), 0.2),
        ("derive shapes+costs of Algorithms 1-7 (cold, first use)", cold, None),
        ("formal-transformers show attention --json (process)", show, 2.0),
    ]
    _table(rows, args.repeats)


if __name__ == "__main__":
    main()
