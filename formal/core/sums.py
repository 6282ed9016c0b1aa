"""Deciding identities between expressions with sums over symbolic ranges.

:func:`normal` rewrites an expression so that identities of the kind the theorems need reduce to ones sympy
decides: summands expanded (``e^(a+b)`` into ``e^a·e^b``), a sum of an addition split into sums, factors free
of the summation index pulled out (``Σ_k c = n·c``), summation indices renamed canonically (so equal sums are
equal expressions), and a sum's range split at the bounds other sums start from
(``Σ_{k<a+b} = Σ_{k<a} + Σ_{a≤k<a+b}``).  :func:`decide` says whether ``lhs = rhs`` for every value of the
sizes and entries (exactly, no float), and otherwise looks for a counterexample at small concrete sizes and
small integer entries, evaluated exactly (a float only displays it).  A statement fails only with a
counterexample; without one it is *undecided*.

Examples
--------
>>> import sympy as sp
>>> from formal.core.symbols import d_e
>>> e, k, j = sp.IndexedBase("e"), sp.Symbol("k", integer=True), sp.Symbol("j", integer=True)
>>> decide(sp.Sum(e[k] + 1, (k, 0, d_e - 1)), sp.Sum(e[j], (j, 0, d_e - 1)) + d_e).holds
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

__all__ = ["normal", "is_zero", "decide", "counterexample", "Decision", "CANONICAL"]

#: The canonical summation indices: a sum over sums of depth n − 1 sums over ``s_n``.
CANONICAL = tuple(sp.Symbol(f"s_{n}", integer=True, nonnegative=True) for n in range(1, 9))


def _depth(expr) -> int:
    """The deepest canonical index ``expr`` uses (0 for none)."""
    used = [n + 1 for n, s in enumerate(CANONICAL) if expr.has(s)]
    return max(used, default=0)


def _expanded(expr):
    return sp.expand(expr, power_exp=True, mul=True, multinomial=True, power_base=False, log=False)


def _split_factor(factor, k):
    """``(free, bound)``: the parts of one factor free of ``k`` and not; an exponential's exponent is split
    (``e^(x_k − m) = e^(−m)·e^(x_k)``)."""
    if k not in factor.free_symbols:
        return factor, sp.Integer(1)
    if isinstance(factor, sp.exp):
        terms = sp.Add.make_args(_expanded(factor.args[0]))
        free = sp.Add(*[t for t in terms if k not in t.free_symbols])
        return sp.exp(free), sp.exp(sp.Add(*[t for t in terms if k in t.free_symbols]))
    return sp.Integer(1), factor


def _sum(summand, k, lo, hi):
    """``Σ_{k=lo}^{hi} summand`` in normal form (``summand`` normal already)."""
    summand = _expanded(summand)
    if isinstance(summand, sp.Add):
        return sp.Add(*[_sum(term, k, lo, hi) for term in summand.args])
    free, bound = [], []
    for factor in sp.Mul.make_args(summand):
        f, b = _split_factor(factor, k)
        free.append(f)
        bound.append(b)
    free, bound = sp.Mul(*free), sp.Mul(*bound)
    if bound == 1:
        return free * (hi - lo + 1)
    index = CANONICAL[_depth(bound)]
    return free * sp.Sum(bound.xreplace({k: index}), (index, lo, hi))


def _normal(expr):
    if not expr.args or isinstance(expr, (sp.Indexed, sp.Symbol)):
        return expr
    if isinstance(expr, sp.Sum):
        if len(expr.limits) != 1:
            return _normal(sp.Sum(sp.Sum(expr.function, *expr.limits[:-1]), expr.limits[-1]))
        (k, lo, hi), = expr.limits
        return _sum(_normal(expr.function), k, lo, hi)
    return expr.func(*[_normal(a) for a in expr.args])


def _starts(expr) -> set:
    return {s.limits[0][1] for s in expr.atoms(sp.Sum)}


def _split_ranges(expr):
    """Every sum whose range strictly contains the first index of another sum, split there."""
    starts = _starts(expr)

    def split(s):
        (k, lo, hi), = s.limits
        for start in starts:
            if start != lo and (start - lo).is_positive and (hi - start).is_nonnegative:
                return split(sp.Sum(s.function, (k, lo, start - 1))) + split(sp.Sum(s.function, (k, start, hi)))
        return s
    return expr.replace(lambda e: isinstance(e, sp.Sum), split)


def normal(expr):
    """``expr`` in the normal form described in the module docstring."""
    once = _expanded(_normal(sp.sympify(expr)))
    split = _split_ranges(once)
    return once if split == once else _expanded(_normal(split))


def is_zero(expr) -> bool:
    """Whether ``expr`` is 0 for every value of its symbols, decided exactly: its normal form over a common
    denominator has a numerator that expands to 0."""
    form = normal(expr)
    if form == 0:
        return True
    numerator = sp.numer(sp.together(form))
    return normal(numerator) == 0 or sp.cancel(form) == 0


@dataclass(frozen=True)
class Decision:
    """``holds``: True (an identity), False (``detail`` is the counterexample) or None (undecided, ``detail``
    says why)."""

    holds: bool | None
    detail: str


def _sizes(expr) -> list:
    return sorted((s for s in expr.free_symbols if s.is_integer and s.is_positive), key=str)


def _point(expr, sizes: dict, ranges: dict, rng):
    """Every symbol of ``expr`` at a small value: sizes as given, axis indices inside their ranges, entries and
    scalars small integers (a symbol known ≥ 0 gets one > 0)."""
    at = {s: sp.Integer(v) for s, v in sizes.items()}
    for axis, size in ranges.items():
        at[axis] = sp.Integer(int(rng.integers(0, int(sp.sympify(size).xreplace(at)))))
    done = sp.sympify(expr).xreplace(at).doit()
    values, indexed = {}, done.atoms(sp.Indexed)
    labels = {a.base.label for a in indexed}
    for atom in sorted(indexed | (done.free_symbols - set(at) - labels), key=str):
        low = 1 if atom.is_nonnegative else -2     # ε > 0: no 0/0 hidden by a cancelled numerator
        values[atom] = sp.Integer(int(rng.integers(low, 3)))
    return at, values, done.xreplace(values)


def _show(at: dict, values: dict) -> str:
    shown = [f"{k} = {v}" for k, v in at.items()] + [f"{k} = {v}" for k, v in values.items()]
    return ", ".join(shown[:12]) + (", …" if len(shown) > 12 else "")


def counterexample(lhs, rhs, *, ranges=None, largest: int = 3, tries: int = 6, seed: int = 0):
    """The first point where ``lhs ≠ rhs`` (exactly), at sizes 1 … ``largest`` (smallest first) and ``tries``
    draws of small integer entries each; None if none is found.  ``ranges`` maps an axis index symbol to the
    size it runs below."""
    ranges = dict(ranges or {})
    difference = sp.sympify(lhs) - sp.sympify(rhs)
    sizes = _sizes(difference) + [s for r in ranges.values() for s in _sizes(sp.sympify(r))]
    sizes = sorted(set(sizes) - set(ranges), key=str)
    rng = np.random.default_rng(seed)
    grid = np.array(np.meshgrid(*[range(1, largest + 1)] * len(sizes), indexing="ij")).reshape(len(sizes), -1).T
    for values in sorted(grid.tolist(), key=sum):
        for _ in range(tries):
            at, entries, gap = _point(difference, dict(zip(sizes, values)), ranges, rng)
            if not gap.is_number or gap.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
                continue
            if sp.N(gap, 30) != 0 and not sp.simplify(gap) == 0:
                left = sp.N(sp.sympify(lhs).xreplace(at).doit().xreplace(entries), 8)
                right = sp.N(sp.sympify(rhs).xreplace(at).doit().xreplace(entries), 8)
                return f"at {_show(at, entries)}: {left} ≠ {right}"
    return None


def decide(lhs, rhs, *, ranges=None) -> Decision:
    """Whether ``lhs = rhs`` for all sizes and entries: proved exactly, refuted by a counterexample, or
    undecided (see the module docstring)."""
    if is_zero(sp.sympify(lhs) - sp.sympify(rhs)):
        return Decision(True, "the difference normalises to 0 for every size")
    found = counterexample(lhs, rhs, ranges=ranges)
    if found is not None:
        return Decision(False, found)
    return Decision(None, "undecided: the difference does not normalise to 0, and no counterexample was found "
                          "at sizes 1 … 3")
