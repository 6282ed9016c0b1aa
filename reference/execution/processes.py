"""What the worker processes of ``verify`` (:mod:`.workers`) and of a local Dask cluster (:mod:`.clusters`)
are started with: SIGINT blocked, so that a terminal's Ctrl-C reaches only the parent, which ends them; and in
their environment verify's sympy cache and one thread for torch's (and BLAS's) operations — N workers × 1
thread: these tensors are too small to gain from more (measured), and a worker that never imports torch
(conform's tasks, check's claims) does not pay its 2 s."""

from __future__ import annotations

import contextlib
import os
import signal

__all__ = ["starting_workers", "SYMPY_CACHE_SIZE"]

#: Entries in each of sympy's caches in a worker (its ``SYMPY_CACHE_SIZE``, read when sympy is first imported,
#: unless the environment sets it): sympy's default, 1,000, is too few for the derivations of every variant
#: drawn, which then expand again what was evicted — a quarter of the time taken drawing the examples, an eighth
#: of the whole (measured; 20,000 keeps it all, for 15 MB more; ``verify --mutants`` neither gains nor loses).
SYMPY_CACHE_SIZE = 20_000


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


@contextlib.contextmanager
def starting_workers():
    """Worker processes started within inherit SIGINT blocked (a thread started within too, and what it
    starts later), ``SYMPY_CACHE_SIZE`` and one thread (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``), unless the
    environment sets them."""
    from multiprocessing import resource_tracker
    resource_tracker.ensure_running()   # started later, it would unblock SIGINT in the thread that starts it
    with _sigint_blocked(), _environment(SYMPY_CACHE_SIZE=str(SYMPY_CACHE_SIZE), OMP_NUM_THREADS="1",
                                         MKL_NUM_THREADS="1"):
        yield
