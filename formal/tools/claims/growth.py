"""Growth claims: ``theta``, ``big_o`` and ``leading`` decided from a derived formula's terms, and a graph's
growth measured on its structure at 2^10 … 2^50 (:func:`formal.tools.claims.decide.decide` dispatches here)."""

from __future__ import annotations

from fractions import Fraction

from ...core.formula import parse
from ...costs.orders import Undecided
from .claim import ClaimError
from .values import Value
from .verdict import Verdict, claimed_formula

__all__ = ["asymptotic", "measured"]


def asymptotic(claim, value: Value, claimed) -> Verdict:
    """``theta``, ``big_o`` or ``leading``, decided exactly from the terms of the derived formula."""
    import sympy as sp

    from ...core.symbols import by_name, text
    from ...costs import orders
    name, raw = claim.assertion
    derived = value.value
    growing = [by_name(g) for g in claim.growing] or sorted(derived.free_symbols, key=str)
    target = claimed_formula(raw, value, name, claim.growing)
    what = value.what
    try:
        if name == "leading":
            lead = orders.leading(derived, growing, what)
            same = sp.expand(sp.cancel(lead - target)) == 0
            return Verdict(claim, "holds" if same else "fails", claimed, text(lead),
                           f"the leading term of {what} in {', '.join(map(text, growing))}"
                           + ("" if same else f" is {text(lead)}, not the claimed {text(target)}"))
        derived_theta = orders.theta_text(derived, growing, what)
        upper, lower = orders.theta(derived, target, growing, what)
    except Undecided as exc:
        return Verdict(claim, "undecided", claimed, text(derived), str(exc))
    ok = upper and (lower or name == "big_o")
    reason = f"{what} is {derived_theta} in {', '.join(map(text, growing))}"
    constant = sorted(target.free_symbols - set(growing), key=str)
    if constant:
        reason += (f" ({', '.join(map(text, constant))} held constant: the claim's "
                   f"{'size' if len(constant) == 1 else 'sizes'} outside in)")
    if not ok:
        reason += f"; it is {'not O' if not upper else 'O but not Ω'} of the claim"
    return Verdict(claim, "holds" if ok else "fails", claimed, derived_theta, reason)


def measured(claim, value: Value, claimed) -> Verdict:
    """A graph's growth, measured (``value.measure``, a :class:`~formal.tools.claims.graph_subjects.Growth`):
    f(x)/g(x) at x = 2^10 … 2^50; Θ holds when the ratio stays within a factor of 2 (a log factor moves it
    5×), O when it does not grow past twice its first value.  The reason names the range and how the
    quantity was measured (the growth's note)."""
    from .graph_subjects import GROWTH_POINTS
    name, raw = claim.assertion
    if name == "leading":
        raise ClaimError("a graph's leading term is not derived (its growth is measured): use theta or big_o")
    import math as m

    import sympy as sp
    arg, f, note = value.measure
    formula = parse(raw, names={arg} | set(value.sizes), what=name)
    ratios, measured = [], []
    for x in GROWTH_POINTS:
        fx = f(x)
        gx = sp.sympify(formula.sympy({**value.sizes, arg: x})).evalf(30)
        if not (gx.is_real and gx.is_finite and gx > 0):
            raise ClaimError(f"{name} {raw!r} is not a positive number at {arg} = {x} (it is {gx})")
        exact = sp.Rational(fx.numerator, fx.denominator) if isinstance(fx, Fraction) else fx
        measured.append(float(exact))
        ratios.append(float(sp.Float(exact, 30) / gx) if fx else 0.0)
    if min(ratios) <= 0 or not all(m.isfinite(r) for r in ratios):
        spread = float("inf")
    else:
        spread = max(ratios) / min(ratios)
    slope = (m.log(max(measured[-1], 1e-300)) - m.log(max(measured[-2], 1e-300))) / m.log(
        GROWTH_POINTS[-1] / GROWTH_POINTS[-2])
    ok = spread <= 2 if name == "theta" else (ratios[0] > 0 and max(ratios) <= 2 * ratios[0]) or max(ratios) == 0
    derived = f"≈ {arg}^{slope:.2f} (measured)"
    reason = (f"measured at {arg} = 2^10 … 2^50{f' ({note})' if note else ''}: {value.what} / claim from "
              f"{min(ratios):.3g} to {max(ratios):.3g}"
              f"{'' if ok else (', not bounded' if name == 'big_o' else ', not within a factor of 2')}")
    return Verdict(claim, "holds" if ok else "fails", claimed, derived, reason)
