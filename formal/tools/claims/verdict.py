"""A claim's verdict (:class:`Verdict`), and what the deciding modules share: numbers as a verdict shows them,
and the claimed side of a formula claim."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ...core.formula import parse
from ...errors import shown
from .claim import Claim, ClaimError
from .figures import decimal_text
from .values import Value

__all__ = ["Verdict", "show_number", "claimed_formula", "INTERRUPTED"]

#: The reason of a claim Ctrl-C left undecided.
INTERRUPTED = "not reached: interrupted"


@dataclass
class Verdict:
    """The outcome of one claim: ``verdict`` (holds, fails, undecided, invalid), what was ``claimed`` and
    ``derived`` (as shown), the ``reason``, and whether it is what the claim's ``expect`` says."""

    claim: Claim
    verdict: str
    claimed: str = ""
    derived: object = None
    reason: str = ""
    reached: bool = True

    @property
    def as_expected(self) -> bool | None:
        if self.claim.expect is None or self.verdict == "invalid":
            return None
        return self.verdict == self.claim.expect

    @property
    def ok(self) -> bool:
        """Holds, or matches what the file expects."""
        return self.verdict == "holds" if self.claim.expect is None else bool(self.as_expected)

    def as_json(self) -> dict:
        return {"id": self.claim.id, "file": self.claim.file, "verdict": self.verdict, "claimed": self.claimed,
                "derived": self.derived, "reason": self.reason, "expect": self.claim.expect,
                "as_expected": self.as_expected, "says": self.claim.says, "source": self.claim.source,
                "reached": self.reached}


def show_number(x) -> str:
    """A number as a verdict shows it: ``1,234``, ``1/8 (≈0.125)``, ``0.0625``."""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator} (≈{decimal_text(x)})"
    if isinstance(x, float):
        return decimal_text(x)
    return str(x)


def claimed_formula(raw, value: Value, what: str, growing=()):
    """The claimed side of a formula claim as a sympy expression, at the sizes of ``value`` (the derived side);
    ``growing``: the sizes that grow, left free."""
    import sympy as sp
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise ClaimError(f"{what} = {shown(raw)} must be a formula (a string) or a number")
    names = value.names
    formula = parse(raw, names=set(names) | set(growing), what=what)
    return sp.sympify(formula.sympy({k: sp.Integer(v) if isinstance(v, int) else v for k, v in names.items()
                                     if k not in growing}))
