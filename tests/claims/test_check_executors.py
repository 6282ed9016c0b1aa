"""``check --jobs N`` and ``check --scheduler local:N`` (:mod:`formal.tools.claims.jobs`): the property and
implementation claims decided in worker processes or on a Dask cluster give the report (text and JSON) and the
exit status of a run in this process; ``--timeout`` bounds each claim there too; bad values, both flags, a time
budget with either, or a missing entry point are one line, exit 2; Ctrl-C prints the verdicts so far, exit 130."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from formal.tools.claims import jobs as claim_tasks
from formal.tools.claims.claim import load
from formal.tools.claims.decide import decide
from formal.tools.claims.jobs import Claims, decide_elsewhere
from formal.tools.cli import main
from formal.tools.commands.check import MAX_JOBS
from formal.tools.commands.verify import MAX_JOBS as VERIFY_MAX_JOBS
from tests.reference.verification.process_tree import ended, interruptible, needs_proc
from tests.tiers import slow

REPO = Path(__file__).resolve().parents[2]
EXECUTORS_ARGV = [[], ["--jobs", "2"], ["--scheduler", "local:2"]]

CLAIMS = """
[[claim]]
id = "causal-attention"
algorithm = "attention"
mask = "causal"
property = "causal"

[[claim]]
id = "gpt2-params"
model = "gpt2"
quantity = "params.total"
approx = "124M"

[[claim]]
id = "causal-not-equivariant"
algorithm = "attention"
mask = "causal"
property = "permutation_equivariant"
expect = "fails"

[[claim]]
id = "my-attention"
algorithm = "attention"
implementation = "impl.py:attention"
expect = "holds"

[[claim]]
id = "loss-invariant"
algorithm = "show_attend_tell_loss"
property = "permutation_invariant"

[[claim]]
id = "mha-equivariant"
algorithm = "mhattention"
property = "permutation_equivariant"
sizes = {H = 2}

[[claim]]
id = "no-such-size"
algorithm = "attention"
property = "causal"
sizes = {zz = 3}
"""

#: A property claim that takes seconds (64 layers of 64-wide blocks, 20 examples): over a 1 s --timeout.
LONG = """
[[claim]]
id = "deep-causal"
algorithm = "dtransformer"
property = "causal"
sizes = {L = 64, ell = 64, ell_max = 64, d_e = 64, d_mlp = 64, H = 8}
"""


def _claims_file(tmp_path, text=CLAIMS, implementation="attention.py") -> Path:
    shutil.copy(REPO / "examples" / implementation, tmp_path / "impl.py")
    path = tmp_path / "claims.toml"
    path.write_text(text)
    return path


def _check(tmp_path, argv, timeout=300):
    return subprocess.run([sys.executable, "-m", "formal", "check", *argv], cwd=tmp_path, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO)})


def _last_line(err: str) -> str:
    return err.strip().splitlines()[-1]


# ------------------------------------------------------------------------------------------------ same report
@slow
def test_every_executor_gives_the_same_report(tmp_path):
    """The JSON and the text report (with every reason) and the exit status are the same from this process, two
    worker processes and a Dask cluster of two — the claims file named relative to the working directory, its
    implementation relative to the file."""
    pytest.importorskip("distributed")
    _claims_file(tmp_path)
    runs = []
    for executor in EXECUTORS_ARGV:
        as_json = _check(tmp_path, ["claims.toml", "--json", *executor])
        as_text = _check(tmp_path, ["claims.toml", "--verbose", *executor])
        runs.append((as_json.returncode, as_json.stdout, as_text.returncode, as_text.stdout,
                     _last_line(as_text.stderr)))
    assert runs[0] == runs[1] == runs[2]
    status, report, _, text, error = runs[0]
    assert status == 2 and "claim 'no-such-size' in claims.toml is invalid" in error
    assert '"file": "claims.toml"' in report and re.search(r"^my-attention +holds \(as expected\)", text, re.M)
    assert "7 claims: 5 hold, 1 fail, 0 undecided, 1 invalid; 2 of 2 as expected" in text


@slow
def test_the_timeout_bounds_each_claim_in_the_workers(tmp_path):
    """A property claim that takes seconds is invalid under --timeout 1 wherever it runs: in a worker process
    (on its main thread, SIGALRM) as on a Dask worker (a thread of its own), as here."""
    pytest.importorskip("distributed")
    _claims_file(tmp_path, LONG)
    runs = [_check(tmp_path, ["claims.toml", "--json", "--timeout", "1", *executor]) for executor in EXECUTORS_ARGV]
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    assert all(r.returncode == 2 for r in runs)
    assert "the claim took more than 1 s to decide (raise the limit with --timeout)" in runs[0].stdout


def test_the_executors_give_the_verdicts_decide_gives_here(tmp_path, monkeypatch):
    """decide_elsewhere (the entry point) with one job runs the tasks in this process: the verdicts of decide,
    in order, each naming the claim as read (its file relative, as given)."""
    _claims_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    claims = [c for c in load("claims.toml") if c.kind == "implementation" or c.assertion[0] == "property"]
    verdicts = decide_elsewhere(claims, timeout=30.0)
    assert [v.claim for v in verdicts] == claims and all(v.claim is c for v, c in zip(verdicts, claims))
    assert [v.as_json() for v in verdicts] == [decide(c, timeout=30.0).as_json() for c in claims]
    assert decide_elsewhere([], scheduler="local:2") == []      # nothing to send: no cluster started


# ------------------------------------------------------------------------------------------------ the task
def test_a_claims_task_pickles_and_says_why_a_claim_was_not_decided(tmp_path):
    _claims_file(tmp_path)
    claim = load(tmp_path / "claims.toml")[0]
    task = Claims(claim, 30.0, 1.0)
    assert pickle.loads(pickle.dumps(task)) == task and task.label == "causal-attention"
    [verdict] = task.run()
    assert pickle.loads(pickle.dumps(verdict)) == verdict and verdict.verdict == "holds"
    [died] = task.died("the task killed each of the 3 worker processes it ran on (the last killed by SIGKILL)")
    assert (died.verdict, died.claimed, died.reached) == ("undecided", "property causal", True)
    assert died.reason == ("not decided: the task killed each of the 3 worker processes it ran on (the last "
                           "killed by SIGKILL)")
    assert task.split() == []


def _in_a_thread(function):
    found = []
    worker = threading.Thread(target=lambda: found.append(function()))
    worker.start()
    worker.join(30)
    return found[0]


def test_off_the_main_thread_a_claim_is_decided_in_a_child(tmp_path):
    """A Dask worker runs a task on a thread of its own, where SIGALRM cannot reach: the claim is decided in a
    child process instead (on its main thread, where decide's limit holds), with the verdict decide gives here."""
    _claims_file(tmp_path)
    claim = load(tmp_path / "claims.toml")[0]
    verdict = _in_a_thread(lambda: claim_tasks._decided(claim, 30.0))
    assert verdict == decide(claim, timeout=30.0)


@needs_proc
def test_a_child_past_the_limit_is_ended_with_all_it_started(tmp_path, monkeypatch):
    """A child that outlives the claim's limit (and the start's grace) is ended with its whole process group —
    here a grandchild it started too — and the claim is invalid as decide makes one that takes too long; a
    child that dies leaves the claim undecided, saying how.  No thread is interrupted by an injected exception."""
    _claims_file(tmp_path)
    claim = load(tmp_path / "claims.toml")[0]
    monkeypatch.setattr(claim_tasks, "START_GRACE", 1.0)
    marker = tmp_path / "grandchild.pid"
    monkeypatch.setenv("FORMAL_TEST_GRANDCHILD_PID", str(marker))
    verdict = _in_a_thread(lambda: claim_tasks._in_child(claim, 0.5, target="tests.claims.children:forever"))
    assert verdict.verdict == "invalid"
    assert verdict.reason == "the claim took more than 0.5 s to decide (raise the limit with --timeout)"
    grandchild = int(marker.read_text())
    assert ended([grandchild], within=5.0), f"the grandchild {grandchild} outlived the child"
    verdict = _in_a_thread(lambda: claim_tasks._in_child(claim, 5.0, target="tests.claims.children:dies"))
    assert (verdict.verdict, verdict.reason) == ("undecided", "not decided: its process ended (exit status 3)")


# ------------------------------------------------------------------------------------------------ bad usage
@pytest.mark.parametrize("argv, message", [
    (["--jobs", "0"], "argument --jobs: 0 must be an integer from 1 to 32"),
    (["--jobs", "33"], "argument --jobs: 33 must be an integer from 1 to 32"),
    (["--scheduler", "local:0"], "--scheduler local:0: the workers must number 1 to 256"),
    (["--scheduler", "nowhere!"], "--scheduler 'nowhere!' is neither local:N"),
    (["--jobs", "2", "--scheduler", "local:2"], "give one of them"),
    (["--jobs", "2", "--time-budget", "60"], "--time-budget bounds a run in this process; with --jobs bound each"),
    (["--scheduler", "local:2", "--time-budget", "60"], "with --scheduler bound each claim with --timeout"),
])
def test_bad_values_are_one_line_exit_2(tmp_path, capsys, argv, message):
    path = _claims_file(tmp_path)
    assert main(["check", str(path), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""                       # refused before any claim is decided
    assert message in captured.err and captured.err.count("\n") == 1, captured.err


def test_the_limits_are_verifys():
    assert MAX_JOBS == VERIFY_MAX_JOBS


# ------------------------------------------------------------------------------------------------ Ctrl-C
SLOW_IMPLEMENTATION = '''import time

from impl import attention as _attention


def attention(X, Z, mask, W_q, W_k, W_v, b_q, b_k, b_v):
    time.sleep(0.5)
    return _attention(X, Z, mask, W_q, W_k, W_v, b_q, b_k, b_v)
'''


@slow
@pytest.mark.parametrize("executor", EXECUTORS_ARGV, ids=["here", "jobs", "dask"])
def test_ctrl_c_prints_the_verdicts_so_far(tmp_path, executor):
    """SIGINT to the process mid-run: the report with the claims not decided undecided (not reached:
    interrupted), one line on stderr, exit 130, no traceback."""
    if "--scheduler" in executor:
        pytest.importorskip("distributed")
    _claims_file(tmp_path, CLAIMS.replace("no-such-size", "slow-one").replace("sizes = {zz = 3}", "")
                 + '\n[[claim]]\nid = "slow"\nalgorithm = "attention"\nimplementation = "slow.py:attention"\n')
    (tmp_path / "slow.py").write_text(SLOW_IMPLEMENTATION)
    process = subprocess.Popen([sys.executable, "-m", "formal", "check", "claims.toml", *executor], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=interruptible, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        time.sleep(8)           # the slow claim calls its function 30 times, 0.5 s each
        os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert "slow: not reached: interrupted" in out and "not reached (interrupted)" in out
    assert _last_line(err).startswith("formal-transformers: check interrupted after ")
    assert _last_line(err).endswith(" of 8 claims; the report above is partial")
    assert "Traceback" not in err
