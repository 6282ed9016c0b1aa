"""Correct implementations of every algorithm ``conform`` checks, and the catalogue of planted bugs
``verify --mutants`` runs to measure the conformance suite's kill rate.

The implementations are written as a user would write them — numpy only, the paper's column layout, the
spec's keyword arguments, never calling :mod:`formal` or the torch reference — so they are an independent
oracle, and examples of what ``conform`` accepts.  Each algorithm's factory takes the variant's options and
returns the function ``conform`` calls; its keyword-only ``_``-arguments are the seams bugs are planted
through.  One module per family holds the implementations, the planted pieces, and the catalogue's entries
(:mod:`.entry`: each algorithm's :class:`Implementation` with its measured seconds, its mutants):

- one module per family of :mod:`formal.algorithms`, named as there: :mod:`.embedding` (Algorithms 1, 2),
  :mod:`.attention` (3–5, grouped-query heads), :mod:`.normalization` (6), :mod:`.unembedding` (7),
  :mod:`.feedforward` (the position-wise MLP), :mod:`.architectures` (8–10: encoder–decoder, encoder-only
  with BERT's and ViT's inputs and heads, decoder-only), :mod:`.kv_cache` (5 and 10 with a key/value cache),
  :mod:`.training` (11–13), :mod:`.inference` (14, 15), :mod:`.recurrent` (cells, layers and stacks),
  :mod:`.seq2seq`, :mod:`.captioning` (Show, Attend and Tell), :mod:`.hierarchical` (hierarchical attention
  networks), :mod:`.pooling`, :mod:`.convolution`, :mod:`.paged` (PagedAttention), :mod:`.paged_kernel` (its
  kernel), :mod:`.vision` (Swin), :mod:`.graph_attention` (GAT, GATv2);
- :mod:`.blocks` — what the stacks share; :mod:`.captioning_tutorial` — Show, Attend and Tell as the PyTorch
  tutorial writes it, ported to numpy;
- :mod:`.numerics` — the numerical pieces they share (softmax per column, activations, masks);
- :mod:`.catalogue` finds them all: ``FACTORIES``, ``MUTANTS``, ``CONTROLS``, ``EQUIVALENT``.

>>> from reference.catalogue import FACTORIES
>>> attention = FACTORIES["attention"](empty="nan")      # formal-transformers conform … -o empty=nan
"""

from .entry import Entry, Implementation

__all__ = ["Entry", "Implementation", "FACTORIES", "CONTROLS", "MUTANTS", "EQUIVALENT"]


def __getattr__(name):
    """The catalogue's views (:mod:`.catalogue`), assembled when first asked for."""
    if name in ("FACTORIES", "CONTROLS", "MUTANTS", "EQUIVALENT", "IMPLEMENTATIONS"):
        from . import catalogue
        return getattr(catalogue, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
