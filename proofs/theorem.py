"""A theorem about the algorithm objects, its method and level of evidence, and its perturbed twin.

A theorem is stated in words and in LaTeX, names the algorithm objects it is about, and is checked by a
function of one flag: ``check(perturbed=False)`` decides the statement, ``check(perturbed=True)`` decides its
*twin* — the same statement made slightly false (a wrong constant, √d → d, the causal mask shifted by one).
A theorem counts only when it is proved **and** its twin is rejected: a checker that cannot fail proves
nothing.  A rejected twin comes with its counterexample: a check that cannot decide (a sufficient test that
does not apply, no counterexample found) returns an undecided :class:`Outcome`, which neither proves a
theorem nor rejects a twin.

Levels of evidence, weakest last, stated as they are:

``symbolic``
    decided by sympy for all values of the sizes (an identity, an inequality, a leading term);
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

__all__ = ["LEVELS", "Outcome", "Theorem", "Result", "run", "check_statement"]

LEVELS = ("symbolic", "symbolic, sizes ≤ k", "exhaustive", "property-tested")


@dataclass(frozen=True)
class Outcome:
    """What a check found: ``holds`` — ``True`` (decided: it holds), ``False`` (decided: it does not, and
    ``detail`` is the counterexample) or ``None`` (undecided: ``detail`` says why) — and a ``detail``.

    A sufficient test that does not apply decides nothing: its statement is undecided, not false.
    """

    holds: bool | None
    detail: str = ""

    @classmethod
    def undecided(cls, reason: str) -> "Outcome":
        """An outcome that decides nothing, with its reason."""
        return cls(None, reason)

    @property
    def decided(self) -> bool:
        return self.holds is not None


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

    def result(self) -> "Result":
        """Check it and its twin (:func:`run`): what the docs' theorem entries show (:mod:`formal.tools.sphinx`)."""
        return run(self)


@dataclass(frozen=True)
class Result:
    """A theorem's verdict: ``proved`` (its check held), ``twin_rejected`` (its twin's check failed, with a
    counterexample); ``undecided`` and ``twin_undecided`` when a check decided nothing (neither counts)."""

    theorem: Theorem
    proved: bool
    detail: str
    twin_rejected: bool
    counterexample: str
    seconds: float
    undecided: bool = False
    twin_undecided: bool = False

    @property
    def ok(self) -> bool:
        return self.proved and self.twin_rejected

    @property
    def verdict(self) -> str:
        """``proved``, ``failed`` or ``undecided``."""
        return "proved" if self.proved else "undecided" if self.undecided else "failed"

    @property
    def twin_verdict(self) -> str:
        """``rejected``, ``accepted`` or ``undecided``."""
        return "rejected" if self.twin_rejected else "undecided" if self.twin_undecided else "accepted"

    def as_json(self) -> dict:
        t = self.theorem
        return {"name": t.name, "statement": t.statement, "latex": t.latex, "about": list(t.about),
                "level": t.level, "method": t.method, "result": self.verdict, "detail": self.detail,
                "twin": {"statement": t.twin, "result": self.twin_verdict, "counterexample": self.counterexample},
                "seconds": round(self.seconds, 3)}


def run(theorem: Theorem) -> Result:
    """Check a theorem and its twin.  The theorem is proved only when its check holds; the twin is rejected
    only when its check returns ``holds=False`` with a counterexample — an undecided twin, or one refuted
    without a counterexample, is not rejected.  An exception in a check decides nothing (its message says
    why), so it fails the theorem either way."""
    start = time.perf_counter()
    main = _safely(theorem.check, False)
    twin = _safely(theorem.check, True)
    if twin.holds is False and not twin.detail.strip():
        twin = Outcome.undecided("the twin was refuted without a counterexample")
    return Result(theorem, main.holds is True, main.detail, twin.holds is False, twin.detail,
                  time.perf_counter() - start, undecided=main.holds is None, twin_undecided=twin.holds is None)


def check_statement(theorem: Theorem) -> Outcome:
    """The outcome of ``theorem``'s statement alone (not its twin), as :func:`run` decides it: an exception is
    undecided, with its message."""
    return _safely(theorem.check, False)


def _safely(check, perturbed) -> Outcome:
    try:
        outcome = check(perturbed)
    except Exception as exc:  # noqa: BLE001 - a checker that breaks proves nothing: it fails, and says why
        return Outcome.undecided(f"the check raised {type(exc).__name__}: {exc}")
    if outcome.holds is None:
        return outcome
    try:  # a numpy or sympy truth value counts as the bool it is
        return Outcome(bool(outcome.holds), outcome.detail)
    except TypeError:
        return Outcome.undecided(f"the check returned {outcome.holds!r}, not a truth value")
