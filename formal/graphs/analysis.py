"""Graph-theoretic analysis of attention patterns: edge counts, FLOPs, receptive fields, path lengths.

The counts are here: each built-in pattern's symbolic edge count, density, in-degrees, and the FLOPs of
Algorithm 5 restricted to a pattern.  So is the one choice of how stacks of layers are analysed —
receptive fields, layers to full coverage, maximum path length: one built-in pattern (or its
:class:`~formal.graphs.structure.Structure`) answers from its structure in closed form
(:mod:`formal.graphs.structure`), anything else from the bit sets of its edges (:mod:`formal.graphs.layered`).

Examples
--------
>>> from formal.graphs import patterns
>>> p = patterns.sliding_window(16, 4)
>>> p.n_edges, round(density(p), 3)
(58, 0.227)
>>> receptive_field_sizes(p, 3)[:, -1].tolist()   # the last position sees 4, 7, 10 inputs
[4, 7, 10]
>>> layers_to_coverage(p), max_path_length(p)
(5, 5)
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.symbols import by_name, ell_x, ell_z
from ..costs.conventions import check_convention
from ..errors import ConfigError
from . import layered
from .edges import integer
from .layered import receptive_field, receptive_field_sizes
from .pattern import Pattern, as_pattern
from .patterns import PATTERNS
from .structure import Structure, of

__all__ = ["symbolic_edge_count", "edge_count_regime", "edge_count", "density", "in_degree", "attention_flops",
           "receptive_field", "receptive_field_sizes", "receptive_field_spread", "layers_to_coverage",
           "max_path_length", "summary", "vaswani_table1", "sparse_attention_flops"]


# --------------------------------------------------------------------------------------------- counting
def _counted(pattern):
    """A :class:`~formal.graphs.structure.Structure` as it is (its counts need no edges), anything else as a
    pattern."""
    return pattern if isinstance(pattern, Structure) else as_pattern(pattern)


def symbolic_edge_count(pattern):
    """``(expr, values)``: the built-in pattern's edge count as a sympy expression in ℓ (ℓ_z, ℓ_x) and its
    parameters, and the values those symbols have in ``pattern``; ``expr.xreplace(values) == |E|``.

    Raises ConfigError for a pattern that is not built-in (a mask or a user graph has no formula).
    """
    pattern = _counted(pattern)
    kind = PATTERNS.get(pattern.name)
    if kind is None:
        raise ConfigError(f"a {pattern.name!r} pattern has no symbolic edge count (only the built-in patterns: "
                          f"{', '.join(PATTERNS)})")
    sizes = {"ell": pattern.ell_x} if pattern.self_attention else {"ell_z": pattern.ell_z, "ell_x": pattern.ell_x}
    names = {**{s: s for s in sizes}, **kind.symbols}
    values = {**sizes, **pattern.params}
    # Symbols are positive integers, so a parameter that is 0 (no window, no global positions) stays a number.
    symbolic = {k for k, v in values.items() if k in names and v != 0}
    args = {k: by_name(names[k]) if k in symbolic else sp.Integer(v) if k in names else v for k, v in values.items()}
    bindings = {by_name(names[k]): sp.Integer(values[k]) for k in values if k in symbolic}  # in the sizes' order
    return sp.sympify(kind.count(**args)), bindings


def edge_count_regime(pattern):
    """``(expr, conditions, holds)``: the edge count without ``Max`` terms — each ``Max(0, x)`` taken as ``x`` —
    valid where every ``x`` in ``conditions`` is ≥ 0 (the usual regime, ℓ at least the pattern's span);
    ``holds`` says whether ``pattern`` is in it."""
    exact, values = symbolic_edge_count(pattern)
    conditions = []

    def drop_max(*args):
        rest = [a for a in args if a != 0]
        if len(args) == 2 and len(rest) == 1:
            conditions.append(rest[0])
            return rest[0]
        return sp.Max(*args)

    expr = sp.expand(exact.replace(sp.Max, drop_max))
    conditions = list(dict.fromkeys(conditions))
    holds = all(c.xreplace(values) >= 0 for c in conditions)
    return expr, conditions, holds


def edge_count(pattern) -> int:
    """``|E|`` of a pattern, structure, networkx graph or mask."""
    return _counted(pattern).n_edges


def density(pattern) -> float:
    """``|E|`` / (ℓ_z·ℓ_x), the float nearest the exact fraction."""
    return _counted(pattern).density


def in_degree(pattern) -> np.ndarray:
    """The number of keys each query attends to."""
    return as_pattern(pattern).in_degree


def sparse_attention_flops(convention: str = "matmul") -> tuple:
    """``(dense, sparse)``: the FLOPs of multi-head attention (Algorithm 5) as derived, and the same with every
    term that counts entries of the ℓ_z×ℓ_x score matrix charged per edge instead — a formula in the edge
    count ``|E|`` (the symbol ``n_edges``)."""
    from ..algorithms import mhattention
    flops = sp.expand(mhattention.cost(check_convention(convention)).flops)
    per_entry = sp.Poly(flops, ell_x, ell_z).coeff_monomial(ell_x * ell_z)
    return flops, sp.expand(flops - per_entry * ell_x * ell_z + per_entry * by_name("n_edges"))


def attention_flops(pattern, sizes: dict, *, convention: str = "matmul") -> dict:
    """FLOPs of multi-head attention (Algorithm 5) restricted to ``pattern`` against dense attention of the
    same size, derived from the algorithm object: every term of its cost that counts entries of the
    ℓ_z×ℓ_x score matrix is charged per edge instead.

    ``sizes`` gives the widths (``H``, ``d_attn``, ``d_mid``, ``d_x``, ``d_z``, ``d_out``); the lengths come
    from the pattern.  Returns ``{"dense", "sparse", "ratio", "sparse_formula"}`` (the formula in ``|E|``): the
    counts exact ints, the ratio the float nearest their exact quotient.
    """
    pattern = _counted(pattern)
    flops, sparse = sparse_attention_flops(convention)
    edges = by_name("n_edges")
    values = {by_name(k): sp.Integer(v) for k, v in sizes.items()}
    values.update({ell_x: sp.Integer(pattern.ell_x), ell_z: sp.Integer(pattern.ell_z),
                   edges: sp.Integer(pattern.n_edges)})
    missing = (flops.free_symbols | sparse.free_symbols) - set(values)
    if missing:
        raise ConfigError(f"attention FLOPs need the sizes {', '.join(sorted(map(str, missing)))}")
    dense_n, sparse_n = int(flops.xreplace(values)), int(sparse.xreplace(values))
    return {"dense": dense_n, "sparse": sparse_n, "ratio": sparse_n / dense_n if dense_n else 0.0,
            "sparse_formula": sparse}


# ------------------------------------------------------------------------------------- stacks of layers
def _structure(patterns):
    """The structure one built-in pattern answers from (:mod:`formal.graphs.structure`); None for anything
    else (a mask, a user graph, random keys, a cycle of several patterns), which the bit sets answer."""
    if isinstance(patterns, Structure):
        return patterns
    return of(patterns) if isinstance(patterns, Pattern) else None


def summary(patterns, layers: int, *, residual: bool = True, coverage: bool = True, progress=None):
    """:func:`formal.graphs.layered.summary` — receptive-field spreads for layers 1..``layers``, and the
    layers to full coverage and the maximum path length — from the structure of one built-in pattern, else
    from the bit sets (``progress``: called with each layer they walk)."""
    layers = integer("layers", layers, 0)
    structure = _structure(patterns)
    if structure is not None:
        return structure.summary(layers, residual=residual, coverage=coverage)
    return layered.summary(patterns, layers, residual=residual, coverage=coverage, progress=progress)


def receptive_field_spread(patterns, layers: int, *, residual: bool = True):
    """``(min, mean, max)`` of the receptive-field sizes after each of layers 1..L (:func:`summary`)."""
    return summary(patterns, layers, residual=residual, coverage=False).spread


def layers_to_coverage(patterns, *, residual: bool = True, progress=None):
    """:func:`formal.graphs.layered.layers_to_coverage`, from the structure of one built-in pattern where it
    has one: the fewest layers after which every position depends on every position it may, or None."""
    structure = _structure(patterns)
    if structure is not None:
        return structure.layers_to_coverage(residual=residual)
    return layered.layers_to_coverage(patterns, residual=residual, progress=progress)


def max_path_length(patterns, *, progress=None) -> int:
    """:func:`formal.graphs.layered.max_path_length`, from the structure of one built-in pattern where it
    has one: the most layers any connected pair needs (Vaswani et al. 2017, Table 1)."""
    structure = _structure(patterns)
    if structure is not None:
        return structure.max_path_length()
    return layered.max_path_length(patterns, progress=progress)


def vaswani_table1(n: int, *, kernel: int = 5, radius: int = 4) -> list:
    """Vaswani et al.'s Table 1, "maximum path length" column, measured on graphs of ``n`` positions.

    Rows: self-attention (the full graph), recurrent (a chain: state ``t`` reads state ``t − 1`` and input
    ``t``), convolutional (a stack of width-``kernel`` convolutions, contiguous: O(n/k); dilated by
    ``kernel^l`` at layer ``l``: O(log_k n)), and self-attention restricted to a neighbourhood of radius
    ``radius`` (O(n/r)).  Each row gives the measured length and the table's claim.
    """
    from . import patterns as P
    if kernel < 3 or kernel % 2 == 0:
        raise ConfigError(f"kernel = {kernel} must be odd and at least 3 (a centred convolution)")
    levels = 1
    while (kernel**levels - 1) // 2 < n - 1:                              # reach ±(k^L − 1)/2 after L layers
        levels += 1
    dilated_stack = [P.dilated(n, (kernel + 1) // 2, kernel**l, causal=False) for l in range(levels)]
    rows = [("self-attention", P.full(n), "O(1)"),
            ("recurrent", P.sliding_window(n, 2), "O(n)"),
            (f"convolutional, k = {kernel}", P.sliding_window(n, (kernel + 1) // 2, causal=False), "O(n/k)"),
            (f"convolutional, k = {kernel}, dilated", dilated_stack, "O(log_k(n))"),
            (f"self-attention (restricted), r = {radius}", P.sliding_window(n, radius + 1, causal=False), "O(n/r)")]
    return [{"layer type": name, "max path length": max_path_length(graph), "Vaswani et al.": claim}
            for name, graph, claim in rows]
