"""What a task is, wherever it runs: each a pure function of its fields, so that any executor — this process,
``--jobs N`` worker processes, a Dask cluster (:mod:`.executors`) — gives the same results.

A task is a frozen dataclass that pickles by reference (a worker imports its module) and says

- :meth:`Task.run`: its results (rows of a report), computed where it is sent;
- :meth:`Task.split`: the smaller tasks it is made of, tried one by one when it has killed every worker it
  ran on (a segfault in one check should fail that check, not its neighbours);
- :meth:`Task.died`: the results of an indivisible task that killed every worker it ran on: FAIL, with the
  cause.

:class:`Assembly` puts a split task's parts back together in order; :class:`Interrupted` is Ctrl-C with the
results so far.  The tasks themselves are their commands': ``verify``'s (:mod:`reference.verification.tasks`),
``verify --mutants``' (:mod:`reference.verification.mutation`), ``check``'s (:mod:`formal.tools.claims.jobs`).
"""

from __future__ import annotations

__all__ = ["Task", "Assembly", "Interrupted", "RETRIES"]

#: The times a task whose worker died is run again (on another worker) before it counts as killing every
#: worker it meets — Dask's ``distributed.scheduler.allowed-failures`` for a cluster this package starts.
RETRIES = 2


class Interrupted(Exception):
    """Ctrl-C during a run: ``results`` has each task's results, or None where it did not finish."""

    def __init__(self, results):
        super().__init__("interrupted")
        self.results = results


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
    #: Seconds the task may run in a worker process (None: no limit): past it the worker is ended, and the task
    #: split or given its FAIL (:func:`~.workers.past_its_limit`).  In this process and on Dask, a task keeps its
    #: own limits (a child's, :mod:`.children`).
    limit: float | None = None
    #: Bytes of resident memory a worker process holding the task may take (None: no cap): past it the worker is
    #: ended, and the task split or given its FAIL (:func:`~.workers.past_its_memory`).  A child caps its own
    #: (:func:`.children.start`'s ``max_memory``).
    memory: int | None = None

    def run(self) -> list:
        raise NotImplementedError

    def split(self) -> list:
        return []

    def died(self, cause: str) -> list:
        raise NotImplementedError
