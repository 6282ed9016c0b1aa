"""``verify --jobs N``: the checks run in worker processes, the longest first (needs torch).

Each worker is a fresh interpreter (``spawn``) that takes one algorithm's checks at a time and sends back each
row as it is measured (:func:`reference.checking.checks.rows`), so the report is the one a single process
writes; a worker that dies fails the check it held and is replaced.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from multiprocessing.connection import wait

from formal.errors import FormalError

from .. import require_torch
from ..model.device import device as resolve_device
from .checks import Measure, Row, allowed, by_algorithm, rows as check_rows
from .settings import SYMPY_CACHE_SIZE

__all__ = ["SECONDS", "WorkerError", "in_workers"]

torch = require_torch()


#: CPU seconds of each algorithm's checks (quick profile, one torch thread, each in a fresh process; measured with
#: ``python benchmarks/bench_verify.py``; those under 0.05 s left out): the worker processes take the longest
#: first, so that none is left running a long one while the others idle at the end.
SECONDS = {"swin": 7.1, "edloss": 2.1, "edinference": 2.1, "dinference": 2.0, "edtransformer": 1.3, "eloss": 1.1,
           "kv_dtransformer": 1.1, "dloss": 0.9, "etransformer": 0.9, "swin_stage": 0.7, "dtransformer": 0.6,
           "seq2seq": 0.5, "show_attend_tell_loss": 0.5, "han": 0.5, "show_attend_tell": 0.4, "rnn": 0.3,
           "swin_block": 0.3, "paged_mhattention": 0.2, "mhattention": 0.2, "kv_mhattention": 0.2,
           "window_mhattention": 0.2, "conv1d": 0.15, "rnn_layer": 0.12, "gat": 0.11, "attention": 0.1,
           "paged_attention": 0.09, "single_query_attention": 0.07, "lstm_cell": 0.06, "gru_cell": 0.05,
           "graph_conv": 0.05}


class WorkerError(FormalError):
    """A worker process died before it could check anything (no memory or processes left for it): exit 1."""

    status = 1


def in_workers(plan, jobs, setting, show) -> list:
    """The rows of ``plan`` from at most ``jobs`` worker processes, each sent one algorithm's checks at a time
    (they share its examples and the spec's outputs: :func:`reference.checking.checks.rows`), the longest
    first; a worker that dies fails the check it held and is replaced, and the checks of that algorithm it
    had not reached go to the next worker free.  ``setting``: (profile, seed, device)."""
    pool = _Pool(plan, setting, show)
    try:
        jobs = min(jobs, len(pool.todo))
        show(0, f"starting {jobs} worker processes")
        for _ in range(jobs):
            pool.start()
        while pool.held:
            for conn in wait(list(pool.held)):
                pool.receive(conn)
    finally:  # Ctrl-C or an error included: no worker outlives the run
        pool.close()
    return pool.rows


class _Pool:
    """The worker processes of one run: what each holds, the algorithms' checks still to send, the rows back."""

    def __init__(self, plan, setting, show):
        self.plan, self.setting, self.show = plan, setting, show
        self.todo = [[(i, check) for i, (of, check) in enumerate(plan) if of == name]
                     for name, _ in by_algorithm(plan)]
        self.todo.sort(key=lambda task: (SECONDS.get(plan[task[0][0]][0], 0.0), -task[0][0]))  # pop(): longest
        self.rows, self.done = [None] * len(plan), 0
        self.held = {}  # connection → (its process, the (index, check) pairs it holds, or None until it is ready)
        self.started, self.finished = [], []

    def start(self):
        conn, process = _start(self.setting, self.started)
        self.held[conn] = (process, None)

    def dispatch(self, conn, process):
        """Send a free worker the next algorithm's checks, or tell it to return."""
        if self.todo:
            task = self.held[conn] = (process, self.todo.pop())
            with contextlib.suppress(OSError):  # it died meanwhile: wait() reports it, holding this task
                conn.send((self.plan[task[1][0][0]][0], [check for _, check in task[1]]))
        else:
            with contextlib.suppress(OSError):
                conn.send(None)  # nothing left: it returns
            self.finished.append(process)

    def receive(self, conn):
        """What a worker sent: a row (the next of those it holds), word that it is ready, or its death."""
        process, task = self.held.pop(conn)
        try:
            message = conn.recv()
        except (EOFError, OSError):  # it died: a crash, the OOM killer, a signal
            message, task, conn = self._lost(process, task), task[:1], None
        if isinstance(message, BaseException):  # a bug escaping a check: raised, as with --jobs 1
            raise message
        if task:
            (i, check), *task = task
            self.rows[i], self.done = message, self.done + 1
            self.show(self.done, f"{self.plan[i][0]}: {check}")
        if conn is not None and task:
            self.held[conn] = (process, task)  # more of this algorithm's checks to come
        elif conn is not None:
            self.dispatch(conn, process)

    def _lost(self, process, task) -> Row:
        """The row of the check a dead worker held; the checks it had not reached go to the next worker free,
        and a new worker takes its place while any are left."""
        process.join()
        message = _died(self.plan, task, process.exitcode)
        if task[1:]:
            self.todo.append(task[1:])
        if self.todo:
            self.start()
        return message

    def close(self):
        for process in self.started:
            if process not in self.finished:
                process.terminate()
        for process in self.started:
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join()


def _died(plan, task, exitcode) -> Row:
    """The row of the check (the first of ``task``) whose worker died holding it; a worker that died before
    it was ready is a WorkerError."""
    how = f"killed by {signal.Signals(-exitcode).name}" if exitcode < 0 else f"exit status {exitcode}"
    if task is None:
        raise WorkerError(f"a verify worker process died before it could check anything ({how}); --jobs 1 "
                          f"checks in this process")
    name, check = plan[task[0][0]]
    return Row(name, check, 0, float("inf"), allowed(name, check), "FAIL",
               f"the worker process running this check died ({how})")


def _start(setting, started):
    """A worker process (appended to ``started``) and the connection to it.  It is a fresh interpreter
    (``spawn``: torch's threads and ``fork`` do not mix) started with SIGINT blocked, so that Ctrl-C reaches
    only this process, which ends the workers."""
    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe()
    process = context.Process(target=_work, args=(there, *setting), name="verify worker", daemon=True)
    with _sigint_blocked(), _environment(SYMPY_CACHE_SIZE=str(SYMPY_CACHE_SIZE)):
        try:
            process.start()
        except OSError as exc:  # no processes or memory left
            raise WorkerError(f"could not start a verify worker process ({exc}); --jobs 1 checks in this "
                              f"process") from None
        started.append(process)
    there.close()
    return here, process


@contextlib.contextmanager
def _environment(**defaults):
    """``defaults`` in the environment a process started meanwhile inherits, where it does not set them."""
    added = {k: v for k, v in defaults.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            del os.environ[k]


@contextlib.contextmanager
def _sigint_blocked():
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:  # a Ctrl-C that came meanwhile is delivered now
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _work(conn, profile, seed, device):
    """A worker: for each (algorithm, checks) the parent sends, it sends back each check's row as it is
    measured (or the exception that escaped it), until it is sent None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)  # jobs × 1 thread: these tensors are too small to gain from more (measured)
    measure = Measure(resolve_device(device))
    with contextlib.suppress(EOFError, OSError):  # the parent is gone: nothing to report to
        conn.send("ready")
        while (task := conn.recv()) is not None:
            for row in _measured(*task, profile, seed, measure):
                try:
                    conn.send(row)
                except Exception as exc:  # noqa: BLE001 - an exception that does not pickle
                    conn.send(RuntimeError(f"{type(row).__name__}: {row} (and {type(exc).__name__} sending it)"))


def _measured(name, checks, profile, seed, measure):
    """The rows of ``checks`` of ``name``, then, if an exception escapes one, that exception (and no more)."""
    try:
        yield from check_rows(name, checks, profile, seed, measure)
    except Exception as exc:  # noqa: BLE001 - re-raised in the parent
        yield exc
