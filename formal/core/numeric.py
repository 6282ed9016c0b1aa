"""Size expressions evaluated fast and exactly at bound values: the executor checks the shape of every line it
runs, and a window loop runs the same lines thousands of times, so a sympy ``xreplace`` per check (~20 µs) would
cost more than the numpy work it checks.

:func:`value` compiles an expression once (``lambdify``) and evaluates it in Python's exact arithmetic: a
polynomial with integer coefficients (``H·d_attn``, ``ℓ − k + 1``) over ints, anything else (``n_h/2``,
``⌊(ℓ + 2p − k)/s⌋ + 1``) over :class:`fractions.Fraction`, so that a floor is never taken of a rounded
float.  :func:`free` is an expression's free symbols, remembered.

>>> from formal.core.symbols import H, d_attn
>>> value(H * d_attn, {H: 4, d_attn: 16})
64
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

__all__ = ["value", "approximate", "free", "ordered", "compiled", "shape_at"]


class _ExactPrinter(PythonCodePrinter):
    """Python code whose rational constants are :class:`~fractions.Fraction`, not floats."""

    def _print_Rational(self, expr):
        return f"Fraction({expr.p}, {expr.q})"

    _print_Half = _print_Rational


_NAMESPACE = [{"Fraction": Fraction, "math": math}, "math"]


@functools.lru_cache(maxsize=None)
def free(expr) -> frozenset:
    """The free symbols of a size expression (sympy recomputes them on every access)."""
    return frozenset(expr.free_symbols)


@functools.lru_cache(maxsize=None)
def ordered(expr) -> tuple:
    """The free symbols of a size expression, sorted by name."""
    return tuple(sorted(expr.free_symbols, key=str))


def _integral(expr) -> bool:
    """Whether ``expr`` is a polynomial with integer coefficients: over ints it is exact as written."""
    symbols = ordered(expr)
    if not symbols:
        return bool(expr.is_Integer)
    try:
        return all(c.is_Integer for c in sp.Poly(expr, *symbols).coeffs())
    except sp.PolynomialError:
        return False


@functools.lru_cache(maxsize=None)
def compiled(expr):
    """``(symbols, f, exact)``: ``f(*values)`` evaluates ``expr``; ``exact``: the values must be passed as
    :class:`~fractions.Fraction` (the expression divides or rounds), else as ints."""
    expr = sp.sympify(expr)
    symbols = ordered(expr)
    return symbols, _lambdified(symbols, expr), not _integral(expr)


def _lambdified(symbols, expr):
    """``expr`` as a Python function of ``symbols``, or None where it holds a function Python cannot write (a
    size function of the package's own): sympy evaluates it then."""
    try:
        return sp.lambdify(symbols, expr, modules=_NAMESPACE, printer=_ExactPrinter)
    except Exception:   # sympy's printers raise several kinds for what they cannot write
        return None


@functools.lru_cache(maxsize=None)
def _float_function(expr):
    symbols = ordered(expr)
    try:
        return symbols, sp.lambdify(symbols, expr, modules="math")
    except Exception:   # a function Python cannot write: evaluated exactly instead
        return symbols, None


def approximate(expr, values: dict) -> float:
    """``expr`` at ``values`` in float64 (an estimate, such as the bytes a line allocates); a KeyError names a
    symbol not bound."""
    symbols, f = _float_function(sp.sympify(expr))
    arguments = [values[s] for s in symbols]
    result = _called(f, arguments)
    return float(value(expr, values)) if result is None else result


def _called(f, arguments):
    """``f(*arguments)``, or None where there is no ``f`` or Python's arithmetic refuses (a division by 0):
    sympy evaluates the expression exactly then."""
    if f is None:
        return None
    try:
        return f(*arguments)
    except Exception:   # ZeroDivisionError, OverflowError, a domain error: the exact path decides
        return None


def value(expr, values: dict):
    """``expr`` at ``values`` (symbol → int, every free symbol bound): an int where the value is integral, else
    the exact sympy number (a fraction such as ``n_h/2`` at an odd ``n_h``)."""
    if isinstance(expr, sp.Symbol):
        return values[expr]
    if isinstance(expr, (int, sp.Integer)):
        return int(expr)
    symbols, f, fractional = compiled(expr)
    arguments = [Fraction(values[s]) if fractional else values[s] for s in symbols]   # a KeyError: unbound
    result = _called(f, arguments)
    if isinstance(result, int) or isinstance(result, Fraction) and result.denominator == 1:
        return int(result)
    exact = expr.xreplace({s: sp.Integer(values[s]) for s in symbols})
    return int(exact) if exact.is_integer else exact


@functools.lru_cache(maxsize=None)
def _shape_function(shape: tuple):
    shape = tuple(sp.sympify(d) for d in shape)
    symbols = tuple(sorted(set().union(*(d.free_symbols for d in shape)), key=str))
    fractional = not all(_integral(d) for d in shape)
    return symbols, _lambdified(symbols, shape), fractional


def shape_at(shape: tuple, values: dict):
    """The dimensions of ``shape`` at ``values`` as a tuple of exact numbers, for a quick comparison with an
    array's shape; None while a symbol is unbound."""
    if not shape:
        return ()
    symbols, f, fractional = _shape_function(shape)
    try:
        arguments = [Fraction(values[s]) if fractional else values[s] for s in symbols]
    except KeyError:
        return None
    return _called(f, arguments)
