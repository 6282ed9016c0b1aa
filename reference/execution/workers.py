"""``verify --jobs N``: a campaign's tasks (:mod:`.protocol`) in worker processes on this machine, the longest
first.

Each worker is a fresh interpreter (``spawn``) that takes one task at a time and sends back its results.  A
worker that dies (a segfault, the OOM killer, a signal) is replaced, and the task it held is run again on the
next worker free, up to :data:`~.protocol.RETRIES` times; a task that kills every worker it meets is split into
its parts (an algorithm's checks, one by one) and tried again, and a part that still does is a FAIL naming the
cause — never a hang, never a missing row.  A task with a time limit (:attr:`~.protocol.Task.limit`) that runs
past it ends its worker (and so the children the worker started, which watch it: :mod:`.children`); it is not
run again, but split, or a FAIL saying so; so is a task whose worker grows past its memory cap
(:attr:`~.protocol.Task.memory`, the worker's resident memory, looked at every :data:`MEMORY_EVERY` seconds).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from multiprocessing.connection import wait

from formal.errors import FormalError

from .children import how_it_died
from .processes import starting_workers
from .protocol import RETRIES, Assembly, Interrupted

__all__ = ["WorkerError", "in_workers", "how_it_died", "killed_every_worker", "past_its_limit", "past_its_memory",
           "MEMORY_EVERY"]

#: Seconds between two looks at the memory of the workers that hold a task with a memory cap.
MEMORY_EVERY = 0.2


class WorkerError(FormalError):
    """A worker process died before it could check anything (no memory or processes left for it): exit 1."""

    status = 1


def in_workers(tasks, jobs, progress) -> list:
    """The results of ``tasks`` (a list per task, in their order) from at most ``jobs`` worker processes, the
    longest task first; ``progress``: a :class:`~.executors.Progress` or None.  Ctrl-C: every worker is ended,
    then :class:`~.executors.Interrupted`."""
    pool = _Pool(tasks, progress)
    try:
        jobs = min(jobs, len(tasks))
        if progress is not None:
            progress.show(f"starting {jobs} worker processes")
        for _ in range(jobs):
            pool.start()
        while pool.held:
            for conn in wait(list(pool.held), timeout=pool.next_deadline()):
                pool.receive(conn)
            pool.end_overdue()
    except KeyboardInterrupt:
        raise Interrupted(pool.results) from None
    finally:  # Ctrl-C or an error included: no worker outlives the run
        pool.close()
    return pool.results


def killed_every_worker(how: str) -> str:
    """The cause a task's FAIL gives when it killed every worker it ran on."""
    return f"the task killed each of the {RETRIES + 1} worker processes it ran on (the last {how})"


def past_its_limit(limit: float) -> str:
    """The cause a task's FAIL gives when it ran past its time limit."""
    return f"the task ran past its limit of {limit:g} s; its worker process was ended"


def past_its_memory(memory: int) -> str:
    """The cause a task's FAIL gives when its worker grew past the task's memory cap."""
    from formal.guards.limits import format_size
    return f"the task took more than its {format_size(memory)} of memory; its worker process was ended"


def _resident(pid: int) -> int:
    """The resident memory of process ``pid`` in bytes (0 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _Pool:
    """The worker processes of one run: what each holds, the tasks still to send, the results back.

    A unit of work is ``(slot, path, task, tries)``: the task's results go to ``results[slot]`` (at ``path``
    when a task was split: :class:`~.protocol.Assembly`)."""

    def __init__(self, tasks, progress):
        self.tasks, self.progress = tasks, progress
        self.todo = [(i, (), task, 0) for i, task in enumerate(tasks)]
        self.todo.sort(key=lambda unit: (unit[2].cost, -unit[0]))  # pop(): the longest, the first of equals
        self.assembly = Assembly(len(tasks))
        self.held = {}     # connection → (its process, the unit it holds, or None until it is ready)
        self.deadlines = {}    # connection → when the task it holds must be done (tasks with a limit only)
        self.started, self.finished = [], []

    @property
    def results(self) -> list:
        return self.assembly.results

    def start(self):
        conn, process = _start(self.started)
        self.held[conn] = (process, None)

    def dispatch(self, conn, process):
        """Send a free worker the next unit, or tell it to return."""
        if self.todo:
            unit = self.todo.pop()
            self.held[conn] = (process, unit)
            limit = getattr(unit[2], "limit", None)
            if limit is not None:
                self.deadlines[conn] = time.monotonic() + limit
            with contextlib.suppress(OSError):  # it died meanwhile: wait() reports it, holding this unit
                conn.send(unit[2])
        else:
            with contextlib.suppress(OSError):
                conn.send(None)  # nothing left: it returns
            self.finished.append(process)

    def _capped(self) -> list:
        """The connections of the workers that hold a task with a memory cap."""
        return [c for c, (_, unit) in self.held.items() if unit is not None and getattr(unit[2], "memory", None)]

    def next_deadline(self) -> float | None:
        """Seconds until the first held task's limit, or until the next look at the capped workers' memory
        (None: no held task has either)."""
        waits = [max(0.0, min(self.deadlines.values()) - time.monotonic())] if self.deadlines else []
        if self._capped():
            waits.append(MEMORY_EVERY)
        return min(waits) if waits else None

    def end_overdue(self):
        """End each worker whose task ran past its time limit or its memory cap (its children end with it: they
        watch it); the task is split, or FAIL saying so — never run again, since it would do the same."""
        now = time.monotonic()
        for conn in [c for c, deadline in self.deadlines.items() if deadline <= now]:
            self._end(conn, lambda task: past_its_limit(task.limit))
        for conn in self._capped():
            process, (_, _, task, _) = self.held[conn]
            if _resident(process.pid) > task.memory:
                self._end(conn, lambda task: past_its_memory(task.memory))

    def _end(self, conn, cause):
        self.deadlines.pop(conn, None)
        process, unit = self.held.pop(conn)
        process.kill()
        process.join()
        with contextlib.suppress(OSError):
            conn.close()
        slot, path, task, _ = unit
        if parts := task.split():
            paths = self.assembly.split(slot, path, len(parts))
            self.todo += [(slot, p, part, 0) for p, part in zip(paths, parts)]
        else:
            self._done(unit, task.died(cause(task)))
        if self.todo:
            self.start()

    def receive(self, conn):
        """What a worker sent: a unit's results, word that it is ready, or its death."""
        self.deadlines.pop(conn, None)
        process, unit = self.held.pop(conn)
        try:
            message = conn.recv()
        except (EOFError, OSError):  # it died: a crash, the OOM killer, a signal
            self._lost(process, unit)
            return
        if isinstance(message, BaseException):  # a bug escaping a task: raised, as with --jobs 1
            raise message
        if unit is not None:
            self._done(unit, message)
        self.dispatch(conn, process)

    def _done(self, unit, results):
        slot, path, _, _ = unit
        if self.assembly.done(slot, path, results) and self.progress is not None:
            self.progress.advance(self.tasks[slot])

    def _lost(self, process, unit):
        """A worker died holding ``unit``: run it again, split it, or give its FAIL; a new worker takes the dead
        one's place while there is work left."""
        process.join()
        how = how_it_died(process.exitcode)
        if unit is None:
            raise WorkerError(f"a verify worker process died before it could check anything ({how}); --jobs 1 "
                              f"checks in this process")
        slot, path, task, tries = unit
        if tries < RETRIES:
            self.todo.append((slot, path, task, tries + 1))
        elif parts := task.split():
            paths = self.assembly.split(slot, path, len(parts))
            self.todo += [(slot, p, part, 0) for p, part in zip(paths, parts)]
        else:
            self._done(unit, task.died(killed_every_worker(how)))
        if self.todo:
            self.start()

    def close(self):
        for process in self.started:
            if process not in self.finished:
                process.terminate()
        for process in self.started:
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join()


def _start(started):
    """A worker process (appended to ``started``) and the connection to it.  It is a fresh interpreter
    (``spawn``: torch's threads and ``fork`` do not mix) started with SIGINT blocked, so that Ctrl-C reaches
    only this process, which ends the workers."""
    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe()
    process = context.Process(target=_work, args=(there,), name="verify worker", daemon=True)
    with starting_workers():
        try:
            process.start()
        except OSError as exc:  # no processes or memory left
            raise WorkerError(f"could not start a verify worker process ({exc}); --jobs 1 checks in this "
                              f"process") from None
        started.append(process)
    there.close()
    return here, process


def _work(conn):
    """A worker: for each task the parent sends, it sends back the task's results (or the exception that escaped
    it), until it is sent None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # one torch thread: its environment says so (.processes)
    with contextlib.suppress(EOFError, OSError):  # the parent is gone: nothing to report to
        conn.send("ready")
        while (task := conn.recv()) is not None:
            try:
                results = task.run()
            except Exception as exc:  # noqa: BLE001 - re-raised in the parent
                results = exc
            try:
                conn.send(results)
            except Exception as exc:  # noqa: BLE001 - an exception that does not pickle
                conn.send(RuntimeError(f"{type(results).__name__}: {results} (and {type(exc).__name__} sending it)"))
