"""Hypothesis strategies the tests share, one module per family of algorithms, built constructively
(``d_e = H·d_head``, never filtered): each draws a :class:`~tests.strategies.cases.Case` whose parameter
shapes are written by hand from the papers, never read from the algorithm objects.

- :mod:`.cases`: the :class:`~.cases.Case`, the draws every family shares, and ``evaluate``;
- :mod:`.embedding` (Algorithms 1, 2, 7), :mod:`.attention` (3–5), :mod:`.normalization` (6),
  :mod:`.stacks` (8–15), :mod:`.scores` (the attention scores and attention pooling), :mod:`.recurrent`
  (cells, layers, stacks, seq2seq, Show-Attend-Tell, HAN), :mod:`.convolution`, :mod:`.paged`
  (PagedAttention), :mod:`.swin`;
- :mod:`.graphs`: attention masks, graphs and the built-in patterns, with oracles written from the papers.

Each family module's ``*_STRATEGIES`` maps algorithm names to the strategy of all their variants.
"""
