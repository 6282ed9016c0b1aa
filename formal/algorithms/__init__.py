"""The paper's algorithms as objects, and the systems the lecture notes teach beside them, one module per family.

A family module (``attention.py``, ``recurrent.py``, ``vision.py``, …) builds its algorithms and lists them in
its ``ALGORITHMS``; the registry gathers every family module of this package (:data:`FAMILIES` orders the
older ones), so a new algorithm, or a new family, is registered by its own module.  ``ALGORITHMS`` maps each
registry name to the default object, the paper's algorithms first by their number (a variant after the
algorithm it varies), then the systems outside the paper, family by family; :func:`get` builds a variant.
Every registry name is also an attribute of this package (``formal.algorithms.attention`` is Algorithm 4).

>>> list(ALGORITHMS)[:5]
['token_embedding', 'positional_embedding', 'single_query_attention', 'attention', 'mhattention']
"""

from __future__ import annotations

import importlib
import math
import pkgutil

from ..errors import ConfigError, shown

#: The family modules whose order the registry keeps where the paper does not number the algorithms; any other
#: module of this package that lists ``ALGORITHMS`` is a family too, listed after these in alphabetical order.
FAMILIES = ("embedding", "attention", "normalization", "unembedding", "architectures", "kv_cache", "training",
            "inference", "recurrent", "seq2seq", "captioning", "hierarchical", "convolution", "pooling", "paged",
            "vision")


def _families() -> list:
    """The family modules: those of :data:`FAMILIES`, then every other module here that lists ``ALGORITHMS``."""
    others = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in FAMILIES)
    modules = [importlib.import_module(f".{name}", __name__) for name in (*FAMILIES, *others)]
    return [m for m in modules if hasattr(m, "ALGORITHMS")]


def _registry() -> dict:
    """Registry name → algorithm, gathered from the family modules: by the paper's number, then the family's
    place (:func:`_families`), then the algorithm's place in its family."""
    found = []
    for place, module in enumerate(_families()):
        for order, algorithm in enumerate(module.ALGORITHMS):
            number = math.inf if algorithm.number is None else algorithm.number
            found.append(((number, place, order), algorithm))
    registry = {}
    for _, algorithm in sorted(found, key=lambda item: item[0]):
        if algorithm.name in registry:
            raise ConfigError(f"two algorithms are named {shown(algorithm.name)}")
        registry[algorithm.name] = algorithm
    return registry


#: Registry name → algorithm object with default options.
ALGORITHMS = _registry()
globals().update(ALGORITHMS)   # formal.algorithms.attention is Algorithm 4, as the registry names it

__all__ = ["ALGORITHMS", "FAMILIES", "get", "family", *ALGORITHMS]  # noqa: PLE0604 - the registry's names


def get(name: str, /, **options):
    """The algorithm called ``name``, built with ``options`` (``get("mhattention", n_kv_heads=2)``)."""
    try:
        algorithm = ALGORITHMS[name]
    except KeyError:
        raise ConfigError(f"unknown algorithm {shown(name)}; known: {', '.join(ALGORITHMS)}") from None
    return algorithm.variant(**options) if options else algorithm


def family(name: str, /) -> str:
    """The dotted name of the family module that defines the algorithm called ``name``."""
    get(name)   # an unknown name is an error naming the known ones
    return next(m.__name__ for m in _families() if any(a.name == name for a in m.ALGORITHMS))
