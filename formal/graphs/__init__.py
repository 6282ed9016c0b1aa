"""Attention as message passing on networkx graphs.

- :mod:`.pattern` — :class:`Pattern` (edges ``key → query`` as arrays) and its conversions to and from the
  spec's ``{0,1}^{ℓ_z×ℓ_x}`` masks and networkx graphs;
- :mod:`.edges` — edge arrays from array operations (runs of keys, fixed offsets), never a loop per edge;
- :mod:`.patterns` — the built-in patterns (full, causal, cross, sliding window, dilated, Longformer's
  global + local, the Sparse Transformer's strided and fixed, BigBird's random, Swin's windows) with their
  symbolic edge counts, and any user graph;
- :mod:`.message_passing` — Algorithms 4 and 5 over a pattern: a readable loop and a vectorised executor;
- :mod:`.analysis` — edge counts, FLOPs against dense attention, and (from :mod:`.layered`) receptive
  fields, layers to full coverage, maximum path length (Vaswani et al.'s Table 1), for any number of layers;
- :mod:`.edgelist` — a pattern from a text file of ``key query`` lines;
- :mod:`.memory` — the estimates every step that grows with ℓ² or ``|E|`` passes to :mod:`formal.limits`
  before it allocates.

Examples
--------
>>> from formal import graphs
>>> p = graphs.patterns.strided(64, 8)
>>> p.n_edges, graphs.layers_to_coverage(p), round(p.density, 3)
(708, 2, 0.173)
"""

from . import analysis, message_passing, patterns
from .analysis import (attention_flops, layers_to_coverage, max_path_length, receptive_field,
                       receptive_field_sizes, symbolic_edge_count, vaswani_table1)
from .message_passing import attention, mhattention
from .pattern import Pattern, as_pattern, from_graph, from_mask, from_pairs, to_mask
from .patterns import PATTERNS

__all__ = ["Pattern", "PATTERNS", "as_pattern", "from_graph", "from_mask", "from_pairs", "to_mask", "attention",
           "mhattention", "attention_flops", "layers_to_coverage", "max_path_length", "receptive_field",
           "receptive_field_sizes", "symbolic_edge_count", "vaswani_table1", "analysis", "message_passing",
           "patterns"]
