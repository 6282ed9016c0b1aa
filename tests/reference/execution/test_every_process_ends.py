"""Ctrl-C ends a command's whole process tree promptly — its workers, their children, and what those started —
whichever command (``prove --mutants``, ``verify``, ``verify --mutants``, ``conform``, ``check --jobs``) and
whichever executor; and a child ends with everything below it when the process that started it is gone, even
when the function it runs is stuck in C code (the issue: ``prove --mutants`` ran on ~45 s after Ctrl-C, a bug's
planting finishing on the workers of a running Dask cluster; a child's watch thread cannot run while its function
holds the interpreter)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reference.execution import children
from tests.reference.verification.process_tree import (
    ctrl_c,
    descendants,
    ended,
    interruptible,
    needs_proc,
    running,
    written_pids,
)
from tests.tiers import slow

REPO = Path(__file__).resolve().parents[3]
#: Seconds within which everything a run started must be gone after Ctrl-C.
PROMPTLY = 10.0




@needs_proc
def test_a_child_stuck_in_c_code_ends_with_all_below_it_when_its_parent_is_gone(tmp_path):
    """The parent of a child whose function sums a range in C (no thread of it can run meanwhile) is killed: the
    child and the helper it started in a session of its own end at once — its supervisor, not a thread of its
    own, watches the parent."""
    pid_file = tmp_path / "pids"
    with children.start("tests.reference.execution.stuck:starts_stuck", [str(pid_file)]) as middle:
        pids = written_pids(pid_file)
        assert all(running(p) for p in pids)
        os.kill(middle.pid, signal.SIGKILL)
        middle.process.wait(10)
        assert ended(pids, within=5.0), f"{[p for p in pids if running(p)]} outlived the process that started them"


@needs_proc
def test_ending_a_child_ends_a_helper_in_a_session_of_its_own(tmp_path):
    """:meth:`Child.end` kills below the child, not only its group: a helper that called ``setsid`` is ended too."""
    pid_file = tmp_path / "pids"
    with children.start("tests.reference.execution.stuck:stuck", [str(pid_file)]):
        pids = written_pids(pid_file)
        assert os.getsid(pids[1]) != os.getsid(pids[0])
    assert ended(pids, within=5.0)


@needs_proc
def test_a_child_ended_by_a_signal_ends_all_below_it_first(tmp_path):
    """SIGTERM to the child (a kill of its pid from outside, not :meth:`Child.end`): what it started is ended too,
    and the child dies of that signal, as the caller sees it."""
    pid_file = tmp_path / "pids"
    with children.start("tests.reference.execution.targets:spawn_and_sleep", [str(pid_file)]) as child:
        pids = written_pids(pid_file)
        os.kill(child.pid, signal.SIGTERM)
        assert child.process.wait(10) == -signal.SIGTERM
        assert ended(pids, within=5.0), f"{[p for p in pids if running(p)]} outlived the child"


@slow
@needs_proc
def test_a_cancelled_run_ends_its_childrens_work_on_a_running_cluster(tmp_path):
    """Ctrl-C during a run on a cluster this process did not start: the futures are cancelled, and each worker
    ends the children the run's tasks started — the workers themselves run on."""
    distributed = pytest.importorskip("distributed")
    import logging
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=":0",
                                  silence_logs=logging.CRITICAL) as cluster:
        markers = [tmp_path / "a", tmp_path / "b"]
        driver = ("import sys\nfrom reference.execution.executors import run_shown\n"
                  "from tests.reference.execution.stuck import SleepsInChild\n"
                  f"found = run_shown([SleepsInChild({str(markers[0])!r}), SleepsInChild({str(markers[1])!r})], "
                  f"'sleeping', None, scheduler=('address', {cluster.scheduler_address!r}))\n"
                  "print(found)\n")
        process = subprocess.Popen([sys.executable, "-c", driver], cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True,
                                   preexec_fn=interruptible, env={**os.environ, "PYTHONPATH": str(REPO)})
        pids = []
        out, err = ctrl_c(process, lambda: all(m.exists() and len(m.read_text().split()) == 2 for m in markers),
                          settle=1)
        pids = [p for m in markers for p in written_pids(m)]
        assert process.returncode == 0 and out.strip() == "[None, None]", err
        assert ended(pids, within=PROMPTLY), f"{[p for p in pids if running(p)]} ran on after the run was cancelled"
        workers = cluster.scheduler_info["workers"]
        assert len(workers) == 1


#: Each command, run until it has started processes of its own, then Ctrl-C.
COMMANDS = {
    "prove --mutants": (["prove", "--mutants", "--jobs", "2"], 4),
    "verify --mutants": (["verify", "--mutants", "--jobs", "2", "--quiet"], 2),
    "verify": (["verify", "--variants", "all", "--only", "dloss", "--jobs", "2", "--quiet"], 2),
    "conform": (["conform", "hangs.py:attention", "--algorithm", "attention", "--timeout", "600"], 3),
    "check --jobs": (["check", "--catalogue", "--jobs", "2"], 2),
}
HANGS = '''import subprocess, sys, time

def attention(X, Z, mask, W_q, W_k, W_v, b_q, b_k, b_v):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    time.sleep(600)
'''


@slow
@needs_proc
@pytest.mark.parametrize("name", list(COMMANDS))
def test_ctrl_c_ends_every_process_a_command_started(tmp_path, name):
    argv, started = COMMANDS[name]
    (tmp_path / "hangs.py").write_text(HANGS)
    process = subprocess.Popen([sys.executable, "-m", "formal", *argv], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=interruptible,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
    seen = set()

    def busy():
        seen.update(descendants(process.pid))
        return len([p for p in seen if running(p)]) >= started
    begun = time.monotonic()
    out, err = ctrl_c(process, busy, settle=2, within=120)
    seen.update(descendants(process.pid) if running(process.pid) else [])
    assert process.returncode == 130, err
    assert "Traceback" not in err and "Traceback" not in out
    assert ended(seen, within=PROMPTLY), f"{[p for p in seen if running(p)]} ran on after Ctrl-C"
    assert time.monotonic() - begun < 300
