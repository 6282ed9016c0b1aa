"""The report of ``conform --identify`` (:mod:`reference.conformance.identify`): the variants tried, how far each got,
the ones confirmed, and the nearest when none is — "nearest" as :mod:`reference.conformance.identify` defines it:
ranked by their :class:`Fit`, how each fails on every example of the rank stage."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from formal.engine.domains import written

from .conform import PROPERTIES

__all__ = ["Fit", "Trial", "Identification", "identify_text", "options_text", "NEAREST"]

#: How many nearest variants a failed search names.
NEAREST = 3
_ORDER = tuple(PROPERTIES)


@dataclass
class Fit:
    """How a variant fails on every example it was ranked on (:class:`~reference.conformance.conform.Outcome`
    each): the examples on which every property held (``matched`` of ``examples``), the spec's output entries that
    the function's equal within the tolerance (``entries_matched`` of ``entries``), and its one deviation figure:
    the median, over the ``compared`` examples whose outputs could be compared (it ran and returned the spec's
    shapes; not the large-score case), of the largest ``|Δ|`` relative to max(1, max |spec|) (None where none could;
    ``inf`` where the typical one is non-finite)."""

    examples: int = 0
    matched: int = 0
    entries: int = 0
    entries_matched: int = 0
    compared: int = 0
    deviation: float | None = None

    @classmethod
    def of(cls, outcomes) -> "Fit":
        deviations = [o.deviation for o in outcomes if o.deviation is not None]
        return cls(len(outcomes), sum(o.failed is None for o in outcomes), sum(o.entries for o in outcomes),
                   sum(o.matched for o in outcomes), len(deviations),
                   statistics.median(deviations) if deviations else None)

    @property
    def share(self) -> float:
        """The fraction of the examples that match."""
        return self.matched / self.examples if self.examples else 0.0

    @property
    def entry_share(self) -> float:
        """The fraction of the output entries that match."""
        return self.entries_matched / self.entries if self.entries else 0.0

    def as_json(self) -> dict:
        return {"examples": self.examples, "examples_matched": self.matched, "entries": self.entries,
                "entries_matched": self.entries_matched, "examples_compared": self.compared,
                "deviation": self.deviation}


@dataclass
class Trial:
    """One variant tried: its options (those that differ from the defaults), how far it got, its failure (the
    one that ruled it out), and — where no variant conformed — its :class:`Fit` on the rank stage's examples.
    ``failure["deviation"]`` is the variant's one deviation figure: the fit's where it has one, else its failing
    example's; ``failure["message"]`` says what was seen without a figure of its own."""

    options: dict
    changes: dict
    stage: str = "prune"          # the last stage it ran: prune or confirm
    verdict: str = "pruned"       # pruned (failed the prune stage), failed (the confirm stage), confirmed
    passed: int = 0               # examples passed over both stages, before its failure
    failure: dict | None = None
    fit: Fit | None = None
    evidence: dict = field(default_factory=dict, repr=False, compare=False)   # identify's: the variant, its cases

    @property
    def deviation(self) -> float | None:
        return (self.failure or {}).get("deviation")

    def distance(self) -> tuple:
        """The sort key of "nearest" (:mod:`reference.conformance.identify`): the most examples that match, then
        the most output entries, then the smallest deviation (a non-finite or unmeasured one last), then the
        latest failing property in the checking order."""
        fit, d = self.fit or Fit(), self.deviation
        return (-fit.share, -fit.entry_share, d if d is not None and math.isfinite(d) else float("inf"),
                -_ORDER.index((self.failure or {}).get("property", "equivariance")))

    def as_json(self) -> dict:
        return {"options": self.changes, "stage": self.stage, "verdict": self.verdict,
                "examples_passed": self.passed, "failure": self.failure,
                "fit": None if self.fit is None else self.fit.as_json()}


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
    rank: dict | None = None                          # the rank stage's examples and variants, where it ran

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
                "rank": self.rank,
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
        lines.append(f"NO VARIANT of {r.algorithm} conforms; the nearest{_ranked_on(r.rank)} — the most examples "
                     "that match, then the most output entries, then the smallest median deviation from the spec:")
        nearest = r.nearest()
        for t in nearest:
            f, fit, d = t.failure, t.fit, t.deviation
            deviation = "" if d is None else f", deviation {d:.2e}" if math.isfinite(d) else ", deviation non-finite"
            match = "" if fit is None else (f"{fit.matched} of {fit.examples} examples and "
                                            f"{_percent(fit.entry_share)} of output entries match; ")
            median = "" if fit is None or d is None else " (the median over them)" if fit.compared == fit.examples \
                else f" (the median over the {fit.compared} whose outputs it could compare)"
            lines.append(f"  {_variant_text(r.algorithm, t.changes)}: {match}fails {f['property']}{deviation}"
                         f"{median}, first at {f['example'] or 'every example'}")
            lines.append(f"    {f['message']}")
        if len(nearest) > 1 and nearest[0].fit is not None and nearest[1].fit is not None \
                and nearest[0].distance()[:2] == nearest[1].distance()[:2]:
            lines.append("  (the first two match as many examples and output entries: only the deviation orders "
                         "them, and it does not tell which one the function implements)")
    return "\n".join(lines) + "\n"


def _ranked_on(rank: dict | None) -> str:
    """How the rank stage checked the nearest: on which examples, and how many variants."""
    if not rank:
        return " (no rank stage: a call of the function ran into the time limit, and each new one could too)"
    of = "" if rank["variants"] == rank["of"] else \
        f" (the {rank['variants']} of {rank['of']} variants nearest on the prune stage's examples)"
    cut = ("; the stage stopped where a call of the function ran into the time limit, and a variant it had not "
           "checked is ranked by its first failure alone") if rank.get("timed_out") else ""
    return (f", each checked on {rank['examples']} random examples and the boundary cases, all up to size "
            f"{rank['max_size']}{of}{cut}")


def _percent(share: float) -> str:
    """A share as a percentage that reads 100% only when it is whole, and 0% only when it is none."""
    text = f"{100 * share:.1f}%"
    if share < 1 and text == "100.0%":
        return "99.9%"
    return "<0.1%" if 0 < share and text == "0.0%" else text
