"""Hypothesis strategies the tests share, one module per family of algorithms, built constructively
(``d_e = H·d_head``, never filtered): each draws a :class:`~tests.strategies.cases.Case` whose parameter
shapes are written by hand from the papers, never read from the algorithm objects.

- :mod:`.cases`: the :class:`~.cases.Case`, the draws every family shares, and ``evaluate``;
- :mod:`.embedding` (Algorithms 1, 2, 7), :mod:`.attention` (3–5), :mod:`.normalization` (6),
  :mod:`.stacks` (8–15), :mod:`.scores` (the attention scores and attention pooling), :mod:`.recurrent`
  (cells, layers, stacks, seq2seq, Show-Attend-Tell, HAN), :mod:`.convolution`, :mod:`.paged`
  (PagedAttention), :mod:`.swin`;
- :mod:`.graphs`: attention masks, graphs and the built-in patterns, with oracles written from the papers.

Each family module's ``*_STRATEGIES`` maps algorithm names to the strategy of all their variants;
:func:`strategies` gathers them from every module here, so a new family's module is found by itself.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

__all__ = ["strategies"]


@functools.cache
def strategies() -> dict:
    """Algorithm name → its strategy, from every ``*_STRATEGIES`` of every module of this package (a name
    declared twice is an error: one strategy per algorithm)."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for attribute in sorted(a for a in vars(module) if a.endswith("_STRATEGIES") and not a.startswith("_")):
            for name, strategy in getattr(module, attribute).items():
                if name in found and found[name] is not strategy:
                    raise RuntimeError(f"{module.__name__}.{attribute} declares {name!r}, declared before")
                found[name] = strategy
    return found
