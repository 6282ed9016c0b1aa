"""The tools built on the specification: they import the spec (:mod:`formal` outside this package), the torch
reference and the checkers (:mod:`reference`) and the theorems (:mod:`proofs`), and nothing of the spec
imports them.

- :mod:`.cli` — the ``formal-transformers`` command (also ``python -m formal``), with :mod:`.arguments` (the
  argument types every command shares) and :mod:`.helptext` (how each command's help is written);
- :mod:`.commands` — one module per command beyond ``list`` and ``show``;
- :mod:`.claims` — the claims checker (``check``);
- :mod:`.sphinx` — the Sphinx extension that renders the objects (``extensions = ["formal.tools.sphinx"]``).
"""
