"""The built-in attention patterns, each with its exact symbolic edge count: dense, causal and cross
attention, Longformer's sliding, dilated and global windows [Beltagy2020]_, the Sparse Transformer's strided
and fixed patterns [Child2019]_, BigBird's random keys [Zaheer2020]_ and Swin's windows [Liu2021]_.

Every builder makes its edges with array operations (no Python loop per edge) and returns a
:class:`~formal.graphs.pattern.Pattern`; positions are 0-based and an edge ``k → q`` means that query ``q``
attends to key ``k``.  Next to each builder is its edge count as a sympy expression in ℓ and the pattern's
parameters, derived as the sum over queries of the in-degree (:mod:`formal.graphs.sums`); the tests check
every count against networkx's count of the built graph.

**How windows are counted.**  Libraries disagree by one on whether a window of size ``w`` includes the
query itself.  Here it does: a causal window ``w`` admits keys ``q − w < k ≤ q`` (``w`` keys; ``w = 1`` is
the query alone), a bidirectional one ``|q − k| < w`` (``2w − 1`` keys).  In flash-attn's
``window_size=(left, right)`` terms that is ``(w − 1, 0)`` and ``(w − 1, w − 1)``.

Examples
--------
>>> p = sliding_window(6, 3)
>>> p.in_degree.tolist()
[1, 2, 3, 3, 3, 3]
>>> from formal.graphs.analysis import symbolic_edge_count
>>> expr, values = symbolic_edge_count(p)
>>> expr.xreplace(values) == p.n_edges == 15
True

References
----------
.. [Beltagy2020] Beltagy, Peters, Cohan. "Longformer: The Long-Document Transformer", 2020.
.. [Child2019] Child, Gray, Radford, Sutskever. "Generating Long Sequences with Sparse Transformers", 2019.
.. [Zaheer2020] Zaheer et al. "Big Bird: Transformers for Longer Sequences", NeurIPS 2020.
.. [Liu2021] Liu et al. "Swin Transformer: Hierarchical Vision Transformer using Shifted Windows", ICCV 2021.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from ..core import masks
from ..errors import ConfigError
from . import memory
from .edges import flag, integer, offsets, ranges, window_span
from .pattern import Pattern, check_pairs, from_graph, from_pairs
from .sums import Max, Min, floor, sum_floor, sum_min, triangle

__all__ = ["full", "causal", "cross", "sliding_window", "dilated", "global_local", "strided", "fixed", "random",
           "swin", "adjacency", "PATTERNS", "Kind"]


# ------------------------------------------------------------------------------------------------ helpers
def _builtin(name):
    """Mark what the builder returns with its name and checked arguments (:attr:`Pattern.built_from`), so
    the layered analysis can use the pattern's structure (:mod:`formal.graphs.structure`)."""
    def wrap(builder):
        @functools.wraps(builder)
        def build(*args, **kwargs):
            pattern = builder(*args, **kwargs)
            pattern.built_from = (name, PATTERNS[name].args(*args, **kwargs))
            return pattern
        return build
    return wrap


def _self(keys, queries, ell, name, params, duplicates="error") -> Pattern:
    return from_pairs(keys, queries, ell_z=ell, self_attention=True, name=name, params=params, duplicates=duplicates,
                      _owned=True)


def exact_count(name, **args) -> int:
    """``|E|`` of the built-in pattern ``name`` from its formula (``args`` as the count takes them), in exact
    Fractions and Python integers: no array, no float."""
    exact = {k: Fraction(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in args.items()}
    return int(PATTERNS[name].count(**exact))


def _afford(name, positions, *, where=None, **args) -> int:
    """Refuse to build pattern ``name`` if it would need more memory than the limit; its edge count comes
    from its exact formula evaluated on integers (``args`` as the count takes them), before any array."""
    edges = exact_count(name, **args)
    where = where or (f"at ℓ = {memory.number(args['ell'])}" if "ell" in args else
                      f"at ℓ_z = {memory.number(args['ell_z'])}, ℓ_x = {memory.number(args['ell_x'])}")
    memory.require(memory.build_bytes(name, edges=edges, positions=positions),
                   f"the {name} pattern {where} ({memory.number(edges)} edges)")
    check_pairs(args.get("ell_z", args.get("ell")), args.get("ell_x", args.get("ell")))
    return edges


# ----------------------------------------------------------------------------------- dense and causal
@_builtin("full")
def full(ell) -> Pattern:
    """Bidirectional attention (``Mask ≡ 1``, an encoder): every query sees every key.  ``|E| = ℓ²``."""
    ell = _full_args(ell)["ell"]
    _afford("full", ell, ell=ell)
    return _self(*ranges(np.zeros(ell, np.int64), np.full(ell, ell)), ell, "full", {})


def _full_args(ell) -> dict:
    return {"ell": integer("ell", ell, 0)}


def _count_full(ell):
    return ell**2


@_builtin("causal")
def causal(ell_z, ell_x=None, *, align=None) -> Pattern:
    """Unidirectional attention (a decoder): ``Mask[t_z, t_x] = [[t_z ≤ t_x]]``.

    With ``ell_x`` ≠ ``ell_z`` the keys and queries are different sequences, the pattern is bipartite and
    ``align`` must say how they line up (design decision 6): ``"top-left"`` (the paper's) or
    ``"bottom-right"`` (the last query sees every key: what a KV cache needs).  ``|E| = ℓ(ℓ+1)/2`` for
    self-attention.
    """
    ell_z, ell_x, align = _causal_args(ell_z, ell_x, align=align).values()
    shift = masks.causal_shift(ell_z, ell_x, align)                      # the spec's alignment rule
    if ell_z == ell_x:
        _afford("causal", ell_z, ell=ell_z)
    else:
        _afford("causal", ell_z + ell_x, ell_z=ell_z, ell_x=ell_x, align=align)
    stops = np.clip(np.arange(ell_x, dtype=np.int64) + 1 + shift, 0, ell_z)
    keys, queries = ranges(np.zeros(ell_x, np.int64), stops)
    if ell_z == ell_x:
        return _self(keys, queries, ell_z, "causal", {})
    return from_pairs(keys, queries, ell_z=ell_z, ell_x=ell_x, self_attention=False, name="causal",
                      params={"align": align})


def _causal_args(ell_z, ell_x=None, *, align=None) -> dict:
    ell_z = integer("ell_z", ell_z, 0)
    ell_x = ell_z if ell_x is None else integer("ell_x", ell_x, 0)
    masks.causal_shift(ell_z, ell_x, align)                              # checks the alignment
    return {"ell_z": ell_z, "ell_x": ell_x, "align": align or "top-left"}


def _count_causal(ell=None, ell_z=None, ell_x=None, align=None):
    if ell is not None:
        return ell * (ell + 1) / 2
    if align == "top-left":                      # min(q + 1, ℓ_z) keys for query q
        return ell_x + sum_min(ell_x, ell_z - 1)
    return triangle(ell_z) - triangle(ell_z - ell_x)  # max(0, q + 1 + ℓ_z − ℓ_x) keys


@_builtin("cross")
def cross(ell_z, ell_x) -> Pattern:
    """Cross-attention: the bipartite graph in which every query of X sees every token of the context Z
    (Algorithm 8's encoder–decoder attention).  ``|E| = ℓ_z·ℓ_x``."""
    ell_z, ell_x = _cross_args(ell_z, ell_x).values()
    _afford("cross", ell_z + ell_x, ell_z=ell_z, ell_x=ell_x)
    keys, queries = ranges(np.zeros(ell_x, np.int64), np.full(ell_x, ell_z))
    return from_pairs(keys, queries, ell_z=ell_z, ell_x=ell_x, self_attention=False, name="cross")


def _cross_args(ell_z, ell_x) -> dict:
    return {"ell_z": integer("ell_z", ell_z, 0), "ell_x": integer("ell_x", ell_x, 0)}


def _count_cross(ell_z, ell_x):
    return ell_z * ell_x


# ---------------------------------------------------------------------------------- local patterns
@_builtin("sliding_window")
def sliding_window(ell, window, *, causal=True) -> Pattern:
    """Each query sees the ``window`` nearest keys on its side, itself included (Longformer's local
    attention, Mistral's sliding window): ``q − w < k ≤ q`` causal, ``|q − k| < w`` bidirectional.

    ``|E| = ℓ + Σ_{q<ℓ} min(q, w − 1)`` causal, twice that less ℓ bidirectional.
    """
    ell, window, causal = _sliding_window_args(ell, window, causal=causal).values()
    _afford("sliding_window", ell, ell=ell, window=window, causal=causal)
    return _self(*ranges(*window_span(ell, min(window, max(ell, 1)), causal)), ell, "sliding_window",
                 {"window": window, "causal": causal})


def _sliding_window_args(ell, window, *, causal=True) -> dict:
    return {"ell": integer("ell", ell, 0), "window": integer("window", window), "causal": flag("causal", causal)}


def _count_sliding_window(ell, window, causal=True):
    one_side = ell + sum_min(ell, window - 1)
    return one_side if causal else 2 * one_side - ell


@_builtin("dilated")
def dilated(ell, window, dilation, *, causal=True) -> Pattern:
    """A window of ``window`` keys spaced ``dilation`` apart (Longformer's dilated sliding window): keys
    ``q − jδ`` for ``0 ≤ j < w``, and ``q + jδ`` as well when bidirectional.  With δ > 1 the positions fall
    into δ classes that never exchange information, however many layers are stacked.

    ``|E| = δ·Σ_{i<b} min(w, i + 1) + (ℓ − δb)·min(w, b + 1)``, ``b = ⌊ℓ/δ⌋`` (causal).
    """
    ell, window, dilation, causal = _dilated_args(ell, window, dilation, causal=causal).values()
    _afford("dilated", ell, ell=ell, window=window, dilation=dilation, causal=causal)
    reach = (ell - 1) // dilation + 1 if ell else 1                         # keys q − jδ ≥ 0 need j < reach
    steps = -min(dilation, max(ell, 1)) * np.arange(min(window, reach) - 1, -1, -1)
    distances = steps if causal else np.concatenate((steps, -steps[-2::-1]))
    return _self(*offsets(ell, distances), ell, "dilated", {"window": window, "dilation": dilation, "causal": causal})


def _dilated_args(ell, window, dilation, *, causal=True) -> dict:
    return {"ell": integer("ell", ell, 0), "window": integer("window", window),
            "dilation": integer("dilation", dilation), "causal": flag("causal", causal)}


def _count_dilated(ell, window, dilation, causal=True):
    blocks = floor(ell / dilation)
    one_side = (dilation * (blocks + sum_min(blocks, window - 1))
                + (ell - dilation * blocks) * Min(window, blocks + 1))
    return one_side if causal else 2 * one_side - ell


@_builtin("global_local")
def global_local(ell, window, n_global, *, causal=False) -> Pattern:
    """Longformer: a sliding window plus ``n_global`` global positions (the first ones, e.g. ``[CLS]``) that
    see every key and are seen by every query (causally: every key at or before them, every later query).

    ``|E| = ℓ² − (ℓ − g)² + |window on ℓ − g positions|`` bidirectional.
    """
    ell, window, n_global, causal = _global_local_args(ell, window, n_global, causal=causal).values()
    _afford("global_local", ell, ell=ell, window=window, n_global=n_global, causal=causal)
    parts = [ranges(*window_span(ell, min(window, max(ell, 1)), causal)), *_global(ell, n_global, causal)]
    return _self(np.concatenate([k for k, _ in parts]), np.concatenate([q for _, q in parts]), ell, "global_local",
                 {"window": window, "n_global": n_global, "causal": causal}, duplicates="merge")


def _global_local_args(ell, window, n_global, *, causal=False) -> dict:
    ell, window, causal = integer("ell", ell, 0), integer("window", window), flag("causal", causal)
    return {"ell": ell, "window": window, "n_global": _n_global(n_global, ell), "causal": causal}


def _n_global(n_global, ell) -> int:
    n_global = integer("n_global", n_global, 0)
    if n_global > ell:
        raise ConfigError(f"n_global = {n_global} is more than the ell = {ell} positions")
    return n_global


def _global(ell, n_global, causal):
    """The edges of the first ``n_global`` positions: every query sees them, and they see every key
    (causally, only those at or before the query).  O(g·ℓ) edges, built without the ℓ² others."""
    q = np.arange(ell, dtype=np.int64)
    upto = q + 1 if causal else np.full(ell, ell)
    seen = ranges(np.zeros(ell, np.int64), np.minimum(upto, n_global))          # global keys
    seeing = ranges(np.zeros(ell, np.int64), np.where(q < n_global, upto, 0))  # global queries
    return seen, seeing


def _count_global_local(ell, window, n_global, causal=False):
    rest = _count_sliding_window(ell - n_global, window, causal)          # windows between non-global positions
    if causal:
        return n_global * ell - n_global * (n_global - 1) / 2 + rest      # Σ_{k<g} (ℓ − k)
    return ell**2 - (ell - n_global) ** 2 + rest


# ---------------------------------------------------------------------------- Sparse Transformer
PARTS = ("both", "local", "stride", "summary")


def _part(part, allowed):
    if part not in allowed:
        raise ConfigError(f"part = {part!r}; known: {', '.join(allowed)}")
    return part


@_builtin("strided")
def strided(ell, stride, *, part="both") -> Pattern:
    """Child et al.'s strided pattern (causal): head 1 sees the previous ``stride`` positions and itself
    (``A⁽¹⁾_i = {max(0, i − l), …, i}``), head 2 every ``stride``-th earlier position
    (``(i − j) mod l = 0``).
    ``part`` is ``"local"`` (head 1), ``"stride"`` (head 2) or ``"both"`` (their union, one merged head).

    ``|E| = ℓ + Σ_{q<ℓ} min(q, s) + Σ_{q<ℓ} ⌊q/s⌋ − max(ℓ − s, 0)`` for ``"both"``.
    """
    ell, stride, part = _strided_args(ell, stride, part=part).values()
    _afford("strided", ell, ell=ell, stride=stride, part=part)
    s = min(stride, max(ell, 1))                                           # a stride ≥ ℓ is the same as ℓ
    q = np.arange(ell, dtype=np.int64)
    local = ranges(np.maximum(q - s, 0), q + 1)
    strides = offsets(ell, -s * np.arange(-(-ell // s) - 1, -1, -1))
    chosen = {"local": [local], "stride": [strides], "both": [local, strides]}[part]
    return _self(np.concatenate([c[0] for c in chosen]), np.concatenate([c[1] for c in chosen]), ell, "strided",
                 {"stride": stride, "part": part}, duplicates="merge")


def _strided_args(ell, stride, *, part="both") -> dict:
    return {"ell": integer("ell", ell, 0), "stride": integer("stride", stride), "part": _part(part, PARTS[:3])}


def _count_strided(ell, stride, part="both"):
    local, strides = ell + sum_min(ell, stride), ell + sum_floor(ell, stride)
    both = local + strides - ell - Max(ell - stride, 0)   # k = q, and k = q − s for q ≥ s, are in both
    return {"local": local, "stride": strides, "both": both}[part]


@_builtin("fixed")
def fixed(ell, stride, summary=1, *, part="both") -> Pattern:
    """Child et al.'s fixed pattern (causal): head 1 sees its own block of ``stride`` positions up to itself
    (``⌊j/l⌋ = ⌊i/l⌋``), head 2 the last ``summary`` positions of every block (``j mod l ≥ l − c``) at or
    before itself.  ``part`` is ``"local"``, ``"summary"`` or ``"both"``.

    ``|E| = ℓ(ℓ+1)/2 + (c − s)·Σ_{q<ℓ} ⌊q/s⌋`` for ``"both"``.
    """
    ell, stride, summary, part = _fixed_args(ell, stride, summary, part=part).values()
    _afford("fixed", ell, ell=ell, stride=stride, summary=summary, part=part)
    q = np.arange(ell, dtype=np.int64)
    offset = q % min(stride, ell + 1)                                      # q mod s (= q when s > ℓ)
    local = ranges(q - offset, q + 1)
    summaries = np.flatnonzero(offset >= min(stride - summary, ell))       # the summary keys, in order
    index, queries = ranges(np.zeros(ell, np.int64), np.searchsorted(summaries, q, side="right"))
    chosen = {"local": [local], "summary": [(summaries[index], queries)],
              "both": [local, (summaries[index], queries)]}[part]
    return _self(np.concatenate([c[0] for c in chosen]), np.concatenate([c[1] for c in chosen]), ell, "fixed",
                 {"stride": stride, "summary": summary, "part": part}, duplicates="merge")


def _fixed_args(ell, stride, summary=1, *, part="both") -> dict:
    ell, stride, summary = integer("ell", ell, 0), integer("stride", stride), integer("summary", summary)
    part = _part(part, ("both", "local", "summary"))
    if summary > stride:
        raise ConfigError(f"summary = {summary} must be at most stride = {stride} (positions per block)")
    return {"ell": ell, "stride": stride, "summary": summary, "part": part}


def _count_fixed(ell, stride, summary=1, part="both"):
    floors, blocks = sum_floor(ell, stride), floor(ell / stride)
    local = ell * (ell + 1) / 2 - stride * floors                          # (q mod s) + 1 keys for query q
    # summary keys of earlier blocks (c per block), plus those of the query's own block up to itself
    own_block = blocks * summary * (summary + 1) / 2 + triangle(ell - stride * blocks - stride + summary)
    return {"local": local, "summary": summary * floors + own_block, "both": local + summary * floors}[part]


# ------------------------------------------------------------------------------------------ BigBird
@_builtin("random")
def random(ell, n_random, *, window=0, n_global=0, seed=0) -> Pattern:
    """BigBird: a bidirectional sliding window (``window``; 0 for none) plus ``n_global`` global positions
    plus ``n_random`` keys per non-global query drawn uniformly, without replacement, from the keys the
    window and the global positions do not already give it.  Seeded: the same ``seed`` gives the same graph.

    ``|E| = |global_local| + r·(ℓ − g)``; a query with fewer than ``r`` keys left to draw is a ConfigError.
    """
    ell, n_random, window, n_global, seed = _random_args(ell, n_random, window=window, n_global=n_global,
                                                         seed=seed).values()
    _room(ell, n_random, window, n_global)
    _afford("random", ell, ell=ell, n_random=n_random, window=window, n_global=n_global)
    w = min(window, ell)                                                   # a window ≥ ℓ is the same as ℓ
    q = np.arange(n_global, ell, dtype=np.int64)                           # the non-global queries
    lo = np.maximum(q - w + 1, n_global) if w else q                       # their window: lo ≤ k ≤ hi
    hi = np.minimum(q + w - 1, ell - 1) if w else q - 1
    below = lo - n_global                                                  # free keys n_global ≤ k < lo
    free = below + (ell - 1 - hi)                                          # … and hi < k < ℓ
    picks = _distinct(np.random.default_rng(seed), free, n_random)         # (ℓ − g, r), each row < free
    random_keys = np.where(picks < below[:, None], n_global + picks, hi[:, None] + 1 + picks - below[:, None])
    base = global_local(ell, window, n_global) if window else _global_only(ell, n_global)
    keys = np.concatenate((base.keys, random_keys.ravel()))
    queries = np.concatenate((base.queries, np.repeat(q, n_random)))
    return _self(keys, queries, ell, "random",
                 {"n_random": n_random, "window": window, "n_global": n_global, "seed": seed})


def _random_args(ell, n_random, *, window=0, n_global=0, seed=0) -> dict:
    ell, n_random = integer("ell", ell, 0), integer("n_random", n_random)
    return {"ell": ell, "n_random": n_random, "window": integer("window", window, 0),
            "n_global": _n_global(n_global, ell), "seed": integer("seed", seed, 0)}


def _room(ell, n_random, window, n_global):
    """Check, with integers only, that every non-global query has ``n_random`` keys left to draw: query q
    has ``ℓ − g`` keys less its window clipped to ``g..ℓ−1``, whose widest is ``min(2w − 1, ℓ − g)``,
    first reached at ``q = g + w − 1`` (or ``max(ℓ − w, g)`` when the window spans them all)."""
    if ell == n_global:
        return
    widest = min(2 * window - 1, ell - n_global) if window else 0
    worst = n_global if not window else n_global + window - 1 if widest == 2 * window - 1 else max(ell - window,
                                                                                                   n_global)
    if ell - n_global - widest < n_random:
        raise ConfigError(f"n_random = {n_random} is more than the {ell - n_global - widest} keys query {worst} "
                          f"has left outside its window and the global positions (ell = {ell})")


def _global_only(ell, n_global):
    (k1, q1), (k2, q2) = _global(ell, n_global, False)
    return _self(np.concatenate((k1, k2)), np.concatenate((q1, q2)), ell, "global", {}, duplicates="merge")


def _distinct(rng, n, r):
    """``r`` distinct integers below ``n[i]`` for each row i, uniformly (Floyd's algorithm, one pass per pick)."""
    picks = np.zeros((n.size, r), dtype=np.int64)
    for j in range(r):
        top = n - r + j                                                    # draw from 0..top
        t = rng.integers(0, top + 1)
        taken = (picks[:, :j] == t[:, None]).any(axis=1)
        picks[:, j] = np.where(taken, top, t)
    return picks


def _count_random(ell, n_random, window=0, n_global=0, seed=0):
    base = _count_global_local(ell, window, n_global) if window else ell**2 - (ell - n_global) ** 2
    return base + n_random * (ell - n_global)


# --------------------------------------------------------------------------------------------- Swin
@_builtin("swin")
def swin(height, width, window, *, shifted=False, shift=None) -> Pattern:
    """Swin Transformer's window attention on a ``height × width`` grid of tokens (position ``i·width + j``):
    tokens attend to the tokens of their ``window × window`` window.  ``shifted=True`` moves the window
    boundaries by ``shift`` (default ``⌊M/2⌋``) — Swin's cyclic shift with its attention mask, which splits
    the windows at the image border instead of wrapping around.

    ``|E| = n_h·n_w·M²`` unshifted; shifted,
    ``(σ² + (M−σ)² + (n_h/M − 1)M²)·(σ² + (M−σ)² + (n_w/M − 1)M²)``.
    """
    height, width, window, shifted, shift = _swin_args(height, width, window, shifted=shifted, shift=shift).values()
    shift = shift or 0
    ell = height * width
    grid = f"on a {memory.number(height)}×{memory.number(width)} grid, ℓ = {memory.number(ell)}"
    _afford("swin", ell, where=grid, ell=ell, height=height, width=width, window=window,
            **({"shift": shift} if shifted else {}))
    # Rows (columns) fall into groups split at shift + a·M: the windows after Swin's masked cyclic shift.
    rows = (np.arange(height) + (window - shift) % window) // window
    cols = (np.arange(width) + (window - shift) % window) // window
    group = (rows[:, None] * (width // window + 1) + cols[None, :]).ravel()  # per token, row-major
    members = np.argsort(group, kind="stable")                             # tokens grouped, in order
    sizes = np.bincount(group)
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    index, queries = ranges(first[group], first[group] + sizes[group])
    params = {"height": height, "width": width, "window": window}
    if shifted:
        params["shift"] = shift
    return _self(members[index], queries, ell, "swin", params)


def _swin_args(height, width, window, *, shifted=False, shift=None) -> dict:
    """The arguments checked; ``shift`` is the offset of shifted windows (default ``⌊M/2⌋``), None unshifted."""
    height, width, window = integer("height", height), integer("width", width), integer("window", window)
    for name, side in (("height", height), ("width", width)):
        if side % window:
            raise ConfigError(f"the grid's {name} {side} is not divisible by the Swin window {window}")
    shifted = flag("shifted", shifted)
    if shift is not None and not shifted:
        raise ConfigError(f"shift = {shift!r} is given but shifted = False: pass shifted=True for shifted windows")
    shift = (window // 2 if shift is None else integer("shift", shift)) if shifted else None
    if shifted and not 0 < shift < window:
        raise ConfigError(f"shift = {shift} must be between 1 and window − 1 = {window - 1}")
    return {"height": height, "width": width, "window": window, "shifted": shifted, "shift": shift}


def _count_swin(ell, height, width, window, shift=None):
    if shift is None:
        return height * width * window**2
    edge = shift**2 + (window - shift) ** 2
    return (edge + (height / window - 1) * window**2) * (edge + (width / window - 1) * window**2)


# ------------------------------------------------------------------------------------------ any graph
def adjacency(G, *, ell=None) -> Pattern:
    """Adjacency-restricted attention (graph attention networks): query ``q`` attends to the keys with an
    edge into it in the networkx graph ``G`` (both ends of an undirected edge see each other).  No
    self-loop is added; add them to ``G`` if a node should attend to itself."""
    return from_graph(G, ell=ell, name="adjacency")


@dataclass(frozen=True)
class Kind:
    """A built-in pattern: its builder, its edge count, and which arguments are symbols in that count."""

    build: Callable
    count: Callable
    symbols: dict          # argument name → symbol name (sizes ℓ, ℓ_z, ℓ_x are always symbols)
    doc: str
    args: Callable         # the builder's arguments checked and completed, as a dict (ConfigError if wrong)


#: The built-in patterns by name, as :attr:`Pattern.name` records them.
PATTERNS = {
    "full": Kind(full, _count_full, {}, "bidirectional: every query sees every key", _full_args),
    "causal": Kind(causal, _count_causal, {}, "unidirectional: keys at or before the query", _causal_args),
    "cross": Kind(cross, _count_cross, {}, "bipartite: every query of X sees every token of Z", _cross_args),
    "sliding_window": Kind(sliding_window, _count_sliding_window, {"window": "window"}, "the w nearest keys",
                           _sliding_window_args),
    "dilated": Kind(dilated, _count_dilated, {"window": "window", "dilation": "dilation"},
                    "w keys spaced δ apart", _dilated_args),
    "global_local": Kind(global_local, _count_global_local, {"window": "window", "n_global": "n_global"},
                         "Longformer: sliding window + g global positions", _global_local_args),
    "strided": Kind(strided, _count_strided, {"stride": "stride"}, "Sparse Transformer, strided", _strided_args),
    "fixed": Kind(fixed, _count_fixed, {"stride": "stride", "summary": "summary"}, "Sparse Transformer, fixed",
                  _fixed_args),
    "random": Kind(random, _count_random, {"n_random": "n_random", "window": "window", "n_global": "n_global"},
                   "BigBird: window + global + r random keys per query", _random_args),
    "swin": Kind(swin, _count_swin, {"height": "height", "width": "width", "window": "swin_window",
                                     "shift": "shift"}, "Swin: (shifted) M×M windows on a grid", _swin_args),
}
