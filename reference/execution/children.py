"""A function run in a fresh interpreter of its own — a *child* — that ends as a whole: the one way this package
starts a process for one piece of work (``conform``'s sandbox, a bug planted by ``prove --mutants``, the docs'
theorems checked while the pages are read).  The executors' worker processes (:mod:`.workers`, :mod:`.clusters`)
run many tasks each; a child runs one function.

A child is the leader of a process group of its own, and on Linux a small *supervisor*: it forks the process that
calls the function and stays beside it, the reaper of every process that function starts (``PR_SET_CHILD_SUBREAPER``:
a grandchild that double-forks or moves to a session of its own with ``setsid`` is still found below it), so that
everything it starts ends with it:

- :meth:`Child.end` — at a timeout, on Ctrl-C, when the work is done — kills the whole group and every process
  below the child, whatever group or session it moved to (:func:`end_tree`), never the leader alone;
- when the function returns (or its process dies), the supervisor ends whatever it left running — a helper
  ``subprocess.Popen`` or ``multiprocessing.Process`` it started and forgot — and exits as the function's process
  did (its exit status, or the signal that killed it);
- the supervisor watches the process that started the child (every :data:`SUPERVISE_EVERY` seconds) and ends
  everything below it when that process is gone (a worker ended by Ctrl-C, a Dask worker closed): no orphan runs
  on.  The supervisor holds no lock and runs no user code, so a function stuck in C code that never lets go of
  its interpreter (``sum(range(10**12))``) cannot keep it from doing so;
- ``max_memory`` caps the function's address space (``RLIMIT_AS``) before it is called: an allocation past it is a
  MemoryError there, not the machine out of memory;
- a child started inside :func:`owned_by` is ended by :func:`end_owned` from any thread of its process: a Dask
  run that is cancelled ends, on each worker, the children its tasks started (a worker thread cannot be
  interrupted; its child can).

Elsewhere (no ``/proc``, not Linux) the child watches its parent from a thread and kills its group when it is gone.

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
import threading
import time
from dataclasses import dataclass

__all__ = ["Child", "Finished", "start", "run", "end_group", "end_tree", "how_it_died", "owned_by", "end_owned"]

#: How often a child without a supervisor (not Linux) looks for the process that started it (seconds).
WATCH_EVERY = 0.5
#: How often a child's supervisor looks for the process that started it (seconds); the function's end it hears
#: of at once (SIGCHLD).
SUPERVISE_EVERY = 0.1
#: The signals that end a supervisor, which then ends everything below it first.
_ENDING = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)
#: Linux's prctl options (<linux/prctl.h>).
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36

_LIVE: dict = {}            # pid → (Child, owner): the children this process started and has not ended
_LIVE_LOCK = threading.Lock()
_OWNER = threading.local()  # .tag: the owner of the children started on this thread (owned_by)

_BOOT = "import sys, json; sys.path[:] = json.loads(sys.argv[1]); from reference.execution.children import _enter; " \
        "_enter(sys.argv[2])"


def how_it_died(exitcode) -> str:
    """``"killed by SIGSEGV"``, ``"exit status 3"``: how a process ended, from its exit code."""
    return f"killed by {signal.Signals(-exitcode).name}" if exitcode < 0 else f"exit status {exitcode}"


def end_group(pid: int) -> None:
    """Kill the process group led by ``pid`` (a child and everything it started); nothing if it is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def end_tree(pid: int) -> None:
    """Kill the process group led by ``pid`` and every process below ``pid``, whatever group or session it moved to
    (each stopped as it is found, so that none starts another meanwhile); nothing if they are gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGSTOP)
    _end_below(pid)
    end_group(pid)


def _end_below(pid: int) -> None:
    """Stop, then kill, every process below ``pid`` (``pid`` itself is left)."""
    stopped = set()
    for _ in range(100):   # a round finds what the last one's processes started before they stopped
        found = [p for p in _descendants(pid) if p not in stopped]
        if not found:
            break
        for p in found:
            _signal(p, signal.SIGSTOP)
        stopped.update(found)
    for p in stopped:
        _signal(p, signal.SIGKILL)


def _signal(pid: int, sig) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _descendants(pid: int) -> list:
    """The processes below ``pid`` (read from ``/proc``; none where there is no ``/proc``)."""
    parents = None if _has_children_files() else _parents()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        below = _children(p) if parents is None else [c for c, parent in parents.items() if parent == p]
        out += below
        todo += below
    return out


def _has_children_files() -> bool:
    return os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _children(pid: int) -> list:
    """The children of ``pid``, whichever of its threads started them (``/proc/PID/task/TID/children``)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for task in tasks:
        with contextlib.suppress(OSError, ValueError):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
    return found


def _parents() -> dict:
    """Every process's parent, from ``/proc/PID/stat`` (where the kernel keeps no children files)."""
    parents = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
    return parents


@contextlib.contextmanager
def owned_by(tag):
    """The children started on this thread meanwhile belong to ``tag`` (:func:`end_owned` ends them)."""
    before = getattr(_OWNER, "tag", None)
    _OWNER.tag = tag
    try:
        yield
    finally:
        _OWNER.tag = before


def end_owned(tag) -> int:
    """End every child of this process that was started inside ``owned_by(tag)`` and is still running, from any
    thread (the thread that waits on it then finds it ended); how many.  A Dask run that is cancelled asks each
    worker for this (:mod:`.clusters`)."""
    with _LIVE_LOCK:
        owned = [child for child, owner in _LIVE.values() if owner == tag]
    for child in owned:
        child.kill()
    return len(owned)


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

    def kill(self) -> None:
        """Kill the child's whole process group and every process below it (:func:`end_tree`), without waiting.
        Once the child is collected its pid may be another process's: then its group alone, which cannot be
        reused while anything of it runs (and its supervisor ended what was below it before it exited)."""
        if self.process.returncode is None:
            end_tree(self.process.pid)
        else:
            end_group(self.process.pid)

    def end(self, wait: float = 5.0) -> None:
        """Kill the child's whole process group and every process below it (:meth:`kill`), then collect the
        child."""
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(wait)
        with _LIVE_LOCK:
            _LIVE.pop(self.process.pid, None)

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
    child = Child(process)
    with _LIVE_LOCK:
        _LIVE[process.pid] = (child, getattr(_OWNER, "tag", None))
    return child


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
    """The child: supervise (or watch the parent), import the target, cap the memory, call it."""
    from importlib import import_module
    asked = json.loads(request)
    if os.getppid() != asked["parent"]:      # gone already, before this child could look
        os._exit(1)
    if sys.platform.startswith("linux") and os.path.isdir("/proc"):
        _supervise(asked["parent"])          # returns in the process that calls the function
    else:
        _watch(asked["parent"])
    module, _, name = asked["target"].partition(":")
    function = getattr(import_module(module), name)
    _limit_memory(asked["max_memory"])
    function(*asked["args"])


def _watch(parent: int) -> None:
    """Kill this child's whole group when the process that started it is gone (it is then re-parented): where
    there is no supervisor (:func:`_supervise`)."""

    def watch():
        while True:
            time.sleep(WATCH_EVERY)
            if os.getppid() != parent:
                end_group(os.getpgrp())
                os._exit(1)

    threading.Thread(target=watch, name="parent watch", daemon=True).start()


def _prctl(option: int, value: int) -> None:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _supervise(parent: int) -> None:
    """Fork: the process that returns calls the function (it dies with the supervisor); this one, the group's
    leader and the reaper of everything below it, never returns (:func:`_supervisor`)."""
    with contextlib.suppress(Exception):   # a kernel without it: the group and the tree walk still hold
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD, *_ENDING})   # no window to die unheard in
    supervisor = os.getpid()
    worker = os.fork()
    if worker == 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        with contextlib.suppress(Exception):
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != supervisor:       # it was gone before the line above
            os._exit(1)
        return
    _supervisor(parent, worker)


def _supervisor(parent: int, worker: int) -> None:
    """Wait for the function's process, reaping every orphan left below; then end everything still below and exit
    as that process did (:func:`_outcome`).  Nothing of the supervisor's own — not even an error of its own — may
    reach the function's streams, nor leave a process running."""
    code = 1
    try:
        os.closerange(3, 1 << 20)   # only the standard streams: the pipes the function serves on see it end with it
        code = _outcome(parent, worker)
    except BaseException:  # noqa: B036 - the supervisor ends what is below it whatever happened to it
        code = 1
    finally:
        _end_below(os.getpid())
    if code >= 0:
        os._exit(code)
    with contextlib.suppress(OSError, ValueError):    # die of the same signal, as the caller would see it
        signal.signal(-code, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {-code})
    os.kill(os.getpid(), -code)
    os._exit(128 - code)


def _outcome(parent: int, worker: int) -> int:
    """The exit code of the function's process (negative: the signal that killed it), reaping every orphan
    re-parented here meanwhile; 1 once the parent is gone; ``-signal`` for a signal of :data:`_ENDING` sent here."""
    while True:
        while True:              # reap: the function's process, and any orphan re-parented here
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
            if pid == worker:
                return os.waitstatus_to_exitcode(status)
        if os.getppid() != parent:
            return 1
        found = signal.sigtimedwait({signal.SIGCHLD, *_ENDING}, SUPERVISE_EVERY)
        if found is not None and found.si_signo != signal.SIGCHLD:
            return -found.si_signo


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
