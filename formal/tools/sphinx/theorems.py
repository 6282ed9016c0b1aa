"""``.. formal:theorem::`` — the theorems the docs show (:func:`proofs.registry.theorems`), and their results,
checked once per build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from . import nodes as build
from .entry import Entry

__all__ = ["declared", "checked", "prefetch", "stop", "resolve", "result_fields", "TheoremDirective",
           "TheoremsDirective", "pending_result"]

logger = logging.getLogger(__name__)

#: Theorem name → its result, checked once per build (and process).
_RESULTS: dict = {}


def declared() -> list:
    """Every theorem of :mod:`proofs` (:func:`proofs.registry.theorems`); a LookupError saying so when they
    cannot be imported."""
    try:
        from proofs.registry import theorems
        return theorems()
    except ImportError as error:
        raise LookupError(f"no theorems: proofs cannot be imported ({error})") from None


def checked(theorem):
    """The result of ``theorem`` (it and its twin checked), once per build: taken from the worker
    :func:`prefetch` started, or checked here."""
    if theorem.name not in _RESULTS:
        _RESULTS.update(_collected())
    if theorem.name not in _RESULTS:
        _RESULTS[theorem.name] = theorem.result()
    return _RESULTS[theorem.name]


@dataclass(frozen=True)
class Checked:
    """A theorem's result as the docs show it (what the worker sends back)."""

    verdict: str
    proved: bool
    detail: str
    twin_verdict: str
    twin_rejected: bool
    counterexample: str
    seconds: float


#: The worker checking every theorem while the pages are read: (its process, the pid of the build that owns it).
_WORKER: dict = {}


def prefetch(app, env, docnames) -> None:
    """Start checking every declared theorem in a worker process when a page about to be read has a
    ``formal:theorem`` entry, so that the checks run beside the reading of the other pages."""
    if _WORKER or _RESULTS:
        return
    if not any(".. formal:theorem" in _source(env, name) for name in docnames):
        return
    from reference.execution import children
    _WORKER.update(child=children.start("formal.tools.sphinx.theorems:_send", stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True),
                   owner=os.getpid())


def _source(env, docname: str) -> str:
    try:
        return Path(env.doc2path(docname)).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def stop(app=None, exception=None) -> None:
    """End the worker and all it started (at the end of the build, or when it failed); a build ended otherwise
    (Ctrl-C, a crash) ends it too: the worker watches the build (:mod:`reference.execution.children`)."""
    child = _WORKER.pop("child", None)
    if child is not None:
        child.end()


def _collected() -> dict:
    """The worker's results (name → :class:`Checked`); none when there is no worker in this process or it
    failed (the theorems are then checked in the build itself)."""
    if _WORKER.get("owner") != os.getpid() or "child" not in _WORKER:
        return {}                   # (a worker already collected or stopped leaves nothing to read)
    child = _WORKER.pop("child")
    with child:
        out, _ = child.process.communicate()
    if child.process.returncode != 0:
        return {}
    return {name: Checked(**fields) for name, fields in json.loads(out).items()}


def _send() -> None:
    """The worker: every declared theorem's result, as JSON on stdout."""
    out = {}
    for t in declared():
        r = t.result()
        out[t.name] = {"verdict": r.verdict, "proved": r.proved, "detail": r.detail,
                       "twin_verdict": r.twin_verdict, "twin_rejected": r.twin_rejected,
                       "counterexample": r.counterexample, "seconds": r.seconds}
    sys.stdout.write(json.dumps(out))


def _verdict(text: str, good: bool) -> nodes.inline:
    return nodes.inline(text=text, classes=[f"formal-verdict-{text}"] + ([] if good else ["formal-verdict-unexpected"]))


def result_fields(result) -> list:
    """The fields of a theorem's entry that show its result: the verdict with the proof's detail, the twin's verdict
    with its counterexample, and the seconds both took."""
    return [("Result", [_verdict(result.verdict, result.proved), nodes.Text(f": {result.detail}")]),
            ("Twin", [_verdict(result.twin_verdict, result.twin_rejected),
                      nodes.Text(f": {result.counterexample}")]),
            ("Checked in", f"{result.seconds:.2f} s when these pages were built")]


class pending_result(nodes.General, nodes.Element):  # noqa: N801 - docutils names its node classes so
    """Where a theorem's result goes (``names``: one theorem, an entry; several, the summary table): filled in
    when the page is written (:func:`resolve`), so the checks run while the other pages are read."""


class TheoremDirective(Entry):
    """``.. formal:theorem:: NAME`` — a theorem of ``proofs/``: its statement (the formula displayed), evidence
    level, method and twin, and (unless ``:no-result:``) its result when the docs were built: the proof's verdict
    and detail, the twin's verdict and counterexample (:func:`formal.tools.sphinx.theorems.declared`)."""

    kind = "theorem"
    option_spec = {"noindex": directives.flag, "no-result": directives.flag}

    def run(self):
        name = self.arguments[0]
        try:
            found = {t.name: t for t in declared()}
        except LookupError as error:
            return self.fail(f"formal:theorem {name}: {error}")
        if name not in found:
            return self.fail(f"formal:theorem {name}: unknown; known: {', '.join(found)}")
        t = found[name]
        out = self.target(name, [f"{name} (theorem)"])
        box = nodes.container(classes=["formal-theorem"])
        box += build.para(nodes.strong(text=f"Theorem ({name}). "), t.statement)
        box += nodes.math_block(t.latex, t.latex, nowrap=False, number=None)
        fields = [("Evidence", t.level), ("Method", t.method), ("Perturbed twin", t.twin),
                  ("About", build.joined([build.xref("alg", a) for a in t.about]))]
        box += build.field_list(fields)
        if "no-result" not in self.options:
            box += pending_result(names=[name])
        out.append(box)
        return out


class TheoremsDirective(SphinxDirective):
    """``.. formal:theorems::`` — every declared theorem in one table (its level, result and twin's), with the
    counts above it: the summary of a page of theorem entries."""

    def run(self):
        try:
            names = [t.name for t in declared()]
        except LookupError as error:
            logger.warning(f"formal:theorems: {error}", location=self.get_location())
            return [nodes.paragraph(text=f"[formal:theorems: {error}]")]
        return [pending_result(names=names, summary=True)]


def resolve(app, doctree, docname) -> None:
    """Fill in every :class:`pending_result` of a page being written with the results."""
    for node in list(doctree.findall(pending_result)):
        found = {t.name: t for t in declared()}
        if node.get("summary"):
            node.replace_self(_summary([found[n] for n in node["names"] if n in found],
                                       partial(build.resolved_link, app, docname, "theorem")))
        else:
            node.replace_self(build.field_list(result_fields(checked(found[node["names"][0]]))))


def _summary(declared_theorems, link) -> list:
    from collections import Counter
    results = [(t, checked(t)) for t in declared_theorems]
    proved = sum(r.proved for _, r in results)
    rejected = sum(r.twin_rejected for _, r in results)
    levels = Counter(t.level.split(",")[0].split(" ")[0] for t, _ in results)
    counts = ", ".join(f"{n} {level}" for level, n in levels.most_common())
    head = build.para(nodes.strong(text=f"{len(results)} theorems: {proved} proved, {rejected} twins rejected"),
                      f" ({counts}), checked when these pages were built.")
    rows = [[[link(t.name)], t.level.split(",")[0], [_verdict(r.verdict, r.proved)],
             [_verdict(r.twin_verdict, r.twin_rejected)], f"{r.seconds:.2f} s"] for t, r in results]
    table = build.table(["theorem", "evidence", "result", "twin", "checked in"], rows,
                        classes=("formal-theorem-summary",), widths=[40, 20, 15, 15, 10])
    return [head, table]
