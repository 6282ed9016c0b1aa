"""``--scheduler``: a campaign's tasks (:mod:`.protocol`) on a Dask cluster (``dask.distributed``, the ``[dask]``
extra) — a running scheduler's (``--scheduler tcp://host:8786``) or a ``LocalCluster`` of N worker processes
started here and ended with the run (``--scheduler local:N``).

Dask does the distributing: each task is a future, submitted the longest first (its priority); a worker
that dies while it holds a task has the task run again on another, and a task that has killed
``allowed-failures + 1`` workers comes back as ``KilledWorker`` (the local cluster allows
:data:`~.protocol.RETRIES` retries, as ``--jobs`` does; a running scheduler keeps its own setting).  Such a task is
split into its parts and they are submitted again; a part that kills every worker is a FAIL with the cause,
as with ``--jobs``.  Ctrl-C cancels every future, ends on every worker the children its tasks started (a worker
thread cannot be stopped; its child can: :func:`.children.end_owned`), ends the local cluster, and raises
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

from formal.errors import ConfigError, FormalError, shown

from .processes import SYMPY_CACHE_SIZE, starting_workers
from .protocol import RETRIES, Assembly, Interrupted

__all__ = ["on_cluster", "connect", "schemes", "check_scheme", "DASHBOARD"]

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
#: Seconds a cancelled run waits for the workers to end the children its tasks started.
END_WAIT = 5


def _distributed():
    try:
        import distributed
    except ImportError:
        raise FormalError("--scheduler runs the tasks on Dask, which is not installed: pip install "
                          "'formal-transformers[dask]'") from None
    return distributed


def schemes(also=()) -> dict:
    """Each address scheme Dask's ``distributed.comm.registry`` knows here (its own transports, those a package
    registered, and of ``also`` those Dask finds installed, as it looks them up when a client connects) → None
    where a client in this process can reach a scheduler in another process with it, else why not:
    ``inproc://`` never can (it is one process's own); a transport whose connector cannot be made here
    (``ucx://`` without UCX-Py) cannot; an encrypted one (``tls://``) needs Dask's TLS settings (a CA file, a
    client certificate and key) to be set."""
    _distributed()
    from distributed.comm import registry
    for name in also:           # a transport installed as a plug-in is registered once Dask has looked it up
        with contextlib.suppress(Exception):
            registry.get_backend(name)
    return {name: _unusable(registry, name) for name in sorted(registry.backends)}


def _unusable(registry, name: str) -> str | None:
    """Why the scheme ``name`` cannot take a client to a scheduler from here, or None."""
    if name == "inproc":
        return "inproc:// reaches a scheduler inside the same process, and none runs in this one"
    try:
        backend = registry.get_backend(name)
        connector = backend.get_connector()
        backend.get_address_host("localhost:8786")
    except Exception as exc:  # noqa: BLE001 - whatever a transport's module raises says it cannot run here
        if name == "ucx":
            return ("ucx:// needs UCX-Py (or distributed-ucxx), which is not installed here: Dask's ucx transport "
                    "is only a placeholder without it")
        return f"{name}:// cannot be used here ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})"
    if getattr(connector, "encrypted", False):
        from distributed.security import Security
        try:
            context = Security().get_connection_args("client")["ssl_context"]
        except Exception as exc:  # noqa: BLE001 - a certificate file that is missing or not PEM
            why = " ".join(str(exc).split())[:120]
            return f"{name}:// needs Dask's TLS settings, and they cannot be loaded ({why})"
        if context is None:
            return (f"{name}:// needs Dask's TLS settings (distributed.comm.tls.ca-file, .client.cert and "
                    f".client.key, or their DASK_DISTRIBUTED__COMM__TLS__… variables), and none are set here")
    return None


def check_scheme(address: str) -> None:
    """A ConfigError, before anything is started, when ``address``'s scheme (Dask's default scheme where it names
    none) is not one a client here can use (:func:`schemes`), naming the address and the schemes it can."""
    import dask
    _distributed()
    scheme, written, _ = address.partition("://")
    if not written:
        scheme = dask.config.get("distributed.comm.default-scheme", "tcp")
    usable = schemes(also=(scheme,))
    why = usable.get(scheme, f"Dask has no {scheme}:// transport here")
    if why is not None:
        accepted = ", ".join(f"{name}://" for name, reason in usable.items() if reason is None)
        raise ConfigError(f"--scheduler {shown(address)}: {why}; the schemes usable here: {accepted}")


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
                client = _client(distributed, where)
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


def _client(distributed, where):
    """A client of the running scheduler at ``where``; whatever keeps Dask from making one (no answer, a name that
    does not resolve, a TLS handshake refused) is one line saying so — the address was well formed, the run
    cannot start."""
    try:
        return distributed.Client(where, timeout=CONNECT_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - Dask's own errors (TypeError, SSLError, CommClosedError…) included
        raise FormalError(f"could not reach the Dask scheduler at {shown(where)}: "
                          f"{' '.join(str(exc).split())[:300] or type(exc).__name__}") from None


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


def _run(task, owner=None):
    """What a worker runs: ``task``, once the worker is set up; the children it starts belong to ``owner`` (the
    run's tag: :func:`_end_children`)."""
    from .children import owned_by
    _setup_worker()
    with owned_by(owner):
        return task.run()


def _end_children(client, owner) -> None:
    """On every worker, end the children the run ``owner`` started (:func:`.children.end_owned`): a cancelled
    future does not stop the worker thread that runs it, and on a cluster this process did not start its bug's
    planting, or the function it checks, would run on for as long as it takes.  At most :data:`END_WAIT` seconds:
    a cluster that does not answer does not hold up Ctrl-C."""
    from .children import end_owned

    def end():
        with contextlib.suppress(Exception):
            client.run(end_owned, owner, on_error="ignore")
    asking = threading.Thread(target=end, name="end children", daemon=True)
    asking.start()
    asking.join(END_WAIT)


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
    owner = f"formal-transformers-{os.getpid()}-{os.urandom(6).hex()}"   # this run's children, on any worker

    def submit(slot, path, task):
        future = client.submit(_run, task, owner, pure=False, priority=round(task.cost * 1000),
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
        _end_children(client, owner)
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
