"""Symbolic values of symbolic shape: what an op's *meaning* (:meth:`formal.ops.Op.meaning`) maps.

A :class:`Value` is a tensor whose sizes are the algorithm's size symbols (``d_e``, ``ell_z``, …) and whose
entry at the index ``(i_0, i_1, …)`` (the symbols :data:`AXES`) is a sympy expression: an input vector ``e``
of length ``d_e`` has entry ``e[i_0]`` (a :class:`sympy.Indexed`), a mean over it is
``Σ_{k=0}^{d_e−1} e[k] / d_e`` (a :class:`sympy.Sum` over a fresh index whose bound is the symbolic size).
Indices start at 0, as numpy's do, so that an instantiated value and an executed array line up.

Examples
--------
>>> from formal.core.symbols import d_e
>>> e = entries("e", (d_e,))
>>> e.expr
e[i_0]
>>> total(e.expr, AXES[0], d_e).function
e[i_0]
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from itertools import count

import sympy as sp

__all__ = ["Value", "AXES", "entries", "constant", "fresh", "total", "broadcast", "ELEMENTWISE"]

#: The index symbols of a value's axes: entry ``(i_0, i_1)`` of a matrix.
AXES = tuple(sp.Symbol(f"i_{n}", integer=True, nonnegative=True) for n in range(4))

_FRESH = count(1)

#: The symbolic face of each binary elementwise ufunc (what ``np.add`` … compute on numbers).
ELEMENTWISE = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": operator.truediv}


@dataclass(frozen=True)
class Value:
    """A tensor of ``shape`` (sympy sizes) whose entry at ``AXES[:rank]`` is ``expr``."""

    shape: tuple
    expr: sp.Expr

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def index(self) -> tuple:
        """The index symbols ``expr`` is written in: one per axis."""
        return AXES[:self.rank]

    def at(self, *index) -> sp.Expr:
        """The entry at ``index`` (symbols or integers; replaced all at once, so a permutation of the axes is
        safe)."""
        if len(index) != self.rank:
            raise ValueError(f"a value of rank {self.rank} indexed by {len(index)} indices")
        return self.expr.xreplace(dict(zip(self.index, index)))

    def map(self, function, shape=None) -> "Value":
        """``function`` applied to every entry (the same shape unless ``shape`` is given)."""
        return Value(self.shape if shape is None else tuple(shape), function(self.expr))


def entries(name: str, shape) -> Value:
    """A value of independent real entries ``name[i_0, …]`` (a real symbol ``name`` for a scalar)."""
    shape = tuple(sp.sympify(s) for s in shape)
    if not shape:
        return Value((), sp.Symbol(name, real=True))
    return Value(shape, sp.IndexedBase(name, real=True)[AXES[:len(shape)]])


def constant(value, shape=()) -> Value:
    """Every entry ``value`` (an all-ones mask, γ = 1)."""
    return Value(tuple(sp.sympify(s) for s in shape), sp.sympify(value))


def fresh() -> sp.Symbol:
    """A summation index no other expression uses."""
    return sp.Symbol(f"k_{next(_FRESH)}", integer=True, nonnegative=True)


def total(expr, index, size) -> sp.Expr:
    """``Σ_{index=0}^{size−1} expr``: a sum over a symbolic range."""
    return sp.Sum(expr, (index, 0, sp.sympify(size) - 1))


def broadcast(a: Value, b: Value, combine) -> Value:
    """``combine`` of the entries of ``a`` and ``b`` as numpy broadcasts them: the trailing axes line up, so a
    scalar meets every entry and a row of m values meets every row of a d×m matrix."""
    long, short = (a, b) if a.rank >= b.rank else (b, a)
    outer = long.index
    left = a.at(*outer[len(outer) - a.rank:])
    right = b.at(*outer[len(outer) - b.rank:])
    return Value(long.shape, combine(left, right))
