"""The report of ``conform --identify`` (:mod:`reference.conformance.identify`): the variants tried, how far each got,
the ones confirmed, and the nearest when none is — "nearest" as :mod:`reference.conformance.identify` defines it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from formal.engine.domains import written

from .conform import PROPERTIES

__all__ = ["Trial", "Identification", "identify_text", "options_text", "NEAREST"]

#: How many nearest variants a failed search names.
NEAREST = 3
_ORDER = tuple(PROPERTIES)


@dataclass
class Trial:
    """One variant tried: its options (those that differ from the defaults), how far it got, and its
    failure."""

    options: dict
    changes: dict
    stage: str = "prune"          # the last stage it ran: prune or confirm
    verdict: str = "pruned"       # pruned (failed the prune stage), failed (the confirm stage), confirmed
    passed: int = 0               # examples passed over both stages
    failure: dict | None = None

    def distance(self) -> tuple:
        """The sort key of "nearest" (the module docstring)."""
        f = self.failure or {}
        deviation = f.get("deviation")
        return (-self.passed, -_ORDER.index(f.get("property", "equivariance")),
                deviation if deviation is not None and math.isfinite(deviation) else float("inf"))  # NaN: last

    def as_json(self) -> dict:
        return {"options": self.changes, "stage": self.stage, "verdict": self.verdict,
                "examples_passed": self.passed, "failure": self.failure}


@dataclass
class Identification:
    target: str
    algorithm: str
    fixed: dict
    searched: dict                 # option → the values tried
    kinds: dict                    # option → "range" or "integer" for the options not a choice
    space: int                     # the variants the declarations allow
    budget: int
    prune: dict
    confirm: dict
    trials: list = field(default_factory=list)
    unsearched: list = field(default_factory=list)    # options left at a value in an untried variant
    calls: int = 0
    asked: int = 0
    sizes: dict = field(default_factory=dict)         # the fixed and tied sizes: name → formula as written

    @property
    def confirmed(self) -> list:
        return [t for t in self.trials if t.verdict == "confirmed"]

    @property
    def survivors(self) -> list:
        return [t for t in self.trials if t.stage == "confirm"]

    @property
    def cut(self) -> bool:
        return self.space > len(self.trials)

    @property
    def ok(self) -> bool:
        return bool(self.confirmed)

    def nearest(self, n: int = NEAREST) -> list:
        return sorted((t for t in self.trials if t.verdict != "confirmed"), key=Trial.distance)[:n]

    def as_json(self) -> dict:
        return {"target": self.target, "algorithm": self.algorithm, "fixed": self.fixed, "sizes": self.sizes,
                "searched": self.searched, "kinds": self.kinds, "prune": self.prune, "confirm": self.confirm,
                "budget": {"limit": self.budget, "used": len(self.trials), "space": self.space, "cut": self.cut,
                           "not_fully_searched": self.unsearched},
                "function_calls": self.calls, "calls_asked": self.asked,
                "tried": [t.as_json() for t in self.trials],
                "survivors": [t.changes for t in self.survivors],
                "confirmed": [t.changes for t in self.confirmed],
                "nearest": [] if self.ok else [t.as_json() for t in self.nearest()],
                "verdict": "identified" if self.ok else "none"}


# ------------------------------------------------------------------------------------------ the text
def options_text(changes: dict) -> str:
    return ", ".join(f"{k}={written(v)}" for k, v in changes.items()) or "the defaults"


def _variant_text(family, changes) -> str:
    return f"{family} with {options_text(changes)}" if changes else f"{family} (its defaults)"


def identify_text(result: Identification) -> str:
    """The search and its verdict, as lines of text."""
    r = result
    values = "; ".join(f"{k} ∈ {{{', '.join(map(written, v))}}}" for k, v in r.searched.items())
    lines = [f"identify {r.target} among the variants of {r.algorithm}",
             f"searched {values}"]
    if r.fixed:
        lines.append("fixed by -o: " + options_text(r.fixed))
    if r.sizes:
        lines.append("sizes fixed and tied: " + ", ".join(f"{k} = {v}" for k, v in r.sizes.items()))
    if r.kinds:
        lines.append("not a choice, searched over declared values: " + ", ".join(
            f"{k} ({'the values real code uses' if kind == 'range' else 'its declared examples'})"
            for k, kind in r.kinds.items()))
    c = r.confirm
    lines.append(f"tried {len(r.trials)} of {r.space} variants (budget {r.budget}): {len(r.trials) - len(r.survivors)} "
                 f"ruled out on {r.prune['examples']} random examples up to size {r.prune['max_size']}, "
                 f"{len(r.survivors)} checked on the {c['profile']} profile (boundary cases and {c['examples']} "
                 f"random examples up to size {c['max_size']}); the function ran {r.calls} times for {r.asked} "
                 "calls")
    if r.cut:
        lines.append(f"the budget cut the search short ({r.space - len(r.trials)} variants untried, --budget to "
                     f"raise it); not fully searched: {', '.join(r.unsearched)}")
    lines.append("")
    confirmed = r.confirmed
    if len(confirmed) == 1:
        lines.append(f"CONFORMS to {_variant_text(r.algorithm, confirmed[0].changes)}")
    elif confirmed:
        differ = [k for k in r.searched if len({repr(t.options[k]) for t in confirmed}) > 1]
        lines.append(f"CONFORMS to {len(confirmed)} variants, indistinguishable on these examples (they differ "
                     f"in {', '.join(differ)}):")
        lines += [f"  {_variant_text(r.algorithm, t.changes)}" for t in confirmed]
    else:
        lines.append(f"NO VARIANT of {r.algorithm} conforms; the nearest (most examples passed, then the latest "
                     "failing property, then the smallest deviation from the spec):")
        for t in r.nearest():
            f = t.failure
            d = f.get("deviation")
            deviation = "" if d is None else f", deviation {d:.2e}" if math.isfinite(d) else ", deviation non-finite"
            lines.append(f"  {_variant_text(r.algorithm, t.changes)}: {t.passed} examples passed; fails "
                         f"{f['property']}{deviation} at {f['example'] or 'every example'}")
            lines.append(f"    {f['message']}")
    return "\n".join(lines) + "\n"
