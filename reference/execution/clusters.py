"""``--scheduler``: a campaign's tasks (:mod:`.protocol`) on a Dask cluster (``dask.distributed``, the ``[dask]``
extra) — a running scheduler's (``--scheduler tcp://host:8786``) or a ``LocalCluster`` of N worker processes
started here and ended with the run (``--scheduler local:N``).

Dask does the distributing: each task is a future, submitted the longest first (its priority); a worker
that dies while it holds a task has the task run again on another, and a task that has killed
``allowed-failures + 1`` workers comes back as ``KilledWorker`` (the local cluster allows
:data:`~.protocol.RETRIES` retries, as ``--jobs`` does; a running scheduler keeps its own setting).  Such a task is
split into its parts and they are submitted again; a part that kills every worker is a FAIL with the cause,
as with ``--jobs``.  Ctrl-C cancels every future, ends the local cluster, and raises
:class:`~.executors.Interrupted` with what finished.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import threading
import time
import warnings

from formal.errors import FormalError

from .processes import SYMPY_CACHE_SIZE, starting_workers
from .protocol import RETRIES, Assembly, Interrupted

__all__ = ["on_cluster", "connect", "DASHBOARD"]

#: Where a local cluster serves its dashboard (Dask's default; another free port when it is taken).
DASHBOARD = ":8787"
#: The Dask settings of a cluster this package starts: a task that has killed RETRIES + 1 workers is given up
#: (``KilledWorker``), and a worker holds one task at a time — a worker that dies then takes only the task it
#: ran down with it (Dask counts a death against every task the worker held, queued ones too).  Start a
#: scheduler of your own with these too (``DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1.0``).
LOCAL_CONFIG = {"distributed.scheduler.allowed-failures": RETRIES, "distributed.scheduler.worker-saturation": 1.0,
                "distributed.worker.profile.enabled": False}
#: Seconds to wait for a running scheduler to answer.
CONNECT_TIMEOUT = 20


def _distributed():
    try:
        import distributed
    except ImportError:
        raise FormalError("--scheduler runs the tasks on Dask, which is not installed: pip install "
                          "'formal-transformers[dask]'") from None
    return distributed


@functools.cache
def _setup_worker():
    """What a worker does before its first task: a sympy cache as verify's, where sympy is not imported yet and
    the environment does not set it; one torch thread where torch is imported already (a worker Dask starts
    has ``OMP_NUM_THREADS=1``, which torch reads as it is imported: conform's tasks and check's claims need
    no torch, and do not pay its import)."""
    os.environ.setdefault("SYMPY_CACHE_SIZE", str(SYMPY_CACHE_SIZE))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


@contextlib.contextmanager
def connect(scheduler):
    """A Dask client on the cluster ``scheduler`` names (``("local", N)`` or ``("address", text)``), with the
    cluster it started, if any; both closed on leaving, Ctrl-C while they start included."""
    distributed = _distributed()
    kind, where = scheduler
    cluster = client = None
    try:
        with starting_workers(), warnings.catch_warnings():  # workers started meanwhile ignore a terminal's Ctrl-C
            warnings.simplefilter("ignore")                 # "port 8787 is in use": another is taken, and said
            if kind == "local":
                import dask
                with dask.config.set(LOCAL_CONFIG):
                    cluster = distributed.LocalCluster(n_workers=where, threads_per_worker=1, processes=True,
                                                       dashboard_address=DASHBOARD, silence_logs=logging.CRITICAL)
                client = distributed.Client(cluster)
            else:
                client = distributed.Client(where, timeout=CONNECT_TIMEOUT)
        if kind == "address":
            _check_workers(client, where)
        yield client
    except (OSError, TimeoutError, ValueError) as exc:    # ValueError: an address Dask cannot parse
        if client is not None:
            raise
        raise FormalError(f"could not reach the Dask scheduler at {where}: {exc}") from None
    finally:
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()


def _installed():
    """This package's version where it runs (on a worker: what its tasks would run with)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("formal-transformers")
    except PackageNotFoundError:   # run from a tree on the path
        return "a tree on the path"


def _check_workers(client, where):
    """A running cluster has a worker, each with this package at this version; else a FormalError."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except (TimeoutError, OSError):
        raise FormalError(f"the Dask scheduler at {where} has no worker (waited {CONNECT_TIMEOUT} s): start "
                          f"some with `dask worker {where}`") from None
    try:
        found = client.run(_installed)
    except Exception as exc:  # noqa: BLE001 - whatever the worker raised, unpickled here
        raise FormalError(f"the Dask workers of {where} cannot run this package's tasks ({type(exc).__name__}: "
                          f"{exc}): install formal-transformers, with torch, on every worker") from None
    here = _installed()
    other = {w: v for w, v in found.items() if v != here}
    if other:
        worker, version = next(iter(other.items()))
        raise FormalError(f"the Dask worker {worker} has formal-transformers {version}, this process {here}: "
                          f"install the same on every worker, so that every task checks the same spec")


def _run(task):
    """What a worker runs: ``task``, once the worker is set up."""
    _setup_worker()
    return task.run()


def on_cluster(tasks, scheduler, progress) -> list:
    """The results of ``tasks`` (a list per task, in their order) from the Dask cluster ``scheduler`` names;
    the dashboard's address is said on ``progress`` (a :class:`~.executors.Progress`, or None)."""
    assembly = Assembly(len(tasks))
    try:
        with connect(scheduler) as client:
            if progress is not None:
                progress.note(f"Dask dashboard: {client.dashboard_link}")
            _gather(client, tasks, scheduler, progress, assembly)
    except KeyboardInterrupt:   # the futures are cancelled, the cluster this run started is ended
        raise Interrupted(assembly.results) from None
    return assembly.results


def _gather(client, tasks, scheduler, progress, assembly):
    """Submit ``tasks``, the longest first, and put each one's results in ``assembly`` as it finishes.  A task
    Dask gives up on (``KilledWorker``: every worker it was on died) is submitted once more — Dask also blames a
    task that only waited on a worker that another task killed — then split into its parts, submitted anew,
    or given its FAIL.  A cluster left without a worker for :data:`CONNECT_TIMEOUT` seconds stops the run."""
    distributed = _distributed()
    futures, given_up = {}, set()
    watch = _Watch(client)

    def submit(slot, path, task):
        future = client.submit(_run, task, pure=False, priority=round(task.cost * 1000),
                               key=f"formal-transformers-{slot}-{'.'.join(map(str, path))}-{os.urandom(4).hex()}")
        futures[future] = (slot, path, task)
        return future

    try:
        running = distributed.as_completed([submit(i, (), t) for i, t in enumerate(tasks)])
        watch.start(lambda: client.cancel(_keys(futures), force=True))
        for future in running:
            slot, path, task = futures.pop(future)
            try:
                found = future.result()
            except distributed.KilledWorker:
                if (slot, path) not in given_up:
                    given_up.add((slot, path))
                    running.add(submit(slot, path, task))
                    continue
                parts = task.split()
                if parts:
                    for p, part in zip(assembly.split(slot, path, len(parts)), parts):
                        running.add(submit(slot, p, part))
                    continue
                found = task.died(_killed(scheduler))
            except Exception:
                if watch.lost:
                    where = "started here" if scheduler[0] == "local" else f"at {scheduler[1]}"
                    raise FormalError(f"the Dask cluster {where} has had no worker for {CONNECT_TIMEOUT} s: the run "
                                      f"stopped, "
                                      f"{sum(r is not None for r in assembly.results)} of {len(tasks)} tasks "
                                      f"finished") from None
                raise
            if assembly.done(slot, path, found) and progress is not None:
                progress.advance(tasks[slot])
    except BaseException:   # Ctrl-C, or a bug escaping a task: nothing of this run is left on the cluster
        client.cancel(list(futures), force=True)
        raise
    finally:
        watch.stop()


def _keys(futures) -> list:
    """The futures of ``futures`` (a dict the main thread may be changing meanwhile)."""
    for _ in range(10):
        try:
            return list(futures)
        except RuntimeError:  # it changed size while read: read it again
            continue
    return []


class _Watch:
    """A thread that asks how many workers the cluster has, every 2 s (the client's view, refreshed by Dask),
    and calls ``give_up`` once it has had none for :data:`CONNECT_TIMEOUT` seconds."""

    def __init__(self, client):
        self.client, self.lost = client, False
        self._stop = threading.Event()

    def start(self, give_up):
        def watch():
            since = time.monotonic()
            while not self._stop.wait(2.0):
                try:
                    workers = len(self.client.scheduler_info().get("workers", {}))
                except Exception:  # noqa: BLE001 - the client closing: nothing to watch
                    return
                if workers:
                    since = time.monotonic()
                elif time.monotonic() - since >= CONNECT_TIMEOUT:
                    self.lost = True
                    give_up()
                    return
        threading.Thread(target=watch, name="cluster watch", daemon=True).start()

    def stop(self):
        self._stop.set()


def _killed(scheduler) -> str:
    """The cause a task's FAIL gives when Dask gave up on it (``KilledWorker``) twice."""
    if scheduler[0] == "local":
        return f"Dask gave up on the task twice: each time the {RETRIES + 1} workers it ran on died running it"
    return "Dask gave up on the task twice: each time every worker it ran on died (the scheduler's allowed-failures)"
