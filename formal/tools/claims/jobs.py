"""``check --jobs N`` and ``check --scheduler ADDRESS|local:N``: the property and implementation claims of
``formal-transformers check`` (:mod:`formal.tools.claims`) as tasks (:mod:`reference.execution.protocol`) of the
execution layer (:mod:`reference.execution`) — worker processes here, or a Dask cluster.

:func:`decide_elsewhere` sends them (``check --jobs/--scheduler``, :mod:`formal.tools.commands.check`): one
:class:`Claims` task per claim, each decided by :func:`formal.tools.claims.decide.decide` where it is sent, so the
verdicts are those this process would give.  ``--timeout`` bounds each claim there too: a worker process runs a
task on its main thread, where ``decide``'s own limit applies; a Dask worker runs it on a thread of its own, where
no signal reaches, so there the claim is decided in a child process (:mod:`reference.execution.children`, on its
main thread) that is ended with all it started if it outlives the limit — no thread is interrupted by an exception
injected into it.  A claim that kills every worker it runs on is undecided, with the cause.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, replace

from reference.execution.executors import parse_scheduler, run_shown
from reference.execution.protocol import Task

from ..commands.verify import MAX_LOCAL
from .claim import Claim
from .decide import TIMEOUT, decide, too_long, undecided
from .verdict import Verdict

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

    @property
    def limit(self) -> float | None:
        """A worker holding the claim past its limit and :data:`START_GRACE` more is ended (a backstop: a call
        into C can outlast the signal that keeps ``decide``'s limit); an implementation claim has conform's limit
        per call instead, and none of its own."""
        if not self.timeout or self.claim.kind == "implementation":
            return None
        return self.timeout + START_GRACE

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


#: Seconds a child deciding a claim off the main thread may take beyond the claim's own limit (which the child
#: keeps itself): starting an interpreter and importing what the claim needs.
START_GRACE = 30.0


def _decided(claim: Claim, timeout: float | None):
    """``decide(claim, timeout=timeout)``; off the main thread (a Dask worker's), where ``decide``'s own limit
    cannot hold, in a child process instead (:func:`_in_child`)."""
    if not timeout or claim.kind == "implementation" or threading.current_thread() is threading.main_thread():
        return decide(claim, timeout=timeout)
    return _in_child(claim, timeout)


def _in_child(claim: Claim, timeout: float, target: str = "formal.tools.claims.jobs:_decide_sent") -> Verdict:
    """``claim`` decided in a child process (``target`` reads it from a pipe and sends back the verdict), which
    keeps ``decide``'s limit on its main thread; a child still busy ``timeout`` + :data:`START_GRACE` seconds later
    is ended with all it started, and the claim is invalid as ``decide`` makes one that takes too long.  A child
    that dies leaves the claim undecided, saying how."""
    import subprocess
    from multiprocessing.connection import Connection

    from reference.execution import children
    from reference.execution.children import how_it_died

    from_child, to_parent = os.pipe()
    from_parent, to_child = os.pipe()
    with children.start(target, [from_parent, to_parent], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        pass_fds=(from_parent, to_parent)) as child:
        os.close(from_parent)
        os.close(to_parent)
        incoming, outgoing = Connection(from_child, writable=False), Connection(to_child, readable=False)
        try:
            outgoing.send((claim, timeout))
            if not incoming.poll(timeout + START_GRACE):
                return too_long(claim, timeout)
            return incoming.recv()
        except (EOFError, OSError):
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(5)
            code = child.process.returncode
            how = "still running" if code is None else how_it_died(code)
            return undecided(claim, f"not decided: its process ended ({how})")
        finally:
            incoming.close()
            outgoing.close()


def _decide_sent(read_fd: int, write_fd: int) -> None:
    """The child's side of :func:`_in_child`: the claim and its limit from the pipe, the verdict back."""
    from multiprocessing.connection import Connection
    incoming, outgoing = Connection(read_fd, writable=False), Connection(write_fd, readable=False)
    claim, timeout = incoming.recv()
    outgoing.send(decide(claim, timeout=timeout))
