"""``.. formal:claim::`` and ``.. formal:claims::`` — claims with the verdicts they get when the docs build: one
claim as an entry, or a whole claims file (the catalogue's or the user's own) as a summary and a table."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives

from ..claims.claim import VERDICTS
from . import nodes as build
from .entry import Entry, logger

__all__ = ["ClaimDirective", "ClaimsDirective", "catalogue", "decided", "verdict_node", "subject_link"]


def _path(directive, text: str) -> str:
    """A claims file named on a page: a file of the catalogue by its stem (``attention``), or a path relative
    to the page."""
    from ..claims.catalogue import files
    by_stem = {Path(f).stem: f for f in files()}
    return by_stem.get(text) or directive.env.relfn2path(text)[1]


def _warn_invalid(directive, verdicts, what: str) -> None:
    """A build warning (an error under ``-W``) for each invalid claim shown, naming it, its file and why — as
    ``check`` exits 2 on it: a claim the build cannot decide is bad input, not a verdict to render silently.
    The page still shows it, verdict *invalid* and why."""
    for v in verdicts:
        if v.verdict == "invalid":
            logger.warning(f"{what}: claim {v.claim.id!r} in {v.claim.file} is invalid: {v.reason}",
                           location=directive.get_location())


class ClaimDirective(Entry):
    """``.. formal:claim:: ID`` (``:file: PATH``: a claims file of one's own, relative to the page; default: the
    catalogue) — a claim with the verdict it gets when the docs build, what was claimed and derived, and why."""

    kind = "claim"
    option_spec = {"file": directives.unchanged_required, "noindex": directives.flag}

    def run(self):
        from ...errors import FormalError
        claim_id = self.arguments[0]
        where = self.options.get("file")
        try:
            verdicts = decided(_path(self, where)) if where else catalogue()
        except FormalError as error:
            return self.fail(f"formal:claim {claim_id}: {error}")
        found = [v for v in verdicts if v.claim.id == claim_id]
        if not found:
            return self.fail(f"formal:claim {claim_id}: not in {where or 'the catalogue'}")
        v = found[0]
        _warn_invalid(self, [v], f"formal:claim {claim_id}")
        out = self.target(claim_id, [f"{claim_id} (claim)"])
        box = nodes.container(classes=["formal-claim"])
        box += build.para(nodes.strong(text=f"Claim {claim_id}: "), f"“{v.claim.says}”")
        fields = [("Source", v.claim.source), ("About", [subject_link(v.claim)]), ("Verdict", [verdict_node(v)])]
        fields += [(name, text) for name, text in _details(v)]
        box += build.field_list(fields)
        out.append(box)
        return out


class ClaimsDirective(Entry):
    """``.. formal:claims:: [FILE]`` — every claim of a claims file (a catalogue file by its stem, e.g.
    ``attention``, or a path relative to the page; no argument: the whole catalogue) decided when the docs
    build: the counts by verdict, then one row per claim — what it says, its source and note, what it is
    about, the value claimed and the value derived, the verdict (against the file's ``expect``) and why.
    Each claim is a target of ``:formal:claim:``."""

    kind = "claim"
    required_arguments = 0
    optional_arguments = 1
    option_spec = {"noindex": directives.flag, "no-summary": directives.flag, "summary-only": directives.flag}

    def run(self):
        from ...errors import FormalError
        where = self.arguments[0] if self.arguments else None
        what = f"formal:claims {where}" if where else "formal:claims"
        if {"summary-only", "no-summary"} <= set(self.options):
            return self.fail(f"{what}: :summary-only: and :no-summary: contradict each other (give one)")
        try:
            verdicts = decided(_path(self, where)) if where else catalogue()
        except FormalError as error:
            return self.fail(f"{what}: {error}")
        _warn_invalid(self, verdicts, what)
        if "summary-only" in self.options:
            return [summary(verdicts, by_file=True)]
        out = [] if "no-summary" in self.options else [summary(verdicts, search=False)]
        rows = []
        for v in verdicts:
            target = self.target(v.claim.id, [f"{v.claim.id} (claim)"])   # its index entry here, its anchor in the row
            out += target[:1]
            rows.append([self._claim_cell(v, target[1:]), [subject_link(v.claim)], v.claimed or "—", _derived(v),
                         self._verdict_cell(v)])
        out.append(build.table(["claim", "about", "claimed", "derived", "verdict"], rows,
                               classes=("formal-claims",), widths=[38, 12, 12, 12, 26]))
        return out

    @staticmethod
    def _claim_cell(v, anchor: list) -> build.Cell:
        parts = [*anchor, nodes.strong(text=v.claim.id), nodes.Text(": “"), nodes.Text(v.claim.says), nodes.Text("”")]
        cell = [nodes.paragraph("", "", *parts)]
        cell.append(nodes.paragraph("", "", nodes.emphasis(text=v.claim.source), classes=["formal-claim-source"]))
        note = v.claim.data.get("note")
        if isinstance(note, str) and note.strip():
            cell.append(nodes.paragraph("", "", nodes.strong(text="Note: "), nodes.Text(note.strip()),
                                        classes=["formal-claim-note"]))
        return build.Cell(cell, ("formal-claim-cell",), blocks=True)

    @staticmethod
    def _verdict_cell(v) -> build.Cell:
        cell = [nodes.paragraph("", "", verdict_node(v))]
        for name, text in _details(v, claimed=False):
            cell.append(nodes.paragraph("", "", nodes.Text(text), classes=["formal-claim-why"]))
        return build.Cell(cell, ("formal-claim-verdict",), blocks=True)


def verdict_node(v) -> nodes.inline:
    """The verdict, and whether it is what the claims file expects: ``fails (as expected)`` is the catalogue
    recording a wrong claim as wrong, not a failure of the package."""
    expected, unexpected = v.as_expected is True, v.as_expected is False
    text = v.verdict + (" (as expected)" if expected and v.verdict != "holds" else
                        f" (unexpected: expected {v.claim.expect})" if unexpected else "")
    classes = [f"formal-verdict-{v.verdict}"] + (["formal-verdict-expected"] if expected else []) + \
        (["formal-verdict-unexpected"] if unexpected else [])
    return nodes.inline(text=text, classes=classes)


def _details(v, claimed: bool = True) -> list:
    """(field, text) of what was claimed and derived and why — only those with something to say."""
    out = []
    if claimed:
        out += [("Claimed", v.claimed)] if v.claimed else []
        derived = _derived(v)
        out += [("Derived", derived)] if derived != "—" else []
    if v.reason:
        out.append(("Why", v.reason))
    return out


def _derived(v) -> str:
    if v.derived is None or v.derived == "":
        return "—"
    return f"{v.derived:,}" if isinstance(v.derived, int) and not isinstance(v.derived, bool) else str(v.derived)


def subject_link(claim) -> nodes.Node:
    """A link to what a claim is about: the model (preset), the algorithm, the pattern; its name otherwise."""
    kinds = {"model": "model", "algorithm": "alg", "graph": "pattern"}
    for field, role in kinds.items():
        value = claim.subject.get(field)
        if isinstance(value, str):
            return build.xref(role, value)
    text = next((str(v) for v in claim.subject.values() if isinstance(v, str)), "—")
    return nodes.literal(text=text) if text != "—" else nodes.Text(text)


def summary(verdicts, *, search: bool = True, by_file: bool = False) -> nodes.Element:
    """The counts: how many claims hold, fail, are undecided or invalid, and how many are as their file expects
    (``by_file``: a table of them per file); ``search``: with the box that filters the tables of claims."""
    counts = Counter(v.verdict for v in verdicts)
    expected = sum(v.as_expected is True for v in verdicts)
    unexpected = [v.claim.id for v in verdicts if v.as_expected is False]
    said = ", ".join(f"{n} {verdict}" for verdict, n in counts.most_common())
    text = f"{len(verdicts)} claims: {said}. {expected} as their file expects"
    text += f"; not as expected: {', '.join(unexpected)}." if unexpected else "; none otherwise."
    box = nodes.container(classes=["formal-claims-summary"])
    box += build.para(nodes.strong(text=text))
    if by_file:
        files = {}
        for v in verdicts:
            files.setdefault(v.claim.file, []).append(v)
        rows = [[Path(f).name, str(len(vs)), *(str(sum(v.verdict == w for v in vs)) for w in VERDICTS),
                 str(sum(v.as_expected is True for v in vs))] for f, vs in files.items()]
        box += build.table(["file", "claims", *VERDICTS, "as expected"], rows, classes=("formal-claims-files",))
    if search:
        box += nodes.raw("", '<p class="formal-filter"><label>Show only the claims containing '
                             '<input type="search" placeholder="a word, an id, a verdict"></label></p>', format="html")
    return box




_VERDICTS: list = []
_FILES: dict = {}


def catalogue() -> list:
    """The catalogue's verdicts, decided once per build."""
    if not _VERDICTS:
        from ..commands.check import run_files
        _VERDICTS.extend(run_files([], catalogue=True))
    return _VERDICTS


def decided(path: str) -> list:
    """The verdicts of the claims file at ``path`` (a catalogue file's are the catalogue's), decided once per
    build."""
    from ..claims.catalogue import files
    if path in files():
        return [v for v in catalogue() if v.claim.file == path]
    if path not in _FILES:
        from ..commands.check import run_files
        _FILES[path] = run_files([path])
    return _FILES[path]
