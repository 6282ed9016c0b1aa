"""Children for the tests of claims decided off the main thread (:func:`formal.tools.claims.jobs._in_child`):
each reads what it is sent, as :func:`~formal.tools.claims.jobs._decide_sent` does, then misbehaves."""

import os
import subprocess
import sys
import time
from multiprocessing.connection import Connection


def forever(read_fd: int, write_fd: int) -> None:
    """Start a grandchild that sleeps (its pid written where the test says), then never answer."""
    Connection(read_fd, writable=False).recv()
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(os.environ["FORMAL_TEST_GRANDCHILD_PID"], "w") as out:
        out.write(str(grandchild.pid))
    while True:
        time.sleep(0.01)


def dies(read_fd: int, write_fd: int) -> None:
    """Exit with status 3 before answering."""
    Connection(read_fd, writable=False).recv()
    os._exit(3)
