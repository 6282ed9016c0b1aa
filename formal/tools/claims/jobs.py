"""``check --jobs N`` and ``check --scheduler ADDRESS|local:N``: the property and implementation claims of
``formal-transformers check`` (:mod:`formal.tools.claims`) as tasks (:mod:`reference.execution.protocol`) of the
execution layer (:mod:`reference.execution`) — worker processes here, or a Dask cluster.

:func:`decide_elsewhere` sends them (``check --jobs/--scheduler``, :mod:`formal.tools.commands.check`): one
:class:`Claims` task per claim, each
decided by :func:`formal.tools.claims.decide.decide` where it is sent, so the verdicts are those this process would
give.  ``--timeout`` bounds each claim there too: a worker process runs a task on its main thread, where
``decide``'s own limit applies; a Dask worker runs it on a thread of its own, where the limit is kept by
:func:`_raising_after` instead.  A claim that kills every worker it runs on is undecided, with the cause.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from dataclasses import dataclass, replace

from reference.execution.executors import parse_scheduler, run_shown
from reference.execution.protocol import Task

from ...guards.limits import TimeLimit
from ..commands.verify import MAX_LOCAL
from .claim import Claim
from .decide import TIMEOUT, decide, too_long, undecided

__all__ = ["Claims", "decide_elsewhere", "COSTS"]

#: Estimated seconds to decide a claim, by kind (conform's examples, or the property's): what orders the tasks.
COSTS = {"implementation": 2.0, "property": 1.0}


@dataclass(frozen=True)
class Claims(Task):
    """One ``property`` or ``implementation`` claim, decided where it is sent, within ``timeout`` seconds (an
    implementation claim has conform's limit per call instead, as here).  Its ``file`` is absolute, so that
    a worker started elsewhere finds what it names relative to the claims file."""

    claim: Claim
    timeout: float | None = TIMEOUT
    cost: float = 1.0

    @property
    def label(self) -> str:
        return self.claim.id

    def run(self) -> list:
        return [_decided(self.claim, self.timeout)]

    def died(self, cause: str) -> list:
        return [undecided(self.claim, f"not decided: {cause}")]


def decide_elsewhere(claims, *, timeout: float | None = TIMEOUT, jobs: int = 1, scheduler: str | None = None,
                     progress=None) -> list:
    """The verdicts of ``claims`` (property and implementation claims), in their order, from ``jobs`` worker
    processes or the Dask cluster ``scheduler`` names (``local:N`` or a running scheduler's address, as
    ``--scheduler``; checked before anything starts): the verdicts :func:`~formal.tools.claims.decide.decide` gives
    here.  ``progress``: a text stream for the live bar (a terminal only).  Ctrl-C: None in place of each
    verdict not decided, after every worker this run started is ended."""
    where = None if scheduler is None else parse_scheduler(scheduler, MAX_LOCAL)
    if not claims:
        return []
    tasks = [Claims(_portable(c), timeout, COSTS["implementation" if c.kind == "implementation" else "property"])
             for c in claims]
    results = run_shown(tasks, "check", progress, jobs=jobs, scheduler=where)
    verdicts = []
    for claim, found in zip(claims, results):
        if found is not None:
            [verdict] = found
            verdict.claim = claim       # as read here: the report names the file as it was given
            found = verdict
        verdicts.append(found)
    return verdicts


def _portable(claim: Claim) -> Claim:
    """``claim`` with its file's absolute path (a claim read from text: this directory's), so that its
    ``base_dir`` is the same in a worker whatever directory that runs in."""
    file = os.path.abspath(claim.file) if claim.file else os.path.join(os.getcwd(), "<text>")
    return replace(claim, file=file)


def _decided(claim: Claim, timeout: float | None):
    """``decide(claim, timeout=timeout)``; off the main thread (a Dask worker's), with the limit kept by
    :func:`_raising_after`, since ``decide``'s own works on the main thread only."""
    if not timeout or claim.kind == "implementation" or threading.current_thread() is threading.main_thread():
        return decide(claim, timeout=timeout)
    try:
        with _raising_after(timeout):
            return decide(claim, timeout=timeout)
    except TimeLimit:   # it came as decide began or returned, outside the handler of its own
        return too_long(claim, timeout)


def _raise_in(ident: int, exc) -> None:
    """Have ``exc`` raised in the thread ``ident`` at its next bytecode (None: withdraw one not raised yet)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None if exc is None else ctypes.py_object(exc))


@contextlib.contextmanager
def _raising_after(seconds: float):
    """:class:`~formal.guards.limits.TimeLimit` raised in this thread after ``seconds`` — what
    :func:`~formal.guards.limits.time_limit` does on the main thread with SIGALRM, here from a timer thread.
    As with a signal, the exception comes between two bytecodes: a long call into C ends first."""
    ident, lock, armed = threading.get_ident(), threading.Lock(), [True]

    def expire():
        with lock:
            if armed[0]:
                _raise_in(ident, TimeLimit)
    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            armed[0] = False
            _raise_in(ident, None)
        timer.cancel()
