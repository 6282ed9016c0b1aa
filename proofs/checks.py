"""Shared ways of deciding a statement: a symbolic identity, a numeric property over seeded examples."""

from __future__ import annotations

import numpy as np

from .theorem import Outcome

__all__ = ["admissible", "identity", "nonnegative", "seeded", "rng_arrays", "gap"]


def gap(a, b) -> float:
    """max |a − b| over the entries, ∞ where the shapes differ or exactly one side is NaN (a NaN the other side
    lacks is a difference, where ``np.max(np.abs(a − b)) > tol`` would be False and let it pass)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or np.any(np.isnan(a) != np.isnan(b)):
        return float("inf")
    both = ~np.isnan(a)
    return float(np.max(np.abs(a[both] - b[both]), initial=0.0))


def admissible(constraints):
    """Whether an assignment of sizes (symbol → int) meets every one of ``constraints`` whose symbols it binds
    (:class:`~formal.core.constraints.Constraint`): a counterexample must be one the sizes can take."""
    def meets(values):
        return all(c.holds(values) for c in constraints if all(s in values for s in c.symbols))
    return meets


def _search(expr, bad, constraints):
    """The smallest assignment of sizes 1 … 4 where ``bad(value)`` (:func:`formal.costs.inequalities.counterexample`),
    else the first of the diagonal: every size equal to 2, 4, …, 1024 (where a polynomial of many sizes shows its
    leading terms, past the small grid)."""
    import sympy as sp

    from formal.costs.inequalities import counterexample
    point = counterexample(expr, bad, admissible=admissible(constraints))
    if point is not None:
        return point
    symbols = sorted(sp.sympify(expr).free_symbols, key=str)
    for k in (2 ** n for n in range(1, 11)):
        values = {s: k for s in symbols}
        if admissible(constraints)(values):
            v = sp.sympify(expr).xreplace(values)
            if v.is_number and bad(v):
                return {str(s): k for s in symbols}, v
    return None


def identity(lhs, rhs, what: str = "", *, constraints=()) -> Outcome:
    """``lhs = rhs`` for every value of the sizes (sympy): holds, or fails at the smallest assignment where the
    sides differ; undecided when the difference does not simplify to 0 and no assignment tried tells them
    apart (sympy may have missed an identity).  ``constraints``: the size constraints a counterexample must meet."""
    import sympy as sp

    from formal.core.symbols import text
    difference = sp.simplify(sp.sympify(lhs) - sp.sympify(rhs))
    if difference == 0:
        return Outcome(True, f"{what}{text(lhs)} = {text(rhs)}")
    point = _search(difference, lambda v: v != 0, constraints)
    if point is None:
        return Outcome.undecided(f"{what}the difference {text(difference)} does not simplify to 0, and no "
                                 "assignment of sizes 1 … 4, nor all sizes equal to 2 … 1024, makes it nonzero")
    at = ", ".join(f"{k} = {v}" for k, v in point[0].items())
    return Outcome(False, f"{what}at {at} the sides differ by {point[1]}")


def nonnegative(expr, what: str = "", *, constraints=()) -> Outcome:
    """``expr ≥ 0`` for every size ≥ 1 (:func:`formal.costs.inequalities.nonnegative`, a sufficient test): holds,
    or fails at the smallest assignment where it is negative; undecided when the test does not apply and no
    assignment tried is negative (which is not a disproof)."""
    from formal.core.symbols import text
    from formal.costs import inequalities
    if inequalities.nonnegative(expr):
        return Outcome(True, f"{what}≥ 0 for every size ≥ 1 (all coefficients ≥ 0 after x = 1 + t)")
    point = _search(expr, lambda v: v < 0, constraints)
    if point is None:
        return Outcome.undecided(f"{what}the sufficient test does not prove {text(expr)} ≥ 0, and no assignment "
                                 "of sizes 1 … 4, nor all sizes equal to 2 … 1024, makes it negative")
    at = ", ".join(f"{k} = {v}" for k, v in point[0].items())
    return Outcome(False, f"{what}at {at} it is {point[1]} < 0")


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
