"""Vaswani et al.'s Table 1, derived: complexity per layer, sequential operations and maximum path length of
self-attention, recurrent, convolutional and restricted self-attention layers — each entry from an object
of this package, never typed in.

- **Complexity per layer** is the Θ of the layer's FLOPs (``matmul`` convention) with one width d for
  every input, output and state (``H·d_attn = H·d_mid = d`` for attention) and n positions: the exact
  formula is shown beside it.  Restricted self-attention is Algorithm 5 with every score-matrix term
  charged per edge of a sliding window (:func:`formal.graphs.analysis.sparse_attention_flops` and the
  window's exact edge count).
- **Sequential operations** is the Θ in n of the layer's derived depth (sequential lines): a recurrent
  layer's loop is sequential, attention's and convolution's are not.
- **Maximum path length** is measured on the layers' graphs at two sizes (:func:`formal.graphs.vaswani_table1`).

Where the derived entry differs from the paper's, it says more, not something else: self-attention is
Θ(n²·d + n·d²) — the paper's O(n²·d) leaves out the projections, which dominate when n < d.  The same
objects give the *cost parity* of a recurrent layer and a self-attention layer: the length n at which
their FLOPs are equal (an LSTM layer at n = 2d, a GRU layer at n = d).

References
----------
- A. Vaswani et al., "Attention is all you need", NeurIPS 2017, Table 1 and §4.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["Row", "PAPER", "rows", "parity", "report", "report_text", "SYMBOLS"]

#: Vaswani et al., Table 1: (complexity per layer, sequential operations, maximum path length).
PAPER = {
    "self-attention": ("O(n²·d)", "O(1)", "O(1)"),
    "recurrent": ("O(n·d²)", "O(n)", "O(n)"),
    "convolutional": ("O(k·n·d²)", "O(1)", "O(log_k(n))"),
    "self-attention (restricted)": ("O(r·n·d)", "O(1)", "O(n/r)"),
}


def _symbols():
    from ..core.symbols import dim
    return {name: dim(name) for name in ("n", "d", "w")}


#: The sizes the table speaks of: n positions, width d, kernel k, window w (keys on each side + 1).
SYMBOLS = ("n", "d", "k", "w")


@dataclass(frozen=True)
class Row:
    """One layer type: its derived entries beside the paper's."""

    layer: str
    source: str              # the object the entries come from
    flops: str               # the exact formula (matmul convention)
    complexity: str          # Θ of it in n, d (and k or w)
    sequential: str          # Θ of the derived depth in n
    path_lengths: dict       # n → measured maximum path length
    paper: tuple             # the paper's three entries


def _layers(cell: str):
    """(name, source, FLOPs formula, depth formula, growing variables) for each row, in n and d."""
    import sympy as sp

    from ..algorithms import get
    from ..algorithms.convolution import build_conv1d
    from ..core.symbols import by_name, d_attn, d_h, d_in, d_mid, d_out, d_x, d_z, ell, ell_x, ell_z, k
    from ..graphs import patterns
    from ..graphs.analysis import edge_count_regime, sparse_attention_flops
    s = _symbols()
    n, d, w = s["n"], s["d"], s["w"]
    H = by_name("H")
    attention = get("mhattention", bias=False)
    same = {d_x: d, d_z: d, d_out: d, d_attn: d / H, d_mid: d / H, ell_x: n, ell_z: n}
    flops = sp.expand(attention.cost().flops.xreplace(same))
    depth = attention.cost().depth.xreplace(same)
    window = patterns.sliding_window(64, 5, causal=False)             # the formula, valid for ℓ ≥ w
    edges, _, _ = edge_count_regime(window)
    _, sparse = sparse_attention_flops("matmul")
    restricted = sp.expand(sparse.xreplace({by_name("n_edges"): edges}).xreplace(
        {by_name("ell"): n, by_name("window"): w}).xreplace(same))
    recurrent = get("rnn_layer", cell=cell, bias="none")
    rec = {d_x: d, d_h: d, ell: n}
    conv = build_conv1d(padding="same", bias=False)
    con = {d_in: d, d_out: d, ell: n}
    return [
        ("self-attention", "mhattention (Algorithm 5)", flops, depth, (n, d)),
        ("recurrent", f"rnn_layer, cell = {cell}", sp.expand(recurrent.cost().flops.xreplace(rec)),
         recurrent.cost().depth.xreplace(rec), (n, d)),
        ("convolutional", "conv1d, padding 'same'", sp.expand(conv.cost().flops.xreplace(con)),
         conv.cost().depth.xreplace(con), (n, d, k)),
        ("self-attention (restricted)", "mhattention on a sliding window (2w − 1 keys per query)",
         restricted, depth, (n, d, w)),
    ]


def _theta(expr, variables, regime: str = "") -> str:
    """Θ of ``expr`` in ``variables``.  With a ``regime`` (the window within the sequence, w ≤ n), the
    negative terms — the window's clipped ends, each at most a positive term's size there — are left out,
    and the regime is said."""
    import sympy as sp

    from ..costs.orders import theta_text
    present = [v for v in variables if v in expr.free_symbols]
    if not present:
        return "Θ(1)"
    if regime:
        expr = sp.Add(*(t for t in sp.Add.make_args(sp.expand(expr)) if t.could_extract_minus_sign() is False))
        return f"{theta_text(expr, present, 'the layer')} for {regime}"
    return theta_text(expr, present, "the layer")


def rows(*, cell: str = "lstm", n: tuple = (64, 256), kernel: int = 3, radius: int = 4) -> list:
    """The four rows; path lengths measured at each size in ``n`` with a convolution of ``kernel`` (odd,
    ≥ 3) and a restricted window of ``radius`` keys on each side."""
    from ..core.symbols import text
    from ..graphs.analysis import vaswani_table1
    measured = {size: vaswani_table1(size, kernel=kernel, radius=radius) for size in n}
    paths = {"self-attention": 0, "recurrent": 1, "convolutional": 2, "self-attention (restricted)": 4}
    out = []
    for name, source, flops, depth, variables in _layers(cell):
        lengths = {size: measured[size][paths[name]]["max path length"] for size in n}
        if name == "convolutional":
            dilated = {size: measured[size][3]["max path length"] for size in n}
            lengths = {size: f"{lengths[size]} (dilated: {dilated[size]})" for size in n}
        regime = "w ≤ n" if name == "self-attention (restricted)" else ""
        out.append(Row(name, source, text(flops), _theta(flops, variables, regime), _theta(depth, variables[:1]),
                       lengths, PAPER[name]))
    return out


def parity() -> dict:
    """Cell → the sequence length n (in d) at which one recurrent layer and one self-attention layer cost
    the same FLOPs (``matmul``), or None when the recurrent layer is always cheaper."""
    import sympy as sp

    from ..core.symbols import text
    layers = {name: flops for name, _, flops, _, _ in _layers("lstm")}
    n = _symbols()["n"]
    out = {}
    for cell in ("rnn", "gru", "lstm"):
        recurrent = dict((name, flops) for name, _, flops, _, _ in _layers(cell))["recurrent"]
        roots = [r for r in sp.solve(sp.Eq(recurrent, layers["self-attention"]), n) if r.is_positive]
        out[cell] = text(roots[0]) if roots else None
    return out


def report(*, cell: str = "lstm", n: tuple = (64, 256), kernel: int = 3, radius: int = 4) -> dict:
    """The table and the parities as one JSON-ready object."""
    return {"rows": [asdict(r) for r in rows(cell=cell, n=n, kernel=kernel, radius=radius)],
            "parity": parity(), "cell": cell, "kernel": kernel, "radius": radius, "n": list(n)}


def report_text(r: dict) -> str:
    """The table as text: each derived entry above the paper's."""
    sizes = ", ".join(f"n = {n}" for n in r["n"])
    head = ("layer", "complexity per layer", "sequential operations", f"maximum path length ({sizes})")
    body = []
    for row in r["rows"]:
        paths = ", ".join(str(v) for v in row["path_lengths"].values())
        body.append((row["layer"], row["complexity"], row["sequential"], paths))
        body.append(("  Vaswani et al.", *row["paper"]))
    widths = [max(len(x[i]) for x in body + [head]) for i in range(4)]
    lines = [f"Vaswani et al. (2017), Table 1, derived from the objects (matmul FLOPs, one width d, n positions; "
             f"cell {r['cell']}, kernel k = {r['kernel']}, restricted radius {r['radius']})", ""]
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in body]
    lines += ["", "exact FLOPs of one layer:"]
    lines += [f"  {row['layer']:<28} {row['flops']}   ({row['source']})" for row in r["rows"]]
    lines += ["", "cost parity with a self-attention layer (equal FLOPs):"]
    for cell, n in r["parity"].items():
        lines.append(f"  {cell.upper():<5} layer: " + (f"at n = {n}" if n else "never: always cheaper"))
    return "\n".join(lines) + "\n"
