"""The process tree, read from ``/proc``, for the tests that end runs with Ctrl-C or kill their workers."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

__all__ = ["children", "workers", "descendants", "running", "interruptible", "needs_proc", "ctrl_c", "ended",
           "written_pids"]

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


def ctrl_c(process, ready, *, settle: float = 0.0, within: float = 60.0):
    """Once ``ready()`` (polled for ``within`` seconds; an AssertionError if it never is) and ``settle`` seconds
    more, SIGINT to ``process``'s group, as a terminal sends Ctrl-C; its ``(stdout, stderr)``.  The group is killed
    if it outlives the test."""
    try:
        deadline = time.monotonic() + within
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready(), "the run did not reach the point to interrupt it at"
        time.sleep(settle)
        os.killpg(process.pid, signal.SIGINT)
        return process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def ended(pids, within: float = 10.0) -> bool:
    """Whether every process of ``pids`` ends within ``within`` seconds."""
    deadline = time.monotonic() + within
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(running(p) for p in pids)


def written_pids(path, within: float = 60.0) -> list:
    """The two pids a test's target writes to ``path`` (a process and a helper it started), once it has."""
    import time
    from pathlib import Path
    path, deadline = Path(path), time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and len(text := path.read_text().split()) == 2:
            return [int(p) for p in text]
        time.sleep(0.05)
    raise AssertionError(f"no pids written to {path}")
