"""What a campaign's tasks cost, and how long a campaign takes on N workers (``verify --dry-run``).

A task's cost is its algorithm's, measured and declared with its correct implementation in the catalogue
(:attr:`~reference.catalogue.entry.Implementation.seconds`, read through its record,
:meth:`reference.records.Record.seconds`): CPU seconds of one task in a worker with one torch thread, on the
2-core development machine.  An algorithm without measured seconds is no silent guess: :func:`task_cost` says
so, its cost is the median of the measured ones, and ``--dry-run`` names it.  A task's cost also orders the
work: the executors send the longest first, so that no worker is left running a long one while the others idle
at the end.
"""

from __future__ import annotations

import functools
import heapq
import statistics

__all__ = ["Cost", "ENTRY_SECONDS", "START", "PER_TASK", "task_cost", "estimate", "duration"]


#: profile → seconds of conform on one catalogue entry (``verify --mutants``): the mean over 128 entries of six
#: algorithms, CPU time in one process (``time formal-transformers verify --mutants --only
#: attention,mhattention,layer_norm,dtransformer,rnn,swin_block --jobs 1 --profile P``: 4.3 s and 28.5 s).
ENTRY_SECONDS = {"quick": 0.035, "thorough": 0.22}
#: Seconds from the command's start to its workers' first task, and of its end, per executor: the command
#: importing torch and the package, and the workers too; Dask's cluster starting and closing (``--compare`` of
#: the benchmark: a run of two tasks of 0.01 s).
START = {"this process": 2.7, "processes": 4.4, "dask": 5.6}
#: Seconds each executor adds per task (sending it, its results back; with Dask, the scheduler's round trip,
#: on 2 cores shared with the workers: ``--compare``, 24 ms).
PER_TASK = {"this process": 0.0, "processes": 0.002, "dask": 0.024}


class Cost(float):
    """Seconds of a task, and whether they were measured (``measured``) or stand in for a measurement missing."""

    measured: bool = True

    def __new__(cls, seconds: float, measured: bool = True):
        cost = super().__new__(cls, seconds)
        cost.measured = measured
        return cost


def task_cost(name: str, profile: str, variant: bool = False) -> Cost:
    """Seconds of a task of algorithm ``name``'s checks under ``profile``: on one variant's examples
    (``variant``), or on examples drawn across them — as measured (its record's), or, where it has none, the
    median of the algorithms' that have, not measured (:attr:`Cost.measured` False)."""
    from ..records import record
    seconds = record(name).seconds(profile, variant)
    if seconds is not None:
        return Cost(seconds)
    return Cost(_median(profile, variant), measured=False)


@functools.cache
def _median(profile: str, variant: bool) -> float:
    from ..records import records
    found = [s for r in records() if (s := r.seconds(profile, variant)) is not None]
    return statistics.median(found) if found else 1.0


def estimate(costs, workers: int, executor: str = "processes") -> float:
    """Wall seconds of tasks costing ``costs`` on ``workers`` workers, each taking the longest task left when
    it is free (as the executors send them), after the command and its workers start."""
    per_task = PER_TASK[executor]
    free = [START[executor]] * max(1, min(workers, len(costs) or 1))
    for cost in sorted(costs, reverse=True):
        heapq.heapreplace(free, free[0] + cost + per_task)
    return max(free)


def duration(seconds: float) -> str:
    """``"3 s"``, ``"4 min 10 s"``, ``"2 h 05 min"``, ``"3 d 4 h"``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, s = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {s:02d} s"
    hours, m = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {m:02d} min"
    days, h = divmod(hours, 24)
    return f"{days} d {h} h"
