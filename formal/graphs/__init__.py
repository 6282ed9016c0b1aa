"""Attention as message passing on networkx graphs.

- :mod:`.pattern` — :class:`Pattern` (edges ``key → query`` as arrays) and its conversions to and from the
  spec's ``{0,1}^{ℓ_z×ℓ_x}`` masks and networkx graphs;
- :mod:`.edges` — edge arrays from array operations (runs of keys, fixed offsets), never a loop per edge;
- :mod:`.patterns` — the built-in patterns (full, causal, cross; from :mod:`.windows` the sliding, dilated,
  Longformer's global + local and Swin's windows; from :mod:`.sparse` the Sparse Transformer's strided and
  fixed and BigBird's random), and any user graph; :mod:`.counts` their symbolic edge counts, :mod:`.building`
  what every builder does besides making its edges;
- :mod:`.schema` — every pattern's parameters, declared once (name, type and range from :mod:`.kinds`,
  meaning, default), and :mod:`.specs` — a pattern built or reported from data checked against them
  (:func:`report`, :func:`build`): what the ``graph`` command (:mod:`formal.tools.commands.graph`), the claims
  and the docs call; :mod:`.figures` — the report;
- :mod:`.message_passing` — Algorithms 4 and 5 over a pattern: a readable loop and a vectorised executor;
- :mod:`.analysis` — edge counts, FLOPs against dense attention, and receptive fields, layers to full
  coverage, maximum path length (Vaswani et al.'s Table 1), for any number of layers: it chooses between a
  structure's closed forms and the bit sets of :mod:`.layered`;
- :mod:`.structure` — the built-in patterns by their structure (:mod:`.shapes`): the same counts and layered
  analysis in closed form, without edges, at any length;
- :mod:`.edgelist` — a pattern from a text file of ``key query`` lines;
- :mod:`.memory` — the estimates every step that grows with ℓ² or ``|E|`` passes to :mod:`formal.guards.limits`
  before it allocates.

Examples
--------
>>> from formal import graphs
>>> p = graphs.patterns.strided(64, 8)
>>> p.n_edges, graphs.layers_to_coverage(p), round(p.density, 3)
(708, 2, 0.173)
>>> graphs.report("strided", n=64, stride=8)["layers"]["layers_to_coverage"]
2
"""

import importlib

#: Where each name of the package lives: imported on first use, so ``formal.tools.commands.graph`` (the CLI)
#: loads none of numpy, networkx or sympy until the command runs.
_HOME = {
    "Pattern": "pattern", "as_pattern": "pattern", "from_graph": "pattern", "from_mask": "pattern",
    "from_pairs": "pattern", "to_mask": "pattern", "plain": "pattern", "PATTERNS": "patterns", "Structure": "structure",
    "describe": "structure", "attention": "message_passing", "mhattention": "message_passing",
    "attention_flops": "analysis", "layers_to_coverage": "analysis", "max_path_length": "analysis",
    "receptive_field": "analysis", "receptive_field_sizes": "analysis", "symbolic_edge_count": "analysis",
    "vaswani_table1": "analysis", "Described": "pattern", "SCHEMAS": "schema", "GraphSpec": "specs",
    "spec": "specs", "build": "specs", "report": "specs",
}
_MODULES = ("analysis", "message_passing", "patterns", "structure", "layered", "pattern", "edges", "memory",
            "edgelist", "draw", "sums", "schema", "kinds", "specs", "figures", "counts", "building", "spans",
            "windows", "sparse", "shapes")

__all__ = ["Pattern", "PATTERNS", "Structure", "as_pattern", "describe", "from_graph", "from_mask", "from_pairs",
           "plain", "to_mask", "attention", "mhattention", "attention_flops", "layers_to_coverage", "max_path_length",
           "receptive_field", "receptive_field_sizes", "symbolic_edge_count", "vaswani_table1", "Described",
           "SCHEMAS", "GraphSpec", "spec", "build", "report", "analysis", "message_passing", "patterns", "structure",
           "schema"]


def __getattr__(name):
    if name in _HOME:
        value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    elif name in _MODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
