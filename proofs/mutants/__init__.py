"""The shipped catalogue of bugs planted in the spec, for ``prove --mutants``.

One module per family (``numerics``, ``costs``, ``graphs``, …), each declaring ``MUTANTS``: a tuple of
:class:`~proofs.mutants.entry.SpecMutant` (a name, the bug in one line, the theorems whose statements it must make
fail, where it is planted — an op, an algorithm, a cost rule or a pattern builder — and the function that plants
it).  :func:`catalogue` gathers them, family by family in alphabetical order, each family's in the order declared,
so adding a bug touches its family module only.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

__all__ = ["families", "catalogue"]


@functools.cache
def families() -> tuple:
    """The family modules of this package: those that declare ``MUTANTS``."""
    modules = (importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__))
    return tuple(m for m in modules if "MUTANTS" in vars(m))


@functools.cache
def catalogue() -> tuple:
    """Every :class:`~proofs.mutants.entry.SpecMutant` of every family; two of one name are an error."""
    found: dict = {}
    for module in families():
        for mutant in module.MUTANTS:
            if found.setdefault(mutant.name, mutant) is not mutant:
                raise RuntimeError(f"two spec mutants are named {mutant.name!r} "
                                   f"({module.__name__} declares the second)")
    return tuple(found.values())

