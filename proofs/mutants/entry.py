"""One realistic bug planted in the spec (:class:`SpecMutant`), and the ways of planting it.

A mutant's ``apply()`` changes this process's algorithm objects, ops, cost rules or pattern builders; it is
run in a fresh process (``prove --mutants``), so nothing is ever restored.  ``about`` names the theorems whose
*statements* the bug makes false: each of them must fail under the mutant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

__all__ = ["SpecMutant", "WHERE", "patch", "rebuild"]

#: Where in the spec a bug is planted.
WHERE = ("op", "algorithm", "cost rule", "pattern builder")


@dataclass(frozen=True)
class SpecMutant:
    """A bug in the spec: ``name`` (a slug), ``bug`` (what it does, one line), ``about`` (the theorems whose
    statements it must make fail; empty for a bug no theorem is about), ``where`` (one of :data:`WHERE`), and
    ``apply`` (plants it in this process)."""

    name: str
    bug: str
    about: tuple
    where: str
    apply: Callable[[], None] = field(repr=False, compare=False)

    def __post_init__(self):
        if self.where not in WHERE:
            raise ValueError(f"{self.name}: unknown place {self.where!r}; known: {', '.join(WHERE)}")


def patch(owner, attribute: str, value) -> None:
    """Set ``owner.attribute`` (a class's method, a module's constant) to ``value``; the attribute must exist."""
    if not hasattr(owner, attribute):
        raise AttributeError(f"{owner!r} has no attribute {attribute!r} to plant a bug in")
    setattr(owner, attribute, value)


def rebuild(name: str, builder) -> None:
    """Make ``builder`` (an ``Options(...).builds`` builder) the registry's ``name``: its default object replaces the
    registered one, so ``formal.algorithms.get(name, **options)`` builds the planted variants.  Algorithms that
    call the old object keep calling it."""
    from formal import algorithms
    if name not in algorithms.ALGORITHMS:
        raise KeyError(f"no algorithm {name!r} to rebuild")
    built = builder()
    algorithms.ALGORITHMS[name] = built
    setattr(algorithms, name, built)
