"""Verdicts on numbers: a derived number (an int or a Fraction, exact) against a claimed one, decided exactly.

The claimed side is an int, a float (read as the decimal it was written as: ``0.1`` is 1/10), a figure
(``"117M"``) or a formula at the subject's sizes, whose value may be irrational (``"sqrt(15485265815076864)"``,
``"6*N*log(2)"``): it is kept as an exact sympy number and compared by :func:`formal.tools.claims.exact.compare`.  A
comparison that cannot be decided exactly makes the verdict *undecided*.

``approx`` with a figure holds within one unit of its last digit (the interval is named in the reason);
``rounds_to`` holds when the derived value rounds to the figure (within half a unit); ``rel_tol``/``abs_tol``
give the interval instead.
"""

from __future__ import annotations

from fractions import Fraction

from ...core.formula import FormulaError, parse
from ...errors import shown
from ...guards.numbers import exact as exact_number, written
from .claim import ClaimError
from .exact import as_sympy, compare
from .figures import decimal_text, figure, is_figure
from .verdict import Verdict, show_number

__all__ = ["number_claim", "claimed_number", "relative_text", "json_number"]


def json_number(x):
    """A derived number as the JSON report holds it: an int, or a Fraction as ``"p/q"``."""
    if isinstance(x, Fraction):
        return x.numerator if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
    return x


def claimed_number(raw, sizes, what):
    """A claimed number, exact: a Fraction, or a sympy number where the formula is irrational."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise ClaimError(f"{what} = {shown(raw)} is not a number")
    if not isinstance(raw, str):        # the gate: an int, or the decimal a file's float was written as
        return Fraction(exact_number(raw, what))
    if is_figure(raw):
        return figure(raw, what).value
    formula = parse(raw, names=set(sizes), what=what)
    try:
        exact = formula.value({k: v for k, v in sizes.items() if isinstance(v, (int, Fraction))})
    except FormulaError:        # a name bound to a formula (d_mid = "d_attn"): sympy's, below
        exact = None
    if exact is not None:
        return Fraction(exact)
    number = formula.sympy({k: as_sympy(v) if isinstance(v, (int, Fraction)) else v for k, v in sizes.items()})
    if number.free_symbols or number.is_real is False:
        raise ClaimError(f"{what} {shown(raw)} is not a real number here")
    if number.is_Rational:
        return Fraction(int(number.p), int(number.q))
    return number


def _exact_text(x) -> str:
    return show_number(x) if isinstance(x, (int, Fraction)) else f"{x} (≈{decimal_text(Fraction(str(x.evalf(12))))})"


def relative_text(derived, claimed) -> str:
    """How far ``derived`` is from ``claimed``, as a percentage of it (exact; any magnitude)."""
    if not isinstance(claimed, Fraction):
        claimed = Fraction(str(as_sympy(claimed).evalf(30)))
    if claimed == 0:
        return f"differs by {show_number(Fraction(derived) - claimed)}"
    error = (Fraction(derived) - claimed) / abs(claimed) * 100
    if error == 0:
        return "equal to the claim"
    text = decimal_text(error, 3)
    return f"{'+' if error > 0 else ''}{text} % from the claim"


def _undecided(claim, claimed, derived, target) -> Verdict:
    return Verdict(claim, "undecided", claimed, json_number(derived),
                   f"derived {show_number(derived)}; the claimed {_exact_text(target)} cannot be compared with it "
                   "exactly (its digits do not separate it from the derived value, and it is not proved equal)")


def _figure_claim(claim, name, raw, derived, claimed) -> Verdict:
    fig = figure(str(raw) if isinstance(raw, int) and not isinstance(raw, bool) else raw, name)
    ok = fig.holds(derived) if name == "approx" else fig.rounds(derived)
    interval = fig.describe() if name == "approx" else fig.describe_rounding()
    meaning = ("one unit of its last digit" if name == "approx"
               else "the values that round to it, half a unit of its last digit either way")
    reason = (f"{show_number(derived)} is {'within' if ok else 'outside'} {interval} ({meaning} of {raw!r}); "
              f"{relative_text(derived, fig.value)}")
    return Verdict(claim, "holds" if ok else "fails", claimed, json_number(derived), reason)


def _tolerance_claim(claim, raw, value, derived, claimed) -> Verdict:
    target = claimed_number(raw, value.names, "approx")
    rel, tol = Fraction(claim.rel_tol or 0), Fraction(claim.abs_tol or 0)
    sign_t = compare(target, Fraction(0))
    gap = compare(derived, target)
    if sign_t is None or gap is None:
        return _undecided(claim, claimed, derived, target)
    # |d − t| ≤ max(rel·|t|, abs), both sides exact: the signs found above take the absolute values
    distance = gap * (as_sympy(Fraction(derived)) - as_sympy(target))
    within = [compare(bound, distance) for bound in (as_sympy(rel) * sign_t * as_sympy(target), as_sympy(tol))]
    if any(w is not None and w >= 0 for w in within):
        ok = True
    elif all(w is not None for w in within):
        ok = False
    else:
        return _undecided(claim, claimed, derived, target)
    tols = [f"{key} {written(claim.data[key])}" for key in ("rel_tol", "abs_tol") if key in claim.data]
    return Verdict(claim, "holds" if ok else "fails", claimed, json_number(derived),
                   f"{show_number(derived)}: {relative_text(derived, target)} ({', '.join(t for t in tols if t)})")


def number_claim(claim, value, claimed) -> Verdict:
    """``equals``, ``approx``, ``rounds_to``, ``at_most`` or ``at_least`` on the derived number ``value``."""
    name, raw = claim.assertion
    derived = value.value
    if isinstance(derived, float):      # a measured figure (a graph's mean): the decimal it prints as
        derived = Fraction(repr(derived))
    tolerance = claim.rel_tol is not None or claim.abs_tol is not None
    if name == "rounds_to" or (name == "approx" and not tolerance and isinstance(raw, str) and is_figure(raw)):
        if name == "rounds_to" and not (is_figure(raw) or isinstance(raw, int) and not isinstance(raw, bool)):
            raise ClaimError(f"rounds_to = {shown(raw)} must be a figure such as \"7.3B\" or an integer: the "
                             "rounding is to its last digit")
        return _figure_claim(claim, name, raw, derived, claimed)
    if name == "approx":
        if not tolerance:
            raise ClaimError(f"approx = {shown(raw)} states no precision: write a figure such as \"117M\", or give "
                             "rel_tol or abs_tol")
        return _tolerance_claim(claim, raw, value, derived, claimed)
    if name not in ("equals", "at_most", "at_least"):
        raise ClaimError(f"{name} does not apply to a number")
    target = claimed_number(raw, value.names, name)
    gap = compare(derived, target)
    if gap is None:
        return _undecided(claim, claimed, derived, target)
    ok = {"equals": gap == 0, "at_most": gap <= 0, "at_least": gap >= 0}[name]
    if not ok:
        reason = f"derived {show_number(derived)}: {relative_text(derived, target)}"
    elif name != "equals":
        reason = f"derived {show_number(derived)}"
    else:
        reason = "" if isinstance(target, Fraction) else f"exactly: {raw} = {show_number(derived)}"
    return Verdict(claim, "holds" if ok else "fails", claimed, json_number(derived), reason)
