"""What every builder of :mod:`formal.graphs.patterns` does besides making its edges: count them first and
refuse beyond the memory limit (:func:`afford`), assemble a self-attention pattern (:func:`self_pattern`),
and mark what it built with its name and checked arguments (:func:`builtin`), so that the analysis of the
pattern can use its structure (:mod:`formal.graphs.structure`)."""

from __future__ import annotations

import functools

from . import memory
from .counts import exact_count
from .pattern import Pattern, check_pairs, from_pairs

__all__ = ["builtin", "self_pattern", "afford"]


def builtin(name, arguments):
    """Mark what the decorated builder returns with its name and its arguments as ``arguments`` (the
    builder's checker) completes them (:attr:`Pattern.built_from`); the builder keeps the checker as its
    ``arguments`` attribute."""
    def wrap(builder):
        @functools.wraps(builder)
        def build(*args, **kwargs):
            pattern = builder(*args, **kwargs)
            pattern.built_from = (name, arguments(*args, **kwargs))
            return pattern
        build.arguments = arguments
        return build
    return wrap


def self_pattern(keys, queries, ell, name, params, duplicates="error") -> Pattern:
    """A self-attention pattern of ``ell`` positions from a builder's edge arrays (which it owns)."""
    return from_pairs(keys, queries, ell_z=ell, self_attention=True, name=name, params=params, duplicates=duplicates,
                      owned=True)


def afford(name, positions, *, where=None, **args) -> int:
    """Refuse to build pattern ``name`` if it would need more memory than the limit; its edge count comes
    from its exact formula evaluated on integers (``args`` as the count takes them), before any array."""
    edges = exact_count(name, **args)
    where = where or (f"at ℓ = {memory.number(args['ell'])}" if "ell" in args else
                      f"at ℓ_z = {memory.number(args['ell_z'])}, ℓ_x = {memory.number(args['ell_x'])}")
    memory.require(memory.build_bytes(name, edges=edges, positions=positions),
                   f"the {name} pattern {where} ({memory.number(edges)} edges)")
    check_pairs(args.get("ell_z", args.get("ell")), args.get("ell_x", args.get("ell")))
    return edges
