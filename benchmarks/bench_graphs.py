"""Benchmark: the vectorised graph executor grows with |E|, not ℓ² (issue 5).

Causal sliding window of 256 keys, d = 64, one head (Algorithm 4 over the pattern), on the CPU, at
ℓ = 4,096 … 32,768: time to build the pattern, median time of the executor, and peak memory of build +
execution (tracemalloc: every numpy allocation), each size in a fresh process.  At a fixed window |E| ≈ w·ℓ,
so doubling ℓ should double both; the slopes printed are log2 of the ratio between successive sizes
(1.0 = linear, 2.0 = quadratic).  The dense ℓ×ℓ score matrix is shown for scale.

    python benchmarks/bench_graphs.py [--sizes 4096,8192,16384,32768] [--window 256] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time

from bench_core import _median


def one(ell, window, d, repeats):
    """Measure one size in this process; print one JSON line."""
    import tracemalloc

    import numpy as np

    from formal.graphs import message_passing, patterns
    rng = np.random.default_rng(0)
    X = rng.normal(size=(d, ell))
    W = {name: rng.normal(size=(d, d)) / math.sqrt(d) for name in ("W_q", "W_k", "W_v")}
    start = time.perf_counter()
    p = patterns.sliding_window(ell, window)
    build = time.perf_counter() - start
    seconds = _median(lambda: message_passing.attention(p, X, **W), repeats)
    del p
    tracemalloc.start()
    p = patterns.sliding_window(ell, window)
    held, build_peak = tracemalloc.get_traced_memory()                   # the pattern's arrays; build's peak
    tracemalloc.reset_peak()
    message_passing.attention(p, X, **W)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"ell": ell, "edges": p.n_edges, "build_s": build, "execute_s": seconds,
                      "pattern_bytes": held, "build_peak_bytes": build_peak, "execute_peak_bytes": peak - held}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="4096,8192,16384,32768")
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        return one(args.one, args.window, args.d, args.repeats)
    rows = []
    for ell in (int(s) for s in args.sizes.split(",")):
        out = subprocess.run([sys.executable, __file__, "--one", str(ell), "--window", str(args.window), "--d",
                              str(args.d), "--repeats", str(args.repeats)], check=True, capture_output=True, text=True)
        rows.append(json.loads(out.stdout))
    print(f"sliding window {args.window}, d = {args.d}, one head, float64, CPU; median of {args.repeats} runs;\n"
          "memory by tracemalloc: the pattern's arrays, the build's peak, the executor's peak beyond the pattern")
    print(f"{'ℓ':>7} {'|E|':>11} {'build s':>8} {'execute s':>10} {'pattern MiB':>12} {'build peak':>11} "
          f"{'exec peak':>10} {'slope t':>8} {'slope mem':>9} {'dense S MiB':>12}")
    for i, r in enumerate(rows):
        slopes = ("", "")
        if i:
            prev = rows[i - 1]
            scale = math.log2(r["ell"] / prev["ell"])
            total, prev_total = (x["build_peak_bytes"] + x["execute_peak_bytes"] for x in (r, prev))
            slopes = (f"{math.log2(r['execute_s'] / prev['execute_s']) / scale:.2f}",
                      f"{math.log2(total / prev_total) / scale:.2f}")
        mib = (lambda b: f"{b / 2**20:.1f}")
        print(f"{r['ell']:>7} {r['edges']:>11,} {r['build_s']:>8.3f} {r['execute_s']:>10.3f} "
              f"{mib(r['pattern_bytes']):>12} {mib(r['build_peak_bytes']):>11} {mib(r['execute_peak_bytes']):>10} "
              f"{slopes[0]:>8} {slopes[1]:>9} {r['ell']**2 * 8 / 2**20:>12,.0f}")
    print("slopes: log2(ratio) per doubling of ℓ, of the executor's median time and of build + executor peak memory")

if __name__ == "__main__":
    sys.exit(main())
