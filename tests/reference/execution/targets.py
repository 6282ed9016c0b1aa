"""Functions the tests run as children (:mod:`reference.execution.children`)."""

import subprocess
import sys
import time


def spawn_and_sleep(pid_file: str) -> None:
    """Start a grandchild that sleeps, write its pid and this process's to ``pid_file``, then sleep."""
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    import os
    with open(pid_file, "w") as out:
        out.write(f"{os.getpid()} {grandchild.pid}")
    time.sleep(600)


def allocate(megabytes: int) -> None:
    """Hold ``megabytes`` of memory."""
    block = bytearray(megabytes * 2**20)
    print(len(block))


def middle(pid_file: str) -> None:
    """A process that starts a child running :func:`spawn_and_sleep`, then sleeps (the test kills it)."""
    from reference.execution import children
    children.start("tests.reference.execution.targets:spawn_and_sleep", [pid_file])
    time.sleep(600)
