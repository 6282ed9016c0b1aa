"""Benchmark: attention over a sparse pattern against dense masked attention.

A causal sliding window of 256 keys (itself included), d = 64, one head and batch 1, at ℓ = 1,024 … 65,536.
Each measurement runs in a fresh process: the median time of ``--repeats`` calls, and the peak memory the
call adds beyond its inputs (the process's peak resident size after the call less its resident size before
it; the inputs, the pattern and the imports are held before).  Side by side:

- ``numpy edges`` — :func:`formal.graphs.message_passing.propagate_edges` (float64, the spec's executor);
- ``numpy dense`` — the ℓ×ℓ scores masked by the pattern, softmax, values (float64): what the spec's
  Algorithm 4 does with a mask;
- ``torch scatter`` — :func:`reference.model.message_passing.attend_pattern` (float32);
- ``torch dense`` — the same masked ℓ×ℓ softmax in torch (float32), and ``torch SDPA`` —
  ``scaled_dot_product_attention`` with the boolean mask (float32).

The dense rows are skipped, with their estimated size, where the ℓ×ℓ matrices would exceed ``--dense-limit``
(default 12 GiB).  Ratios are dense / sparse: how many times faster, and how many times less memory.

``--crossover`` measures instead, at ℓ = 4,096, the scatter path on random patterns (no narrow chunks: every
edge gathered) of growing density against SDPA on the same mask: the density from which the dense path is
faster, behind ``reference.model.message_passing.DENSE_DENSITY``.

    python benchmarks/bench_executors.py [--sizes 1024,4096,16384,65536] [--window 256] [--repeats 3]
    python benchmarks/bench_executors.py --crossover
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

from bench_core import _median

METHODS = ("numpy edges", "numpy dense", "torch scatter", "torch dense", "torch SDPA")


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def one(method, ell, window, d, repeats):
    """One measurement in this (fresh) process: prints a JSON line."""
    import numpy as np

    from formal.graphs import message_passing, patterns
    rng = np.random.default_rng(0)
    p = patterns.sliding_window(ell, window)
    Q, K, V = (rng.normal(size=(d, ell)) for _ in range(3))
    if method.startswith("numpy"):
        mask = p.mask() if method == "numpy dense" else None

        def run():
            if mask is None:
                return message_passing.propagate_edges(p, Q, K, V)
            S = (K.T @ Q) / math.sqrt(d)                                 # (ℓ_z, ℓ_x), a column per query
            S[~mask] = -np.inf
            S = np.exp(S - S.max(axis=0))
            S /= S.sum(axis=0)
            return V @ S
    else:
        import torch

        from reference.model import message_passing
        torch.set_num_threads(os.cpu_count() or 1)
        q, k, v = (torch.from_numpy(np.ascontiguousarray(A.T)).float()[None, None] for A in (Q, K, V))
        mask = torch.from_numpy(p.mask().T) if method != "torch scatter" else None    # (ℓ_x, ℓ_z)

        def run():
            with torch.no_grad():
                if method == "torch scatter":
                    return message_passing.attend_pattern(q, k, v, p)
                if method == "torch SDPA":
                    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                s = (q @ k.transpose(-1, -2) / math.sqrt(d)).masked_fill(~mask, -math.inf)
                return torch.softmax(s, dim=-1) @ v
    before = _rss()
    start = time.perf_counter()
    run()
    first = time.perf_counter() - start
    peak = _peak_rss() - before
    seconds = _median(run, repeats - 1) if repeats > 1 else first
    print(json.dumps({"method": method, "ell": ell, "edges": p.n_edges, "seconds": seconds, "peak": peak}))


def _child(argv):
    done = subprocess.run([sys.executable, __file__, *argv], capture_output=True, text=True)
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def crossover(repeats, ell=4096, d=64):
    """Scatter (every edge gathered) against SDPA on random patterns of growing density, at ℓ = 4,096."""
    import numpy as np
    import torch

    from formal.graphs import from_mask
    from reference.model import message_passing
    rng = np.random.default_rng(0)
    q, k, v = (torch.randn(1, 1, ell, d) for _ in range(3))
    print(f"ℓ = {ell:,}, d = {d}, float32, random keys (no narrow chunks): scatter against SDPA on the mask")
    print(f"{'density':>8} {'scatter':>10} {'SDPA':>10} {'SDPA/scatter':>13}")
    for density in (0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75):
        m = rng.random((ell, ell)) < density
        p = from_mask(m)
        mask = torch.from_numpy(m.T)
        with torch.no_grad():
            sparse = _median(lambda: message_passing.attend_pattern(q, k, v, p), repeats)
            dense = _median(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                            repeats)
        print(f"{density:>8.2f} {sparse * 1e3:>8.1f}ms {dense * 1e3:>8.1f}ms {dense / sparse:>12.2f}×")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1024,4096,16384,65536")
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dense-limit", type=float, default=12, help="GiB: skip dense rows whose ℓ×ℓ would exceed it")
    parser.add_argument("--crossover", action="store_true")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        return one(args.one[0], int(args.one[1]), args.window, args.d, args.repeats)
    if args.crossover:
        return crossover(args.repeats)
    print(f"causal window {args.window}, d = {args.d}, one head, batch 1; {os.cpu_count()} CPU cores; median of "
          f"{args.repeats}; peak = memory added by the call")
    print(f"{'ℓ':>7} {'|E|':>12} {'method':>14} {'time':>10} {'peak':>11}   {'dense/this: time, memory':>26}")
    for ell in (int(n) for n in args.sizes.split(",")):
        rows = {}
        for method in METHODS:
            itemsize = 8 if method.startswith("numpy") else 4
            dense_bytes = 3 * itemsize * ell * ell + ell * ell         # scores, weights, a temporary; the mask
            if "dense" in method or "SDPA" in method:
                if dense_bytes > args.dense_limit * 2**30:
                    rows[method] = {"skipped": dense_bytes}
                    continue
            rows[method] = _child(["--one", method, str(ell), "--window", str(args.window), "--d", str(args.d),
                                   "--repeats", str(args.repeats)])
        for method in METHODS:
            r = rows[method]
            if "skipped" in r:
                print(f"{ell:>7,} {'':>12} {method:>14}   skipped: the ℓ×ℓ matrices need about "
                      f"{r['skipped'] / 2**30:.0f} GiB")
                continue
            if "error" in r:
                print(f"{ell:>7,} {'':>12} {method:>14}   failed: {r['error']}")
                continue
            ratio = ""
            peer = rows["numpy dense" if method.startswith("numpy") else "torch dense"]
            if method in ("numpy edges", "torch scatter") and "seconds" in peer:
                ratio = (f"{peer['seconds'] / r['seconds']:.1f}× faster, "
                         f"{peer['peak'] / max(r['peak'], 1):.1f}× less memory")
            print(f"{ell:>7,} {r['edges']:>12,} {method:>14} {r['seconds']:>9.3f}s {r['peak'] / 2**20:>8.0f} MiB   "
                  f"{ratio}")


if __name__ == "__main__":
    main()
