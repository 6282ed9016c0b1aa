"""The exact edge count of each built-in pattern, as a formula in ℓ (ℓ_z, ℓ_x) and the pattern's parameters.

Each count is the sum over queries of the in-degree, reduced to the closed forms of :mod:`formal.graphs.sums`
(with ``Max``, ``Min`` and ``floor``, right in every regime: a window wider than the sequence included).
Given sympy symbols, a count is the pattern's symbolic edge count
(:func:`formal.graphs.analysis.symbolic_edge_count`); given numbers, :func:`exact_count` evaluates it in
exact Fractions and Python integers — how a builder knows its edges before it makes them.  Every quotient
is :func:`~formal.graphs.sums.ratio`'s, never ``/`` (a float past 2⁵³ is off by some edges).  The tests
check every count against networkx's count of the built graph, and against closed forms at ℓ up to 2⁵⁰.

Examples
--------
>>> exact_count("sliding_window", ell=6, window=3, causal=True)
15
"""

from __future__ import annotations

import numbers
from fractions import Fraction

from .sums import Max, Min, floor, ratio, sum_floor, sum_min, triangle

__all__ = ["COUNTS", "exact_count"]


def _full(ell):
    return ell**2


def _causal(ell=None, ell_z=None, ell_x=None, align=None):
    if ell is not None:
        return ratio(ell * (ell + 1), 2)
    if align == "top-left":                      # min(q + 1, ℓ_z) keys for query q
        return ell_x + sum_min(ell_x, ell_z - 1)
    return triangle(ell_z) - triangle(ell_z - ell_x)  # max(0, q + 1 + ℓ_z − ℓ_x) keys


def _cross(ell_z, ell_x):
    return ell_z * ell_x


def _sliding_window(ell, window, causal=True):
    one_side = ell + sum_min(ell, window - 1)
    return one_side if causal else 2 * one_side - ell


def _dilated(ell, window, dilation, causal=True):
    blocks = floor(ratio(ell, dilation))
    one_side = (dilation * (blocks + sum_min(blocks, window - 1))
                + (ell - dilation * blocks) * Min(window, blocks + 1))
    return one_side if causal else 2 * one_side - ell


def _global_local(ell, window, n_global, causal=False):
    rest = _sliding_window(ell - n_global, window, causal)               # windows between non-global positions
    if causal:
        return n_global * ell - ratio(n_global * (n_global - 1), 2) + rest  # Σ_{k<g} (ℓ − k)
    return ell**2 - (ell - n_global) ** 2 + rest


def _strided(ell, stride, part="both"):
    local, strides = ell + sum_min(ell, stride), ell + sum_floor(ell, stride)
    both = local + strides - ell - Max(ell - stride, 0)   # k = q, and k = q − s for q ≥ s, are in both
    return {"local": local, "stride": strides, "both": both}[part]


def _fixed(ell, stride, summary=1, part="both"):
    floors, blocks = sum_floor(ell, stride), floor(ratio(ell, stride))
    local = ratio(ell * (ell + 1), 2) - stride * floors                    # (q mod s) + 1 keys for query q
    # summary keys of earlier blocks (c per block), plus those of the query's own block up to itself
    own_block = blocks * ratio(summary * (summary + 1), 2) + triangle(ell - stride * blocks - stride + summary)
    return {"local": local, "summary": summary * floors + own_block, "both": local + summary * floors}[part]


def _random(ell, n_random, window=0, n_global=0, seed=0):
    base = _global_local(ell, window, n_global) if window else ell**2 - (ell - n_global) ** 2
    return base + n_random * (ell - n_global)


def _swin(ell, height, width, window, shift=None):
    if shift is None:
        return height * width * window**2
    edge = shift**2 + (window - shift) ** 2
    return (edge + (ratio(height, window) - 1) * window**2) * (edge + (ratio(width, window) - 1) * window**2)


#: Each built-in pattern's edge count, by the name :attr:`formal.graphs.pattern.Pattern.name` records.
COUNTS = {"full": _full, "causal": _causal, "cross": _cross, "sliding_window": _sliding_window,
          "dilated": _dilated, "global_local": _global_local, "strided": _strided, "fixed": _fixed,
          "random": _random, "swin": _swin}


def exact_count(name, **args) -> int:
    """``|E|`` of the built-in pattern ``name`` from its formula (``args`` as the count takes them), in exact
    Fractions and Python integers: no array, no float.  A result that is not a whole number would be a wrong
    formula, never rounded away: it is a TypeError."""
    exact = {k: Fraction(int(v)) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else v
             for k, v in args.items()}                                   # numpy's ints too: never int64 arithmetic
    count = COUNTS[name](**exact)
    if isinstance(count, bool) or not isinstance(count, (int, Fraction)) or count != int(count):
        raise TypeError(f"the {name} edge count at {args} is {count!r}, not an exact integer")
    return int(count)
