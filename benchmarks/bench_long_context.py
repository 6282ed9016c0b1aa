"""Benchmark: long-context claims answered from a pattern's structure, not its edges.

Whole processes of ``formal-transformers graph … --json`` (median wall time and peak resident memory, read
from the kernel's accounting of each child), beside the bare interpreter:

- Mistral's claim — a 4,096-token window over 32 layers spans ~131K tokens — at ℓ = 140,000 (target: under
  2 s and 500 MB, receptive field after 32 layers in the output);
- ℓ = 1,000,000 with the same window (target: under 5 s), and the other structured patterns at 10⁶;

and, in this process, the same analysis two ways at the largest length the bit sets allow comfortably
(ℓ = 4,096 — the previous limit of the command): the structure's closed forms against the bit-set walk
of the same edges, with their ratio.

    python benchmarks/bench_long_context.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from bench_core import _median

COMMANDS = [
    ("Mistral: window 4,096, 32 layers, ℓ = 140,000", "sliding-window --seq-len 140000 --window 4096 --layers 32"),
    ("window 4,096, 32 layers, ℓ = 1,000,000", "sliding-window --seq-len 1000000 --window 4096 --layers 32"),
    ("dilated window 512 ×4, ℓ = 10⁶", "dilated --seq-len 1000000 --window 512 --dilation 4"),
    ("global + local (g = 2, w = 512), ℓ = 10⁶", "global-local --seq-len 1000000 --window 512 --global 2"),
    ("strided, s = 1,000, ℓ = 10⁶", "strided --seq-len 1000000 --stride 1000"),
    ("fixed, s = 128, c = 8, ℓ = 10⁶", "fixed --seq-len 1000000 --stride 128 --summary 8"),
    ("Swin, shifted 7×7 on 1,001×1,001", "swin --grid 1001x1001 --window 7 --shifted"),
    ("causal, ℓ = 10⁶", "causal --seq-len 1000000"),
]


def _process(argv):
    """Wall seconds and peak resident bytes of one child process (``os.wait4`` gives its own rusage)."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {child.stderr.read().decode()[-500:]}")
    return seconds, usage.ru_maxrss * 1024                                  # KiB on Linux


def _median_process(argv, repeats):
    runs = [_process(argv) for _ in range(repeats)]
    runs.sort()
    return runs[len(runs) // 2][0], max(rss for _, rss in runs)


def in_process(repeats):
    """The layered analysis of a window at ℓ = 4,096: closed forms against the bit-set walk."""
    from formal.graphs import from_pairs, layered, patterns, structure
    p = patterns.sliding_window(4096, 128)
    edges = from_pairs(p.keys, p.queries, ell_z=p.ell_z)                  # no structure: walked with bit sets
    s = structure.of(p)
    walked = _median(lambda: layered.summary(edges, 32), repeats)
    closed = _median(lambda: s.summary(32).spread[:], repeats)
    assert s.summary(32).coverage == layered.summary(edges, 32).coverage
    return walked, closed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"whole processes, median of {args.repeats}; peak resident memory the largest of them")
    base, base_rss = _median_process([sys.executable, "-c", "pass"], args.repeats)
    print(f"{'python -c pass':52} {base:7.2f} s {base_rss / 2**20:7.0f} MiB")
    for what, command in COMMANDS:
        seconds, rss = _median_process([sys.executable, "-m", "formal", "graph", *command.split(), "--json"],
                                       args.repeats)
        print(f"{what:52} {seconds:7.2f} s {rss / 2**20:7.0f} MiB")
    walked, closed = in_process(args.repeats)
    print(f"\nℓ = 4,096, window 128, 32 layers + coverage: bit-set walk {walked * 1e3:.0f} ms, structure "
          f"{closed * 1e3:.2f} ms ({walked / closed:,.0f}× faster)")


if __name__ == "__main__":
    main()
