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
"""

from __future__ import annotations

import importlib as _importlib

from .errors import ConfigError, DomainError, FormalError, ShapeError

__version__ = "0.1.0"

__all__ = ["Algorithm", "ALGORITHMS", "get", "token_embedding", "positional_embedding",
           "single_query_attention", "attention", "mhattention", "layer_norm", "unembedding", "Cost",
           "CONVENTIONS", "leading_term", "big_theta", "FormalError", "ShapeError", "ConfigError", "DomainError",
           "masks", "symbols", "__version__"]

#: Each public name imported on first use → the submodule that defines it (``None``: the name is the submodule).
_LAZY = {
    "Algorithm": "algorithm",
    **{name: "algorithms" for name in ("ALGORITHMS", "get", "token_embedding", "positional_embedding",
                                       "single_query_attention", "attention", "mhattention", "layer_norm",
                                       "unembedding")},
    "leading_term": "asymptotics", "big_theta": "asymptotics",
    "Cost": "cost", "CONVENTIONS": "conventions",
    # submodules: the two in __all__, and those the eager imports of earlier versions made attributes
    "masks": None, "symbols": None, "algorithm": None, "algorithms": None, "asymptotics": None, "cost": None,
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _importlib.import_module(f".{_LAZY[name] or name}", __name__)
    value = module if _LAZY[name] is None else getattr(module, name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
