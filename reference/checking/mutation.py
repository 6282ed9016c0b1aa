"""``formal-transformers verify --mutants``: the conformance suite's own kill rate.

``conform`` is only as good as the examples it draws.  The shipped catalogue (:mod:`reference.checking.mutants`,
each algorithm's entries read from its record, :mod:`reference.checking.records`) holds correct implementations
of every algorithm (the *controls*) and the same implementations with one planted bug each (the *mutants*:
bugs public implementations have had, bugs an independent review planted, and one per variant option).  This
module runs ``conform`` on every entry: a control must pass (else ``conform`` raises a false alarm), a mutant
must fail (else it *survives* — a defect of the example generator, never of the mutant).  The kill rate is the
share of mutants that fail.

Examples are shared between entries of one variant, so the spec's output on each is computed once.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from formal.errors import ConfigError

from .conform import conform
from .examples import PROFILES
from .records import chosen, record

__all__ = ["Outcome", "MutationReport", "kill_rate"]


@dataclass
class Outcome:
    """One catalogue entry under ``conform``: what it should do, and what it did."""

    name: str
    algorithm: str
    options: dict
    kind: str              # "control" or "mutant"
    bug: str
    source: str
    verdict: str           # "pass" or "fail": conform's
    detail: str = ""       # the failing property and its message, or why it passed

    @property
    def as_expected(self) -> bool:
        return self.verdict == ("pass" if self.kind == "control" else "fail")


@dataclass
class MutationReport:
    profile: str
    seed: int
    outcomes: list = field(default_factory=list)
    seconds: float = 0.0

    def _of(self, kind, algorithm=None):
        return [o for o in self.outcomes if o.kind == kind and (algorithm is None or o.algorithm == algorithm)]

    @property
    def survivors(self) -> list:
        return [o for o in self._of("mutant") if not o.as_expected]

    @property
    def false_alarms(self) -> list:
        return [o for o in self._of("control") if not o.as_expected]

    @property
    def ok(self) -> bool:
        return not self.survivors and not self.false_alarms

    @property
    def rate(self) -> float:
        mutants = self._of("mutant")
        return (len(mutants) - len(self.survivors)) / len(mutants) if mutants else 1.0

    def rows(self) -> list:
        """Per algorithm: controls passed, mutants killed, the kill rate."""
        rows = []
        for name in dict.fromkeys(o.algorithm for o in self.outcomes):
            controls, mutants = self._of("control", name), self._of("mutant", name)
            killed = sum(o.as_expected for o in mutants)
            rows.append({"algorithm": name, "controls": len(controls),
                         "controls_passed": sum(o.as_expected for o in controls), "mutants": len(mutants),
                         "killed": killed, "kill_rate": killed / len(mutants) if mutants else None})
        return rows

    def as_json(self) -> dict:
        return {"profile": self.profile, "seed": self.seed, "seconds": self.seconds,
                "verdict": "pass" if self.ok else "fail", "kill_rate": self.rate, "rows": self.rows(),
                "outcomes": [asdict(o) for o in self.outcomes]}

    def text(self) -> str:
        rows = self.rows()
        width = max([len(r["algorithm"]) for r in rows] + [9])
        lines = [f"verify --mutants: conform against the shipped catalogue — profile {self.profile}, seed "
                 f"{self.seed}", "",
                 f"{'algorithm':<{width}}  {'controls':>8}  {'mutants':>7}  {'killed':>6}  kill rate"]
        for r in rows:
            rate = "-" if r["kill_rate"] is None else f"{100 * r['kill_rate']:.0f}%"
            controls = f"{r['controls_passed']}/{r['controls']}"
            lines.append(f"{r['algorithm']:<{width}}  {controls:>8}  {r['mutants']:>7}  {r['killed']:>6}  {rate}")
        for o in self.false_alarms:
            lines.append(f"FALSE ALARM {o.name} ({o.algorithm}, correct): {o.detail}")
        for o in self.survivors:
            lines.append(f"SURVIVED {o.name} ({o.algorithm} {o.options or ''}): {o.bug}")
        mutants = self._of("mutant")
        lines += ["", f"kill rate {100 * self.rate:.1f}% ({len(mutants) - len(self.survivors)} of {len(mutants)} "
                      f"mutants killed), {len(self._of('control')) - len(self.false_alarms)} of "
                      f"{len(self._of('control'))} controls passed ({self.seconds:.0f} s)"]
        return "\n".join(lines) + "\n"


def _entries(only):
    """Every algorithm's controls, then every one's mutants (of the algorithms ``only`` names)."""
    chosen_records = [record(name) for name in chosen(only)]
    return ([("control", e) for r in chosen_records for e in r.controls]
            + [("mutant", e) for r in chosen_records for e in r.mutants])


def kill_rate(*, profile="quick", seed=0, only=None, progress=None) -> MutationReport:
    """Run ``conform`` (in this process, ``profile``'s examples) on every control and mutant of the
    catalogue, or of the algorithms ``only`` names; ``progress`` (a text stream) gets a live line."""
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    entries = _entries(only)
    report, start = MutationReport(profile, seed), time.perf_counter()
    live = progress is not None and hasattr(progress, "isatty") and progress.isatty()
    cache: dict = {}
    for i, (kind, entry) in enumerate(entries):
        if live:
            progress.write(f"\r\033[Kverify --mutants [{i + 1}/{len(entries)}] {entry.name}")
            progress.flush()
        result = conform(entry.function, entry.algorithm, options=entry.options, name=entry.name,
                         profile=profile, seed=seed, cache=cache)
        failure = result.failure
        detail = f"{failure['property']}: {failure['message']} at {failure['example']}" if failure else \
            f"every property held on {result.examples + result.boundary} examples"
        report.outcomes.append(Outcome(entry.name, entry.algorithm, dict(entry.options), kind, entry.bug,
                                       entry.source, "pass" if result.ok else "fail", detail))
    if live:
        progress.write("\r\033[K")
        progress.flush()
    report.seconds = time.perf_counter() - start
    return report
