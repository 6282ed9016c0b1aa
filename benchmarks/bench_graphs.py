"""Benchmark: the vectorised graph executor grows with |E|, not ℓ².

Causal sliding window of 256 keys, d = 64, one head (Algorithm 4 over the pattern), on the CPU, at
ℓ = 4,096 … 32,768: time to build the pattern, median time of the executor, and peak memory of build +
execution (tracemalloc: every numpy allocation), each size in a fresh process.  At a fixed window |E| ≈ w·ℓ,
so doubling ℓ should double both; the slopes printed are log2 of the ratio between successive sizes
(1.0 = linear, 2.0 = quadratic).  The dense ℓ×ℓ score matrix is shown for scale.

    python benchmarks/bench_graphs.py [--sizes 4096,8192,16384,32768] [--window 256] [--repeats 5]

With ``--peaks`` it measures instead what each step of formal.graphs allocates at its peak (tracemalloc,
beyond what was held before the step) beside the estimate :mod:`formal.graphs.memory` refuses it by: the
ratio measured/estimate must stay below 1.  The constants of that module come from these figures.

    python benchmarks/bench_graphs.py --peaks [--scale 1]
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


def _peak(f):
    """Peak bytes allocated while ``f()`` runs, beyond what was held before (tracemalloc sees numpy's arrays)."""
    import gc
    import tracemalloc
    gc.collect()
    tracemalloc.start()
    try:
        f()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def peak_cases(scale=1):
    """``(step, case, run, estimate)`` for each measured step; ``scale`` multiplies the sizes."""
    import io

    import numpy as np

    from formal.graphs import (
        analysis,
        edgelist,
        figures,
        from_mask,
        from_pairs,
        memory,
        message_passing,
        patterns as P,
    )
    from formal.graphs.draw import mask_image
    from formal.tools.commands import graph as graph_command
    n = 1024 * scale
    builders = [("full", lambda: P.full(n)), ("causal", lambda: P.causal(n)),
                ("causal", lambda: P.causal(n // 2, n, align="top-left")),
                ("causal", lambda: P.causal(n, n // 2, align="bottom-right")), ("cross", lambda: P.cross(n // 2, n)),
                ("sliding_window", lambda: P.sliding_window(8 * n, 1)),
                ("sliding_window", lambda: P.sliding_window(8 * n, 16, causal=False)),
                ("dilated", lambda: P.dilated(8 * n, 1, 1)), ("dilated", lambda: P.dilated(8 * n, 16, 3, causal=False)),
                ("dilated", lambda: P.dilated(n, n, 2, causal=False)),
                ("global_local", lambda: P.global_local(8 * n, 1, 1)),
                ("global_local", lambda: P.global_local(8 * n, 16, 8, causal=True)),
                ("strided", lambda: P.strided(n, 1)), ("strided", lambda: P.strided(8 * n, 8 * n)),
                ("strided", lambda: P.strided(4 * n, 32)), ("strided", lambda: P.strided(4 * n, 32, part="stride")),
                ("fixed", lambda: P.fixed(n, 1)), ("fixed", lambda: P.fixed(4 * n, 32, 4)),
                ("fixed", lambda: P.fixed(4 * n, 32, 1, part="summary")), ("fixed", lambda: P.fixed(2 * n, 64, 64)),
                ("random", lambda: P.random(8 * n, 1)), ("random", lambda: P.random(8 * n, 3, window=4, n_global=2)),
                ("random", lambda: P.random(2 * n, 16, window=8, n_global=4)),
                ("swin", lambda: P.swin(n // 16, 64, 4)), ("swin", lambda: P.swin(n // 8, 64, 8, shifted=True)),
                ("swin", lambda: P.swin(n // 64, 64, 1))]
    for name, build in builders:
        p = build()
        yield ("build", repr(p), build, memory.build_bytes(name, edges=p.n_edges, positions=p.ell_z + p.ell_x))
    rng = np.random.default_rng(0)
    for ell, m in ((n, 64 * n), (64 * n, 64 * n), (n // 4, 8 * n)):
        keys, queries = rng.integers(0, ell, m), rng.integers(0, ell, m)
        yield ("from_pairs", f"{m:,} random edges, ℓ = {ell:,}, merged",
               lambda: from_pairs(keys, queries, ell_z=ell, duplicates="merge"), memory.pairs_bytes(m, ell, sort=True))
        p = from_pairs(keys, queries, ell_z=ell, duplicates="merge")
        yield ("from_pairs", f"{p.n_edges:,} sorted edges, ℓ = {ell:,}",
               lambda: from_pairs(p.keys, p.queries, ell_z=ell), memory.pairs_bytes(p.n_edges, ell, sort=False))
    for p in (P.full(2 * n), P.sliding_window(32 * n, 8), P.cross(n, 3 * n)):
        yield "Pattern.mask", repr(p), p.mask, memory.mask_bytes(p.ell_z, p.ell_x)
    for p in (P.full(n // 2), P.sliding_window(64 * n, 8), P.sliding_window(64 * n, 1), P.cross(n // 2, n)):
        nodes = p.ell_x if p.self_attention else p.ell_z + p.ell_x
        yield "to_networkx", repr(p), p.to_networkx, memory.networkx_bytes(p.n_edges, nodes)
    for density in (0.01, 0.5, 1.0):
        m = rng.random((2 * n, 2 * n)) < density
        f = m.astype(float)
        edges = int(m.sum())
        yield ("from_mask", f"bool, density {density}", lambda: from_mask(m),
               memory.mask_bytes(2 * n, 2 * n, edges=edges))
        yield ("from_mask", f"float, density {density}", lambda: from_mask(f),
               max(memory.mask_bytes(2 * n, 2 * n, copies=3), memory.mask_bytes(2 * n, 2 * n, edges=edges)))
    yield ("from_mask", "'causal'", lambda: from_mask("causal", ell_z=2 * n, ell_x=2 * n),
           memory.mask_bytes(2 * n, 2 * n, edges=2 * n * (2 * n + 1) // 2))
    for p in (P.full(n), P.sliding_window(2 * n, 2), P.causal(n), P.random(n, 8)):
        stack = memory.stack_bytes(p.ell_x, p.n_edges)
        yield "receptive_field", repr(p), lambda: analysis.receptive_field(p, 3), stack
        yield "layers_to_coverage", repr(p), lambda: analysis.layers_to_coverage(p, residual=False), stack
        yield "max_path_length", repr(p), lambda: analysis.max_path_length(p), stack
    for p, d in ((P.full(2 * n), 32), (P.sliding_window(16 * n, 64), 64), (P.random(4 * n, 20, window=4), 16)):
        Q, K, V = (rng.normal(size=(d, p.ell_x)) for _ in range(3))
        chunk = min(p.n_edges, max(message_passing.MAX_EDGES, int(p.in_degree.max())))
        yield ("propagate_edges", f"{p!r}, d = {d}", lambda: message_passing.propagate_edges(p, Q, K, V),
               memory.attention_bytes(chunk, p.ell_z, p.ell_x, d, d))
    for p in (P.full(2 * n), P.sliding_window(64 * n, 8)):
        yield "mask_image", repr(p), lambda: mask_image(p), memory.draw_bytes(p.n_edges, p.ell_z + p.ell_x)
    side = 128 * scale                                                    # all pairs below it: short lines
    dense = "".join(f"{k} {q}\n" for k in range(side) for q in range(side))
    ell = 10 * n
    linear = rng.choice(ell * ell, size=100 * n, replace=False)
    wide = "".join(f"{k} {q}\n" for k, q in zip(linear % ell, linear // ell))
    commented = "".join(f"{k} {k}  # edge {k} → {k}\n" for k in range(ell))
    for label, text, size in ((f"all pairs below {side}", dense, side), ("random pairs below 10,240", wide, ell),
                              ("a comment on each line", commented, ell)):
        yield "edge list", label, lambda: edgelist.parse(text, size), memory.edgelist_bytes(len(text.encode()))
    p = P.sliding_window(64, 4)
    for layers, as_json in ((20000 * scale, False), (20000 * scale, True)):
        def run():
            r = figures.collect(p, layers=layers, heads=1, d_head=4)
            json.dump(r, io.StringIO(), indent=2) if as_json else graph_command.to_text(r)
        yield "report", f"{layers:,} layers, {'JSON' if as_json else 'text'}", run, memory.report_bytes(layers)


def peaks(scale):
    """Print each step's measured peak beside its estimate."""
    print(f"{'step':<20} {'case':<58} {'peak MiB':>9} {'estimate':>9} {'ratio':>6}")
    worst = 0.0
    for step, case, run, estimate in peak_cases(scale):
        measured = _peak(run)
        worst = max(worst, measured / estimate)
        print(f"{step:<20} {case[:58]:<58} {measured / 2**20:>9.2f} {estimate / 2**20:>9.2f} "
              f"{measured / estimate:>6.3f}")
    print(f"largest ratio measured/estimate: {worst:.2f} (must stay below 1)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="4096,8192,16384,32768")
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--peaks", action="store_true", help="measured peak memory of each step against its estimate")
    parser.add_argument("--scale", type=int, default=1, help="with --peaks: multiply the sizes")
    args = parser.parse_args(argv)
    if args.peaks:
        return peaks(args.scale)
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
        def mib(b):
            return (f"{b / 2**20:.1f}")
        print(f"{r['ell']:>7} {r['edges']:>11,} {r['build_s']:>8.3f} {r['execute_s']:>10.3f} "
              f"{mib(r['pattern_bytes']):>12} {mib(r['build_peak_bytes']):>11} {mib(r['execute_peak_bytes']):>10} "
              f"{slopes[0]:>8} {slopes[1]:>9} {r['ell']**2 * 8 / 2**20:>12,.0f}")
    print("slopes: log2(ratio) per doubling of ℓ, of the executor's median time and of build + executor peak memory")

if __name__ == "__main__":
    sys.exit(main())
