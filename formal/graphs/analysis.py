"""Graph-theoretic analysis of attention patterns: edge counts, receptive fields, path lengths.

A stack of attention layers is a layered graph: position ``q`` after layer ``l`` depends on position ``k``
after layer ``l − 1`` when ``k → q`` is an edge of layer ``l``'s pattern, and — through the residual
connection ``X ← X + Attention(X)`` — on itself.  The **receptive field** of ``q`` after ``L`` layers is the
set of input positions it depends on:

.. math:: R_L(q) = \\{k : \\text{a path } k \\to \\dots \\to q \\text{ of at most } L \\text{ edges}\\}
    \\quad\\text{(with the residual path; exactly } L \\text{ edges without it).}

The **maximum path length** ([Vaswani2017]_, Table 1) is the most layers any pair needs: the largest
shortest-path distance over the pairs ``k, q`` that are connected at all.  Receptive fields are computed as
bit sets, one row of ``⌈ℓ/64⌉`` words per position, propagated along the edge arrays.

Examples
--------
>>> from formal.graphs import patterns
>>> p = patterns.sliding_window(16, 4)
>>> receptive_field_sizes(p, 3)[:, -1].tolist()   # the last position sees 4, 7, 10 inputs
[4, 7, 10]
>>> layers_to_coverage(p), max_path_length(p)
(5, 5)
>>> layers_to_coverage(patterns.dilated(16, 4, 2)) is None   # two classes that never meet
True

References
----------
.. [Vaswani2017] Vaswani et al. "Attention Is All You Need", NeurIPS 2017, Table 1.
"""

from __future__ import annotations

import hashlib

import numpy as np
import sympy as sp

from ..cost import check_convention
from ..errors import ConfigError
from ..symbols import by_name, ell_x, ell_z
from .edges import integer
from .pattern import Pattern, as_pattern
from .patterns import PATTERNS

__all__ = ["symbolic_edge_count", "edge_count_regime", "edge_count", "density", "in_degree", "attention_flops",
           "receptive_field", "receptive_field_sizes", "layers_to_coverage", "max_path_length", "vaswani_table1"]

WORDS = 64          # bits per word of a bit set
EDGE_BUDGET = 1 << 16  # edges gathered at once while propagating by segments
TABLE_BUDGET = 1 << 22  # entries of a table of runs of keys; more fragmented patterns propagate by segments


# --------------------------------------------------------------------------------------------- counting
def symbolic_edge_count(pattern):
    """``(expr, values)``: the built-in pattern's edge count as a sympy expression in ℓ (ℓ_z, ℓ_x) and its
    parameters, and the values those symbols have in ``pattern``; ``expr.xreplace(values) == |E|``.

    Raises ConfigError for a pattern that is not built-in (a mask or a user graph has no formula).
    """
    pattern = as_pattern(pattern)
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
    bindings = {by_name(names[k]): sp.Integer(values[k]) for k in symbolic}
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
    """``|E|`` of a pattern, networkx graph or mask."""
    return as_pattern(pattern).n_edges


def density(pattern) -> float:
    """``|E|`` / (ℓ_z·ℓ_x)."""
    return as_pattern(pattern).density


def in_degree(pattern) -> np.ndarray:
    """The number of keys each query attends to."""
    return as_pattern(pattern).in_degree


def attention_flops(pattern, sizes: dict, *, convention: str = "matmul") -> dict:
    """FLOPs of multi-head attention (Algorithm 5) restricted to ``pattern`` against dense attention of the
    same size, derived from the algorithm object: every term of its cost that counts entries of the
    ℓ_z×ℓ_x score matrix is charged per edge instead.

    ``sizes`` gives the widths (``H``, ``d_attn``, ``d_mid``, ``d_x``, ``d_z``, ``d_out``); the lengths come
    from the pattern.  Returns ``{"dense", "sparse", "ratio", "sparse_formula"}`` (the formula in ``|E|``).
    """
    from ..algorithms import mhattention
    pattern = as_pattern(pattern)
    flops = sp.expand(mhattention.cost(check_convention(convention)).flops)
    per_entry = sp.Poly(flops, ell_x, ell_z).coeff_monomial(ell_x * ell_z)
    edges = by_name("n_edges")
    sparse = sp.expand(flops - per_entry * ell_x * ell_z + per_entry * edges)
    values = {by_name(k): sp.Integer(v) for k, v in sizes.items()}
    values.update({ell_x: sp.Integer(pattern.ell_x), ell_z: sp.Integer(pattern.ell_z),
                   edges: sp.Integer(pattern.n_edges)})
    missing = (flops.free_symbols | sparse.free_symbols) - set(values)
    if missing:
        raise ConfigError(f"attention FLOPs need the sizes {', '.join(sorted(map(str, missing)))}")
    dense_n, sparse_n = int(flops.xreplace(values)), int(sparse.xreplace(values))
    return {"dense": dense_n, "sparse": sparse_n, "ratio": sparse_n / dense_n if dense_n else 0.0,
            "sparse_formula": sparse}


# ------------------------------------------------------------------------------------- bit-set layers
def _layers(patterns) -> list:
    """One pattern, or a sequence used cyclically (layer l has ``patterns[l % len(patterns)]``)."""
    items = [patterns] if not isinstance(patterns, (list, tuple)) else list(patterns)
    if not items:
        raise ConfigError("give at least one pattern")
    items = [as_pattern(p) for p in items]
    for p in items:
        if not p.self_attention:
            raise ConfigError(f"{p!r} is cross-attention: its queries never become keys, so stacking layers does "
                              "not propagate along it (its receptive field is its in-neighbourhood)")
        if p.ell_x != items[0].ell_x:
            raise ConfigError(f"the layers' patterns have different lengths: {items[0].ell_x} and {p.ell_x}")
    return items


class _Stack:
    """The layers' patterns, cycled, each with its neighbour table: ``stack.step(bits, l, residual)``."""

    def __init__(self, patterns):
        self.patterns = _layers(patterns)
        self.tables = [_runs(p) for p in self.patterns]
        self.ell, self.period = self.patterns[0].ell_x, len(self.patterns)

    def step(self, bits, layer, residual):
        i = layer % self.period
        return _step(bits, self.patterns[i], residual, self.tables[i])


def _identity(ell) -> np.ndarray:
    bits = np.zeros((ell, -(-ell // WORDS)), dtype=np.uint64)
    t = np.arange(ell)
    bits[t, t // WORDS] = np.left_shift(np.uint64(1), (t % WORDS).astype(np.uint64))
    return bits


def _runs(p: Pattern):
    """Each query's keys as maximal runs of consecutive positions, in a table ``(starts, stops)`` of shape
    (ℓ_x, most runs of a query), padded with empty runs; None when it would exceed TABLE_BUDGET entries
    (then propagation goes by segments of edges).  A window is one run per query, a full or causal
    pattern too, a random graph about one per edge."""
    if not p.n_edges:
        return np.zeros((p.ell_x, 0), np.int64), np.zeros((p.ell_x, 0), np.int64)
    first = np.ones(p.n_edges, dtype=bool)
    first[1:] = (p.keys[1:] != p.keys[:-1] + 1) | (p.queries[1:] != p.queries[:-1])
    begin = np.flatnonzero(first)
    end = np.append(begin[1:], p.n_edges)
    owner = p.queries[begin]
    per_query = np.bincount(owner, minlength=p.ell_x)
    if per_query.max() * p.ell_x > TABLE_BUDGET:
        return None
    slot = np.arange(begin.size) - (np.cumsum(per_query) - per_query)[owner]
    starts = np.zeros((p.ell_x, per_query.max()), dtype=np.int64)
    stops = np.zeros_like(starts)
    starts[owner, slot], stops[owner, slot] = p.keys[begin], p.keys[end - 1] + 1
    return starts, stops


def _range_or_table(bits, longest: int) -> np.ndarray:
    """Sparse table of ORs: ``table[j, i]`` is the OR of rows ``i … i + 2^j − 1`` (zeros past the end), so
    the OR of any run ``[a, b)`` is ``table[j, a] | table[j, b − 2^j]`` with ``2^j ≤ b − a < 2^{j+1}``; levels
    up to the ``longest`` run only."""
    levels = [bits]
    while 2 ** len(levels) <= longest:
        prev, half = levels[-1], 2 ** (len(levels) - 1)
        nxt = prev.copy()
        nxt[:-half] |= prev[half:]
        levels.append(nxt)
    return np.stack(levels)


def _step(bits, p: Pattern, residual: bool, runs=None) -> np.ndarray:
    """One layer: row q becomes the OR of the rows of its keys (and of itself, with the residual path)."""
    out = bits.copy() if residual else np.zeros_like(bits)
    if runs is not None:                                                  # two lookups per run of keys
        starts, stops = runs
        table = _range_or_table(bits, int((stops - starts).max(initial=0)))
        for a, b in zip(starts.T, stops.T):
            rows = np.flatnonzero(b > a)
            a, b = a[rows], b[rows]
            j = np.floor(np.log2(b - a)).astype(np.int64)                # 2^j ≤ run length < 2^(j+1)
            out[rows] |= table[j, a] | table[j, b - 2**j]
        return out
    degree = p.in_degree
    for q0, q1 in p.chunks(max(1, EDGE_BUDGET * 8 // bits.shape[1])):
        e0, e1 = p.indptr[q0], p.indptr[q1]
        if e0 == e1:
            continue
        rows = np.flatnonzero(degree[q0:q1]) + q0
        gathered = bits[p.keys[e0:e1]]                                     # (edges, words)
        out[rows] |= np.bitwise_or.reduceat(gathered, p.indptr[rows] - e0, axis=0)
    return out


def _popcount(bits) -> np.ndarray:
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(bits).sum(axis=1, dtype=np.int64)
    return np.unpackbits(bits.astype("<u8").view(np.uint8), axis=1).sum(axis=1, dtype=np.int64)


def _to_bool(bits, ell) -> np.ndarray:
    unpacked = np.unpackbits(bits.astype("<u8").view(np.uint8), axis=1, bitorder="little")[:, :ell]
    return unpacked.astype(bool).T                                         # [k, q], as a mask


def _target(layers) -> np.ndarray:
    """What full coverage means: every earlier-or-equal position for a causal stack, every position otherwise."""
    ell = layers[0].ell_x
    if all(p.is_causal for p in layers):
        return np.tril(np.ones((ell, ell), dtype=bool))                    # row q: keys 0..q
    return np.ones((ell, ell), dtype=bool)


def _pack(rows_bool) -> np.ndarray:
    ell = rows_bool.shape[1]
    padded = np.zeros((rows_bool.shape[0], -(-ell // WORDS) * WORDS), dtype=bool)
    padded[:, :ell] = rows_bool
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").astype(np.uint64)


def receptive_field(patterns, layers: int, *, residual: bool = True) -> np.ndarray:
    """``R[k, q]``: whether position ``q`` after ``layers`` layers depends on input position ``k`` (a mask)."""
    stack = _Stack(patterns)
    bits = _identity(stack.ell)
    for l in range(integer("layers", layers, 0)):
        bits = stack.step(bits, l, residual)
    return _to_bool(bits, stack.ell)


def receptive_field_sizes(patterns, layers: int, *, residual: bool = True) -> np.ndarray:
    """``(layers, ℓ)`` array: the receptive-field size of every position after each of layers 1..L."""
    stack = _Stack(patterns)
    bits, sizes = _identity(stack.ell), []
    for l in range(integer("layers", layers, 0)):
        bits = stack.step(bits, l, residual)
        sizes.append(_popcount(bits))
    return np.array(sizes, dtype=np.int64).reshape(len(sizes), stack.ell)


def layers_to_coverage(patterns, *, residual: bool = True, progress=None):
    """The fewest layers after which every position depends on every position it may — every position, or
    every one at or before it when all layers are causal — or ``None`` when no depth achieves it (the
    positions split into classes that never exchange information, e.g. a purely dilated window).

    With the residual path and a finite answer, this is also :func:`max_path_length` (every pair that is
    connected at all is one it may reach).  ``progress``, if given, is called with each layer number.
    """
    stack = _Stack(patterns)
    target = _pack(_target(stack.patterns))
    bits, seen, quiet, l = _identity(stack.ell), set(), 0, 0
    while True:
        if np.array_equal(bits & target, target):
            return l
        if residual:
            # Receptive fields only grow: a whole period without change is a fixed point.
            if quiet == stack.period:
                return None
        else:
            state = (l % stack.period, hashlib.blake2b(bits.tobytes(), digest_size=16).digest())
            if state in seen:
                return None                                               # the sequence of states cycles
            seen.add(state)
        new = stack.step(bits, l, residual)
        quiet = quiet + 1 if residual and np.array_equal(new, bits) else 0
        bits, l = new, l + 1
        if progress is not None:
            progress(l)


def max_path_length(patterns, *, progress=None) -> int:
    """The largest number of layers (with the residual path) any connected pair ``k → q`` needs: the maximum
    over such pairs of their shortest-path distance (Vaswani et al. 2017, Table 1).  ``progress``, if
    given, is called with each layer number."""
    stack = _Stack(patterns)
    bits, l, last_change, quiet = _identity(stack.ell), 0, 0, 0
    while quiet < stack.period:
        new = stack.step(bits, l, residual=True)
        l += 1
        if progress is not None:
            progress(l)
        if np.array_equal(new, bits):
            quiet += 1
        else:
            quiet, last_change, bits = 0, l, new
    return last_change


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
