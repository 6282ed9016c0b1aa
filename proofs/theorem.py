"""A theorem about the algorithm objects, its method and level of evidence, and its perturbed twin.

A theorem is stated in words and in LaTeX, names the algorithm objects it is about, and is checked by a
function of one flag: ``check(perturbed=False)`` decides the statement, ``check(perturbed=True)`` decides its
*twin* — the same statement made slightly false (a wrong constant, √d → d, the causal mask shifted by one).
A theorem counts only when it is proved **and** its twin is rejected: a checker that cannot fail proves
nothing.  A rejected twin comes with its counterexample.

Levels of evidence, weakest last, stated as they are:

``symbolic``
    decided by sympy for all values of the sizes (an identity, an inequality, a leading term), or a
    graph statement proved for every ℓ from a closed form that is itself checked;
``symbolic, sizes ≤ k``
    an identity with symbolic entries, proved for every size up to k — not a proof for all sizes;
``exhaustive``
    checked on every case up to a bound (the bound is in the method);
``property-tested``
    checked on seeded random examples (their number and seed are in the method).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["LEVELS", "Outcome", "Theorem", "Result", "run"]

LEVELS = ("symbolic", "symbolic, sizes ≤ k", "exhaustive", "property-tested")


@dataclass(frozen=True)
class Outcome:
    """What a check found: ``holds``, and a ``detail`` (for a statement that does not hold, the
    counterexample)."""

    holds: bool
    detail: str = ""


@dataclass(frozen=True)
class Theorem:
    """``check(perturbed)`` returns an :class:`Outcome` for the statement (``False``) or its twin (``True``)."""

    name: str
    statement: str
    latex: str
    about: tuple
    level: str
    method: str
    twin: str
    check: Callable[[bool], Outcome] = field(repr=False, compare=False)

    def __post_init__(self):
        if not any(self.level.startswith(level.split(",")[0]) for level in LEVELS):
            raise ValueError(f"{self.name}: unknown level {self.level!r}")


@dataclass(frozen=True)
class Result:
    theorem: Theorem
    proved: bool
    detail: str
    twin_rejected: bool
    counterexample: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.proved and self.twin_rejected

    def as_json(self) -> dict:
        t = self.theorem
        return {"name": t.name, "statement": t.statement, "latex": t.latex, "about": list(t.about),
                "level": t.level, "method": t.method, "result": "proved" if self.proved else "failed",
                "detail": self.detail,
                "twin": {"statement": t.twin, "result": "rejected" if self.twin_rejected else "accepted",
                         "counterexample": self.counterexample},
                "seconds": round(self.seconds, 3)}


def run(theorem: Theorem) -> Result:
    """Check a theorem and its twin (an exception in a check is a failure, with its message)."""
    start = time.perf_counter()
    main = _safely(theorem.check, False)
    twin = _safely(theorem.check, True)
    return Result(theorem, main.holds, main.detail, not twin.holds, twin.detail, time.perf_counter() - start)


def _safely(check, perturbed) -> Outcome:
    try:
        return check(perturbed)
    except Exception as exc:  # noqa: BLE001 - a checker that breaks proves nothing: it fails, and says why
        return Outcome(False if not perturbed else True, f"the check raised {type(exc).__name__}: {exc}")
