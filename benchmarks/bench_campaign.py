"""Campaigns (``verify --variants``): what a task costs, what Dask adds, and how good ``--dry-run``'s estimate is.

    python benchmarks/bench_campaign.py --costs [--samples K] [--profile quick|thorough]
    python benchmarks/bench_campaign.py --compare [--repeats N]

``--costs``: each algorithm in a fresh process (one torch thread, verify's sympy cache, torch's first calls made
on a warm-up task), ``K`` of its variants spread over its enumeration, each a task as a worker runs it: the
mean CPU seconds per task — the second figure of each algorithm's ``seconds`` (its ``Implementation`` in its
family module of ``reference/catalogue/``: ``seconds={profile: (checks, variant)}``); and the seconds from a
worker's start to its first result (``WORKER_START``).

``--compare``: first the wall time of a campaign of two tiny tasks per executor (the command's start and its
workers': ``START``); then two campaigns — 100 cheap variants sent in 16 groups, and 96 tasks of one variant
each — run side by side, alternating, ``--repeats`` times each: ``--jobs 2`` and ``--scheduler local:2``
(medians of wall time; Dask's overhead is their difference, over Dask's time, and per task less Dask's start
and close), beside ``--dry-run``'s estimate for 2 workers; then the estimate of the full ``--variants all
--profile thorough`` campaign on 1, 8 and 64 workers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

#: 100 variants of cheap algorithms (a twentieth of a second each): sent in groups, 16 tasks.
GROUPED = ["--variants", "all", "--only", "attention,mhattention,paged_attention,token_embedding"]
#: 96 variants worth over half a second each: 96 tasks, one variant each.
SINGLE = ["--variants", "norm=layer,eps=1e-05,position=learned", "--only", "edtransformer"]

_CHILD = """
import json, sys, time
start = time.perf_counter()
import torch
torch.set_num_threads(1)
from reference.verification.tasks import Checks
from formal.sampling.variants import every_variant
name, profile, samples = sys.argv[1], sys.argv[2], int(sys.argv[3])
Checks("layer_norm", None, profile, 0, "cpu", (("norm", "layer"), ("eps", 1e-05))).run()  # torch's first calls
ready = time.perf_counter() - start
variants = every_variant(name)[0]
picked = [variants[round(i * (len(variants) - 1) / max(samples - 1, 1))] for i in range(min(samples, len(variants)))]
spent = []
for options in picked:
    begin = time.process_time()
    Checks(name, None, profile, 0, "cpu", tuple(options.items())).run()
    spent.append(time.process_time() - begin)
print(json.dumps([ready, spent]))
"""


def _environment() -> dict:
    return {**os.environ, "SYMPY_CACHE_SIZE": os.environ.get("SYMPY_CACHE_SIZE", "20000")}


def costs(profile: str, samples: int):
    from formal.sampling.variants import EXAMPLE_ALGORITHMS
    table, starts = {}, []
    for name in EXAMPLE_ALGORITHMS:
        out = subprocess.run([sys.executable, "-c", _CHILD, name, profile, str(samples)], capture_output=True,
                             text=True, env=_environment(), check=True).stdout
        ready, spent = json.loads(out)
        starts.append(ready)
        table[name] = statistics.mean(spent)   # a campaign's time is their sum: the mean, not the median
        print(f"{name:<24} {table[name]:>7.2f} s per task (mean of {len(spent)}; "
              f"{min(spent):.2f}–{max(spent):.2f})", flush=True)
    print(f"profile {profile}: seconds from a worker's start to its first result, median "
          f"{statistics.median(starts):.1f}")
    ordered = dict(sorted(((n, round(max(s, 0.01), 2)) for n, s in table.items()), key=lambda item: -item[1]))
    print(f"one variant's task (the second figure of seconds[{profile!r}] in each algorithm's Implementation):",
          ordered)


def _timed(argv) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "formal", "verify", *argv, "--quiet"], capture_output=True,
                          text=True, env=_environment())
    if done.returncode != 0:
        raise SystemExit(f"verify {' '.join(argv)} failed: {done.stderr.strip()[-400:]}")
    return time.perf_counter() - start


def _estimate(argv, workers: int) -> str:
    out = subprocess.run([sys.executable, "-m", "formal", "verify", *argv, "--dry-run"], capture_output=True,
                         text=True, env=_environment(), check=True).stdout
    line = next(line for line in out.splitlines() if re.match(rf"\s+{workers} workers? ", line))
    return line.split("worker", 1)[1].lstrip("s ").replace("(this run)", "").strip()


def _seconds(text: str) -> float:
    total, units = 0.0, {"s": 1, "min": 60, "h": 3600, "d": 86400}
    for value, unit in re.findall(r"(\d+) (s|min|h|d)\b", text):
        total += int(value) * units[unit]
    return total


def start(repeats: int) -> dict:
    """Wall seconds of a run of two tiny tasks (positional_embedding's and layer_norm's variants, 0.01 s each):
    the command's start and its workers', per executor — ``START`` of :mod:`reference.verification.estimates`."""
    runs = {"this process": ["--jobs", "1"], "processes": ["--jobs", "2"], "dask": ["--scheduler", "local:2"]}
    walls = {name: [] for name in runs}
    for _ in range(repeats):
        for name, flags in runs.items():
            walls[name].append(_timed(["--variants", "all", "--only", "positional_embedding,layer_norm", *flags]))
    medians = {name: round(statistics.median(w), 1) for name, w in walls.items()}
    print("START =", medians, f"(median of {repeats}: two tasks of 0.01 s)")
    return medians


def _campaign(name, argv, repeats, start):
    runs = {"--jobs 2": ["--jobs", "2"], "--scheduler local:2": ["--scheduler", "local:2"]}
    walls = {flag: [] for flag in runs}
    for _ in range(repeats):  # alternating: the machine's noise falls on both alike
        for flag, flags in runs.items():
            walls[flag].append(_timed(argv + flags))
    medians = {flag: statistics.median(w) for flag, w in walls.items()}
    jobs, dask = medians["--jobs 2"], medians["--scheduler local:2"]
    tasks = _tasks(argv)
    print(f"{name} (verify {' '.join(argv)}; {tasks} tasks), wall seconds, median of {repeats}:")
    for flag, w in walls.items():
        print(f"  {flag:<22} {medians[flag]:6.1f}   ({', '.join(f'{x:.1f}' for x in w)})")
    fixed = start["dask"] - start["processes"]
    print(f"  Dask's overhead: {dask - jobs:+.1f} s, {100 * (dask - jobs) / dask:+.0f}% of its wall time; less its "
          f"start and close ({fixed:.1f} s): {1000 * (dask - jobs - fixed) / tasks:+.0f} ms per task, "
          f"{100 * (dask - jobs - fixed) / dask:+.0f}%")
    estimate = _estimate(argv + ["--jobs", "2"], 2)
    print(f"  --dry-run's estimate for 2 workers: {estimate} ({_seconds(estimate):.0f} s), measured "
          f"{jobs:.1f} s with --jobs 2: {100 * (_seconds(estimate) - jobs) / jobs:+.0f}%")


def _tasks(argv) -> int:
    out = subprocess.run([sys.executable, "-m", "formal", "verify", *argv, "--dry-run"], capture_output=True,
                         text=True, env=_environment(), check=True).stdout
    return int(re.search(r"in ([\d,]+) tasks", out).group(1).replace(",", ""))


def compare(repeats: int):
    begun = start(repeats)
    _campaign("100 variants in groups", GROUPED, repeats, begun)
    _campaign("96 tasks of one variant", SINGLE, repeats, begun)
    full = ["--variants", "all", "--profile", "thorough"]
    print("the full campaign (verify --variants all --profile thorough), estimated:")
    for workers in (1, 8, 64):
        print(f"  {workers:>3} workers: {_estimate(full + ['--jobs', '2'], workers)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--costs", action="store_true", help="measure the cost per task of every algorithm")
    parser.add_argument("--compare", action="store_true", help="--jobs 2 against --scheduler local:2")
    parser.add_argument("--profile", choices=("quick", "thorough"), default="quick")
    parser.add_argument("--samples", type=int, default=5, help="variants measured per algorithm")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not (args.costs or args.compare):
        parser.error("give --costs or --compare")
    if args.costs:
        costs(args.profile, args.samples)
    if args.compare:
        compare(args.repeats)


if __name__ == "__main__":
    main()
