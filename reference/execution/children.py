"""A function run in a fresh interpreter of its own — a *child* — that ends as a whole: the one way this package
starts a process for one piece of work (``conform``'s sandbox, a bug planted by ``prove --mutants``, the docs'
theorems checked while the pages are read).  The executors' worker processes (:mod:`.workers`, :mod:`.clusters`)
run many tasks each; a child runs one function.

A child is the leader of a process group of its own, so that everything it starts ends with it:

- :meth:`Child.end` — at a timeout, on Ctrl-C, when the work is done — kills the whole group (``SIGKILL`` to
  ``-pid``), never the leader alone;
- the child watches the process that started it and kills its own group when that process is gone (a worker
  ended by Ctrl-C, a Dask worker closed): no orphan runs on;
- ``max_memory`` caps its address space (``RLIMIT_AS``) before its function is called: an allocation past it is
  a MemoryError there, not the machine out of memory.

What runs is named, never written as code: ``"package.module:function"``, imported in the child (with this
process's ``sys.path``) and called with JSON arguments.

>>> finished = run("reference.execution.children:_echo", ["hello"], timeout=60)
>>> finished.returncode, finished.stdout
(0, 'hello\\n')
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

__all__ = ["Child", "Finished", "start", "run", "end_group", "how_it_died"]

#: How often a child looks for the process that started it (seconds).
WATCH_EVERY = 0.5

_BOOT = "import sys, json; sys.path[:] = json.loads(sys.argv[1]); from reference.execution.children import _enter; " \
        "_enter(sys.argv[2])"


def how_it_died(exitcode) -> str:
    """``"killed by SIGSEGV"``, ``"exit status 3"``: how a process ended, from its exit code."""
    return f"killed by {signal.Signals(-exitcode).name}" if exitcode < 0 else f"exit status {exitcode}"


def end_group(pid: int) -> None:
    """Kill the process group led by ``pid`` (a child and everything it started); nothing if it is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class Child:
    """A running child: :attr:`process` (a ``subprocess.Popen``); :meth:`end` ends its whole group.  As a context
    manager it is ended on leaving, however the block is left (an exception, Ctrl-C)."""

    def __init__(self, process: subprocess.Popen):
        self.process = process

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def end(self, wait: float = 5.0) -> None:
        """Kill the child's whole process group, then collect the child."""
        end_group(self.process.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(wait)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.end()
        return False


def start(target: str, args=(), *, max_memory: int = 0, stdin=subprocess.DEVNULL, stdout=None, stderr=None,
          pass_fds=(), env=None, text: bool = False) -> Child:
    """Start ``target`` (``"module:function"``) in a child, called as ``function(*args)`` (``args`` JSON-able),
    in a process group of its own, with this process's ``sys.path``; ``max_memory`` bytes of address space
    (0: no cap).  The streams and ``pass_fds`` are ``subprocess.Popen``'s."""
    request = json.dumps({"target": target, "args": list(args), "max_memory": int(max_memory),
                          "parent": os.getpid()})
    process = subprocess.Popen([sys.executable, "-c", _BOOT, json.dumps(sys.path), request], stdin=stdin,
                               stdout=stdout, stderr=stderr, pass_fds=tuple(pass_fds), env=env, text=text,
                               start_new_session=True)
    return Child(process)


@dataclass(frozen=True)
class Finished:
    """How a child :func:`run` ended: its exit status (None when it was ended at the time limit; negative: the
    signal that killed it), what it printed, and its seconds."""

    returncode: int | None
    stdout: str
    stderr: str
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def ended(self, limit: float) -> str:
        """Why it ended, in words, where that was not exit status 0: '' otherwise."""
        if self.timed_out:
            return f"its process was stopped after {limit:g} s"
        if self.returncode == 0:
            return ""
        how = how_it_died(self.returncode)
        last = (self.stderr.strip().splitlines() or [""])[-1]
        return f"its process ended with {how}" + (f" ({last})" if last else "")


def run(target: str, args=(), *, timeout: float, max_memory: int = 0, env=None) -> Finished:
    """Run ``target`` in a child (:func:`start`) to its end, or until ``timeout`` seconds have passed, then end
    its whole group; what it printed is captured.  Ctrl-C (or any exception) here ends the group too."""
    begin = time.perf_counter()
    with start(target, args, max_memory=max_memory, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
               text=True) as child:
        try:
            out, err = child.process.communicate(timeout=timeout)
            code = child.process.returncode
        except subprocess.TimeoutExpired:
            child.end()
            out, err = child.process.communicate()
            code = None
    return Finished(code, out or "", err or "", time.perf_counter() - begin)


# ------------------------------------------------------------------------------------------ the child's side
def _enter(request: str) -> None:
    """The child: watch the parent, import the target, cap the memory, call it."""
    from importlib import import_module
    asked = json.loads(request)
    _watch(asked["parent"])
    module, _, name = asked["target"].partition(":")
    function = getattr(import_module(module), name)
    _limit_memory(asked["max_memory"])
    function(*asked["args"])


def _watch(parent: int) -> None:
    """Kill this child's whole group when the process that started it is gone (it is then re-parented)."""
    import threading

    def watch():
        while True:
            time.sleep(WATCH_EVERY)
            if os.getppid() != parent:
                end_group(os.getpgrp())
                os._exit(1)

    if os.getppid() != parent:      # gone already, before this child could look
        os._exit(1)
    threading.Thread(target=watch, name="parent watch", daemon=True).start()


def _limit_memory(nbytes: int) -> None:
    """Cap this process's address space at ``nbytes`` (0: no cap)."""
    if nbytes:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = nbytes if hard == resource.RLIM_INFINITY else min(nbytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _echo(*words) -> None:
    """A child that prints its arguments (the doctest above, and the tests')."""
    print(*words)
