"""formal-transformers: Phuong & Hutter's *Formal Algorithms for Transformers* as executable objects.

Each algorithm is written once, as data at the level of the paper's pseudocode; its shapes, costs,
numeric execution and rendering are derived from that one definition.

>>> import formal
>>> formal.attention.output_shape
(d_out, ell_x)
>>> formal.attention.cost("matmul").evaluate({"d_x": 8, "d_z": 8, "ell_x": 5, "ell_z": 5, "d_attn": 4, "d_out": 8})
{'params': 144, 'flops': 1880, 'memory': 300, 'depth': 6}

The names below are imported on first use (PEP 562), so ``import formal`` — and a command that needs no
derivation, such as ``complexity`` of a preset — does not import sympy, numpy or networkx.

The specification, from the vocabulary up (it imports nothing outside itself):

- :mod:`formal.errors` — the errors every part raises (a shape, a configuration, a domain, a resource);
- :mod:`formal.core` — size symbols, shapes, constraints, masks, the formula grammar;
- :mod:`formal.costs` — the cost model: costs, FLOP conventions, polynomials, inequalities, asymptotics and
  asymptotic orders;
- :mod:`formal.engine` — an algorithm as data, its derivation, execution, options and rendering;
- :mod:`formal.ops` — the primitive operations the lines are made of;
- :mod:`formal.algorithms` — the paper's algorithms and the lecture notes' systems, one module per family;
- :mod:`formal.models` — presets, configuration files, what a model costs, Table 1;
- :mod:`formal.graphs` — attention as message passing on graphs;
- :mod:`formal.sampling` — the examples the spec implies: sizes, variants, ties, boundary cases;
- :mod:`formal.guards` — files, arrays and resources checked before use.

On top of it, :mod:`formal.tools` — the command line (``python -m formal``: :mod:`formal.__main__`) and its
commands, the claims checker, the Sphinx extension — which the spec never imports.  Their names before 0.2,
``formal.cli``, ``formal.claims`` and ``formal.sphinx``, are deprecated aliases of those tools.
"""

from __future__ import annotations

import importlib as _importlib

from .errors import ConfigError, DomainError, FormalError, ShapeError

__version__ = "0.1.0"

__all__ = ["Algorithm", "ALGORITHMS", "get", "token_embedding", "positional_embedding",
           "single_query_attention", "attention", "mhattention", "layer_norm", "unembedding", "Cost",
           "CONVENTIONS", "leading_term", "big_theta", "FormalError", "ShapeError", "ConfigError", "DomainError",
           "masks", "symbols", "memory_limit", "__version__"]

#: Each public name imported on first use → the submodule that defines it (``None``: the name is the submodule).
_LAZY = {
    "Algorithm": "engine.algorithm",
    **{name: "algorithms" for name in ("ALGORITHMS", "get", "token_embedding", "positional_embedding",
                                       "single_query_attention", "attention", "mhattention", "layer_norm",
                                       "unembedding")},
    "leading_term": "costs.asymptotics", "big_theta": "costs.asymptotics",
    "Cost": "costs.cost", "CONVENTIONS": "costs.conventions", "memory_limit": "guards.limits",
    # the subpackages, and the two submodules of __all__
    "masks": "core.masks", "symbols": "core.symbols",
    **{name: None for name in ("algorithms", "core", "costs", "engine", "guards", "models", "ops", "graphs",
                               "sampling")},
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = _LAZY[name] or name
    module = _importlib.import_module(f".{home}", __name__)
    value = module if _LAZY[name] is None or home.endswith(f".{name}") else getattr(module, name)
    globals()[name] = value  # found directly from now on
    return value


def _notebook() -> None:
    """In IPython or Jupyter, an algorithm displays as its numbered pseudocode (:mod:`formal.engine.display`):
    registered by class name, so that nothing is imported until one is shown."""
    import sys
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is not None and hasattr(shell, "display_formatter"):
        from .engine.display import register
        register(shell)


def __dir__():
    return sorted(set(globals()) | set(__all__))


_notebook()
