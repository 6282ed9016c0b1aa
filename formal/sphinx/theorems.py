"""The theorems the docs show, found through the ``formal_transformers.theorems`` entry points (this package
imports nothing of ``proofs``), and their results, checked once per build."""

from __future__ import annotations

from docutils import nodes

__all__ = ["THEOREMS", "declared", "checked", "result_fields"]

#: The entry-point group that lists the theorems (``proofs.registry:theorems`` in this package's metadata).
THEOREMS = "formal_transformers.theorems"

#: Theorem name → its result, checked once per build (and process).
_RESULTS: dict = {}


def declared() -> list:
    """Every theorem the installed packages declare in the :data:`THEOREMS` entry points (each a function
    returning a list); a LookupError naming the group when none is installed or one cannot be loaded."""
    from importlib.metadata import entry_points
    found = list(entry_points(group=THEOREMS))
    if not found:
        raise LookupError(f"no theorems: no package declares the {THEOREMS!r} entry point (install the package "
                          "with its proofs: pip install -e .)")
    out = []
    for entry in found:
        try:
            out += entry.load()()
        except ImportError as error:
            raise LookupError(f"the {THEOREMS!r} entry point {entry.name!r} cannot be loaded: {error}") from None
    return out


def checked(theorem):
    """``theorem.result()`` (the theorem and its twin checked), once per build."""
    if theorem.name not in _RESULTS:
        _RESULTS[theorem.name] = theorem.result()
    return _RESULTS[theorem.name]


def _verdict(text: str, good: bool) -> nodes.inline:
    return nodes.inline(text=text, classes=[f"formal-verdict-{text}"] + ([] if good else ["formal-verdict-unexpected"]))


def result_fields(result) -> list:
    """The fields of a theorem's entry that show its result: the verdict with the proof's detail, the twin's verdict
    with its counterexample, and the seconds both took."""
    return [("Result", [_verdict(result.verdict, result.proved), nodes.Text(f": {result.detail}")]),
            ("Twin", [_verdict(result.twin_verdict, result.twin_rejected),
                      nodes.Text(f": {result.counterexample}")]),
            ("Checked in", f"{result.seconds:.2f} s when these pages were built")]
