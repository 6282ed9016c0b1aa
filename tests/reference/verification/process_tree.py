"""The process tree, read from ``/proc``, for the tests that end runs with Ctrl-C or kill their workers."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

__all__ = ["children", "workers", "descendants", "running", "interruptible", "needs_proc"]

needs_proc = pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
                                reason="reads the process tree from /proc")


def children(pid) -> list:
    """The process ids of ``pid``'s children, whichever of its threads started them (Dask's from its own)."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def workers(pid) -> list:
    """The process ids of ``pid``'s spawned worker processes (multiprocessing's ``spawn``)."""
    found = []
    for c in children(pid):
        try:
            if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes():
                found.append(c)
        except OSError:
            continue
    return found


def descendants(pid) -> list:
    out = []
    for child in children(pid) if running(pid) else []:
        out += [child, *descendants(child)]
    return out


def running(pid) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def interruptible():
    """In the child, before it runs: SIGINT as a terminal's foreground process has it.  A test suite run as a
    background job of a non-interactive shell inherits SIGINT ignored, and Python then never raises
    KeyboardInterrupt: the signal would not reach the command at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
