"""Attention patterns as graphs: edge counts in closed form, receptive fields of windows, and the maximum path
lengths of Vaswani et al.'s Table 1 — each checked against the graph the pattern's builder makes, walked as
plain edges (its structure stripped), on every case up to a bound (the builders take concrete sizes only), and
the edge counts' formulas proved by sympy where they are sums."""

from __future__ import annotations

from .theorem import Outcome, Theorem

MAX_ELL = 40  # exhaustive checks: every ℓ up to this


def _causal_edges(perturbed):
    """The built graphs against the stated count (the twin's ℓ²/2), every ℓ ≤ MAX_ELL; then Σ_t t against the
    pattern's formula, by sympy."""
    import sympy as sp

    from formal.core.symbols import by_name
    from formal.graphs import analysis, patterns
    ell, t = by_name("ell"), sp.Symbol("t", integer=True, positive=True)
    claimed = ell**2 / 2 if perturbed else ell * (ell + 1) / 2
    for n in range(1, MAX_ELL + 1):
        built = patterns.causal(n).n_edges
        if built != claimed.subs(ell, n):
            return Outcome(False, f"ℓ = {n}: the built graph has {built} edges, the closed form {claimed.subs(ell, n)}")
    summed = sp.summation(t, (t, 1, ell))                      # query t sees keys 1 … t
    formula, _ = analysis.symbolic_edge_count(patterns.causal(3))
    if sp.simplify(formula - summed) != 0 or sp.simplify(summed - claimed) != 0:
        return Outcome.undecided(f"the pattern's formula {formula}, Σ_t t = {sp.factor(summed)} and the closed form "
                                 f"{claimed} disagree, though the graphs for ℓ ≤ {MAX_ELL} do not")
    return Outcome(True, f"the built graph has ℓ(ℓ+1)/2 edges for every ℓ ≤ {MAX_ELL}; Σ_t t = ℓ(ℓ+1)/2 = the "
                         "pattern's formula (sympy)")


def _window_edges(perturbed):
    """The built graphs against w·ℓ − w(w − 1)/2 (the twin's at w + 1), every w ≤ ℓ ≤ MAX_ELL, w ≤ 12; then the
    pattern's formula in the regime ℓ ≥ w against the sum over queries, by sympy."""
    import sympy as sp

    from formal.core.symbols import by_name
    from formal.graphs import analysis, patterns
    ell, w, t = by_name("ell"), by_name("window"), sp.Symbol("t", integer=True, positive=True)
    stated = w * ell - w * (w - 1) / 2
    for width in range(1, 13):
        for n in range(width, MAX_ELL + 1):
            claimed = stated.subs({ell: n, w: width + (1 if perturbed else 0)})
            built = patterns.sliding_window(n, width).n_edges
            if built != claimed:
                return Outcome(False, f"ℓ = {n}, w = {width}: the built graph has {built} edges, the closed form "
                                      f"{'at w + 1 ' if perturbed else ''}gives {claimed}")
    # ℓ ≥ w: the first w queries see 1 … w keys, the other ℓ − w see w
    summed = sp.summation(t, (t, 1, w)) + (ell - w) * w
    formula, _ = analysis.symbolic_edge_count(patterns.sliding_window(6, 3))
    regime = formula.subs(sp.Max(0, ell - w), ell - w)
    if sp.simplify(regime - summed) != 0 or sp.simplify(summed - stated) != 0:
        return Outcome.undecided(f"for ℓ ≥ w the pattern's formula is {regime}, the sum {summed}, the closed form "
                                 f"{stated}: they disagree, though the graphs checked do not")
    return Outcome(True, f"the built graph has w·ℓ − w(w − 1)/2 edges for every w ≤ ℓ ≤ {MAX_ELL}, w ≤ 12; for "
                         "ℓ ≥ w the pattern's formula is Σ_t≤w t + (ℓ − w)·w = the closed form (sympy)")


def _formula_edges(perturbed):
    """The pattern kinds' symbolic edge counts (formal.graphs.analysis) against their built graphs."""
    from formal.graphs import analysis, patterns
    cases = [("dilated", lambda n, a: patterns.dilated(n, a, 2), "window"),
             ("dilated, bidirectional", lambda n, a: patterns.dilated(n, a, 3, causal=False), "window"),
             ("strided", lambda n, a: patterns.strided(n, a), "stride"),
             ("sliding window, bidirectional", lambda n, a: patterns.sliding_window(n, a, causal=False), "window")]
    for name, build, arg in cases:
        for n in range(1, MAX_ELL + 1):
            for a in range(1, 9):
                p = build(n, a)
                formula, values = analysis.symbolic_edge_count(p)
                if perturbed:
                    values = {k: v + (1 if str(k) == arg else 0) for k, v in values.items()}
                claimed = formula.subs(values)
                if claimed != p.n_edges:
                    return Outcome(False, f"{name}, ℓ = {n}, {arg} = {a}: {p.n_edges} edges, the formula"
                                          f"{' at ' + arg + ' + 1' if perturbed else ''} gives {claimed}")
    return Outcome(True, f"dilated (both directions), strided and bidirectional windows: every ℓ ≤ {MAX_ELL}, "
                         "parameter ≤ 8")


def _swin_edges(perturbed):
    from formal.graphs import patterns
    for h in range(1, 13):
        for wd in range(1, 13):
            for m in range(1, 7):
                if h % m or wd % m:
                    continue
                built = patterns.swin(h, wd, m).n_edges
                side = m + 1 if perturbed else m
                if built != h * wd * side**2:
                    return Outcome(False, f"{h}×{wd} grid, M = {m}: {built} edges, not {h}·{wd}·{side}²")
    return Outcome(True, "every grid up to 12×12 and M ≤ 6 dividing both sides")


def _receptive_field(perturbed):
    import numpy as np

    from formal.graphs import layered, patterns
    from formal.graphs.pattern import plain
    for n in range(2, 25):
        for w in range(2, 6):
            p = plain(patterns.sliding_window(n, w))
            for layers in range(1, 5):
                sizes = layered.receptive_field_sizes(p, layers)[-1]
                reach = layers * w if perturbed else layers * (w - 1) + 1
                want = np.minimum(np.arange(1, n + 1), reach)
                if not np.array_equal(sizes, want):
                    t = int(np.flatnonzero(sizes != want)[0])
                    return Outcome(False, f"ℓ = {n}, w = {w}, {layers} layers: position {t} reaches {sizes[t]}, "
                                          f"the closed form says {want[t]}")
    return Outcome(True, "every ℓ ≤ 24, w ≤ 5, up to 4 layers, the bit-set walk of the plain edges")


def _path_lengths(perturbed):
    from formal.graphs import layered, patterns
    from formal.graphs.pattern import plain
    for n in range(2, MAX_ELL + 1):
        rows = {"self-attention": (patterns.full(n), 1),
                "recurrent (a chain)": (patterns.sliding_window(n, 2), n if perturbed else n - 1)}
        for k in (3, 5):  # a centred convolution of width k: (k − 1)/2 positions each way per layer
            half = (k - 1) // 2
            rows[f"convolutional, k = {k}"] = (patterns.sliding_window(n, half + 1, causal=False),
                                               -(-(n - 1) // half))
        for name, (p, want) in rows.items():
            got = layered.max_path_length(plain(p))
            if got != want:
                return Outcome(False, f"{name}, n = {n}: the maximum path length is {got}, the closed form {want}")
    return Outcome(True, f"1, n − 1 and ⌈(n − 1)/((k − 1)/2)⌉ for every n ≤ {MAX_ELL}")


THEOREMS = [
    Theorem("causal-edge-count",
            "A causal pattern over ℓ tokens has ℓ(ℓ + 1)/2 edges.",
            r"|E_{\text{causal}}| = \sum_{t=1}^{\ell} t = \tfrac{\ell(\ell+1)}{2}", ("attention",), "exhaustive",
            f"the built graph (formal.graphs.patterns.causal) for every ℓ ≤ {MAX_ELL}; the builder makes its edges "
            "from arrays of concrete positions, so no symbolic ℓ reaches it — the pattern's formula is proved equal "
            "to Σ_t t for all ℓ by sympy, the graphs only up to the bound",
            "A causal pattern has ℓ²/2 edges.", _causal_edges),
    Theorem("sliding-window-edge-count",
            "A causal window of w keys over ℓ ≥ w tokens has w·ℓ − w(w − 1)/2 edges.",
            r"|E| = \sum_{t=1}^{w} t + (\ell - w)\,w", ("attention",), "exhaustive",
            f"the built graph (formal.graphs.patterns.sliding_window) for every w ≤ ℓ ≤ {MAX_ELL}, w ≤ 12; the "
            "builder makes its edges from arrays of concrete positions, so no symbolic ℓ reaches it — the "
            "pattern's formula for ℓ ≥ w is proved equal to Σ_t≤w t + (ℓ − w)·w by sympy, the graphs only up to "
            "the bound",
            "The count is the closed form at w + 1.", _window_edges),
    Theorem("sparse-edge-counts",
            "The edge counts of dilated, strided and bidirectional window patterns equal their closed forms "
            "(formal.graphs.analysis.symbolic_edge_count).",
            r"|E_{\text{pattern}}(\ell, \cdot)| = \text{its closed form}", ("attention",), "exhaustive",
            f"every ℓ ≤ {MAX_ELL} and window or stride ≤ 8, against the built graphs",
            "The counts are the closed forms at window (stride) + 1.", _formula_edges),
    Theorem("swin-edge-count",
            "Window attention with M×M windows over an h×w grid (M dividing both sides) has h·w·M² edges: linear "
            "in hw for fixed M.",
            r"|E_{\text{W-MSA}}| = h\,w\,M^2", ("attention",), "exhaustive",
            "every grid up to 12×12 and every M ≤ 6 dividing both sides", "It has h·w·(M + 1)² edges.",
            _swin_edges),
    Theorem("window-receptive-field",
            "After L layers of a causal window of w keys, position t (0-based) reaches min(t + 1, L·(w − 1) + 1) "
            "positions.",
            r"|\mathrm{RF}_L(t)| = \min(t + 1,\ L(w-1) + 1)", ("attention",), "exhaustive",
            "every ℓ ≤ 24, w ≤ 5, L ≤ 4: the bit-set walk of the plain edges",
            "It reaches min(t + 1, L·w) positions.", _receptive_field),
    Theorem("table1-path-lengths",
            "Vaswani et al.'s Table 1, maximum path length: 1 for self-attention, n − 1 for a recurrence, "
            "⌈(n − 1)/((k − 1)/2)⌉ for a stack of contiguous convolutions of width k.",
            r"1,\quad n - 1,\quad \lceil (n-1) / \tfrac{k-1}{2} \rceil", ("attention",), "exhaustive",
            f"every n ≤ {MAX_ELL}, k ∈ {{3, 5}}: the bit-set walk of the plain edges",
            "A recurrence's maximum path length is n.", _path_lengths),
]
