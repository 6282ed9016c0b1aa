"""The executors of a campaign (:mod:`reference.checking.executors`): ``--jobs 1``, ``--jobs 2`` and a Dask
``LocalCluster`` of 2 processes give the same report; a worker killed mid-run loses no row; a task that kills
every worker it meets is a FAIL with the cause; a bug escaping a task is raised; Ctrl-C (SIGINT to the
process) prints the partial report, exit 130, and leaves no worker running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reference.checking.executors import run_tasks
from tests.reference.checking.campaign_tasks import Kills, Raises, Square
from tests.tiers import slow

pytest.importorskip("torch")
distributed = pytest.importorskip("distributed")

REPO = Path(__file__).resolve().parents[3]
CAMPAIGN = ["verify", "--variants", "all", "--only", "attention,single_query_attention"]
EXECUTORS = [["--jobs", "1"], ["--jobs", "2"], ["--scheduler", "local:2"]]


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _verify(tmp_path, argv, name):
    path = tmp_path / f"{name}.json"
    done = subprocess.run([sys.executable, "-m", "formal", *argv, "--json", str(path), "--quiet"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=_env())
    return done, path


def _without_seconds(path) -> dict:
    report = json.loads(path.read_text())
    report.pop("seconds")
    return report


@slow
def test_every_executor_gives_the_same_report(tmp_path):
    """The JSON report (all but the seconds taken) and the table (all but the seconds) of a 70-task campaign
    are the same from this process, two worker processes and a Dask cluster of two."""
    reports, tables = [], []
    for k, executor in enumerate(EXECUTORS):
        done, path = _verify(tmp_path, CAMPAIGN + executor, f"run{k}")
        assert done.returncode == 0, done.stderr
        reports.append(_without_seconds(path))
        tables.append(done.stdout.rsplit(",", 1)[0])
    assert reports[0]["tasks"] == reports[0]["done"] == 70
    assert reports[0] == reports[1] == reports[2]
    assert tables[0] == tables[1] == tables[2]


def _children(pid) -> list:
    """The process ids of ``pid``'s children, whichever of its threads started them (Dask's from its own)."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def _workers(pid) -> list:
    """The process ids of ``pid``'s spawned worker processes."""
    try:
        return [c for c in _children(pid) if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]
    except OSError:
        return []


def _running(pid) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _interruptible():
    """SIGINT as a terminal's foreground process has it (a background job of a non-interactive shell inherits it
    ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


needs_proc = pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
                                reason="reads the process tree from /proc")


def _started(tmp_path, argv, name):
    path = tmp_path / f"{name}.json"
    process = subprocess.Popen([sys.executable, "-m", "formal", *argv, "--json", str(path), "--quiet"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                               start_new_session=True, preexec_fn=_interruptible)
    deadline = time.monotonic() + 60
    while len(_workers(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    return process, path


@slow
@needs_proc
@pytest.mark.parametrize("executor", EXECUTORS[1:], ids=["jobs", "dask"])
def test_a_worker_killed_mid_run_loses_no_row(tmp_path, executor):
    """SIGKILL to one worker while the campaign runs: its task runs again elsewhere, and the report is the one
    a run without the kill gives, exit 0."""
    done, path = _verify(tmp_path, CAMPAIGN + ["--jobs", "1"], "whole")
    assert done.returncode == 0, done.stderr
    process, killed_path = _started(tmp_path, CAMPAIGN + executor, "killed")
    try:
        workers = _workers(process.pid)
        assert len(workers) == 2, "the workers did not start"
        time.sleep(4)  # they import torch, then check
        os.kill(workers[0], signal.SIGKILL)
        out, err = process.communicate(timeout=240)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, err
    assert _without_seconds(killed_path) == _without_seconds(path)


@slow
@pytest.mark.parametrize("how", [{"jobs": 2}, {"scheduler": ("local", 2)}], ids=["jobs", "dask"])
def test_a_task_that_kills_every_worker_is_a_fail_with_its_cause(tmp_path, how):
    """A task killing its worker once is run again and gives its results; a task killing every worker is split
    into its parts, the innocent parts give theirs, and the guilty one gives its FAIL naming the cause; the
    other tasks are untouched, in order."""
    tasks = [Square(n) for n in range(4)] + [Kills(str(tmp_path / "once"), once=True),
                                             Kills(str(tmp_path / "always"), parts=3)]
    results = run_tasks(tasks, **how)
    assert results[:4] == [[0], [1], [4], [9]]
    assert results[4] == [("ran", str(tmp_path / "once"))]
    (died, marker, cause), one, four = results[5]
    assert (died, marker, one, four) == ("died", str(tmp_path / "always"), 1, 4)
    assert "killed each of the 3" in cause


@slow
@pytest.mark.parametrize("how", [{"jobs": 2}, {"scheduler": ("local", 2)}], ids=["jobs", "dask"])
def test_a_bug_escaping_a_task_is_raised(how):
    with pytest.raises(RuntimeError, match="planted"):
        run_tasks([Square(1), Raises(), Square(2)], **how)


def _descendants(pid) -> list:
    out = []
    for child in _children(pid) if _running(pid) else []:
        out += [child, *_descendants(child)]
    return out


@slow
@needs_proc
@pytest.mark.parametrize("executor", EXECUTORS[1:], ids=["jobs", "dask"])
def test_ctrl_c_prints_the_partial_report_and_leaves_no_worker(tmp_path, executor):
    """SIGINT to the process alone mid-campaign: the rows finished so far and a line saying the report is
    partial, exit 130, no JSON, and every process it started is gone."""
    process, path = _started(tmp_path, ["verify", "--variants", "all", "--only", "dloss", "--profile", "thorough",
                                        *executor], "interrupted")
    try:
        time.sleep(6)
        started = _descendants(process.pid)
        assert len(started) >= 2
        os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert "interrupted: " in out and " tasks finished — a partial report" in out
    assert err.splitlines()[-1].startswith("formal-transformers: verify interrupted after ")
    assert "Traceback" not in err and not path.exists()
    deadline = time.monotonic() + 15
    while any(_running(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(p) for p in started)
