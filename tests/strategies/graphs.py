"""Hypothesis strategies for attention graphs: random masks and graphs, and every built-in pattern with
parameters drawn around its edge cases (windows wider than the sequence, no global positions, ...).

The oracles here are written by hand from the papers' definitions — one predicate per pattern on the
position grid — never read from formal.graphs.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from hypothesis import strategies as st

from formal.graphs import patterns as P

LENGTH = st.integers(0, 24)
SEED = st.integers(0, 2**32 - 1)


@st.composite
def masks(draw, *, square=None, min_len=0, max_len=9):
    """A random 0/1 mask ``ℓ_z×ℓ_x`` (square when asked), some columns empty."""
    ell_x = draw(st.integers(min_len, max_len))
    ell_z = ell_x if square else draw(st.integers(min_len, max_len))
    rng = np.random.default_rng(draw(SEED))
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0]))
    return rng.random((ell_z, ell_x)) < density


@st.composite
def digraphs(draw, *, max_len=9, loops=True):
    """A random DiGraph on nodes 0..ℓ−1 (a GNN's adjacency), with or without self-loops."""
    ell = draw(st.integers(1, max_len))
    m = draw(masks(square=True, min_len=ell, max_len=ell))
    if not loops:
        np.fill_diagonal(m, False)
    G = nx.DiGraph()
    G.add_nodes_from(range(ell))
    G.add_edges_from(zip(*np.nonzero(m)))
    return G


def grid(ell):
    k, q = np.meshgrid(np.arange(ell), np.arange(ell), indexing="ij")  # [k, q], the mask's layout
    return k, q


def _sliding(a):
    k, q = grid(a["ell"])
    return (q - a["window"] < k) & (k <= q) if a["causal"] else np.abs(q - k) < a["window"]


def _dilated(a):
    k, q = grid(a["ell"])
    d, w = a["dilation"], a["window"]
    gap = (q - k) if a["causal"] else np.abs(q - k)
    return (gap >= 0) & (gap % d == 0) & (gap // d < w)


def _global_local(a):
    k, q = grid(a["ell"])
    g = a["n_global"]
    local = (q - a["window"] < k) & (k <= q) if a["causal"] else np.abs(q - k) < a["window"]
    any_global = (k < g) | (q < g)
    return (local | any_global) & (k <= q) if a["causal"] else local | any_global


def _strided(a):
    k, q, s = *grid(a["ell"]), a["stride"]
    local, every = (k <= q) & (q - k <= s), (k <= q) & ((q - k) % s == 0)  # Child et al. (2019), §4.2
    return {"local": local, "stride": every, "both": local | every}[a["part"]]


def _fixed(a):
    k, q, s, c = *grid(a["ell"]), a["stride"], a["summary"]
    block, summary = (k <= q) & (k // s == q // s), (k <= q) & (k % s >= s - c)
    return {"local": block, "summary": summary, "both": block | summary}[a["part"]]


def _swin(a):
    """Swin's own procedure: roll the grid by −σ, cut M×M windows, and keep pairs from the same window
    whose original rows and columns were in the same region (the attention mask of shifted windows)."""
    h, w, M, s = a["height"], a["width"], a["window"], a.get("shift", 0)
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    r, c = (rows - s) % h, (cols - s) % w                                 # where each token lands after the roll
    window = (r // M) * (w // M) + c // M
    if s:
        # Swin's mask: in rolled coordinates, regions are split at −M and −s on each axis.
        def region(x, n):
            return np.where(x < n - M, 0, np.where(x < n - s, 1, 2))
        label = region(r, h) * 3 + region(c, w)
    else:
        label = np.zeros_like(window)
    key = (window * 9 + label).ravel()
    return key[:, None] == key[None, :]


def _kwargs(**strategies):
    return st.fixed_dictionaries(strategies)


CAUSAL = st.booleans()
#: name → (builder, strategy of its keyword arguments, oracle mask from them: the paper's definition).
BUILTINS = {
    "full": (P.full, _kwargs(ell=LENGTH), lambda a: np.ones((a["ell"],) * 2, bool)),
    "causal": (P.causal, _kwargs(ell_z=LENGTH), lambda a: np.triu(np.ones((a["ell_z"],) * 2, bool))),
    "sliding_window": (P.sliding_window, _kwargs(ell=LENGTH, window=st.integers(1, 30), causal=CAUSAL), _sliding),
    "dilated": (P.dilated, _kwargs(ell=LENGTH, window=st.integers(1, 8), dilation=st.integers(1, 6), causal=CAUSAL),
                _dilated),
    "global_local": (P.global_local, _kwargs(ell=LENGTH, window=st.integers(1, 8), n_global=st.integers(0, 4),
                                             causal=CAUSAL), _global_local),
    "strided": (P.strided, _kwargs(ell=LENGTH, stride=st.integers(1, 9),
                                   part=st.sampled_from(["both", "local", "stride"])), _strided),
    "fixed": (P.fixed, st.integers(1, 9).flatmap(lambda s: _kwargs(
        ell=LENGTH, stride=st.just(s), summary=st.integers(1, s), part=st.sampled_from(["both", "local", "summary"]))),
        _fixed),
    "swin": (P.swin, st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)).flatmap(
        lambda t: st.integers(0, t[2] - 1).map(lambda s: {
            "height": t[0] * t[2], "width": t[1] * t[2], "window": t[2],
            **({"shifted": True, "shift": s} if s else {})})),
        _swin),
}


@st.composite
def builtin(draw, names=tuple(BUILTINS)):
    """``(name, kwargs, pattern, oracle mask)`` for a built-in pattern, ``global_local`` kept to g ≤ ℓ."""
    name = draw(st.sampled_from(names))
    build, kwargs, oracle = BUILTINS[name]
    a = draw(kwargs)
    if name == "global_local":
        a["n_global"] = min(a["n_global"], a["ell"])
    return name, a, build(**a), oracle(a)


@st.composite
def randoms(draw):
    """A BigBird pattern whose every non-global query has room for its random keys: ℓ is built as
    g + (2w − 1) + r + spare, so ℓ − g − |window| ≥ r for every query."""
    n_global, window, n_random = draw(st.integers(0, 3)), draw(st.integers(0, 4)), draw(st.integers(1, 6))
    ell = n_global + max(2 * window - 1, 0) + n_random + draw(st.integers(0, 12))
    return {"ell": ell, "n_random": n_random, "window": window, "n_global": n_global, "seed": draw(SEED)}
