"""The tasks of a ``verify`` campaign (:mod:`reference.execution.protocol`): :class:`Checks`, the checks of one
algorithm, on examples drawn across its variants or of one variant; :class:`Variants`, several variants sent
as one task; :class:`Skipped`, the result in place of rows where a builder refuses a variant.  ``verify
--mutants``' tasks are :class:`~.mutation.Entries`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from formal import algorithms
from formal.errors import ConfigError

from ..execution.protocol import Task

__all__ = ["Checks", "Variants", "Skipped"]


@dataclass(frozen=True)
class Skipped:
    """A result in place of rows: the builder refused the variant (a rule the declarations do not state)."""

    algorithm: str
    variant: dict
    reason: str


def _variant_text(name, options) -> str:
    return name if options is None else f"{name}({', '.join(f'{k}={v!r}' for k, v in options)})"


@functools.cache
def _measure(device: str):
    """This process's :class:`~reference.verification.checks.Measure` on ``device`` (one per worker)."""
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
    #: The bytes the examples' estimate may reach (``verify --max-memory``; None: the default limit).
    max_memory: int | None = None

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
        from formal.guards import limits

        from .checks import rows
        options = None if self.options is None else dict(self.options)
        if options is not None:
            try:
                self._variant()
            except ConfigError as exc:
                return [Skipped(self.name, options, str(exc))]
        with limits.memory_limit(self.max_memory or limits.max_memory()):      # in whichever process runs it
            return list(rows(self.name, list(self._checks()), self.profile, self.seed, _measure(self.device),
                             options))

    def split(self) -> list:
        try:
            checks = self._checks()
        except ConfigError:
            return []
        if len(checks) < 2:
            return []
        return [Checks(self.name, (c,), self.profile, self.seed, self.device, self.options, self.cost / len(checks),
                       self.max_memory) for c in checks]

    def died(self, cause: str) -> list:
        from .checks import CHECKS, Row, allowed
        try:
            checks = self._checks()
        except ConfigError as exc:
            return [Skipped(self.name, dict(self.options), str(exc))]
        variant = None if self.options is None else dict(self.options)
        return [Row(self.name, check, 0, float("inf"), _fixed(allowed(self.name, check)), "FAIL", cause, variant,
                    basis=CHECKS[check].basis) for check in checks]


def _fixed(figure) -> float:
    """A check's fixed bound, or NaN where each example's is measured (none was: the task died)."""
    return float("nan") if figure is None else figure


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
    max_memory: int | None = None

    @property
    def label(self) -> str:
        return f"{self.name}: {len(self.variants)} variants"

    def parts(self) -> list:
        each = self.cost / max(len(self.variants), 1)
        return [Checks(self.name, None, self.profile, self.seed, self.device, options, each, self.max_memory)
                for options in self.variants]

    def run(self) -> list:
        return [r for part in self.parts() for r in part.run()]

    def split(self) -> list:
        return self.parts() if len(self.variants) > 1 else self.parts()[0].split()

    def died(self, cause: str) -> list:
        return self.parts()[0].died(cause)
