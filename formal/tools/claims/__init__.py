"""Complexity claims checked against the algorithm objects (``formal-transformers check``).

A claim is data — a ``[[claim]]`` table in a TOML file, never evaluated — naming a subject (a preset
``model``, an ``algorithm``, an ``op`` with ``inputs``, a ``graph`` pattern, or an ``implementation``), the
``quantity`` asked, and one assertion (``equals``, ``approx``, ``at_most``, ``at_least``, ``theta``,
``big_o``, ``leading`` or ``property``).  The derived value comes from the same objects as ``show``,
``complexity`` and ``graph``; the verdict is ``holds``, ``fails`` (with the reason), ``undecided`` (an
inequality or an asymptotic question outside what is decided exactly) or ``invalid`` (the claim itself is
wrong).  Modules:

- reading: :mod:`.claim` (a claims file, never evaluated), :mod:`.figures` (``"117M"``);
- derived values: :mod:`.subjects` (an algorithm's or an op's), :mod:`.models` (a preset's), :mod:`.ops` (the
  primitives a claim runs by name), :mod:`.graph_subjects` (a pattern's), :mod:`.stack_subjects` (stacked
  convolutions' receptive field), :mod:`.values` (what every subject checks alike);
- verdicts: :mod:`.decide` (dispatch), :mod:`.numbers` and :mod:`.exact` (exact comparisons), :mod:`.growth`
  (``theta``, ``big_o``, ``leading``, on :mod:`formal.costs.orders`), :mod:`.implementations` (property and
  implementation claims, on ``reference``'s conformance checks), :mod:`.verdict`, :mod:`.report`;
- :mod:`.jobs` — claims decided in worker processes or on a Dask cluster (``check --jobs/--scheduler``);
- the shipped :mod:`.catalogue`; the command is :mod:`formal.tools.commands.check`, the formula grammar
  :mod:`formal.core.formula`.

>>> from formal.tools.claims import check_text
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
    """The :class:`~formal.tools.claims.decide.Verdict` of every claim in the TOML file at ``path``."""
    from ..commands.check import run_files
    return run_files([path])


def check_text(text: str, *, base_dir: str | None = None) -> list:
    """The verdicts of the claims in a TOML string (``base_dir``: where relative paths point)."""
    import os

    from ...guards.files import parse_toml
    from .claim import parse_claims
    from .decide import decide
    data = parse_toml(text, "claims")
    file = os.path.join(base_dir, "<text>") if base_dir else ""
    return [decide(c) for c in parse_claims(data, file)]
