"""Exact comparison of real numbers for the verdicts: a derived number (an int or a Fraction) against a claimed
one (a Fraction, or an exact sympy expression such as ``sqrt(15485265815076864)`` or ``2*log(3)``).

A float never decides an exact question.  The sign of a real constant is found by :func:`sign`:

1. a rational is compared exactly;
2. otherwise sympy's adaptive-precision evaluation in strict mode (``evalf(strict=True)``) gives digits it has
   checked to be correct, or says it cannot tell the value from zero; a value it separates from zero has the
   sign of those digits;
3. a value it cannot separate from zero is zero exactly when it is algebraic and its minimal polynomial is
   ``x``, or when sympy's simplification reduces it to 0 (each step an identity); otherwise its sign is unknown
   and the comparison returns ``None``: the verdict is *undecided*, never a guess.

>>> import sympy as sp
>>> from fractions import Fraction
>>> compare(Fraction(124439808), sp.sqrt(15485265815076864))
0
>>> compare(Fraction(734804261732352000), sp.sqrt(734804261732351999) * sp.sqrt(734804261732351999))
1
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["sign", "compare", "as_sympy", "is_exact_real", "DIGITS"]

#: The precisions (decimal digits) tried in turn to separate a value from zero.
DIGITS = (30, 120, 600)
#: The most digits sympy may use internally to reach one of those precisions (numbers in claims are at
#: most 10,000 bits, about 3,000 digits, so a difference of two of them needs at most that many more).
MAX_DIGITS = 8000


def as_sympy(x):
    """``x`` (an int, a Fraction or a sympy number) as an exact sympy number."""
    import sympy as sp
    if isinstance(x, Fraction):
        return sp.Rational(x.numerator, x.denominator)
    if isinstance(x, float):
        raise TypeError("a float is not an exact number")
    return sp.sympify(x)


def is_exact_real(x) -> bool | None:
    """Whether ``x`` is a real constant (None where sympy cannot tell)."""
    expr = as_sympy(x)
    if expr.free_symbols:
        return False
    return expr.is_real


def sign(x) -> int | None:
    """The exact sign of the real constant ``x`` (-1, 0 or 1), or None where it cannot be decided exactly."""
    from sympy.core.evalf import PrecisionExhausted
    expr = as_sympy(x)
    if expr.is_Rational:
        return int(bool(expr > 0)) - int(bool(expr < 0))
    for digits in DIGITS:
        try:
            value = expr.evalf(digits, strict=True, maxn=MAX_DIGITS)
        except PrecisionExhausted:
            continue
        if value.is_Number and value.is_real and value != 0:
            return 1 if value > 0 else -1
    return 0 if _is_zero(expr) else None


def _is_zero(expr) -> bool:
    """Proved zero: an algebraic number whose minimal polynomial is x, or an expression sympy simplifies to 0."""
    import sympy as sp
    if expr.is_algebraic:
        x = sp.Dummy("x")
        try:
            return sp.minimal_polynomial(expr, x) == x
        except (NotImplementedError, sp.PolynomialError, ValueError):
            pass
    try:
        return sp.simplify(expr) == 0
    except (NotImplementedError, ValueError, TypeError):
        return False


def compare(a, b) -> int | None:
    """The exact sign of ``a − b`` (-1, 0, 1), or None where it cannot be decided exactly."""
    if isinstance(a, (int, Fraction)) and isinstance(b, (int, Fraction)):
        d = Fraction(a) - Fraction(b)
        return (d > 0) - (d < 0)
    return sign(as_sympy(a) - as_sympy(b))
