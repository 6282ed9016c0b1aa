"""Sparse patterns: the Sparse Transformer's strided and fixed heads [Child2019]_, and BigBird's random keys
[Zaheer2020]_.

Every builder makes its edges with array operations (no Python loop per edge) and returns a
:class:`~formal.graphs.pattern.Pattern`, checking its options as the pattern's schema declares them
(:mod:`formal.graphs.schema`).

References
----------
.. [Child2019] Child, Gray, Radford, Sutskever. "Generating Long Sequences with Sparse Transformers", 2019.
.. [Zaheer2020] Zaheer et al. "Big Bird: Transformers for Longer Sequences", NeurIPS 2020.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .building import afford, builtin, self_pattern
from .edges import integer, offsets, ranges
from .pattern import Pattern
from .schema import option
from .windows import checked_n_global, global_edges, global_local

__all__ = ["strided", "fixed", "random", "check_room"]


# ---------------------------------------------------------------------------- Sparse Transformer
def _strided_args(ell, stride, *, part="both") -> dict:
    return {"ell": integer("ell", ell, 0), "stride": option("strided", "stride", stride),
            "part": option("strided", "part", part)}


@builtin("strided", _strided_args)
def strided(ell, stride, *, part="both") -> Pattern:
    """Child et al.'s strided pattern (causal): head 1 sees the previous ``stride`` positions and itself
    (``A⁽¹⁾_i = {max(0, i − l), …, i}``), head 2 every ``stride``-th earlier position
    (``(i − j) mod l = 0``).
    ``part`` is ``"local"`` (head 1), ``"stride"`` (head 2) or ``"both"`` (their union, one merged head).

    ``|E| = ℓ + Σ_{q<ℓ} min(q, s) + Σ_{q<ℓ} ⌊q/s⌋ − max(ℓ − s, 0)`` for ``"both"``.
    """
    ell, stride, part = _strided_args(ell, stride, part=part).values()
    afford("strided", ell, ell=ell, stride=stride, part=part)
    s = min(stride, max(ell, 1))                                           # a stride ≥ ℓ is the same as ℓ
    q = np.arange(ell, dtype=np.int64)
    local = ranges(np.maximum(q - s, 0), q + 1)
    strides = offsets(ell, -s * np.arange(-(-ell // s) - 1, -1, -1))
    chosen = {"local": [local], "stride": [strides], "both": [local, strides]}[part]
    return self_pattern(np.concatenate([c[0] for c in chosen]), np.concatenate([c[1] for c in chosen]), ell,
                        "strided", {"stride": stride, "part": part}, duplicates="merge")


def _fixed_args(ell, stride, summary=1, *, part="both") -> dict:
    ell, stride = integer("ell", ell, 0), option("fixed", "stride", stride)
    summary, part = option("fixed", "summary", summary), option("fixed", "part", part)
    if summary > stride:
        raise ConfigError(f"summary = {summary} must be at most stride = {stride} (positions per block)")
    return {"ell": ell, "stride": stride, "summary": summary, "part": part}


@builtin("fixed", _fixed_args)
def fixed(ell, stride, summary=1, *, part="both") -> Pattern:
    """Child et al.'s fixed pattern (causal): head 1 sees its own block of ``stride`` positions up to itself
    (``⌊j/l⌋ = ⌊i/l⌋``), head 2 the last ``summary`` positions of every block (``j mod l ≥ l − c``) at or
    before itself.  ``part`` is ``"local"``, ``"summary"`` or ``"both"``.

    ``|E| = ℓ(ℓ+1)/2 + (c − s)·Σ_{q<ℓ} ⌊q/s⌋`` for ``"both"``.
    """
    ell, stride, summary, part = _fixed_args(ell, stride, summary, part=part).values()
    afford("fixed", ell, ell=ell, stride=stride, summary=summary, part=part)
    q = np.arange(ell, dtype=np.int64)
    offset = q % min(stride, ell + 1)                                      # q mod s (= q when s > ℓ)
    local = ranges(q - offset, q + 1)
    summaries = np.flatnonzero(offset >= min(stride - summary, ell))       # the summary keys, in order
    index, queries = ranges(np.zeros(ell, np.int64), np.searchsorted(summaries, q, side="right"))
    chosen = {"local": [local], "summary": [(summaries[index], queries)],
              "both": [local, (summaries[index], queries)]}[part]
    return self_pattern(np.concatenate([c[0] for c in chosen]), np.concatenate([c[1] for c in chosen]), ell,
                        "fixed", {"stride": stride, "summary": summary, "part": part}, duplicates="merge")


# ------------------------------------------------------------------------------------------ BigBird
def _random_args(ell, n_random, *, window=0, n_global=0, seed=0) -> dict:
    ell, n_random = integer("ell", ell, 0), option("random", "n_random", n_random)
    return {"ell": ell, "n_random": n_random, "window": option("random", "window", window),
            "n_global": checked_n_global("random", n_global, ell), "seed": option("random", "seed", seed)}


@builtin("random", _random_args)
def random(ell, n_random, *, window=0, n_global=0, seed=0) -> Pattern:
    """BigBird: a bidirectional sliding window (``window``; 0 for none) plus ``n_global`` global positions
    plus ``n_random`` keys per non-global query drawn uniformly, without replacement, from the keys the
    window and the global positions do not already give it.  Seeded: the same ``seed`` gives the same graph.

    ``|E| = |global_local| + r·(ℓ − g)``; a query with fewer than ``r`` keys left to draw is a ConfigError.
    The drawn keys never repeat a fixed one, so every seed gives this count: it is the expected count too.
    """
    ell, n_random, window, n_global, seed = _random_args(ell, n_random, window=window, n_global=n_global,
                                                         seed=seed).values()
    check_room(ell, n_random, window, n_global)
    afford("random", ell, ell=ell, n_random=n_random, window=window, n_global=n_global)
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
    return self_pattern(keys, queries, ell, "random",
                        {"n_random": n_random, "window": window, "n_global": n_global, "seed": seed})


def check_room(ell, n_random, window, n_global):
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
    (k1, q1), (k2, q2) = global_edges(ell, n_global, False)
    return self_pattern(np.concatenate((k1, k2)), np.concatenate((q1, q2)), ell, "global", {}, duplicates="merge")


def _distinct(rng, n, r):
    """``r`` distinct integers below ``n[i]`` for each row i, uniformly (Floyd's algorithm, one pass per pick)."""
    picks = np.zeros((n.size, r), dtype=np.int64)
    for j in range(r):
        top = n - r + j                                                    # draw from 0..top
        t = rng.integers(0, top + 1)
        taken = (picks[:, :j] == t[:, None]).any(axis=1)
        picks[:, j] = np.where(taken, top, t)
    return picks
