"""Complexity claims checked against the algorithm objects (``formal-transformers check``).

A claim is data — a ``[[claim]]`` table in a TOML file, never evaluated — naming a subject (a preset
``model``, an ``algorithm``, an ``op`` with ``inputs``, a ``graph`` pattern, or an ``implementation``), the
``quantity`` asked, and one assertion (``equals``, ``approx``, ``at_most``, ``at_least``, ``theta``,
``big_o``, ``leading`` or ``property``).  The derived value comes from the same objects as ``show``,
``complexity`` and ``graph``; the verdict is ``holds``, ``fails`` (with the reason), ``undecided`` (an
inequality or an asymptotic question outside what is decided exactly) or ``invalid`` (the claim itself is
wrong).  Modules: :mod:`~formal.claims.claim` (reading), :mod:`~formal.claims.formula` (the formula
grammar), :mod:`~formal.claims.figures` (``"117M"``), :mod:`~formal.claims.subjects` (derived values),
:mod:`~formal.claims.asymptotic`, :mod:`~formal.claims.decide` and :mod:`~formal.claims.growth`
(verdicts), :mod:`~formal.claims.report`,
:mod:`~formal.claims.command`, and the shipped :mod:`~formal.claims.catalogue`.

>>> from formal.claims import check_text
>>> [v.verdict for v in check_text('''
... [[claim]]
... id = "gpt2-params"
... model = "gpt2"
... quantity = "params.total"
... approx = "124M"
... ''')]
['holds']
"""

from __future__ import annotations

__all__ = ["check_file", "check_text"]


def check_file(path) -> list:
    """The :class:`~formal.claims.decide.Verdict` of every claim in the TOML file at ``path``."""
    from .command import run_files
    return run_files([path])


def check_text(text: str, *, base_dir: str | None = None) -> list:
    """The verdicts of the claims in a TOML string (``base_dir``: where relative paths point)."""
    import os

    from ..guards.files import parse_toml
    from .claim import parse_claims
    from .decide import decide
    data = parse_toml(text, "claims")
    file = os.path.join(base_dir, "<text>") if base_dir else ""
    return [decide(c) for c in parse_claims(data, file)]
