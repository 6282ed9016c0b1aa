"""Costs and the named FLOP-counting conventions.

Every count is a sympy expression kept in one canonical form: an expanded polynomial in the size
symbols.  Substitution uses ``xreplace``; library code never calls ``simplify``.  The conventions themselves
(:data:`CONVENTIONS`, :data:`BACKWARD`) are plain data in :mod:`formal.costs.conventions`, re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import sympy as sp

from ..core.symbols import by_name
from ..errors import ConfigError
from .conventions import BACKWARD, CONVENTIONS, check_convention

__all__ = ["CONVENTIONS", "BACKWARD", "gradient_step", "Work", "Cost", "check_convention"]


def gradient_step(forward: dict, params) -> dict:
    """FLOPs of a gradient step after a forward pass costing ``forward`` (convention → FLOPs): the backward
    pass by :data:`BACKWARD`'s rule, and under ``full`` the SGD update, 2 FLOPs per parameter."""
    return {c: BACKWARD[c][0] * forward[c] + (2 * params if c == "full" else 0) for c in CONVENTIONS}


def _canon(expr) -> sp.Expr:
    return sp.expand(sp.sympify(expr))


@dataclass(frozen=True)
class Work:
    """The work of an op, a line or a whole algorithm: FLOPs under every convention, scalars
    materialised (``memory``), and sequential depth in pseudocode lines."""

    flops: dict = field(default_factory=lambda: {c: sp.Integer(0) for c in CONVENTIONS})
    memory: sp.Expr = sp.Integer(0)
    depth: sp.Expr = sp.Integer(0)

    def __add__(self, other: "Work") -> "Work":
        return Work({c: self.flops[c] + other.flops[c] for c in CONVENTIONS},
                    self.memory + other.memory, self.depth + other.depth)

    def times(self, count, *, sequential: bool) -> "Work":
        """The work of ``count`` repetitions: a parallel loop adds no depth, a sequential one multiplies it."""
        return Work({c: count * f for c, f in self.flops.items()}, count * self.memory,
                    count * self.depth if sequential else self.depth)

    def summed(self, index, count) -> "Work":
        """The work of a loop whose iteration ``index`` = 1, …, ``count`` costs this (a polynomial in
        ``index``): each count summed in closed form (Faulhaber), still a polynomial."""
        return Work({c: _sum_over(f, index, count) for c, f in self.flops.items()},
                    _sum_over(self.memory, index, count), _sum_over(self.depth, index, count))

    def xreplace(self, substitution: dict) -> "Work":
        return Work({c: f.xreplace(substitution) for c, f in self.flops.items()},
                    self.memory.xreplace(substitution), self.depth.xreplace(substitution))

    def canonical(self) -> "Work":
        return Work({c: _canon(f) for c, f in self.flops.items()}, _canon(self.memory), _canon(self.depth))


@lru_cache(maxsize=None)
def _power_sum(k: int):
    """``Σ_{i=1}^{n} i^k`` as a polynomial in the symbol ``n``."""
    i, n = sp.Dummy("i", integer=True), sp.Symbol("n", integer=True)
    return n, sp.expand(sp.summation(i ** k, (i, 1, n)))


def _sum_over(expr, index, count) -> sp.Expr:
    expr = sp.expand(expr)
    if index not in expr.free_symbols:
        return sp.expand(count * expr)
    total = sp.Integer(0)
    for (k,), coeff in sp.Poly(expr, index).terms():
        n, power_sum = _power_sum(k)
        total += coeff * power_sum.xreplace({n: count})
    return sp.expand(total)


@dataclass(frozen=True)
class Cost:
    """The cost of an algorithm under one FLOP convention.

    Attributes
    ----------
    params : sympy.Expr
        Number of scalars in the parameters (a tied matrix counts once).
    flops : sympy.Expr
        Floating-point operations under ``convention`` (see :data:`CONVENTIONS`).
    memory : sympy.Expr
        Scalars materialised by the lines (every op's result, no fusion and no freeing; views are free):
        what a naive forward pass stores for the backward pass.
    depth : sympy.Expr
        Sequential steps: one per line, a call counts its callee's, a parallel loop its body's once.
    convention : str
    """

    params: sp.Expr
    flops: sp.Expr
    memory: sp.Expr
    depth: sp.Expr
    convention: str

    def as_dict(self) -> dict:
        return {"params": self.params, "flops": self.flops, "memory": self.memory, "depth": self.depth}

    def _repr_latex_(self) -> str:
        """In a notebook: the four formulas, aligned."""
        from ..core.symbols import latex
        rows = [(r"\text{parameters}", self.params), (rf"\text{{FLOPs ({self.convention})}}", self.flops),
                (r"\text{memory}", self.memory), (r"\text{depth}", self.depth)]
        body = r" \\ ".join(f"{name} &= {latex(value)}" for name, value in rows)
        return rf"$$\begin{{aligned}} {body} \end{{aligned}}$$"

    def evaluate(self, sizes: dict) -> dict:
        """Each count as an exact number (an int, or a Fraction where a count is not whole), for sizes given as
        ``{symbol or name: size}``.  Each size passes the gate every number passes
        (:func:`formal.guards.numbers.size`): a positive integer however it is spelled (``8``, ``8.0``, ``"2*4"``,
        read by the formula grammar, never executed); anything else is a ConfigError naming it."""
        from fractions import Fraction

        from ..guards.numbers import size
        values = {}
        for key, value in sizes.items():
            if isinstance(value, sp.Basic) and value.is_Integer:
                value = int(value)
            values[key if isinstance(key, sp.Symbol) else by_name(key)] = sp.Integer(size(value, f"size {key}",
                                                                                          names=()))
        out = {}
        for name, expr in self.as_dict().items():
            value = expr.xreplace(values)
            missing = sorted(map(str, value.free_symbols))
            if missing:
                raise ConfigError(f"cannot evaluate the {name} count: no value for {', '.join(missing)}")
            if not value.is_Rational:       # a ceiling or a logarithm that evaluates to a whole number
                value = sp.nsimplify(value)
            if not value.is_Rational:
                raise ConfigError(f"the {name} count is {value} at these sizes, not a rational number")
            exact = Fraction(int(value.p), int(value.q))
            out[name] = exact.numerator if exact.denominator == 1 else exact
        return out

