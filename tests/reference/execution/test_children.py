"""Children (:mod:`reference.execution.children`): a function in a fresh interpreter that leads a process group of
its own, ended as a whole — at its time limit, when the block that holds it is left, and when the process that
started it is gone — with its memory capped.  Each test's process tree is read from /proc."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from reference.execution import children
from tests.reference.verification.process_tree import ended, needs_proc, written_pids

TARGET = "tests.reference.execution.targets"




def test_a_child_runs_a_named_function_with_its_arguments():
    finished = children.run("reference.execution.children:_echo", ["a", "b"], timeout=60)
    assert (finished.returncode, finished.stdout, finished.timed_out, finished.ended(60)) == (0, "a b\n", False, "")


def test_what_a_child_runs_must_be_importable():
    finished = children.run("tests.reference.execution.targets:nosuch", [], timeout=60)
    assert finished.returncode == 1 and "AttributeError" in finished.stderr
    assert finished.ended(60).startswith("its process ended with exit status 1 (AttributeError")


@needs_proc
def test_the_time_limit_ends_the_child_and_all_it_started(tmp_path):
    finished = children.run(f"{TARGET}:spawn_and_sleep", [str(tmp_path / "pids")], timeout=3)
    assert finished.timed_out and finished.ended(3) == "its process was stopped after 3 s"
    assert ended(written_pids(tmp_path / "pids", 30.0))


@needs_proc
def test_leaving_the_block_ends_the_child_and_all_it_started(tmp_path):
    with pytest.raises(KeyboardInterrupt), children.start(f"{TARGET}:spawn_and_sleep", [str(tmp_path / "pids")]):
        pids = written_pids(tmp_path / "pids", 30.0)
        raise KeyboardInterrupt                  # as Ctrl-C would, in the block
    assert ended(pids)


@needs_proc
def test_a_child_whose_parent_is_gone_ends_with_all_it_started(tmp_path):
    """The process that started the child is killed (SIGKILL: it cannot end anything): the child sees it gone and
    ends its group — no orphan runs on."""
    pid_file = tmp_path / "pids"
    with children.start(f"{TARGET}:middle", [str(pid_file)]) as middle:
        pids = written_pids(pid_file, 30.0)
        os.kill(middle.pid, signal.SIGKILL)
        middle.process.wait(10)
        assert ended(pids, within=10.0), f"{pids} outlived the process that started them"


def test_the_memory_cap_is_a_memory_error_in_the_child():
    capped = children.run(f"{TARGET}:allocate", [512], timeout=60, max_memory=256 * 2**20)
    assert capped.returncode == 1 and "MemoryError" in capped.stderr
    free = children.run(f"{TARGET}:allocate", [64], timeout=60)
    assert free.returncode == 0 and free.stdout == f"{64 * 2**20}\n"


def test_end_group_leaves_other_groups_alone():
    """Ending a child's group ends that group only: a process of another group lives on."""
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        with children.start(f"{TARGET}:allocate", [1]) as child:
            child.process.wait(60)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
