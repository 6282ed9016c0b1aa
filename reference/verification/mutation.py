"""``formal-transformers verify --mutants``: the conformance suite's own kill rate.

``conform`` is only as good as the examples it draws.  The shipped catalogue (:mod:`reference.catalogue`,
each algorithm's entries read from its record, :mod:`reference.records`) holds correct implementations
of every algorithm (the *controls*) and the same implementations with one planted bug each (the *mutants*:
bugs public implementations have had, bugs an independent review planted, and one per variant option).  This
module runs ``conform`` on every entry: a control must pass (else ``conform`` raises a false alarm), a mutant
must fail (else it *survives* — a defect of the example generator, never of the mutant).  The kill rate is the
share of mutants that fail.

Examples are shared between entries of one variant, so the spec's output on each is computed once.

``verify --mutants`` measures ``verify`` too: the torch reference's own planted bugs
(:mod:`reference.verification.reference_mutants`: precision-path and single-path bugs a kernel writer makes), each
run under every check of verify with the checks expected to kill it named.  :class:`ReferenceReport` gives each
check's kill rate over the mutants aimed at it, the survivors with their rows' errors against the bounds, and the
controls (the same rows with nothing planted, every one of which must pass); every check must kill at least one of
its mutants.  That half needs torch: without it the report says it did not run, and conform's half runs alone.
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

__all__ = ["Outcome", "MutationReport", "ReferenceReport", "Entries", "kill_rate", "tasks", "reference_plan",
           "outcome"]


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
    reference: ReferenceReport | None = None   # the torch reference's planted bugs; None: not asked for

    @property
    def interrupted(self) -> bool:
        return self.done < self.tasks or (self.reference is not None and self.reference.interrupted)

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
        """Conform kills every mutant and passes every control, and (when run) every check of verify kills one
        of the reference's mutants aimed at it, with no false alarm."""
        return (not self.survivors and not self.false_alarms and not self.errors and not self.interrupted
                and (self.reference is None or self.reference.ok))

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
        out = {"profile": self.profile, "seed": self.seed, "seconds": self.seconds, "verdict": verdict,
               "tasks": self.tasks, "done": self.done, "kill_rate": self.rate, "rows": self.rows(),
               "outcomes": [asdict(o) for o in self.outcomes]}
        if self.reference is not None:
            out["reference"] = self.reference.as_json()
        return out

    def text(self) -> str:
        """The reference's half (when run), then conform's, which ends the report with its kill rate."""
        head = "" if self.reference is None else self.reference.text() + "\n"
        return head + self._conform_text()

    def _conform_text(self) -> str:
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


def _figure(x) -> str:
    if x is None or x != x or x in (float("inf"), float("-inf")):
        return "inf"
    return "0" if x == 0 else f"{x:.1e}"


@dataclass
class ReferenceReport:
    """The torch reference's planted bugs (:mod:`reference.verification.reference_mutants`) under verify's checks on
    ``device``.

    ``checks``: verify's checks there, in their order; ``mutants``: each mutant run, as ``{"name", "bug", "targets",
    "aimed", "missing"}`` (``aimed``: the checks expected to kill it that verify has; ``missing``: those it does
    not have yet); ``outcomes``: a :class:`~reference.verification.reference_mutants.ReferenceOutcome` per
    mutant and target, and per control; ``skipped``: ``(mutant, bug, why)`` of those not run here (CUDA only);
    ``complete``: the whole catalogue ran (no ``--only``), so a check no mutant is aimed at fails it;
    ``seconds``: its runs' wall times, summed (its tasks share the run's workers with conform's); ``not_run``:
    why nothing ran (torch is not installed)."""

    profile: str
    seed: int
    device: str = ""
    checks: list = field(default_factory=list)
    mutants: list = field(default_factory=list)
    outcomes: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    complete: bool = True
    seconds: float = 0.0
    tasks: int = 0
    done: int = 0
    not_run: str = ""

    @property
    def interrupted(self) -> bool:
        return self.done < self.tasks

    def _of(self, name):
        return [o for o in self.outcomes if o.mutant == name]

    @property
    def controls(self) -> list:
        return self._of(None)

    @property
    def false_alarms(self) -> list:
        """The controls with a FAIL row: verify fails the reference with nothing planted."""
        return [o for o in self.controls if o.failed]

    @property
    def errors(self) -> list:
        return [o for o in self.outcomes if o.error]

    def verdicts(self) -> list:
        """Per mutant run (catalogue order): its entry in :attr:`mutants` with ``killed_by`` (every check whose
        row FAILs on one of its targets, in verify's order), ``worst`` (per aimed check, the row whose error is
        largest against its bound: ``{"check", "algorithm", "max_error", "allowed", "verdict"}``) and
        ``errors``."""
        out = []
        for m in self.mutants:
            found = [o for o in self._of(m["name"]) if not o.error]
            failed = {c for o in found for c in o.failed}
            worst = []
            for check in m["aimed"]:
                rows = [(o.algorithm, r) for o in found for r in o.rows if r["check"] == check]
                if rows:
                    algorithm, r = max(rows, key=lambda pair: _ratio(pair[1]))
                    worst.append({"check": check, "algorithm": algorithm, "max_error": r["max_error"],
                                  "allowed": r["allowed"], "verdict": r["verdict"]})
            out.append({**m, "killed_by": [c for c in self.checks if c in failed], "worst": worst,
                        "errors": [o.error for o in self._of(m["name"]) if o.error]})
        return out

    @property
    def survivors(self) -> list:
        """The mutants no check kills."""
        return [v for v in self.verdicts() if not v["killed_by"] and not v["errors"]]

    def rows(self) -> list:
        """Per check of verify: the mutants aimed at it, those it kills, the kill rate (None: none aimed)."""
        verdicts = self.verdicts()
        out = []
        for check in self.checks:
            aimed = [v["name"] for v in verdicts if check in v["aimed"]]
            killed = [v["name"] for v in verdicts if check in v["aimed"] and check in v["killed_by"]]
            out.append({"check": check, "mutants": aimed, "killed": killed,
                        "kill_rate": len(killed) / len(aimed) if aimed else None})
        return out

    @property
    def blind(self) -> list:
        """``(check, why)`` for each check that kills none of its mutants — or, the whole catalogue run, has none
        aimed at it."""
        out = []
        for r in self.rows():
            if r["mutants"] and not r["killed"]:
                out.append((r["check"], f"kills none of its {len(r['mutants'])} mutant(s)"))
            elif not r["mutants"] and self.complete and not self.not_run:
                out.append((r["check"], "no mutant is aimed at it"))
        return out

    @property
    def ok(self) -> bool:
        """Every control passes, no task killed its workers, and every check kills one of its mutants."""
        return not self.false_alarms and not self.errors and not self.blind and not self.interrupted

    @property
    def rate(self) -> float:
        """The share of the mutants run that some check kills."""
        verdicts = self.verdicts()
        return sum(bool(v["killed_by"]) for v in verdicts) / len(verdicts) if verdicts else 1.0

    def as_json(self) -> dict:
        verdict = "not run" if self.not_run else "interrupted" if self.interrupted else "pass" if self.ok else "fail"
        clean = [{**v, "worst": [{**w, "max_error": _finite(w["max_error"])} for w in v["worst"]]}
                 for v in self.verdicts()]
        controls = [{"algorithm": o.algorithm, "failed": o.failed, "error": o.error} for o in self.controls]
        outcomes = [{"mutant": o.mutant, "algorithm": o.algorithm, "error": o.error, "seconds": o.seconds,
                     "rows": [{**r, "max_error": _finite(r["max_error"])} for r in o.rows]} for o in self.outcomes]
        return {"profile": self.profile, "seed": self.seed, "device": self.device, "verdict": verdict,
                "not_run": self.not_run, "seconds": self.seconds, "tasks": self.tasks, "done": self.done,
                "kill_rate": self.rate, "checks": self.rows(), "mutants": clean, "controls": controls,
                "blind": [{"check": c, "why": why} for c, why in self.blind],
                "skipped": [{"name": n, "bug": b, "why": why} for n, b, why in self.skipped], "outcomes": outcomes}

    def text(self) -> str:
        title = "verify --mutants: verify's checks against the torch reference's planted bugs"
        if self.not_run:
            return f"{title} — not run: {self.not_run}\n"
        lines = [f"{title} — profile {self.profile}, device {self.device}, seed {self.seed}", ""]
        verdicts = self.verdicts()
        if not verdicts and not self.skipped:
            return "\n".join(lines + ["no planted bug of the reference is run against these algorithms"]) + "\n"
        aimed = {v["name"]: ", ".join(v["aimed"] + [f"({c})" for c in v["missing"]]) for v in verdicts}
        width, middle = max([len(v["name"]) for v in verdicts] + [6]), max([len(a) for a in aimed.values()] + [8])
        lines.append(f"{'mutant':<{width}}  {'aimed at':<{middle}}  killed by")
        for v in verdicts:
            killed = ", ".join(v["killed_by"]) or ("ERROR" if v["errors"] else "-")
            lines.append(f"{v['name']:<{width}}  {aimed[v['name']]:<{middle}}  {killed}")
        lines += ["", f"{'check':<14}  {'mutants':>7}  {'killed':>6}  kill rate"]
        for r in self.rows():
            rate = "-" if r["kill_rate"] is None else f"{100 * r['kill_rate']:.0f}%"
            lines.append(f"{r['check']:<14}  {len(r['mutants']):>7}  {len(r['killed']):>6}  {rate}")
        lines += self._notes(verdicts)
        controls, alarms = self.controls, self.false_alarms
        checks = [r for r in self.rows() if r["mutants"]]
        lines += ["", f"reference kill rate {100 * self.rate:.1f}% ({sum(bool(v['killed_by']) for v in verdicts)} "
                      f"of {len(verdicts)} mutants killed), {len(controls) - len(alarms)} of {len(controls)} "
                      f"controls passed, {sum(bool(r['killed']) for r in checks)} of {len(checks)} checks kill one "
                      f"of theirs ({self.seconds:.0f} s of task time)"]
        if self.interrupted:
            lines.append(f"interrupted: {self.done} of {self.tasks} tasks finished — a partial report")
        return "\n".join(lines) + "\n"

    def _notes(self, verdicts) -> list:
        """The lines under the tables: survivors with their rows' errors against the bounds, the checks verify
        lacks, the mutants skipped, false alarms, errors and the checks that kill nothing."""
        lines = []
        for v in verdicts:
            missed = [w for w in v["worst"] if w["verdict"] != "FAIL"]
            if v["errors"]:
                lines.append(f"ERROR {v['name']}: {v['errors'][0]}")
            elif not v["killed_by"] or (v["aimed"] and not set(v["aimed"]) & set(v["killed_by"])):
                rows = "; ".join(f"{w['check']} {_figure(w['max_error'])} ≤ {_figure(w['allowed'])} on "
                                 f"{w['algorithm']}" for w in missed)
                what = "SURVIVED" if not v["killed_by"] else "MISSED BY ITS CHECKS"
                lines.append(f"{what} {v['name']} ({', '.join(v['targets'])}): {v['bug']}"
                             f"{' — ' + rows if rows else ''}")
        missing = {}
        for v in verdicts:
            for check in v["missing"]:
                missing[check] = missing.get(check, 0) + 1
        if missing:
            lines.append("NOT YET CHECKS of verify, in parentheses above (their mutants run under the others): "
                         + ", ".join(f"{c} ({n} mutant{'s' if n > 1 else ''})" for c, n in missing.items()))
        for name, bug, why in self.skipped:
            lines.append(f"SKIPPED {name}: {bug} — {why}")
        for o in self.false_alarms:
            rows = {r["check"]: r for r in o.rows}
            lines.append("FALSE ALARM control " + o.algorithm + ": " + "; ".join(
                f"{c} {_figure(rows[c]['max_error'])} > {_figure(rows[c]['allowed'])} {rows[c]['detail']}"
                for c in o.failed))
        for o in self.controls:
            if o.error:
                lines.append(f"ERROR control {o.algorithm}: {o.error}")
        for check, why in self.blind:
            lines.append(f"BLIND {check}: {why}")
        return [""] + lines if lines else []


def _ratio(row) -> float:
    """How far a row's error is past its bound (> 1: FAIL), for choosing a mutant's closest call."""
    error, bound = row["max_error"], row["allowed"]
    return error / bound if bound > 0 else (float("inf") if error > 0 else 0.0)


def _finite(x):
    return x if x == x and x not in (float("inf"), float("-inf")) else None


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


def reference_plan(only, profile, seed, device="auto") -> tuple:
    """The empty :class:`ReferenceReport` of the reference's planted bugs (those run against the algorithms ``only``
    names; None: all) on ``device`` and its tasks (:class:`~reference.verification.reference_mutants.Planted`);
    without torch, a report that says so and no tasks."""
    from .. import needs_torch, require_torch
    try:
        require_torch()
    except ImportError:
        return ReferenceReport(profile, seed, not_run=needs_torch("planting bugs in the torch reference")), []
    from ..model.device import device as resolve_device
    from . import reference_mutants as catalogue
    where = resolve_device(device).type
    planned = catalogue.tasks(only, profile, seed, where)
    run = [m for m in catalogue.MUTANTS if any(m.name in t.mutants for t in planned)]
    mutants = [{"name": m.name, "bug": m.bug,
                "targets": [a for a in m.targets if any(t.name == a and m.name in t.mutants for t in planned)],
                "aimed": list(dict.fromkeys(c for c in map(catalogue.present, m.checks) if c is not None)),
                "missing": [c for c in m.checks if catalogue.present(c) is None]}
               for m in run]
    report = ReferenceReport(profile, seed, where, catalogue.device_checks(where), mutants,
                             skipped=catalogue.skipped(only, where), complete=only is None, tasks=len(planned))
    return report, planned


def kill_rate(*, profile="quick", seed=0, only=None, progress=None, jobs=1, scheduler=None, reference=True,
              device="auto") -> MutationReport:
    """Run ``conform`` (``profile``'s examples) on every control and mutant of the catalogue, or of the
    algorithms ``only`` names, and (``reference``) verify's checks on the torch reference with each of its planted
    bugs run against those algorithms, on ``device``: here (``jobs=1``), in ``jobs`` worker processes or on the
    Dask cluster ``scheduler`` names (:mod:`reference.execution.executors`) — the same report whichever;
    ``progress`` (a text stream) gets a live bar.  Ctrl-C returns the partial report."""
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    planned = tasks(only, profile, seed)
    half, planted = reference_plan(only, profile, seed, device) if reference else (None, [])
    report, start = MutationReport(profile, seed, tasks=len(planned) + len(planted), reference=half), \
        time.perf_counter()
    # one campaign: a worker idle at the end of one half's tasks takes the other's
    results = run_shown(planted + planned, "verify --mutants", progress, jobs=jobs, scheduler=scheduler)
    report.done = sum(r is not None for r in results)
    if half is not None:
        half.done = sum(r is not None for r in results[:len(planted)])
        half.outcomes = flatten(results[:len(planted)])
        half.seconds = sum(o.seconds for o in half.outcomes)
    order = {(kind, e.name): i for i, (kind, e) in enumerate(_entries(only))}
    report.outcomes = sorted(flatten(results[len(planted):]), key=lambda o: order[o.kind, o.name])
    report.seconds = time.perf_counter() - start
    return report
