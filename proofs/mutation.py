"""``formal-transformers prove --mutants``: what the theorems catch, measured on bugs planted in the spec.

A theorem is only as good as the bugs it rules out.  The shipped catalogue (:mod:`proofs.mutants`) holds realistic
bugs in the spec — in ops, algorithms, cost rules and pattern builders — each naming the theorems whose statements
it makes false.  For each bug this module starts a **fresh Python process**, plants the bug there
(:meth:`~proofs.mutants.entry.SpecMutant.apply`, before anything is computed), and checks the theorems' statements
(not their twins) against the planted spec.  A bug is **caught** when every theorem it is about fails there; a
bug whose theorem stays proved **survived** (a weakness of the theorems, never of the bug); a bug about no theorem
is listed as such; a bug whose planting raises is **broken** (a defect of the catalogue).  Every other theorem that
fails under a bug is reported too.

Each bug is a task (:class:`Planting`) of the execution layer (:mod:`reference.execution`): run here, in worker
processes or on a Dask cluster, the report is the same; its fresh process is a child of
:mod:`reference.execution.children`, ended with everything it started at the time limit or on Ctrl-C, which
prints the partial report.

>>> from proofs.mutation import campaign
>>> report = campaign(only=["div-sqrt-by-d"], about=True, jobs=1)
>>> [(r.mutant.name, r.caught) for r in report.results]
[('div-sqrt-by-d', True)]
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from reference.execution.protocol import Task

__all__ = ["MutantResult", "MutationReport", "Planting", "campaign", "check_planted", "default_jobs", "find",
           "report_text"]


@dataclass
class MutantResult:
    """One planted bug: the theorems checked under it and the verdict of each statement (``proved``, ``failed``
    or ``undecided``, with its detail), or why planting it broke."""

    mutant: object
    verdicts: dict = field(default_factory=dict)      # theorem name → (verdict, detail), in registry order
    broken: str = ""
    seconds: float = 0.0

    @property
    def failed(self) -> list:
        """The theorems whose statements are not proved under the bug."""
        return [name for name, (verdict, _) in self.verdicts.items() if verdict != "proved"]

    @property
    def missed(self) -> list:
        """The theorems the bug is about that stayed proved."""
        return [name for name in self.mutant.about if name not in self.failed]

    @property
    def caught(self) -> bool:
        """Every theorem the bug is about failed (False for a bug about none, or a broken one)."""
        return bool(self.mutant.about) and not self.broken and not self.missed

    @property
    def collateral(self) -> list:
        """The theorems that failed under the bug though it is not about them."""
        return [name for name in self.failed if name not in self.mutant.about]

    @property
    def status(self) -> str:
        """``caught``, ``survived``, ``about no theorem`` or ``broken``."""
        if self.broken:
            return "broken"
        if not self.mutant.about:
            return "about no theorem"
        return "caught" if self.caught else "survived"

    def as_json(self) -> dict:
        m = self.mutant
        return {"name": m.name, "where": m.where, "bug": m.bug, "about": list(m.about), "status": self.status,
                "caught": self.caught, "failed": self.failed, "missed": self.missed, "collateral": self.collateral,
                "broken": self.broken or None,
                "details": {name: self.verdicts[name][1] for name in self.failed},
                "verdicts": {name: {"result": v, "detail": d} for name, (v, d) in self.verdicts.items()},
                "seconds": round(self.seconds, 2)}


@dataclass
class MutationReport:
    """Every bug's :class:`MutantResult`, in catalogue order; ``about``: only the theorems each bug is about were
    checked."""

    results: list
    about: bool
    jobs: int
    seconds: float = 0.0
    planned: int = 0       # bugs to plant: more than ``results`` after Ctrl-C

    @property
    def interrupted(self) -> bool:
        return len(self.results) < self.planned

    def _count(self, status) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def summary(self) -> dict:
        return {"bugs": len(self.results), "caught": self._count("caught"), "survived": self._count("survived"),
                "about_no_theorem": self._count("about no theorem"), "broken": self._count("broken"),
                "theorems_checked": "about" if self.about else "all", "seconds": round(self.seconds, 1),
                **({"interrupted": True, "planned": self.planned} if self.interrupted else {})}

    @property
    def unaimed(self) -> list:
        """The theorems no bug of the campaign is about (bugs they would catch are not catalogued yet)."""
        from .registry import theorems
        aimed = {name for r in self.results for name in r.mutant.about}
        return [t.name for t in theorems() if t.name not in aimed]

    @property
    def ok(self) -> bool:
        """Every bug with a theorem is caught by all of them, none is broken, and every bug was planted."""
        return not self._count("survived") and not self._count("broken") and not self.interrupted

    def as_json(self) -> dict:
        return {"mutants": [r.as_json() for r in self.results], "summary": self.summary,
                "theorems_no_bug_is_about": self.unaimed, "ok": self.ok}


def _catalogue(source):
    """The mutants of ``source``: the shipped catalogue (None), or the ``MUTANTS`` of the module named ``source``
    (a catalogue of one's own: a test's, a project's)."""
    if source is None:
        from .mutants import catalogue
        return catalogue()
    from importlib import import_module
    return tuple(import_module(source).MUTANTS)


def find(names, source=None) -> tuple:
    """The mutants called ``names`` (of the catalogue ``source``, as :func:`campaign` takes it), in the order given;
    an unknown name is a :class:`~formal.errors.FormalError` listing the known ones."""
    from formal.errors import FormalError, shown
    known = {m.name: m for m in _catalogue(source)}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise FormalError(f"no spec mutant {shown(unknown[0])}; known: {', '.join(known)}")
    return tuple(known[n] for n in dict.fromkeys(names))


def _planting(name, theorems, source):
    """Plant the mutant ``name`` here and check the statements of ``theorems`` (names; all by default), yielding
    what happens as it happens: ``("broken", why)`` or ``("planted", "")``, then ``(theorem, (verdict, detail))``
    for each theorem.  The theorems are imported only once the bug is planted, so that nothing they build at import
    escapes it."""
    mutant, = find([name], source)
    try:
        mutant.apply()
    except Exception as exc:  # noqa: BLE001 - a bug that cannot be planted is the catalogue's defect, reported
        yield "broken", f"planting it raised {type(exc).__name__}: {exc}"
        return
    yield "planted", ""
    from .registry import theorems as every
    from .theorem import check_statement
    for theorem in every():
        if theorems is None or theorem.name in theorems:
            outcome = check_statement(theorem)
            verdict = "proved" if outcome.holds is True else "undecided" if outcome.holds is None else "failed"
            yield theorem.name, (verdict, outcome.detail)


def check_planted(name: str, theorems=None, *, source: str | None = None) -> dict:
    """In this process: plant the mutant ``name`` (of the catalogue ``source``, as :func:`campaign` takes it) and
    check the statements of ``theorems`` (names; all by default) against the planted spec.  Returns
    ``{"broken": str, "verdicts": {name: (verdict, detail)}}``.  Run it only in a process of its own: the bug stays
    planted."""
    found = {"broken": "", "verdicts": {}}
    for what, value in _planting(name, theorems, source):
        if what == "broken":
            found["broken"] = value
        elif what != "planted":
            found["verdicts"][what] = value
    return found


def _child(request: str) -> None:
    """A fresh process's side of :func:`campaign`: plant one bug, and write each step of :func:`_planting` to the
    file the request names as it happens, one JSON line each (so a process that dies or is stopped still leaves
    the verdicts it reached)."""
    import json
    asked = json.loads(request)
    with open(asked["out"], "w", encoding="utf-8") as out:
        for what, value in _planting(asked["name"], asked["theorems"], asked["source"]):
            out.write(json.dumps([what, value]) + "\n")
            out.flush()


def _in_fresh_process(name, theorems, source, timeout) -> dict:
    """Plant the mutant ``name`` in a child (a new Python interpreter, :mod:`reference.execution.children`) and
    read back what it found: ``{"broken": str, "verdicts": {theorem: [verdict, detail]}, "seconds": float}``.  A
    child that dies or runs past ``timeout`` seconds (then ended with all it started) leaves the theorems it had not
    decided undecided (with why), or, if the bug was not yet planted, the bug broken."""
    import json
    import tempfile
    from pathlib import Path

    from reference.execution import children

    with tempfile.TemporaryDirectory(prefix="formal-mutant-") as folder:
        out = Path(folder) / "steps.jsonl"
        request = json.dumps({"name": name, "theorems": theorems, "source": source, "out": str(out)})
        finished = children.run("proofs.mutation:_child", [request], timeout=timeout)
        steps = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    ended = finished.ended(timeout)
    found = dict((what, value) for what, value in steps)
    if "broken" in found or "planted" not in found:
        broken = found.get("broken") or f"planting it did not finish: {ended or 'no steps were written'}"
        return {"broken": broken, "verdicts": {}, "seconds": finished.seconds}
    from .registry import theorems as every
    verdicts = {}
    for theorem in every():
        if theorems is None or theorem.name in theorems:
            verdict = found.get(theorem.name)
            verdicts[theorem.name] = list(verdict) if verdict else [
                "undecided", f"no verdict: {ended or 'its process ended before checking it'}"]
    return {"broken": "", "verdicts": verdicts, "seconds": finished.seconds}


@dataclass(frozen=True)
class Planting(Task):
    """One bug of the catalogue ``source`` planted in a fresh process, and the statements of ``theorems`` (names;
    None: all) checked under it (:func:`_in_fresh_process`): a task of the execution layer
    (:mod:`reference.execution.protocol`), indivisible; its result is one JSON-able dict."""

    name: str
    theorems: tuple | None
    source: str | None
    timeout: float
    cost: float = 1.0

    @property
    def label(self) -> str:
        return self.name

    @property
    def limit(self) -> float:
        """A worker holding the task past the child's own limit, and a minute more, is ended (a backstop)."""
        return self.timeout + 60.0

    def run(self) -> list:
        return [_in_fresh_process(self.name, None if self.theorems is None else list(self.theorems), self.source,
                                  self.timeout)]

    def died(self, cause: str) -> list:
        return [{"broken": f"planting it did not finish: {cause}", "verdicts": {}, "seconds": 0.0}]


def default_jobs() -> int:
    """Worker processes by default: the CPUs this process may use, at most 4 (each holds its own copy of the
    package)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def campaign(*, only=None, about: bool = False, jobs: int | None = None, progress=None, scheduler=None,
             source: str | None = None, timeout: float = 600.0) -> MutationReport:
    """Plant each catalogued bug (``only``: the named ones) in a fresh Python process of its own and check the
    theorems' statements there: all of them, or with ``about`` only those the bug is about.  The bugs are tasks of
    the execution layer: here one after another (``jobs=1``), in ``jobs`` worker processes (default
    :func:`default_jobs`), or on the Dask cluster ``scheduler`` names (``("local", N)`` or ``("address", …)``) — the
    same report whichever; ``progress``: a text stream for a live bar (None: nothing shown).  ``source``: the name
    of a module whose ``MUTANTS`` to plant instead of the shipped catalogue (importable by a fresh process).  A
    bug's process that runs past ``timeout`` seconds is ended: the theorems it had not decided are undecided.  A
    process that dies (a bug that crashes the interpreter) affects its own bug only.  Ctrl-C returns the partial
    report (:attr:`MutationReport.interrupted`)."""
    from formal.errors import FormalError
    from reference.execution.executors import run_shown

    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise FormalError(f"jobs = {jobs!r} must be a positive integer")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise FormalError(f"timeout = {timeout!r} must be a positive, finite number of seconds")
    mutants = find(only, source) if only is not None else _catalogue(source)
    if scheduler is not None:      # the report says where they ran: N local Dask workers, or a cluster (0)
        jobs = scheduler[1] if scheduler[0] == "local" else 0
    else:
        jobs = max(1, min(jobs or default_jobs(), len(mutants)))
    start = time.perf_counter()
    tasks = [Planting(m.name, tuple(m.about) if about else None, source, float(timeout)) for m in mutants]
    found = run_shown(tasks, "planting", progress, jobs=jobs, scheduler=scheduler)
    results = []
    for mutant, rows in zip(mutants, found):
        if rows is not None:
            (row,) = rows
            results.append(MutantResult(mutant, {k: tuple(v) for k, v in row["verdicts"].items()}, row["broken"],
                                        row["seconds"]))
    return MutationReport(results, about, jobs, time.perf_counter() - start, planned=len(mutants))


def _cut(text, width):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def report_text(report: MutationReport) -> str:
    """The campaign as a table (bug, where, status, the theorems it is about, the others that failed), then each
    bug's failing statements with their details, then the summary."""
    header = ("bug", "where", "status", "about", "also failed")
    rows = [(r.mutant.name, r.mutant.where, r.status.upper() if r.status in ("survived", "broken") else r.status,
             ", ".join(r.mutant.about) or "—", ", ".join(r.collateral) or "—") for r in report.results]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(row[:4], widths)), row[4]]).rstrip() for row in [header, *rows]]
    lines.append("")
    for r in report.results:
        lines.append(f"{r.mutant.name} ({r.mutant.where}): {_cut(r.mutant.bug, 200)}")
        if r.broken:
            lines.append(f"  BROKEN: {_cut(r.broken, 300)}")
        for name in r.mutant.about:
            verdict, detail = r.verdicts.get(name, ("not checked", ""))
            mark = "caught" if verdict != "proved" else "MISSED (still proved)"
            lines.append(f"  {name}: {mark}: {_cut(detail, 260)}")
    s = report.summary
    checked = "the theorems each bug is about" if report.about else "every theorem"
    lines += ["", f"{s['bugs']} bugs: {s['caught']} caught by the theorems they are about, "
                  f"{s['about_no_theorem']} about no theorem, {s['survived']} survived, {s['broken']} broken "
                  f"({checked} checked, {f'{report.jobs} processes' if report.jobs else 'a Dask cluster'}, "
                  f"{s['seconds']} s)"]
    if report.unaimed:
        lines.append(f"theorems no bug here is about: {', '.join(report.unaimed)}")
    if report.interrupted:
        lines.append(f"interrupted: {len(report.results)} of {report.planned} bugs planted — a partial report")
    return "\n".join(lines) + "\n"
