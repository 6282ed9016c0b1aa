"""Where a campaign's tasks (:mod:`.protocol`) run: this process, ``--jobs N`` worker processes
(:mod:`.workers`), or a Dask cluster (:mod:`.clusters`, ``--scheduler ADDRESS`` or ``local:N``).  Each gives
the results in the tasks' order, whatever order they finish in, so the report is the same; the longest tasks
are sent first.  Ctrl-C ends the run with :class:`Interrupted`, which carries the results so far.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time

from formal.errors import ConfigError, shown

from .protocol import Interrupted

__all__ = ["Interrupted", "Progress", "run_tasks", "run_shown", "parse_scheduler", "flatten"]

_LOCAL = re.compile(r"local:(\d{1,4})")
#: A scheduler's address: an optional scheme, a host (a name, an IPv4 address or a bracketed IPv6 one) and the port
#: Dask needs (a host alone is refused here, not by Dask with a traceback).
_ADDRESS = re.compile(r"([a-z][a-z0-9+]*://)?(\[[0-9a-fA-F:.]+\]|[\w.\-]+):\d{1,5}/?")


def parse_scheduler(text: str, most: int):
    """``--scheduler``'s value: ``("local", N)`` for ``local:N`` (1 ≤ N ≤ ``most``), else ``("address", text)``
    for a running scheduler (``tcp://host:8786``, ``host:8786``, ``[::1]:8786``: a port is needed) whose scheme a
    Dask client here can use (:func:`.clusters.check_scheme`: ``http://``, ``inproc://``, ``ucx://`` without
    UCX-Py are refused, not crashed on); a ConfigError for anything else."""
    text = text.strip()
    match = _LOCAL.fullmatch(text.lower())
    if match:
        n = int(match.group(1))
        if not 1 <= n <= most:
            raise ConfigError(f"--scheduler local:{n}: the workers must number 1 to {most}")
        return "local", n
    lowered = text.lower()
    if lowered.startswith("local:") or lowered == "local" or not _ADDRESS.fullmatch(text):
        raise ConfigError(f"--scheduler {shown(text)} is neither local:N (N worker processes here) nor a scheduler's "
                          f"address such as tcp://10.0.0.5:8786")
    from .clusters import check_scheme
    check_scheme(text)
    return "address", text


def flatten(results) -> list:
    """The results of every task that finished, in the tasks' order."""
    return [r for found in results if found is not None for r in found]


class Progress:
    """A live line on ``stream`` (a terminal only): a bar of the tasks done, how many of how many, and the time
    left, estimated from the tasks' costs (:attr:`~.protocol.Task.cost`) — a Swin task costs a hundred layer
    norms, so counting tasks alone would mislead."""

    def __init__(self, tasks, stream, what: str):
        self.notes = stream                      # None: --quiet, nothing at all
        self.stream = stream if stream is not None and getattr(stream, "isatty", lambda: False)() else None
        self.what, self.total = what, len(tasks)
        self.cost = sum(max(t.cost, 1e-3) for t in tasks) or 1.0
        self.done, self.spent, self.start = 0, 0.0, time.monotonic()

    def note(self, text: str):
        """A line that stays (the dashboard's address): above the live line, on the stream even if it is not a
        terminal (a log); nothing with no stream (``--quiet``)."""
        if self.notes is None:
            return
        self._clear()
        self.notes.write(text + "\n")
        self.notes.flush()

    def advance(self, task, doing: str = ""):
        """``task`` finished."""
        self.done += 1
        self.spent += max(task.cost, 1e-3)
        self.show(doing or task.label)

    def show(self, doing: str):
        if self.stream is None:
            return
        elapsed = time.monotonic() - self.start
        share = min(self.spent / self.cost, 1.0)
        left = f"{_clock(elapsed * (1 - share) / share)} left" if self.done and share < 1 else "estimating"
        width = 24
        filled = round(width * self.done / max(self.total, 1))
        bar = "━" * filled + "╺" * (filled < width) + " " * max(width - filled - 1, 0)
        line = f"{self.what} {bar} {self.done}/{self.total} tasks · {left} · {doing}"
        self.stream.write("\r\033[K" + line[:160])
        self.stream.flush()

    def _clear(self):
        if self.stream is not None:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def close(self):
        self._clear()


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def run_tasks(tasks, *, jobs=1, scheduler=None, progress=None) -> list:
    """Each task's results (a list per task, in ``tasks``' order), from this process (``jobs=1``), ``jobs``
    worker processes, or the Dask cluster ``scheduler`` names (:func:`parse_scheduler`'s pair); ``progress``
    a :class:`Progress`.  Ctrl-C: :class:`Interrupted`, with what finished, after every worker this run
    started is ended."""
    if scheduler is not None:
        from .clusters import on_cluster
        return on_cluster(tasks, scheduler, progress)
    if jobs > 1 and tasks:   # one task too: a worker that dies must not take this process with it
        from .workers import in_workers
        return in_workers(tasks, jobs, progress)
    results = [None] * len(tasks)
    try:
        with _one_torch_thread():
            for i, task in enumerate(tasks):
                if progress is not None:
                    progress.show(task.label)
                results[i] = task.run()
                if progress is not None:
                    progress.advance(task)
    except KeyboardInterrupt:
        raise Interrupted(results) from None
    return results


@contextlib.contextmanager
def _one_torch_thread():
    """Torch on one thread meanwhile, as in the workers: the examples' tensors are too small to gain from more,
    and with another process busy two threads made a campaign 4× slower (measured); then as it was."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if torch is not None:
            torch.set_num_threads(before)


def run_shown(tasks, what: str, stream, *, jobs=1, scheduler=None) -> list:
    """:func:`run_tasks` with a :class:`Progress` bar named ``what`` on ``stream`` (None: nothing shown), and
    Ctrl-C's results in place of its :class:`Interrupted`: None for each task that did not finish."""
    bar = Progress(tasks, stream, what)
    try:
        return run_tasks(tasks, jobs=jobs, scheduler=scheduler, progress=bar)
    except Interrupted as stop:
        return stop.results
    finally:  # the live line does not stay behind
        bar.close()
