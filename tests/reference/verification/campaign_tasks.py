"""Tasks that misbehave on purpose, for the executors' fault tests (:mod:`reference.verification.tasks`): a worker
imports this module to run them, as it imports the package's own."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from reference.execution.protocol import Task


@dataclass(frozen=True)
class Square(Task):
    """A pure task: ``[n * n]``, after ``seconds``."""

    n: int
    seconds: float = 0.0
    cost: float = 0.1

    @property
    def label(self):
        return f"square {self.n}"

    def run(self):
        time.sleep(self.seconds)
        return [self.n * self.n]

    def died(self, cause):
        return [("died", self.n, cause)]


@dataclass(frozen=True)
class Overruns(Task):
    """Sleeps ``seconds``, past its ``limit``, having started a grandchild process (its pid written to ``marker``),
    which must end with the worker; its parts, when ``parts`` > 1, are one overrunning task and squares."""

    marker: str
    seconds: float = 600.0
    limit: float | None = 1.0
    parts: int = 1
    cost: float = 1.0

    @property
    def label(self):
        return "overruns"

    def run(self):
        from reference.execution import children
        child = children.start("tests.reference.execution.targets:spawn_and_sleep", [self.marker])
        time.sleep(self.seconds)
        child.end()
        return [("ran",)]

    def split(self):
        if self.parts == 1:
            return []
        return [Overruns(self.marker, self.seconds, self.limit, 1)] + [Square(k) for k in range(1, self.parts)]

    def died(self, cause):
        return [("died", cause)]


@dataclass(frozen=True)
class Grows(Task):
    """Holds ``megabytes`` of memory for a while, past its ``memory`` cap."""

    megabytes: int = 400
    memory: int | None = 200 * 2**20
    cost: float = 1.0

    @property
    def label(self):
        return "grows"

    def run(self):
        block = bytearray(self.megabytes * 2**20)
        for i in range(0, len(block), 4096):     # touched: resident, not only reserved
            block[i] = 1
        time.sleep(30)
        return [("ran", len(block))]

    def died(self, cause):
        return [("died", cause)]


@dataclass(frozen=True)
class Kills(Task):
    """Kills the worker that runs it (SIGKILL, as the OOM killer does): every time, or (``once``) the first
    time only — the first run leaves ``marker`` behind.  Its parts, when ``parts`` > 1, are tasks of one part
    each, of which only the first kills."""

    marker: str
    once: bool = False
    parts: int = 1
    cost: float = 1.0

    @property
    def label(self):
        return f"kills ({self.parts} parts)"

    def run(self):
        first = not Path(self.marker).exists()
        Path(self.marker).touch()
        if first or not self.once:
            os.kill(os.getpid(), signal.SIGKILL)
        return [("ran", self.marker)] * self.parts

    def split(self):
        if self.parts == 1:
            return []
        return [Kills(self.marker, self.once, 1, 0.5)] + [Square(k) for k in range(1, self.parts)]

    def died(self, cause):
        return [("died", self.marker, cause)]


@dataclass(frozen=True)
class Raises(Task):
    """A bug escaping a task: it raises."""

    cost: float = 0.1

    def run(self):
        raise RuntimeError("planted")


@dataclass(frozen=True)
class Threads(Task):
    """The threads torch computes with where the task runs."""

    cost: float = 0.1

    def run(self):
        import torch
        return [torch.get_num_threads()]
