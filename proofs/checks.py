"""Shared ways of deciding a statement: a symbolic identity, a numeric property over seeded examples."""

from __future__ import annotations

import numpy as np

from .theorem import Outcome

__all__ = ["identity", "nonnegative", "seeded", "rng_arrays"]


def identity(lhs, rhs, what: str = "") -> Outcome:
    """``lhs = rhs`` for every value of the sizes (sympy), or the smallest assignment where they differ."""
    import sympy as sp

    from formal.core.symbols import text
    from formal.costs.inequalities import counterexample
    difference = sp.simplify(sp.sympify(lhs) - sp.sympify(rhs))
    if difference == 0:
        return Outcome(True, f"{what}{text(lhs)} = {text(rhs)}")
    point = counterexample(difference, lambda v: v != 0)
    if point is None:
        return Outcome(False, f"{what}the difference {text(difference)} is not identically 0")
    at = ", ".join(f"{k} = {v}" for k, v in point[0].items())
    return Outcome(False, f"{what}at {at} the sides differ by {point[1]}")


def nonnegative(expr, what: str = "") -> Outcome:
    """``expr ≥ 0`` for every size ≥ 1 (:func:`formal.costs.inequalities.nonnegative`), or the smallest assignment
    where it is negative."""
    from formal.core.symbols import text
    from formal.costs import inequalities
    if inequalities.nonnegative(expr):
        return Outcome(True, f"{what}≥ 0 for every size ≥ 1 (all coefficients ≥ 0 after x = 1 + t)")
    point = inequalities.counterexample(expr, lambda v: v < 0)
    where = "" if point is None else " at " + ", ".join(f"{k} = {v}" for k, v in point[0].items())
    return Outcome(False, f"{what}{text(expr)} is not ≥ 0{where}")


def rng_arrays(rng, shapes: dict) -> dict:
    """Arrays of standard normal entries of the given shapes."""
    return {name: rng.normal(size=shape) for name, shape in shapes.items()}


def seeded(check, seeds: int = 20, sizes=(1, 2, 3, 4, 6), label: str = "ℓ"):
    """Run ``check(rng, n)`` for each size n (called ``label``) and ``seeds`` seeds; the first failure (a
    string) is the counterexample, smallest size first."""
    for n in sizes:
        for seed in range(seeds):
            failure = check(np.random.default_rng([seed, n]), n)
            if failure:
                return Outcome(False, f"{failure} ({label} = {n}, seed {seed})")
    return Outcome(True, f"held on {seeds} seeds at each of {label} = {', '.join(map(str, sizes))}")
