"""Closed forms of the sums that edge counts reduce to, exact for every non-negative integer argument.

Each built-in pattern's edge count is a sum over queries of its in-degree; these are the pieces those sums
are made of, written with ``Max`` and ``floor`` so that one sympy expression is right in every regime
(a window wider than the sequence included).  Plain positive-integer symbols go in; evaluation is by
``xreplace`` of integers.  Given numbers (ints or :class:`fractions.Fraction`) instead of symbols, the same
formulas evaluate exactly in plain Python — :func:`floor`, :func:`Max` and :func:`Min` pick Python's or
sympy's by their arguments — which is how a builder counts its edges, in microseconds, before it builds them.

Examples
--------
>>> from formal.core.symbols import by_name
>>> n, m = by_name("ell"), by_name("window")
>>> [sum_min(n, m).xreplace({n: a, m: 2}) for a in range(6)]  # Σ_{q<n} min(q, 2)
[0, 0, 1, 3, 5, 7]
>>> [sum_min(Fraction(a), Fraction(2)) for a in range(6)] == [0, 0, 1, 3, 5, 7]
True
"""

from __future__ import annotations

import math
from fractions import Fraction

import sympy as sp

__all__ = ["triangle", "sum_min", "sum_floor", "floor", "Max", "Min"]

_NUMBERS = (int, Fraction)


def floor(x):
    """``⌊x⌋``: an int for a number, sympy's ``floor`` for an expression."""
    return math.floor(x) if isinstance(x, _NUMBERS) else sp.floor(x)


def Max(*args):
    """The largest argument: Python's ``max`` for numbers, sympy's ``Max`` for expressions."""
    return max(args) if all(isinstance(a, _NUMBERS) for a in args) else sp.Max(*args)


def Min(*args):
    """The smallest argument: Python's ``min`` for numbers, sympy's ``Min`` for expressions."""
    return min(args) if all(isinstance(a, _NUMBERS) for a in args) else sp.Min(*args)


def triangle(x) -> sp.Expr:
    """``Σ_{j=1}^{x} j`` for ``x ≥ 0`` and 0 for ``x < 0``: ``max(x, 0)·(max(x, 0) + 1)/2``."""
    m = Max(x, 0)
    return m * (m + 1) / 2


def sum_min(n, m) -> sp.Expr:
    """``Σ_{q=0}^{n−1} min(q, m)`` for ``m ≥ 0``: all of ``Σ q`` less the part above ``m``.

    .. math:: \\sum_{q=0}^{n-1} \\min(q, m) = \\frac{n(n-1)}{2} - \\sum_{j=1}^{n-1-m} j
    """
    return n * (n - 1) / 2 - triangle(n - 1 - m)


def sum_floor(n, s) -> sp.Expr:
    """``Σ_{q=0}^{n−1} ⌊q/s⌋``: ``⌊n/s⌋`` full blocks of ``s`` queries, then ``n − s⌊n/s⌋`` more.

    .. math:: \\sum_{q=0}^{n-1} \\lfloor q/s \\rfloor = s\\,\\frac{b(b-1)}{2} + (n - s b)\\,b,
        \\qquad b = \\lfloor n/s \\rfloor
    """
    b = floor(n / s)
    return s * b * (b - 1) / 2 + (n - s * b) * b
