"""Where ``formal-transformers verify`` (quick, CPU) spends its time, algorithm by algorithm, printed as a table.

    python benchmarks/bench_verify.py [--profile quick|thorough] [--repeats N] [--only NAMES]

Each algorithm's checks run in a fresh process, as a verify worker first meets them (one torch thread, the
workers' sympy cache, torch's first calls made), split in three: drawing the examples (sizes drawn and mended:
the derivations of every variant drawn), the spec's output on each (numpy, once per example), and the rest (the
torch reference in every precision and path, FlopCounterMode, the SGD step). CPU seconds, medians of
``--repeats`` runs. Last, each algorithm's task in seconds — the first figure of its ``seconds`` (its
``Implementation`` in its family module of ``reference/catalogue/``: ``seconds={profile: (checks, variant)}``), the
order the workers take the algorithms in.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_CHILD = """
import json, sys, time
import torch
torch.set_num_threads(1)
from reference.verification import checks
from reference.model.device import device
spent = {"examples": 0.0, "spec": 0.0}

def timed(what, f):
    def run(*args, **kwargs):
        start = time.process_time()
        try:
            return f(*args, **kwargs)
        finally:
            spent[what] += time.process_time() - start
    return run

checks._draw = timed("examples", checks._draw)
class Measure(checks.Measure):
    spec = timed("spec", checks.Measure.spec)

measure = Measure(device("cpu"))
list(checks.rows("layer_norm", ["float64", "float32", "matmul FLOPs"], "quick", 0, measure))  # torch's first calls
spent.update(examples=0.0, spec=0.0)
start = time.process_time()
list(checks.rows(sys.argv[1], sys.argv[2].split(","), sys.argv[3], 0, measure))
total = time.process_time() - start
print(json.dumps([spent["examples"], spent["spec"], total - spent["examples"] - spent["spec"]]))
"""


def _plan(only):
    import torch

    from reference.verification.checks import by_algorithm, plan
    return by_algorithm(plan(only, torch.device("cpu")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=("quick", "thorough"), default="quick")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", help="comma-separated algorithm names (default: all)")
    args = parser.parse_args()
    env = {**os.environ, "SYMPY_CACHE_SIZE": os.environ.get("SYMPY_CACHE_SIZE", "20000")}
    figures = {}
    tasks = _plan(args.only.split(",") if args.only else None)
    for _ in range(args.repeats):  # interleaved: the machine's noise falls on all alike
        for name, its in tasks:
            out = subprocess.run([sys.executable, "-c", _CHILD, name, ",".join(its), args.profile],
                                 capture_output=True, text=True, env=env, check=True).stdout
            figures.setdefault(name, []).append(json.loads(out))
    medians = {name: [statistics.median(r[k] for r in runs) for k in range(3)] for name, runs in figures.items()}
    total = [sum(m[k] for m in medians.values()) for k in range(3)]
    width = max(len(n) for n in medians)
    print(f"{'algorithm':<{width}} {'examples':>9} {'spec':>9} {'the rest':>9} {'total':>9}   (CPU s)")
    for name, m in sorted(medians.items(), key=lambda item: -sum(item[1])):
        print(f"{name:<{width}} {m[0]:>9.2f} {m[1]:>9.2f} {m[2]:>9.2f} {sum(m):>9.2f}")
    print(f"{'all':<{width}} {total[0]:>9.2f} {total[1]:>9.2f} {total[2]:>9.2f} {sum(total):>9.2f}")
    print(f"(median of {args.repeats} runs each, every algorithm in a fresh process; python {sys.version.split()[0]})")
    table = {name: round(sum(m), 1) for name, m in sorted(medians.items(), key=lambda item: -sum(item[1]))
             if sum(m) >= 0.05}
    print(f"a task of its checks (the first figure of seconds[{args.profile!r}] in each algorithm's Implementation):",
          table)


if __name__ == "__main__":
    main()
