"""What a checked run records of itself, step by step, for the fast path that replays it (:mod:`.tape`): each
step a small frozen dataclass, in the order the executor (:mod:`.execution`) met it.

- :class:`LineRan` — a numbered line evaluated, with the loop indices and index sizes it ran at;
- :class:`LoopBegan`, :class:`TripDone`, :class:`LoopEnded` — a loop run trip by trip, collecting what its
  trips make;
- :class:`TripsRanAtOnce` — a loop whose trips ran at once (:mod:`.batches`), with the program that did.

:class:`Checkpoint` is what an attempt at a fast path may change in the executor, saved before it and put back
where the attempt gives way to the definition.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LineRan", "LoopBegan", "TripDone", "LoopEnded", "TripsRanAtOnce", "Checkpoint"]


@dataclass(frozen=True)
class LineRan:
    """Line ``number`` (``line``: its node) evaluated at the loop indices ``loop`` and index sizes ``indices``."""

    number: int
    line: object
    loop: dict
    indices: dict


@dataclass(frozen=True)
class LoopBegan:
    """``loop`` begins its trips: what they collect starts empty."""

    loop: object


@dataclass(frozen=True)
class TripDone:
    """A trip of ``loop`` ended: what it collects is taken."""

    loop: object


@dataclass(frozen=True)
class LoopEnded:
    """``loop`` ended: what its trips collected is stacked."""

    loop: object


@dataclass(frozen=True)
class TripsRanAtOnce:
    """Every trip of ``loop`` ran at once by ``program`` (:mod:`.batches`), at the loop indices ``loop_indices`` and
    index sizes ``indices``."""

    program: object
    loop_indices: dict
    indices: dict
    loop: object


@dataclass(frozen=True)
class Checkpoint:
    """The executor's state a fast path's attempt may change — the sizes bound and where from, the parameters not
    yet read and those read, the constraints not yet checked — to put back where the attempt gives way."""

    values: dict
    sources: dict
    unchecked: dict
    consumed: list
    pending: object

    @classmethod
    def of(cls, executor) -> "Checkpoint":
        binding = executor.binding
        return cls(dict(binding.values), dict(binding.sources), dict(executor.unchecked), list(executor.consumed),
                   executor.pending)

    def restore(self, executor) -> None:
        executor.binding.values, executor.binding.sources = self.values, self.sources
        executor.unchecked, executor.consumed, executor.pending = self.unchecked, self.consumed, self.pending
