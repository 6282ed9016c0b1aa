"""Functions and tasks the process-ending tests run (:mod:`tests.reference.execution.test_every_process_ends`): a
child stuck in C code, holding its interpreter, and a task whose child sleeps — each writing the pids it started."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass

from reference.execution.protocol import Task

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def stuck(pid_file: str) -> None:
    """Start a helper in a session of its own, write this process's pid and the helper's, then sum a range in C:
    a loop that never lets go of the interpreter, so no thread of this process runs until it is done."""
    helper = subprocess.Popen(SLEEPER, start_new_session=True)
    with open(pid_file, "w") as out:
        out.write(f"{os.getpid()} {helper.pid}")
    sum(range(10**13))


def starts_stuck(pid_file: str) -> None:
    """A process that starts a child running :func:`stuck`, then sleeps (the test kills it)."""
    from reference.execution import children
    children.start("tests.reference.execution.stuck:stuck", [pid_file])
    time.sleep(600)


@dataclass(frozen=True)
class SleepsInChild(Task):
    """A task whose child (``spawn_and_sleep``: it and its grandchild write their pids to ``marker``) sleeps for
    ten minutes: on a cluster, a cancelled future leaves it running unless the run ends it."""

    marker: str
    cost: float = 1.0

    @property
    def label(self):
        return "sleeps in a child"

    def run(self):
        from reference.execution import children
        finished = children.run("tests.reference.execution.targets:spawn_and_sleep", [self.marker], timeout=600)
        return [finished.returncode]

    def died(self, cause):
        return [cause]
