"""The tasks of a ``verify`` campaign: each a pure function of its fields, so that any executor — this
process, ``--jobs N`` worker processes, a Dask cluster (:mod:`.executors`) — gives the same results.

A task is a frozen dataclass that pickles by reference (a worker imports this module) and says

- :meth:`Task.run`: its results (rows of the report), computed where it is sent;
- :meth:`Task.split`: the smaller tasks it is made of, tried one by one when it has killed every worker it
  ran on (a segfault in one check should fail that check, not its neighbours);
- :meth:`Task.died`: the results of an indivisible task that killed every worker it ran on: FAIL, with the
  cause.

:class:`Checks` is ``verify``'s: the checks of one algorithm, on examples drawn across its variants or of one
variant; :class:`~.mutation.Entries` is ``verify --mutants``': catalogue entries of one variant under ``conform``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from formal import algorithms
from formal.errors import ConfigError

__all__ = ["Task", "Checks", "Variants", "Skipped", "Interrupted", "Assembly", "RETRIES"]

#: The times a task whose worker died is run again (on another worker) before it counts as killing every
#: worker it meets — Dask's ``distributed.scheduler.allowed-failures`` for a cluster this package starts.
RETRIES = 2


class Interrupted(Exception):
    """Ctrl-C during a run: ``results`` has each task's results, or None where it did not finish."""

    def __init__(self, results):
        super().__init__("interrupted")
        self.results = results


@dataclass(frozen=True)
class Skipped:
    """A result in place of rows: the builder refused the variant (a rule the declarations do not state)."""

    algorithm: str
    variant: dict
    reason: str


class Assembly:
    """The results of a run's tasks, in their order, as they come back: a task split into parts (and a part
    into parts of its own) has each part's results at its path (``(1, 0)``: the first part of its second),
    joined in order once every part is back."""

    def __init__(self, n: int):
        self.results = [None] * n
        self._pieces = {}   # slot → {path: results, or None until they are back}

    def split(self, slot: int, path: tuple, count: int) -> list:
        """The paths of the ``count`` parts the task at ``slot``, ``path`` was split into."""
        pieces = self._pieces.setdefault(slot, {})
        pieces.pop(path, None)
        paths = [(*path, k) for k in range(count)]
        pieces.update(dict.fromkeys(paths))
        return paths

    def done(self, slot: int, path: tuple, results: list) -> bool:
        """Record the results of the task at ``slot``, ``path``; whether the slot's are now whole."""
        if slot not in self._pieces:
            self.results[slot] = results
            return True
        pieces = self._pieces[slot]
        pieces[path] = results
        if any(found is None for found in pieces.values()):
            return False
        self.results[slot] = [r for _, found in sorted(self._pieces.pop(slot).items()) for r in found]
        return True


class Task:
    """One unit of a campaign (abstract): see the module docstring."""

    label: str = ""
    cost: float = 0.0   # estimated seconds: the executors send the longest first

    def run(self) -> list:
        raise NotImplementedError

    def split(self) -> list:
        return []

    def died(self, cause: str) -> list:
        raise NotImplementedError


def _variant_text(name, options) -> str:
    return name if options is None else f"{name}({', '.join(f'{k}={v!r}' for k, v in options)})"


@functools.cache
def _measure(device: str):
    """This process's :class:`~reference.checking.checks.Measure` on ``device`` (one per worker)."""
    from ..model.device import device as resolve_device
    from .checks import Measure
    return Measure(resolve_device(device))


@dataclass(frozen=True)
class Checks(Task):
    """The ``checks`` of algorithm ``name`` on its seeded examples: drawn across its variants (``options``
    None) or of the variant ``options`` fix (``((option, value), …)``; ``checks`` None: every check that
    applies to that variant)."""

    name: str
    checks: tuple | None
    profile: str
    seed: int
    device: str
    options: tuple | None = None
    cost: float = 0.0

    @property
    def label(self) -> str:
        return _variant_text(self.name, self.options)

    def _variant(self):
        return algorithms.get(self.name, **dict(self.options))

    def _checks(self) -> tuple:
        if self.checks is not None:
            return self.checks
        import torch

        from .checks import applicable
        return tuple(applicable(self._variant(), torch.device(self.device)))

    def run(self) -> list:
        from .checks import rows
        options = None if self.options is None else dict(self.options)
        if options is not None:
            try:
                self._variant()
            except ConfigError as exc:
                return [Skipped(self.name, options, str(exc))]
        return list(rows(self.name, list(self._checks()), self.profile, self.seed, _measure(self.device), options))

    def split(self) -> list:
        try:
            checks = self._checks()
        except ConfigError:
            return []
        if len(checks) < 2:
            return []
        return [Checks(self.name, (c,), self.profile, self.seed, self.device, self.options, self.cost / len(checks))
                for c in checks]

    def died(self, cause: str) -> list:
        from .checks import Row, allowed
        try:
            checks = self._checks()
        except ConfigError as exc:
            return [Skipped(self.name, dict(self.options), str(exc))]
        variant = None if self.options is None else dict(self.options)
        return [Row(self.name, check, 0, float("inf"), allowed(self.name, check), "FAIL", cause, variant)
                for check in checks]


@dataclass(frozen=True)
class Variants(Task):
    """Several variants of algorithm ``name`` (``variants``: a tuple of ``((option, value), …)``), each
    :class:`Checks` of its own, run one after another: tasks of a fiftieth of a second are sent in groups, so
    that sending them costs nothing beside them.  Split: the variants, one task each."""

    name: str
    variants: tuple
    profile: str
    seed: int
    device: str
    cost: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.name}: {len(self.variants)} variants"

    def parts(self) -> list:
        each = self.cost / max(len(self.variants), 1)
        return [Checks(self.name, None, self.profile, self.seed, self.device, options, each)
                for options in self.variants]

    def run(self) -> list:
        return [r for part in self.parts() for r in part.run()]

    def split(self) -> list:
        return self.parts() if len(self.variants) > 1 else self.parts()[0].split()

    def died(self, cause: str) -> list:
        return self.parts()[0].died(cause)
