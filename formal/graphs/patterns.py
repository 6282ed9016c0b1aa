"""The built-in attention patterns, each with its exact symbolic edge count: dense, causal and cross
attention here; Longformer's sliding, dilated and global windows and Swin's windows
(:mod:`formal.graphs.windows`); the Sparse Transformer's strided and fixed patterns and BigBird's random keys
(:mod:`formal.graphs.sparse`) — all importable from this module, and registered in :data:`PATTERNS`.

Every builder makes its edges with array operations (no Python loop per edge) and returns a
:class:`~formal.graphs.pattern.Pattern`; positions are 0-based and an edge ``k → q`` means that query ``q``
attends to key ``k``.  Each pattern's edge count is a sympy expression in ℓ and its parameters
(:mod:`formal.graphs.counts`), derived as the sum over queries of the in-degree; the tests check every count
against networkx's count of the built graph.  The builders check their options as the patterns' schema
declares them (:mod:`formal.graphs.schema`), the one the ``graph`` command, the claims and the docs read.

**How windows are counted.**  Libraries disagree by one on whether a window of size ``w`` includes the
query itself.  Here it does: a causal window ``w`` admits keys ``q − w < k ≤ q`` (``w`` keys; ``w = 1`` is
the query alone), a bidirectional one ``|q − k| < w`` (``2w − 1`` keys).  In flash-attn's
``window_size=(left, right)`` terms that is ``(w − 1, 0)`` and ``(w − 1, w − 1)``.

Examples
--------
>>> p = sliding_window(6, 3)
>>> p.in_degree.tolist()
[1, 2, 3, 3, 3, 3]
>>> from formal.graphs.analysis import symbolic_edge_count
>>> expr, values = symbolic_edge_count(p)
>>> expr.xreplace(values) == p.n_edges == 15
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core import masks
from .building import afford, builtin, self_pattern
from .counts import COUNTS
from .edges import integer, ranges
from .pattern import Pattern, from_graph, from_pairs
from .schema import PARTS
from .sparse import fixed, random, strided
from .windows import dilated, global_local, sliding_window, swin

__all__ = ["full", "causal", "cross", "sliding_window", "dilated", "global_local", "strided", "fixed", "random",
           "swin", "adjacency", "PATTERNS", "PARTS", "Kind"]


# ----------------------------------------------------------------------------------- dense and causal
def _full_args(ell) -> dict:
    return {"ell": integer("ell", ell, 0)}


@builtin("full", _full_args)
def full(ell) -> Pattern:
    """Bidirectional attention (``Mask ≡ 1``, an encoder): every query sees every key.  ``|E| = ℓ²``."""
    ell = _full_args(ell)["ell"]
    afford("full", ell, ell=ell)
    return self_pattern(*ranges(np.zeros(ell, np.int64), np.full(ell, ell)), ell, "full", {})


def _causal_args(ell_z, ell_x=None, *, align=None) -> dict:
    ell_z = integer("ell_z", ell_z, 0)
    ell_x = ell_z if ell_x is None else integer("ell_x", ell_x, 0)
    masks.causal_shift(ell_z, ell_x, align)                              # checks the alignment
    return {"ell_z": ell_z, "ell_x": ell_x, "align": align or "top-left"}


@builtin("causal", _causal_args)
def causal(ell_z, ell_x=None, *, align=None) -> Pattern:
    """Unidirectional attention (a decoder): ``Mask[t_z, t_x] = [[t_z ≤ t_x]]``.

    With ``ell_x`` ≠ ``ell_z`` the keys and queries are different sequences, the pattern is bipartite and
    ``align`` must say how they line up (:ref:`decision-causal-alignment`): ``"top-left"`` (the paper's) or
    ``"bottom-right"`` (the last query sees every key: what a KV cache needs).  ``|E| = ℓ(ℓ+1)/2`` for
    self-attention.
    """
    ell_z, ell_x, align = _causal_args(ell_z, ell_x, align=align).values()
    shift = masks.causal_shift(ell_z, ell_x, align)                      # the spec's alignment rule
    if ell_z == ell_x:
        afford("causal", ell_z, ell=ell_z)
    else:
        afford("causal", ell_z + ell_x, ell_z=ell_z, ell_x=ell_x, align=align)
    stops = np.clip(np.arange(ell_x, dtype=np.int64) + 1 + shift, 0, ell_z)
    keys, queries = ranges(np.zeros(ell_x, np.int64), stops)
    if ell_z == ell_x:
        return self_pattern(keys, queries, ell_z, "causal", {})
    return from_pairs(keys, queries, ell_z=ell_z, ell_x=ell_x, self_attention=False, name="causal",
                      params={"align": align})


def _cross_args(ell_z, ell_x) -> dict:
    return {"ell_z": integer("ell_z", ell_z, 0), "ell_x": integer("ell_x", ell_x, 0)}


@builtin("cross", _cross_args)
def cross(ell_z, ell_x) -> Pattern:
    """Cross-attention: the bipartite graph in which every query of X sees every token of the context Z
    (Algorithm 8's encoder–decoder attention).  ``|E| = ℓ_z·ℓ_x``."""
    ell_z, ell_x = _cross_args(ell_z, ell_x).values()
    afford("cross", ell_z + ell_x, ell_z=ell_z, ell_x=ell_x)
    keys, queries = ranges(np.zeros(ell_x, np.int64), np.full(ell_x, ell_z))
    return from_pairs(keys, queries, ell_z=ell_z, ell_x=ell_x, self_attention=False, name="cross")


# ------------------------------------------------------------------------------------------ any graph
def adjacency(G, *, ell=None) -> Pattern:
    """Adjacency-restricted attention (graph attention networks): query ``q`` attends to the keys with an
    edge into it in the networkx graph ``G`` (both ends of an undirected edge see each other).  No
    self-loop is added; add them to ``G`` if a node should attend to itself."""
    return from_graph(G, ell=ell, name="adjacency")


@dataclass(frozen=True)
class Kind:
    """A built-in pattern: its builder, its edge count, and which arguments are symbols in that count."""

    build: Callable
    count: Callable
    symbols: dict          # argument name → symbol name (sizes ℓ, ℓ_z, ℓ_x are always symbols)
    doc: str

    @property
    def args(self) -> Callable:
        """The builder's arguments checked and completed, as a dict (ConfigError if wrong)."""
        return self.build.arguments


def _kind(build, symbols, doc) -> Kind:
    return Kind(build, COUNTS[build.__name__], symbols, doc)


#: The built-in patterns by name, as :attr:`Pattern.name` records them.
PATTERNS = {k.build.__name__: k for k in (
    _kind(full, {}, "bidirectional: every query sees every key"),
    _kind(causal, {}, "unidirectional: keys at or before the query"),
    _kind(cross, {}, "bipartite: every query of X sees every token of Z"),
    _kind(sliding_window, {"window": "window"}, "the w nearest keys"),
    _kind(dilated, {"window": "window", "dilation": "dilation"}, "w keys spaced δ apart"),
    _kind(global_local, {"window": "window", "n_global": "n_global"},
          "Longformer: sliding window + g global positions"),
    _kind(strided, {"stride": "stride"}, "Sparse Transformer, strided"),
    _kind(fixed, {"stride": "stride", "summary": "summary"}, "Sparse Transformer, fixed"),
    _kind(random, {"n_random": "n_random", "window": "window", "n_global": "n_global"},
          "BigBird: window + global + r random keys per query"),
    _kind(swin, {"height": "height", "width": "width", "window": "swin_window", "shift": "shift"},
          "Swin: (shifted) M×M windows on a grid"),
)}
