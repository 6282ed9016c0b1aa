"""``formal-transformers verify --mutants``: the conformance suite's own kill rate.

``conform`` is only as good as the examples it draws.  The shipped catalogue (:mod:`reference.catalogue`,
each algorithm's entries read from its record, :mod:`reference.records`) holds correct implementations
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
from formal.sampling.examples import PROFILES

from ..conformance.conform import conform
from ..execution.executors import flatten, run_shown
from ..execution.protocol import Task
from ..records import chosen, record
from .estimates import ENTRY_SECONDS

__all__ = ["Outcome", "MutationReport", "Entries", "kill_rate", "tasks", "outcome"]


@dataclass
class Outcome:
    """One catalogue entry under ``conform``: what it should do, and what it did."""

    name: str
    algorithm: str
    options: dict
    kind: str              # "control" or "mutant"
    bug: str
    source: str
    verdict: str           # "pass" or "fail": conform's; "error": it killed every worker it ran on
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
    tasks: int = 0
    done: int = 0          # tasks finished: fewer than ``tasks`` after Ctrl-C

    @property
    def interrupted(self) -> bool:
        return self.done < self.tasks

    @property
    def errors(self) -> list:
        return [o for o in self.outcomes if o.verdict == "error"]

    def _of(self, kind, algorithm=None):
        return [o for o in self.outcomes if o.kind == kind and (algorithm is None or o.algorithm == algorithm)]

    @property
    def survivors(self) -> list:
        return [o for o in self._of("mutant") if o.verdict == "pass"]

    @property
    def false_alarms(self) -> list:
        return [o for o in self._of("control") if o.verdict == "fail"]

    @property
    def ok(self) -> bool:
        return not self.survivors and not self.false_alarms and not self.errors and not self.interrupted

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
        verdict = "interrupted" if self.interrupted else "pass" if self.ok else "fail"
        return {"profile": self.profile, "seed": self.seed, "seconds": self.seconds, "verdict": verdict,
                "tasks": self.tasks, "done": self.done, "kill_rate": self.rate, "rows": self.rows(),
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
        for o in self.errors:
            lines.append(f"ERROR {o.name} ({o.algorithm}, {o.kind}): {o.detail}")
        mutants = self._of("mutant")
        lines += ["", f"kill rate {100 * self.rate:.1f}% ({len(mutants) - len(self.survivors)} of {len(mutants)} "
                      f"mutants killed), {len(self._of('control')) - len(self.false_alarms)} of "
                      f"{len(self._of('control'))} controls passed ({self.seconds:.0f} s)"]
        if self.interrupted:
            lines.append(f"interrupted: {self.done} of {self.tasks} tasks finished — a partial report")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Entries(Task):
    """``conform`` on catalogue ``entries`` (``((kind, entry name), …)``) of algorithm ``name``: one variant's,
    so that they share its examples and the spec's outputs on them."""

    name: str
    entries: tuple
    profile: str
    seed: int
    cost: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.name}: {', '.join(entry for _, entry in self.entries)}"

    def run(self) -> list:
        cache: dict = {}
        return [outcome(kind, self._entry(kind, entry), self.profile, self.seed, cache) for kind, entry in self.entries]

    def split(self) -> list:
        if len(self.entries) < 2:
            return []
        return [Entries(self.name, (e,), self.profile, self.seed, self.cost / len(self.entries)) for e in self.entries]

    def died(self, cause: str) -> list:
        out = []
        for kind, name in self.entries:
            e = self._entry(kind, name)
            out.append(Outcome(e.name, e.algorithm, dict(e.options), kind, e.bug, e.source, "error", cause))
        return out

    def _entry(self, kind, name):
        from ..records import record
        found = record(self.name).controls if kind == "control" else record(self.name).mutants
        return next(e for e in found if e.name == name)


def _entries(only):
    """Every algorithm's controls, then every one's mutants (of the algorithms ``only`` names): the report's
    order."""
    chosen_records = [record(name) for name in chosen(only)]
    return ([("control", e) for r in chosen_records for e in r.controls]
            + [("mutant", e) for r in chosen_records for e in r.mutants])


def tasks(only, profile, seed) -> list:
    """One task per algorithm and variant: its controls, then its mutants (of the algorithms ``only`` names),
    so that the entries of a variant share its examples and the spec's outputs; the report lists every
    algorithm's controls, then every one's mutants."""
    grouped = {}
    for name in chosen(only):
        subject = record(name)
        for kind, found in (("control", subject.controls), ("mutant", subject.mutants)):
            for e in found:
                key = (name, tuple(sorted((k, repr(v)) for k, v in e.options.items())))
                grouped.setdefault(key, []).append((kind, e.name))
    return [Entries(name, tuple(entries), profile, seed, len(entries) * ENTRY_SECONDS[profile])
            for (name, _), entries in grouped.items()]


def outcome(kind, entry, profile, seed, cache) -> Outcome:
    """``conform``'s verdict on catalogue ``entry`` (in this process; ``cache``: the spec's outputs, shared by
    the entries of one variant)."""
    result = conform(entry.function, entry.algorithm, options=entry.options, name=entry.name,
                     profile=profile, seed=seed, cache=cache)
    failure = result.failure
    detail = f"{failure['property']}: {failure['message']} at {failure['example']}" if failure else \
        f"every property held on {result.examples + result.boundary} examples"
    return Outcome(entry.name, entry.algorithm, dict(entry.options), kind, entry.bug, entry.source,
                   "pass" if result.ok else "fail", detail)


def kill_rate(*, profile="quick", seed=0, only=None, progress=None, jobs=1, scheduler=None) -> MutationReport:
    """Run ``conform`` (``profile``'s examples) on every control and mutant of the catalogue, or of the
    algorithms ``only`` names: here (``jobs=1``), in ``jobs`` worker processes or on the Dask cluster
    ``scheduler`` names (:mod:`reference.execution.executors`) — the same report whichever; ``progress`` (a text
    stream) gets a live bar.  Ctrl-C returns the partial report."""
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    planned = tasks(only, profile, seed)
    report, start = MutationReport(profile, seed, tasks=len(planned)), time.perf_counter()
    results = run_shown(planned, "verify --mutants", progress, jobs=jobs, scheduler=scheduler)
    report.done = sum(r is not None for r in results)
    order = {(kind, e.name): i for i, (kind, e) in enumerate(_entries(only))}
    report.outcomes = sorted(flatten(results), key=lambda o: order[o.kind, o.name])
    report.seconds = time.perf_counter() - start
    return report
