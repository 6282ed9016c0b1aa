"""Calling a function under test so that nothing it does escapes: its exceptions and exits, what it prints,
the time it takes.

Two runners give one interface — ``signature`` (the function's parameters, or None) and ``call(kwargs,
outputs)`` (its outputs converted to numpy, or :class:`Failed`):

:class:`Isolated`
    the function runs in a worker process (a child of :mod:`reference.execution.children`: a fresh interpreter
    leading a process group of its own, its memory capped, ended with everything it started) that loads it by
    name (``path/to/file.py:function`` or ``module:function``).  A call that outlives its time limit is ended by
    ending the worker's whole process group; ``sys.exit``,
    ``os._exit``, a crash or ``KeyboardInterrupt`` in the function ends nothing but the call.  This is how
    ``formal-transformers conform`` runs a target.
:class:`InProcess`
    the function object is called here (the Python API, the shipped mutant catalogue).  ``BaseException``
    of every kind is caught; the time limit is an interval timer, on the main thread of Unix only.

Both capture what the function writes to the standard streams at the file-descriptor level (so a C
extension's output is caught too): a report on stdout, JSON included, is never corrupted by it.  A worker's
streams are a file of the runner's for the worker's whole life, so that what it prints between and after calls
(a thread left running, an ``atexit`` handler) is kept too; in this process only what is printed during a call
is.  The output is converted under the same guard and time limit (:mod:`.outputs`): an ``__array__`` is the
function's code too.

This module and the three it uses (:mod:`.loading`, :mod:`.outputs`, :mod:`reference.execution.children`)
import only the standard library and numpy, so that a worker starts quickly.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings

import numpy as np

from formal.guards.limits import TimeLimit as _Timeout, time_limit as _time_limit

from ..execution import children
from .loading import LoadError, describe, load, missing_module, parameters, signature, verb
from .outputs import Failed, as_arrays
from .settings import DEFAULT_TIMEOUT

__all__ = ["Isolated", "InProcess", "DEFAULT_TIMEOUT", "Failed", "LoadError", "load"]

_LOAD_TIMEOUT = 120.0  # importing a module that imports torch takes seconds on a cold disk
_PRINTED = 4000        # characters of the function's output kept for the report


# ------------------------------------------------------------------------------------------ capturing
@contextlib.contextmanager
def _captured(sink):
    """Standard output and error of this process (file descriptors 1 and 2, so C code's too) go to the file
    ``sink`` while the block runs."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        with contextlib.redirect_stdout(sys.__stdout__), contextlib.redirect_stderr(sys.__stderr__):
            yield
    finally:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            with contextlib.suppress(Exception):
                stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


def _tail(sink) -> str:
    """The last few thousand characters written to ``sink`` (however much the function printed)."""
    size = sink.seek(0, os.SEEK_END)
    sink.seek(max(0, size - 4 * _PRINTED))  # up to 4 bytes a character
    return sink.read().decode(errors="replace")[-_PRINTED:]


def _guarded(function, kwargs, outputs, timeout, shapes=None):
    """Call ``function(**kwargs)``: its converted outputs, or :class:`Failed` for anything it did.  The
    conversion runs under the same time limit and guard: an output's ``__array__`` is the function's code too."""
    converting = False
    try:
        with _time_limit(timeout), warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = function(**kwargs)
            converting = True
            return as_arrays(result, outputs, shapes)
    except Failed:
        raise
    except _Timeout:
        doing = "converting its output" if converting else "it"
        raise Failed("type" if converting else "runs",
                     f"{doing} did not {'finish' if converting else 'return'} within {timeout:g} s (--timeout)") \
            from None
    except BaseException as exc:  # noqa: B036 - its sys.exit, Ctrl-C and errors are the function's failure
        if converting:
            raise Failed("type", f"converting its output {verb(exc)}") from None
        raise Failed("runs", f"it {verb(exc)}", missing=missing_module(exc)) from None


# -------------------------------------------------------------------------------------------- runners
class InProcess:
    """Call a function object in this process, capturing its output and catching whatever it raises."""

    def __init__(self, function, *, timeout: float | None = DEFAULT_TIMEOUT):
        self.function, self.timeout = function, timeout
        self.signature = signature(parameters(function))
        self.printed = ""

    def call(self, kwargs: dict, outputs, shapes=None) -> tuple:
        with tempfile.TemporaryFile("w+b") as sink:
            try:
                with _captured(sink):
                    return _guarded(self.function, kwargs, outputs, self.timeout, shapes)
            finally:
                self.printed = (self.printed + _tail(sink))[-_PRINTED:]

    def close(self):
        pass


def _serve_fds(read_fd: int, write_fd: int, text: str):
    """The worker's entry point (a child of :mod:`reference.execution.children`, its memory already capped and its
    parent watched): serve on the two pipe ends it was given."""
    from multiprocessing.connection import Connection
    _serve(_Duplex(Connection(read_fd, writable=False), Connection(write_fd, readable=False)), text)


class _Duplex:
    """Two one-way connections as one two-way one."""

    def __init__(self, incoming, outgoing):
        self.incoming, self.outgoing = incoming, outgoing

    def send(self, obj):
        self.outgoing.send(obj)

    def recv(self):
        return self.incoming.recv()

    def poll(self, timeout):
        return self.incoming.poll(timeout)

    def close(self):
        self.incoming.close()
        self.outgoing.close()


def _serve(conn, text):
    """The worker: load the function, then answer calls until told to stop or the parent goes away."""
    sink = tempfile.TemporaryFile("w+b")
    try:
        with _captured(sink):
            function = load(text)
    except LoadError as exc:
        conn.send(("load", str(exc), exc.usage, exc.missing))
        return
    conn.send(("loaded", parameters(function)))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message[0] == "stop":
            return
        _, kwargs, outputs, shapes = message
        sink.seek(0)
        sink.truncate()
        try:
            with _captured(sink):
                answer = ("ok", _guarded(function, kwargs, outputs, None, shapes))
        except Failed as failed:
            answer = ("failed", failed.property, str(failed), failed.missing)
        try:
            conn.send(answer + (_tail(sink),))
        except Exception as exc:  # noqa: BLE001 - an output that cannot be sent is the function's
            conn.send(("failed", "type", f"its output cannot be passed back ({describe(exc)})", None, ""))


class Isolated:
    """Run the function named ``text`` in a worker process (a fresh interpreter with this one's
    ``sys.path``); a call past ``timeout`` seconds ends the worker (a new one starts for the next call).
    ``max_memory`` (bytes; 0 for none) caps the worker's address space (``RLIMIT_AS``): an allocation past
    it is a MemoryError inside the function.  Not for CUDA, which reserves far more address space than it
    uses: pass 0 there."""

    def __init__(self, text: str, *, timeout: float | None = DEFAULT_TIMEOUT, max_memory: int = 0):
        self.text, self.timeout, self.max_memory = text, timeout, int(max_memory)
        self.printed = ""
        self._process = self._conn = None
        # the worker's standard output and error for its whole life, at the descriptor level: what it prints
        # between calls (a thread it left running, an atexit handler, the interpreter's own last words) is
        # kept for the report, never written to this process's streams
        self._streams = tempfile.TemporaryFile("w+b")
        self._read = 0
        self.signature = signature(self._start())

    def _start(self):
        from multiprocessing.connection import Connection
        to_child, from_parent = os.pipe()[::-1]
        from_child, to_parent = os.pipe()
        self._child = children.start("reference.conformance.sandbox:_serve_fds",
                                     [from_parent, to_parent, self.text], max_memory=self.max_memory,
                                     stdout=self._streams, stderr=self._streams, pass_fds=(from_parent, to_parent))
        self._process = self._child.process
        os.close(from_parent)
        os.close(to_parent)
        self._conn = _Duplex(Connection(from_child, writable=False), Connection(to_child, readable=False))
        try:
            answer = self._receive(max(_LOAD_TIMEOUT, self.timeout or 0), f"importing {self.text}")
        except _Ended as ended:
            raise LoadError(str(ended), usage=False) from None
        if answer[0] == "load":
            self.close()
            raise LoadError(answer[1], usage=answer[2], missing=answer[3])
        return answer[1]

    def _receive(self, timeout, doing):
        """The worker's answer; its silence past ``timeout`` or its death is the function's failure."""
        if not self._conn.poll(timeout):
            self.close()
            raise _Ended(f"it did not return within {timeout:g} s (--timeout)" if doing == "call"
                         else f"{doing} did not finish within {timeout:g} s")
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            code = self._process.wait(5)
            self.close()
            raise _Ended(f"it ended the process (exit status {code})" if doing == "call"
                         else f"{doing} ended the process (exit status {code})") from None

    def _collect(self):
        """Add what the worker printed outside calls since the last look to :attr:`printed`."""
        fd = self._streams.fileno()   # read by position: the worker shares the file's offset, which must not move
        size = os.fstat(fd).st_size
        if size > self._read:
            start = max(self._read, size - 4 * _PRINTED)
            text = os.pread(fd, size - start, start).decode(errors="replace")
            self.printed = (self.printed + text)[-_PRINTED:]
            self._read = size

    def call(self, kwargs: dict, outputs, shapes=None) -> tuple:
        if self._process is None:
            self._start()
        try:
            self._conn.send(("call", kwargs, tuple(outputs), None if shapes is None else tuple(shapes)))
            answer = self._receive(self.timeout, "call")
        except _Ended as ended:
            raise Failed("runs", str(ended)) from None
        except (BrokenPipeError, OSError) as exc:  # the worker is gone already
            self.close()
            raise Failed("runs", f"it ended the process ({describe(exc)})") from None
        self._collect()
        self.printed = (self.printed + answer[-1])[-_PRINTED:]
        if answer[0] == "failed":
            raise Failed(answer[1], answer[2], missing=answer[3])
        return answer[1]

    def close(self):
        if self._process is None:
            return
        with contextlib.suppress(Exception):
            if self._process.poll() is None:
                self._conn.send(("stop",))
                self._process.wait(1)
        self._child.end()               # its whole process group: whatever the function started too
        with contextlib.suppress(Exception):
            self._conn.close()
        self._process = self._conn = None
        with contextlib.suppress(Exception):  # its last words: an atexit handler, a thread still printing
            self._collect()

    def __del__(self):
        with contextlib.suppress(Exception):
            self.close()


class _Ended(Exception):
    pass
