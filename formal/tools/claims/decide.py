"""Verdicts: each claim's assertion judged against the derived value, with the reason for a failure.

``equals`` is exact (a number) or a symbolic identity (a formula); ``approx`` holds within the precision
its figure states (:mod:`formal.tools.claims.figures`) or within ``rel_tol``/``abs_tol``; ``at_most`` and
``at_least`` compare numbers, or prove a formula inequality for every size ≥ 1 (all coefficients of the
difference non-negative after ``x = 1 + t``), or find a counterexample; ``theta``, ``big_o`` and
``leading`` are decided by :mod:`formal.costs.orders` (a graph's growth is measured on its structure
at ``2^10 … 2^50``).  A failure gives the derived figure and relative error, or the difference of two
formulas with a small assignment of the sizes where they differ and, where sympy solves it, the condition
under which the claim would hold.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ...costs.inequalities import counterexample, nonnegative
from ...errors import FormalError, shown
from .claim import Claim, ClaimError
from .figures import figure
from .numbers import claimed_number, number_claim
from .subjects import value_of
from .values import Value, formula_value
from .verdict import Verdict, claimed_formula, show_number

__all__ = ["Verdict", "decide", "not_reached", "undecided", "too_long", "ratio_subject", "show_number"]


#: Seconds one claim may take to decide (its formulas could be made to expand without end); an
#: implementation claim is bounded by conform's own time limit per call instead.
TIMEOUT = 30.0


def decide(claim: Claim, *, timeout: float | None = TIMEOUT, budget: bool = False) -> Verdict:
    """Judge one claim; never raises for a claim's content (an invalid claim is a verdict).  A claim that
    takes more than ``timeout`` seconds (main thread of Unix; None: no limit) is invalid — or, with ``budget``
    (the limit is what is left of a run's time budget, not the claim's own), undecided: not reached."""
    from ...guards.limits import TimeLimit, time_limit
    if claim.error is not None:
        return Verdict(claim, "invalid", reason=claim.error)
    try:
        if claim.kind == "implementation":
            return _checked_elsewhere(claim)
        with time_limit(timeout):
            if claim.assertion and claim.assertion[0] == "property":
                return _checked_elsewhere(claim)
            return _decide(claim)
    except TimeLimit:
        if budget:
            return not_reached(claim, "the run's time budget ran out while deciding it")
        return too_long(claim, timeout)
    except FormalError as exc:  # a ClaimError, or the spec refusing what the claim describes
        return Verdict(claim, "invalid", _claimed(claim), reason=str(exc))
    except RecursionError:
        return Verdict(claim, "invalid", _claimed(claim), reason="the claim nests too deeply to be read")
    except (ArithmeticError, ValueError, TypeError) as exc:  # sympy on a hostile number: overflow, 1/0, complex
        return Verdict(claim, "invalid", _claimed(claim),
                       reason=f"the claim cannot be evaluated: {type(exc).__name__} "
                              f"({' '.join(str(exc).split())[:200]})")
    except MemoryError:
        return Verdict(claim, "undecided", _claimed(claim),
                       reason="deciding the claim ran out of memory: it was not decided")
    except Exception as exc:  # noqa: BLE001 — one claim's bug must not lose the other claims' verdicts
        return Verdict(claim, "undecided", _claimed(claim),
                       reason=f"not decided: an internal error ({type(exc).__name__}: "
                              f"{' '.join(str(exc).split())[:200]}) — a bug in formal-transformers; please report it "
                              "with the claim")


def too_long(claim: Claim, timeout: float) -> Verdict:
    """The verdict of a claim that took more than ``timeout`` seconds to decide: invalid."""
    return Verdict(claim, "invalid", _claimed(claim),
                   reason=f"the claim took more than {timeout:g} s to decide (raise the limit with --timeout)")


def not_reached(claim: Claim, why: str = "the run's time budget ran out before it") -> Verdict:
    """The verdict of a claim a time budget left undecided."""
    return undecided(claim, f"not reached: {why} (--time-budget)", reached=False)


def undecided(claim: Claim, reason: str, *, reached: bool = True) -> Verdict:
    """The verdict of a claim the run did not decide, with the ``reason``: a worker it killed every time it ran,
    a time budget, Ctrl-C (:data:`~formal.tools.claims.verdict.INTERRUPTED`, not ``reached``)."""
    return Verdict(claim, "undecided", _claimed(claim), reason=reason, reached=reached)


def _claimed(claim) -> str:
    if not claim.assertion:
        return ""
    name, value = claim.assertion
    return f"{name} {value if isinstance(value, str) else shown(value)}"


def _checked_elsewhere(claim) -> Verdict:
    """``property`` and ``implementation`` claims run numbers through the spec or the user's code
    (:mod:`.implementations`, on ``reference``'s conformance checks)."""
    from .implementations import check_implementation, check_property
    check = check_implementation if claim.kind == "implementation" else check_property
    holds, derived, reason = check(claim)
    return Verdict(claim, "holds" if holds else "fails", _claimed(claim), derived, reason)


def _decide(claim: Claim) -> Verdict:
    name, raw = claim.assertion
    asymptotic = name in ("theta", "big_o", "leading")
    value = value_of(claim.subject, claim.quantity, formula=asymptotic and "graph" not in claim.subject,
                     growing=claim.growing, base_dir=claim.base_dir)
    if claim.ratio_to is not None:
        subject, quantity = ratio_subject(claim)
        other = value_of(subject, quantity, formula=value.kind == "formula", growing=claim.growing,
                         base_dir=claim.base_dir)
        value = _ratio(value, other)
    claimed = _claimed(claim)
    if value.kind == "array":
        return _arrays(claim, value, claimed)
    if value.measure is not None:
        from .growth import measured
        return measured(claim, value, claimed)
    if name in ("theta", "big_o", "leading"):
        if value.kind == "number" and claim.growing:  # a cost that does not depend on the growing sizes
            import sympy as sp
            constant = Fraction(value.value)
            value = Value("formula", sp.Rational(constant.numerator, constant.denominator), {}, value.what)
        if value.kind != "formula":
            raise ClaimError(f"{name} needs a formula, and {value.what} is the number {show_number(value.value)}: "
                             "name the growing sizes with in = [...] or leave them unbound")
        from .growth import asymptotic
        return asymptotic(claim, value, claimed)
    if value.kind == "formula":
        return _formula_claim(claim, value, claimed)
    return number_claim(claim, value, claimed)


def ratio_subject(claim: Claim) -> tuple:
    """What ``ratio_to`` divides by: ``(subject, quantity)``.  A ratio_to naming a subject (model, algorithm,
    graph) is that subject with its own fields; one naming none is the claim's own subject with the fields it
    gives changed (its ``quantity`` above all: "a training step costs 3× the forward pass")."""
    ratio = dict(claim.ratio_to)
    quantity = ratio.pop("quantity", claim.quantity)
    if any(k in ratio for k in ("model", "algorithm", "graph")):
        return ratio, quantity
    return {**claim.subject, **ratio}, quantity


def _ratio(a: Value, b: Value) -> Value:
    if a.kind == "array" or b.kind == "array":
        raise ClaimError("ratio_to compares quantities, not arrays")
    if a.kind == "formula" or b.kind == "formula":
        import sympy as sp
        divisor = sp.expand(sp.sympify(_sym(b)))
        if divisor == 0:
            raise ClaimError(f"ratio_to: {b.what} is 0 at every size, so the ratio has no value")
        expr = sp.cancel(sp.sympify(_sym(a)) / divisor)
        if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise ClaimError(f"ratio_to: {a.what} / {b.what} is not finite ({expr})")
        return formula_value(expr, f"{a.what} / {b.what}")
    if b.value == 0:
        raise ClaimError(f"ratio_to: {b.what} is 0, so the ratio has no value")
    quotient = Fraction(a.value) / Fraction(b.value)
    return Value("number", quotient.numerator if quotient.denominator == 1 else quotient, {}, f"{a.what} / {b.what}")


def _sym(v: Value):
    import sympy as sp
    if v.kind == "formula":
        return v.value
    f = Fraction(v.value)
    return sp.Rational(f.numerator, f.denominator)


# ------------------------------------------------------------------------------------------------ arrays
def _arrays(claim, value: Value, claimed) -> Verdict:
    import numpy as np
    name, raw = claim.assertion
    if name not in ("equals", "approx", "rounds_to"):
        raise ClaimError(f"{name} does not apply to an array output (use equals, approx or rounds_to)")
    got = value.value
    figures = np.vectorize(lambda x: x, otypes=[object])(np.array(raw, dtype=object)) if raw is not None else None
    if np.shape(figures) != got.shape:
        raise ClaimError(f"{name} gives an array of shape {np.shape(figures)}, the output's is {got.shape}")
    flat_claim, flat_got = list(np.ravel(figures)), list(np.ravel(got))
    first_bad = None
    for i, (c, g) in enumerate(zip(flat_claim, flat_got)):
        if name == "rounds_to" or (name == "approx" and isinstance(c, str) and claim.rel_tol is None
                                   and claim.abs_tol is None):
            fig = figure(str(c) if isinstance(c, int) and not isinstance(c, bool) else c, name)
            if not math.isfinite(float(g)):
                ok = False
            else:
                ok = (fig.holds if name == "approx" else fig.rounds)(Fraction(repr(float(g))))
        else:
            if name == "approx" and claim.rel_tol is None and claim.abs_tol is None:
                raise ClaimError("approx with bare numbers states no precision: write each as a string figure "
                                 "(\"0.09\") or give rel_tol or abs_tol")
            target = claimed_number(c, {}, name)
            if not math.isfinite(float(g)):
                ok = False
            elif name == "equals":      # the output is a float: equal where the claim rounds to it
                ok = float(g) == float(target)
            else:                       # exactly: the float's own value against the number claimed
                target = target if isinstance(target, Fraction) else Fraction(str(target.evalf(40)))
                ok = abs(Fraction(float(g)) - target) <= max((claim.rel_tol or 0) * abs(target), claim.abs_tol or 0)
        if not ok and first_bad is None:
            first_bad = (i, c, g)
    derived = [float(x) for x in flat_got] if got.ndim <= 1 else got.tolist()
    if first_bad is None:
        return Verdict(claim, "holds", claimed, derived, "")
    i, c, g = first_bad
    return Verdict(claim, "fails", claimed, derived, f"entry {i}: derived {g:.6g}, claimed {c}")


# ---------------------------------------------------------------------------------------------- formulas
def _formula_claim(claim, value: Value, claimed) -> Verdict:
    import sympy as sp

    from ...core.symbols import text
    name, raw = claim.assertion
    if name in ("approx", "rounds_to"):
        raise ClaimError(f"{name} compares numbers, and {value.what} is the formula {text(value.value)}: bind its "
                         "sizes to numbers, or use equals, leading or theta")
    target = claimed_formula(raw, value, name)
    derived = value.value
    if name == "equals":
        difference = sp.expand(sp.cancel(derived - target))
        if difference == 0:
            return Verdict(claim, "holds", claimed, text(derived), "an identity")
        return Verdict(claim, "fails", claimed, text(derived), _why_different(derived, target, difference))
    gap = sp.expand(sp.cancel(target - derived if name == "at_most" else derived - target))
    if nonnegative(gap):
        return Verdict(claim, "holds", claimed, text(derived), "for every size ≥ 1")
    point = counterexample(gap, lambda v: v < 0)
    if point is not None:
        at = {s: point[0][str(s)] for s in gap.free_symbols}
        where = ", ".join(f"{k} = {v}" for k, v in point[0].items())
        return Verdict(claim, "fails", claimed, text(derived),
                       f"at {where} the derived value is {text(derived.xreplace(at))}, "
                       f"{'above' if name == 'at_most' else 'below'} the claimed {text(target.xreplace(at))}")
    return Verdict(claim, "undecided", claimed, text(derived),
                   f"not proved for every size ≥ 1, and no counterexample among small sizes "
                   f"(the margin is {text(gap)})")


def _why_different(derived, target, difference) -> str:
    import sympy as sp

    from ...core.symbols import text
    parts = [f"the derived minus the claimed is {text(sp.factor(difference))}"]
    point = counterexample(difference, lambda v: v != 0)
    if point is not None:
        symbols = {str(s): s for s in (derived.free_symbols | target.free_symbols)}
        at = {symbols[k]: v for k, v in point[0].items() if k in symbols}
        parts.append(f"at {', '.join(f'{k} = {v}' for k, v in point[0].items())} the derived value is "
                     f"{text(derived.xreplace(at))}, the claimed {text(target.xreplace(at))}")
    condition = _condition(difference)
    if condition:
        parts.append(f"holds when {condition}")
    return "; ".join(parts)


def _condition(difference) -> str | None:
    """``d_mid = d_attn``: a size for which sympy solves ``difference = 0`` with a positive solution."""
    import sympy as sp

    from ...core.symbols import text
    for s in sorted(difference.free_symbols, key=str):
        try:
            if sp.Poly(difference, s).degree() > 2:
                continue
            solutions = sp.solve(difference, s)
        except (NotImplementedError, sp.PolynomialError, ValueError):
            continue
        good = [x for x in solutions if not (x.is_number and not x.is_positive) and x.free_symbols]
        if len(good) == 1:
            return f"{text(s)} = {text(good[0])}"
    return None
