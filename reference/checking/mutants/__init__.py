"""Correct implementations of every algorithm ``conform`` checks, and the catalogue of planted bugs
``verify --mutants`` runs to measure the conformance suite's kill rate.

The implementations are written as a user would write them — numpy only, the paper's column layout, the
spec's keyword arguments, never calling :mod:`formal` or the torch reference — so they are an independent
oracle, and examples of what ``conform`` accepts.  Each algorithm's factory takes the variant's options and
returns the function ``conform`` calls; its keyword-only ``_``-arguments are the seams bugs are planted
through:

- :mod:`.embedding` (Algorithms 1, 2), :mod:`.attention` (3–5, grouped-query, key/value cache),
  :mod:`.normalization` (6), :mod:`.unembedding` (7);
- :mod:`.blocks` (what the stacks share), :mod:`.encoder_decoder` (8), :mod:`.encoder` (9, BERT and ViT),
  :mod:`.decoder` (10, and with a key/value cache);
- :mod:`.losses` (11–13), :mod:`.inference` (14, 15);
- :mod:`.bugs` (the planted pieces) and :mod:`.catalogue` (``CONTROLS`` and ``MUTANTS``).

>>> from reference.checking.mutants.catalogue import FACTORIES
>>> attention = FACTORIES["attention"](empty="nan")      # formal-transformers conform … -o empty=nan
"""

from .catalogue import CONTROLS, FACTORIES, MUTANTS, Entry

__all__ = ["Entry", "FACTORIES", "CONTROLS", "MUTANTS"]
