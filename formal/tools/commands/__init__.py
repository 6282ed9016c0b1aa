"""The commands of :mod:`formal.tools.cli`, one module each, each with its ``register(sub)``:
:mod:`.complexity`, :mod:`.graph`, :mod:`.check` and :mod:`.table1` (registered at once; they import the spec
alone), :mod:`.conform`, :mod:`.verify` and :mod:`.prove` (registered when named or for the help:
they import :mod:`reference` or :mod:`proofs` when run)."""
