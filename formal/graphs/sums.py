"""Closed forms of the sums that edge counts reduce to, exact for every non-negative integer argument.

Each built-in pattern's edge count is a sum over queries of its in-degree; these are the pieces those sums
are made of, written with ``Max`` and ``floor`` so that one sympy expression is right in every regime
(a window wider than the sequence included).  Plain positive-integer symbols go in; evaluation is by
``xreplace`` of integers.  Given numbers (ints or :class:`fractions.Fraction`) instead of symbols, the same
formulas evaluate exactly in plain Python — :func:`floor`, :func:`Max` and :func:`Min` pick Python's or
sympy's by their arguments — which is how a builder counts its edges, in microseconds, before it builds them.

Every quotient goes through :func:`ratio`: ``/`` of two Python ints is a float, which rounds a count past
2⁵³ (and ``max(Fraction(-3), 0)`` is the int 0, so a formula given Fractions meets ints too).  A float
argument is refused: a count computed through one is not exact.

Examples
--------
>>> from formal.core.symbols import by_name
>>> n, m = by_name("ell"), by_name("window")
>>> [sum_min(n, m).xreplace({n: a, m: 2}) for a in range(6)]  # Σ_{q<n} min(q, 2)
[0, 0, 1, 3, 5, 7]
>>> [sum_min(Fraction(a), Fraction(2)) for a in range(6)] == [0, 0, 1, 3, 5, 7]
True
>>> sum_min(10**9 + 2, 2 * 10**9) == (10**9 + 2) * (10**9 + 1) // 2   # exact past 2⁵³: no float on the way
True
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import sympy as sp

__all__ = ["triangle", "sum_min", "sum_floor", "ratio", "floor", "Max", "Min"]

_NUMBERS = (int, Fraction)


def _exact(*args) -> bool:
    """Whether every argument is a Python number (int or Fraction), not an expression; a number that is not
    rational — a float, numpy's or sympy's — is refused (TypeError)."""
    inexact = [a for a in args if isinstance(a, numbers.Number) and not isinstance(a, numbers.Rational)]
    if inexact:
        raise TypeError(f"a count is exact: {inexact[0]!r} is a {type(inexact[0]).__name__} (give ints or Fractions)")
    return all(isinstance(a, _NUMBERS) for a in args)


def ratio(a, b):
    """``a/b`` exactly: a Fraction for Python numbers (never the float of ``int / int``), sympy's quotient — a
    Rational where both are numbers — for expressions."""
    if _exact(a, b):
        return Fraction(a) / b
    return a / b


def floor(x):
    """``⌊x⌋``: an int for a number, sympy's ``floor`` for an expression."""
    return math.floor(x) if _exact(x) else sp.floor(x)


def Max(*args):
    """The largest argument: Python's ``max`` for numbers, sympy's ``Max`` for expressions."""
    return max(args) if _exact(*args) else sp.Max(*args)


def Min(*args):
    """The smallest argument: Python's ``min`` for numbers, sympy's ``Min`` for expressions."""
    return min(args) if _exact(*args) else sp.Min(*args)


def triangle(x) -> sp.Expr:
    """``Σ_{j=1}^{x} j`` for ``x ≥ 0`` and 0 for ``x < 0``: ``max(x, 0)·(max(x, 0) + 1)/2``."""
    m = Max(x, 0)
    return ratio(m * (m + 1), 2)


def sum_min(n, m) -> sp.Expr:
    """``Σ_{q=0}^{n−1} min(q, m)`` for ``m ≥ 0``: all of ``Σ q`` less the part above ``m``.

    .. math:: \\sum_{q=0}^{n-1} \\min(q, m) = \\frac{n(n-1)}{2} - \\sum_{j=1}^{n-1-m} j
    """
    return ratio(n * (n - 1), 2) - triangle(n - 1 - m)


def sum_floor(n, s) -> sp.Expr:
    """``Σ_{q=0}^{n−1} ⌊q/s⌋``: ``⌊n/s⌋`` full blocks of ``s`` queries, then ``n − s⌊n/s⌋`` more.

    .. math:: \\sum_{q=0}^{n-1} \\lfloor q/s \\rfloor = s\\,\\frac{b(b-1)}{2} + (n - s b)\\,b,
        \\qquad b = \\lfloor n/s \\rfloor
    """
    b = floor(ratio(n, s))
    return ratio(s * b * (b - 1), 2) + (n - s * b) * b
