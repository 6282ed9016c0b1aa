"""Deciding polynomial statements for every size ≥ 1, and finding the smallest counterexample.

Sizes are positive integers.  :func:`nonnegative` proves ``p ≥ 0`` for all of them when, after ``x = 1 + t``
for every size, each coefficient is ≥ 0 (sufficient and exact: no floating point).  :func:`counterexample`
searches the smallest assignments (each size 1…limit, the fewest in total first) for one where a condition
holds.  The claims checker (:mod:`formal.tools.claims`) and the theorems (``proofs``) use both.

>>> from formal.core.symbols import by_name
>>> H, d = by_name("H"), by_name("d")
>>> nonnegative(2*H*d - H - d + 1)      # (2H − 1)(2d − 1)/2 + 1/2 > 0
True
>>> counterexample(H - d, lambda v: v < 0)
({'H': 1, 'd': 2}, -1)
"""

from __future__ import annotations

import itertools
from fractions import Fraction

__all__ = ["nonnegative", "counterexample"]


def nonnegative(expr) -> bool:
    """``expr`` (a polynomial, or one divided by positive monomials) is ≥ 0 for every size ≥ 1: proved, or
    ``False`` when this sufficient test does not apply (which is not a disproof)."""
    import sympy as sp
    numerator, denominator = sp.fraction(sp.together(sp.sympify(expr)))
    if denominator.free_symbols and not all(f.is_positive for f in sp.Mul.make_args(denominator)):
        return False
    if not denominator.free_symbols and denominator < 0:
        numerator = -numerator
    symbols = sorted(numerator.free_symbols, key=str)
    shifted = sp.expand(numerator.xreplace({s: 1 + sp.Dummy(str(s)) for s in symbols}))
    try:
        if not shifted.free_symbols:
            return bool(shifted >= 0)
        return all(c >= 0 for c in sp.Poly(shifted, *shifted.free_symbols).coeffs())
    except (sp.PolynomialError, TypeError):
        return False


def counterexample(expr, bad, limit: int = 4, most: int = 5000, *, admissible=None):
    """The smallest assignment of the sizes (each 1…``limit``, fewest in total first; at most ``most``
    tried) where ``bad(value)`` holds: ``({name: size}, value)``, the value a Fraction where rational, or
    ``None``.  ``admissible(values)`` (symbol → int), if given, rules out assignments the sizes cannot take
    (an algorithm's size constraints: n_kv_heads dividing H)."""
    import sympy as sp
    expr = sp.sympify(expr)
    symbols = sorted(expr.free_symbols, key=str)
    if len(symbols) > 8:
        limit = 2
    points = sorted(itertools.product(range(1, limit + 1), repeat=len(symbols)), key=sum)
    for point in points[:most]:
        values = dict(zip(symbols, point))
        if admissible is not None and not admissible(values):
            continue
        v = expr.xreplace(values)
        if v.is_number and bad(v):
            return ({str(s): p for s, p in values.items()},
                    (int(v.p) if v.q == 1 else Fraction(int(v.p), int(v.q))) if v.is_Rational else v)
    return None
