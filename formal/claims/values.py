"""The derived value a claim is judged against (:class:`Value`), and what every subject checks the same way:
its fields, the sizes it binds, and how far a substitution of formulas may expand."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import shown
from .claim import ClaimError
from .formula import parse

__all__ = ["Value", "only", "size_value", "check_expansion", "formula_value", "MAX_EXPANSION"]

#: The most terms a quantity may expand to once its sizes are replaced by formulas.
MAX_EXPANSION = 100_000


@dataclass
class Value:
    """A derived value: ``kind`` is ``"number"``, ``"formula"`` (sympy) or ``"array"``; ``sizes`` maps the
    names a claimed formula may use to their numbers (a model's resolved sizes) or symbols; ``measure`` is,
    for a graph, ``(argument, function of it)`` to measure growth."""

    kind: str
    value: object
    sizes: dict = field(default_factory=dict)
    what: str = ""
    measure: tuple | None = None


def only(subject, allowed, what):
    """Refuse a field of ``subject`` that ``what`` (a kind of subject) does not take."""
    extra = sorted(set(subject) - set(allowed))
    if extra:
        raise ClaimError(f"{extra[0]} does not apply to {what}")


def check_expansion(expr, formulas: dict) -> None:
    """Refuse, before expanding, a substitution of size formulas (name → Formula) that would expand ``expr``
    (a sympy expression) past :data:`MAX_EXPANSION` terms."""
    from math import comb

    import sympy as sp
    sizes = {k: f.terms for k, f in formulas.items()}
    total = 0
    for term in sp.Add.make_args(sp.expand(expr)):
        count = 1
        for factor in sp.Mul.make_args(term):
            base, k = factor.as_base_exp()
            t = sizes.get(str(base), 1)
            if t > 1 and k.is_Integer:
                count *= comb(t + abs(int(k)) - 1, abs(int(k)))
            elif t > 1:
                count *= t
        total += count
        if total > MAX_EXPANSION:
            raise ClaimError(f"the sizes bound to {', '.join(sorted(formulas))} expand the quantity past "
                             f"{MAX_EXPANSION:,} terms")


def size_value(name, value):
    """A size bound in a claim: a positive int (at most :data:`formal.guards.limits.MAX_SIZE`), or a formula (a
    string, which may name sizes of its own: ``d_x = "d"``)."""
    from ..guards.limits import MAX_SIZE
    if isinstance(value, bool):
        raise ClaimError(f"size {name} = {shown(value)} must be a positive integer or a formula")
    if isinstance(value, int):
        if not 0 < value <= MAX_SIZE:
            raise ClaimError(f"size {name} = {shown(value)} must be a positive integer at most 2**50")
        return value
    if isinstance(value, str):
        return parse(value, what=f"size {name}")
    raise ClaimError(f"size {name} = {shown(value)} must be a positive integer or a formula (a string)")


def formula_value(expr, what) -> Value:
    """A sympy expression as a :class:`Value`: a number (int or Fraction) when it has no symbol left, else a
    formula with its symbols as the sizes a claim may name."""
    import sympy as sp
    expr = sp.expand(expr)
    if not expr.free_symbols:
        number = sp.nsimplify(expr) if not expr.is_Rational else expr
        if number.is_Rational:
            from fractions import Fraction
            value = Fraction(int(number.p), int(number.q))
            return Value("number", value.numerator if value.denominator == 1 else value, {}, what)
    return Value("formula", expr, {str(s): s for s in expr.free_symbols}, what)
