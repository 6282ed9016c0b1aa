"""The executors of a campaign (:mod:`reference.execution.executors`): ``--jobs 1``, ``--jobs 2`` and a Dask
``LocalCluster`` of 2 processes give the same report; a worker killed mid-run loses no row; a task that kills
every worker it meets is a FAIL with the cause; a bug escaping a task is raised; Ctrl-C (SIGINT to the
process) prints the partial report, exit 130, and leaves no worker running."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from formal.tools.cli import main
from reference.execution.executors import run_tasks
from tests.reference.verification.campaign_tasks import Grows, Kills, Overruns, Raises, Square, Threads
from tests.reference.verification.process_tree import descendants, interruptible, needs_proc, running, workers
from tests.tiers import slow


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:   # a finder that refuses it (the tests without torch install one)
        return False


#: Marks the tests that run verify, whose checks run the torch reference (the others run tasks of their own).
needs_torch = pytest.mark.skipif(not _installed("torch"), reason="verify runs the torch reference")
#: Marks the tests that start a Dask cluster (the dask extra): skipped one by one without it — a module-level
#: skip would count as skipped in every run that deselects them, the GPU check's included.
needs_dask = pytest.mark.skipif(not _installed("distributed"),
                                reason="needs dask.distributed (pip install 'formal-transformers[dask]')")

REPO = Path(__file__).resolve().parents[3]
#: Every variant of attention's paper options (today's groups — rotation, QK-norm, cap — fixed off: 60 tasks, not
#: 127; a fixed option must be one of every algorithm --only names, so single query attention is left out).
CAMPAIGN = ["verify", "--variants", "rope=none,qk_norm=none,score_cap=none", "--only", "attention"]
EXECUTORS = [["--jobs", "1"], ["--jobs", "2"], ["--scheduler", "local:2"]]
#: The executors that start workers, as parameters: the local processes, and Dask's (where it is installed).
STARTED = [pytest.param(["--jobs", "2"], id="jobs"), pytest.param(["--scheduler", "local:2"], id="dask",
                                                                  marks=needs_dask)]
HOW = [pytest.param({"jobs": 2}, id="jobs"), pytest.param({"scheduler": ("local", 2)}, id="dask", marks=needs_dask)]


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
@needs_torch
@needs_dask
def test_every_executor_gives_the_same_report(tmp_path):
    """The JSON report (all but the seconds taken) and the table (all but the seconds) of a 60-task campaign
    are the same from this process, two worker processes and a Dask cluster of two."""
    reports, tables = [], []
    for k, executor in enumerate(EXECUTORS):
        done, path = _verify(tmp_path, CAMPAIGN + executor, f"run{k}")
        assert done.returncode == 0, done.stderr
        reports.append(_without_seconds(path))
        tables.append(done.stdout.rsplit(",", 1)[0])
    assert reports[0]["tasks"] == reports[0]["done"]
    assert len({json.dumps(r["variant"], sort_keys=True) for r in reports[0]["rows"]}) == 60
    assert reports[0] == reports[1] == reports[2]
    assert tables[0] == tables[1] == tables[2]


def _started(tmp_path, argv, name):
    path = tmp_path / f"{name}.json"
    process = subprocess.Popen([sys.executable, "-m", "formal", *argv, "--json", str(path), "--quiet"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                               start_new_session=True, preexec_fn=interruptible)
    deadline = time.monotonic() + 60
    while len(workers(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    return process, path


@slow
@needs_torch
@needs_proc
@pytest.mark.parametrize("executor", STARTED)
def test_a_worker_killed_mid_run_loses_no_row(tmp_path, executor):
    """SIGKILL to one worker while the campaign runs: its task runs again elsewhere, and the report is the one
    a run without the kill gives, exit 0."""
    done, path = _verify(tmp_path, CAMPAIGN + ["--jobs", "1"], "whole")
    assert done.returncode == 0, done.stderr
    process, killed_path = _started(tmp_path, CAMPAIGN + executor, "killed")
    try:
        started = workers(process.pid)
        assert len(started) == 2, "the workers did not start"
        time.sleep(4)  # they import torch, then check
        os.kill(started[0], signal.SIGKILL)
        out, err = process.communicate(timeout=240)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, err
    assert _without_seconds(killed_path) == _without_seconds(path)


@slow
@pytest.mark.parametrize("how", HOW)
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
    assert "the 3 worker" in cause and ("killed each of" in cause or "died running it" in cause), cause


@needs_proc
def test_a_task_past_its_limit_ends_its_worker_and_all_it_started(tmp_path):
    """A task that runs past its time limit in a worker process: the worker is ended, and with it the child the
    task started (and that child's own child: it watches the worker); the task is split, its overrunning part a
    FAIL saying so, the others' results in order — never run again, never a hang."""
    marker = tmp_path / "pids"
    tasks = [Square(2), Overruns(str(marker), parts=3), Square(3)]
    begun = time.monotonic()
    results = run_tasks(tasks, jobs=2)
    assert time.monotonic() - begun < 60
    assert results[0] == [4] and results[2] == [9]
    assert results[1] == [("died", "the task ran past its limit of 1 s; its worker process was ended"), 1, 4]
    pids = [int(p) for p in marker.read_text().split()]
    deadline = time.monotonic() + 10
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(running(p) for p in pids), "the task's child outlived its worker"


@needs_proc
def test_a_task_past_its_memory_cap_ends_its_worker():
    """A task whose worker grows past the task's memory cap (its resident memory, looked at every 0.2 s): the
    worker is ended and the task's FAIL says so, in seconds, not after its 30 s of work; the others' results stand."""
    begun = time.monotonic()
    results = run_tasks([Square(2), Grows(), Square(3)], jobs=2)
    assert time.monotonic() - begun < 25
    assert results == [[4], [("died", "the task took more than its 200 MiB of memory; its worker process was ended")],
                       [9]]


@slow
@pytest.mark.parametrize("how", HOW)
def test_a_bug_escaping_a_task_is_raised(how):
    """An exception escaping a task is raised here, as in one process."""
    with pytest.raises(RuntimeError, match="planted"):
        run_tasks([Square(1), Raises(), Square(2)], **how)


@slow
@needs_torch
@pytest.mark.parametrize("how", HOW)
def test_workers_compute_on_one_thread(how):
    """A worker's torch computes on one thread (N workers × 1: the tensors are too small to gain from more)."""
    assert run_tasks([Threads(), Threads()], **how) == [[1], [1]]


@slow
@needs_torch
@needs_proc
@pytest.mark.parametrize("executor", STARTED)
def test_ctrl_c_prints_the_partial_report_and_leaves_no_worker(tmp_path, executor):
    """SIGINT to the process group mid-campaign, as a terminal sends it: the rows finished so far and a line
    saying the report is partial, exit 130, no JSON, no traceback (the workers ignore the signal: the parent
    ends them), and every process it started is gone."""
    process, path = _started(tmp_path, ["verify", "--variants", "all", "--only", "dloss", "--profile", "thorough",
                                        *executor], "interrupted")
    try:
        time.sleep(6)
        started = descendants(process.pid)
        assert len(started) >= 2
        os.killpg(process.pid, signal.SIGINT)   # as a terminal sends it: to every process of the group
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert "interrupted: " in out and " tasks finished — a partial report" in out
    assert err.splitlines()[-1].startswith("formal-transformers: verify interrupted after ")
    assert "Traceback" not in err and not path.exists()
    deadline = time.monotonic() + 15
    while any(running(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(running(p) for p in started)


@slow
@needs_torch
@needs_dask
def test_a_running_scheduler_takes_the_campaign(tmp_path, capsys):
    """``--scheduler ADDRESS``: a cluster started beforehand (as `dask scheduler` and `dask worker` would be)
    runs the campaign, with the report of this process; the cluster is left running."""
    import logging

    import distributed
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.CRITICAL) as cluster:
        reports = []
        for k, executor in enumerate((["--jobs", "1"], ["--scheduler", cluster.scheduler_address])):
            path = tmp_path / f"r{k}.json"
            assert main(["verify", "--variants", "bias=false,score=dot,rope=none,qk_norm=none,score_cap=none",
                         "--only", "attention", *executor,
                         "--json", str(path), "--quiet"]) == 0
            reports.append(_without_seconds(path))
        assert reports[0] == reports[1] and reports[0]["done"] == reports[0]["tasks"]
        assert len({json.dumps(r["variant"]) for r in reports[0]["rows"]}) == 6
        assert len(cluster.scheduler_info["workers"]) == 1


@slow
@needs_torch
@needs_dask
def test_a_scheduler_without_workers_is_one_line(capsys, monkeypatch):
    """A scheduler no worker has joined: one line saying so (after waiting), exit 2 — never a hang."""
    import distributed

    from reference.execution import clusters
    monkeypatch.setattr(clusters, "CONNECT_TIMEOUT", 2)
    with distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as cluster:
        assert main(["verify", "--only", "attention", "--variants", "bias=true", "--scheduler",
                     cluster.scheduler_address, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "has no worker" in err


@slow
@needs_proc
def test_a_sandbox_whose_parent_is_killed_ends(tmp_path):
    """conform's worker (the user's function in a fresh interpreter of its own session) ends when the process
    that started it is killed — a verify worker ended by Ctrl-C, a Dask worker closed — instead of running the
    function, a hang included, for ever."""
    (tmp_path / "slow.py").write_text("import time\n\ndef f(x):\n    time.sleep(3600)\n")
    driver = ("import threading, time\nfrom reference.conformance.sandbox import Isolated\n"
              "isolated = Isolated('slow.py:f', timeout=None)\n"
              "threading.Thread(target=isolated.call, args=({'x': 1}, ('Y',)), daemon=True).start()\n"
              "time.sleep(1)\nprint(isolated._process.pid, flush=True)\ntime.sleep(3600)\n")
    process = subprocess.Popen([sys.executable, "-c", driver], cwd=tmp_path, stdout=subprocess.PIPE, text=True,
                               env=_env())
    try:
        sandbox = int(process.stdout.readline())
        assert running(sandbox)
        process.kill()
        process.wait(10)
        deadline = time.monotonic() + 10
        while running(sandbox) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not running(sandbox)
    finally:
        if process.poll() is None:
            process.kill()
