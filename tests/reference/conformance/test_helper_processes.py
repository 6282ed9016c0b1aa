"""Every process a checked implementation starts ends when its sandbox child ends: a helper it starts and forgets
(``subprocess.Popen``, ``multiprocessing.Process``), one in a session of its own (``start_new_session``), a daemon
that double-forks away from it, and those of a function that ends its own process (``os._exit``) — none outlives
``conform`` (the issue: ``Popen(["sleep", "300"])`` in a session of its own did)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formal.tools.cli import main
from tests.reference.verification.process_tree import ended, needs_proc, running

HELPERS = '''import multiprocessing, os, subprocess, sys, time
sys.path.insert(0, {examples!r})
from attention import attention as _attention

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def _record(pid):
    with open({pids!r}, "a") as out:
        out.write(f"{{pid}}\\n")


def _sleep():
    time.sleep(600)


def _started(how):
    if how == "popen":
        _record(subprocess.Popen(SLEEPER).pid)
    elif how == "session":
        _record(subprocess.Popen(SLEEPER, start_new_session=True).pid)
    elif how == "multiprocessing":
        process = multiprocessing.Process(target=_sleep, daemon=False)
        process.start()
        _record(process.pid)
    elif how == "daemon":                      # fork, setsid, fork again, the middle one exits: re-parented
        middle = os.fork()
        if middle == 0:
            os.setsid()
            grandchild = os.fork()
            if grandchild == 0:
                time.sleep(600)
                os._exit(0)
            _record(grandchild)
            os._exit(0)
        os.waitpid(middle, 0)


def attention(X, Z, mask, W_q, W_k, W_v, b_q, b_k, b_v):
    _started({how!r})
    if {exits!r}:
        os._exit(3)
    return _attention(X, Z, mask, W_q, W_k, W_v, b_q, b_k, b_v)
'''
EXAMPLES = str(Path(__file__).resolve().parents[3] / "examples")


def _conform(tmp_path, how, *, exits=False, extra=()):
    pids = tmp_path / "pids"
    (tmp_path / "helpers.py").write_text(HELPERS.format(examples=EXAMPLES, pids=str(pids), how=how, exits=exits))
    status = main(["conform", str(tmp_path / "helpers.py") + ":attention", "--algorithm", "attention",
                   "--examples", "2", *extra])
    started = [int(p) for p in pids.read_text().split()] if pids.exists() else []
    return status, started


@needs_proc
@pytest.mark.parametrize("how", ["popen", "session", "multiprocessing", "daemon"])
def test_no_helper_outlives_conform(tmp_path, capsys, how):
    status, started = _conform(tmp_path, how)
    assert status == 0, capsys.readouterr()
    assert started, "the function started no helper"
    assert ended(started, within=5.0), f"{[p for p in started if running(p)]} outlived conform"


@needs_proc
def test_the_helpers_of_a_function_that_ends_its_process_end_too(tmp_path, capsys):
    """``os._exit`` in the function: its process is gone before anything asks it to end; what it started in a
    session of its own is ended by the child's supervisor."""
    status, started = _conform(tmp_path, "session", exits=True)
    assert status == 1 and "FAIL runs" in capsys.readouterr().out
    assert started and ended(started, within=5.0), f"{[p for p in started if running(p)]} outlived conform"


@needs_proc
def test_no_helper_outlives_identify(tmp_path, capsys):
    status, started = _conform(tmp_path, "daemon", extra=("--identify", "--budget", "2", "--max-size", "3"))
    assert status in (0, 1) and started
    assert ended(started, within=5.0), f"{[p for p in started if running(p)]} outlived conform --identify"
