"""`formal-transformers verify --jobs N`: worker processes give the report of one process (rows, order, JSON),
a planted bug still fails with exit 1, a worker that dies fails the check it held, Ctrl-C ends the workers
with one line, and bad values of --jobs are one usage line, exit 2.

Bugs are planted in the workers the way ``multiprocessing`` allows: a driver script is the main module, and
each ``spawn`` worker runs it again as ``__mp_main__`` before it takes any check."""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from formal.sampling.examples import EXAMPLE_ALGORITHMS
from formal.tools.cli import main
from formal.tools.commands.verify import MAX_JOBS
from tests.reference.verification.process_tree import interruptible, needs_proc, running, workers
from tests.tiers import slow

torch = pytest.importorskip("torch")  # verify runs the torch reference
from reference.verification import checks, estimates as costs  # noqa: E402 - the checks run the torch reference

SUBSET = "attention,layer_norm,dloss"  # a float64, sdpa, float32/bfloat16, FLOPs, params and SGD-step check
REPO = Path(__file__).resolve().parents[3]

UNBIASED = """
import torch
from reference.model import normalization

def unbiased(e, gamma, beta=None, *, norm="layer", eps=0.0):
    centred = e - e.mean(-1, keepdim=True)
    return centred / torch.sqrt(centred.square().sum(-1, keepdim=True) / (e.shape[-1] - 1) + eps) * gamma + beta

normalization.layer_norm = unbiased
"""

DIE = """
import os, signal
import torch
from reference.model import normalization

correct = normalization.layer_norm

def die(e, *args, **kwargs):
    if e.dtype == torch.bfloat16:
        os.kill(os.getpid(), signal.SIGKILL)
    return correct(e, *args, **kwargs)

if __name__ == "__mp_main__":  # in the workers only
    normalization.layer_norm = die
"""


def _drive(tmp_path, plant, argv, timeout=240, env=None):
    """Run ``python driver.py``: the driver plants ``plant`` (in this process and, run again as
    ``__mp_main__``, in every worker), then runs the command line ``argv`` (in ``os.environ`` updated by ``env``,
    where None unsets)."""
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(plant) + textwrap.dedent(f"""
        if __name__ == "__main__":
            import sys
            from formal.tools.cli import main
            sys.exit(main({list(argv)!r}))
        """))
    return subprocess.run([sys.executable, str(driver)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=timeout, env=_environment({**(env or {}), "PYTHONPATH": str(REPO)}))


def _environment(changes) -> dict:
    return {k: v for k, v in {**os.environ, **changes}.items() if v is not None}


def _report(capsys, tmp_path, jobs):
    path = tmp_path / f"jobs{jobs}.json"
    status = main(["verify", "--only", SUBSET, "--device", "cpu", "--jobs", str(jobs), "--json", str(path)])
    table = capsys.readouterr().out.splitlines()
    data = json.loads(path.read_text())
    data.pop("seconds")
    return status, table[:-1], table[-1].rsplit(",", 1)[0], data


@slow
def test_two_jobs_give_the_report_of_one(capsys, tmp_path):
    """The same rows — names, examples, measured deviations, verdicts — in the same order, the table and the
    JSON report alike (all but the seconds taken)."""
    one, two = _report(capsys, tmp_path, 1), _report(capsys, tmp_path, 2)
    assert one[0] == two[0] == 0
    assert one == two
    rows = [(r["algorithm"], r["check"]) for r in one[3]["rows"]]
    assert rows == [(name, check) for name, check in checks.plan(SUBSET.split(","), torch.device("cpu"))]


@slow
def test_one_algorithm_s_checks_share_its_examples_and_the_spec_s_outputs(monkeypatch):
    """``rows`` (what a worker runs) gives the rows each check gives alone, on fresh examples, while it draws
    the examples once for all checks but the SGD step and runs the spec once per example."""
    measure, cpu = checks.Measure(torch.device("cpu")), torch.device("cpu")
    for name, its in checks.by_algorithm(checks.plan(SUBSET.split(","), cpu)):
        alone = [checks.row(name, check, "quick", 0, measure) for check in its]
        drawn, computed = [], []
        monkeypatch.setattr(checks, "examples", lambda *a, _f=checks.examples, **k: drawn.append(a) or _f(*a, **k))
        monkeypatch.setattr(checks.Measure, "spec", lambda m, ex, _f=checks.Measure.spec:
                            (id(ex) in m._spec or computed.append(ex)) and False or _f(m, ex))
        assert list(checks.rows(name, its, "quick", 0, measure)) == alone
        monkeypatch.undo()
        assert len(drawn) == 1
        rows = {r.check: r.examples for r in alone}
        # the spec's output computed once per example: the examples, and the precision cases the float32 rows add
        assert len(computed) == len({id(ex) for ex in computed}) == rows["float32"] >= rows["float64"]


@slow
def test_verify_s_sympy_keeps_every_derivation_unless_told_otherwise(tmp_path):
    """The workers (and a one-process run) import sympy with ``SYMPY_CACHE_SIZE`` at
    :data:`~reference.conformance.settings.SYMPY_CACHE_SIZE` (its 1,000 entries evict what the derivations of the
    variants expand again); a size the environment sets is kept."""
    from reference.execution.processes import SYMPY_CACHE_SIZE
    plant = """
        import atexit, os, sys
        def _cache():
            with open(f"cache-{os.getpid()}.txt", "w") as f:
                f.write(str(sys.modules["sympy.core.cache"].SYMPY_CACHE_SIZE))
        if __name__ == "__mp_main__":
            import sympy.core.cache
            _cache()
        else:
            atexit.register(_cache)
        """
    for jobs, given, want in (("2", None, SYMPY_CACHE_SIZE), ("1", None, SYMPY_CACHE_SIZE), ("2", "5000", 5000)):
        for old in tmp_path.glob("cache-*.txt"):
            old.unlink()
        done = _drive(tmp_path, plant, ["verify", "--only", "layer_norm,attention", "--device", "cpu", "--jobs",
                                        jobs, "--quiet"], env={"SYMPY_CACHE_SIZE": given})
        assert done.returncode == 0, done.stderr
        sizes = [p.read_text() for p in tmp_path.glob("cache-*.txt")]
        assert len(sizes) == (3 if jobs == "2" else 1) and set(sizes) == {str(want)}, (jobs, given, sizes)


@slow
def test_a_planted_bug_fails_in_theworkers(tmp_path):
    """The unbiased variance of test_verify, planted in every worker: layer_norm's float64 check fails, exit 1."""
    done = _drive(tmp_path, UNBIASED, ["verify", "--only", "layer_norm", "--device", "cpu", "--jobs", "2"])
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("layer_norm")]
    assert done.returncode == 1, done.stderr
    assert ["layer_norm", "float64"] == rows[0][:2] and "FAIL" in rows[0]
    assert "Traceback" not in done.stderr


@slow
def test_a_worker_that_dies_fails_the_check_it_held(tmp_path):
    """Every worker killed in the middle of layer_norm's bfloat16 check: the algorithm's task is tried on three
    workers, then its checks one by one; the bfloat16 check, tried on three more, fails with one line saying
    so, the others pass (new workers take what is left), exit 1, no traceback."""
    # single_query_attention: no layer norm inside (attention's QK-norm would call the planted one)
    done = _drive(tmp_path, DIE, ["verify", "--only", "layer_norm,single_query_attention", "--device", "cpu",
                                  "--jobs", "2"])
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith(("layer_norm ", "single_query_attention "))]
    failed = [line for line in rows if "FAIL" in line]
    assert len(rows) == len(checks.plan(["layer_norm", "single_query_attention"], torch.device("cpu")))
    assert len(failed) == 1, failed
    assert failed[0].split()[:2] == ["layer_norm", "bfloat16"]
    assert failed[0].endswith("FAIL  the task killed each of the 3 worker processes it ran on (the last killed by "
                              "SIGKILL)")


@slow
def test_a_worker_that_cannot_start_is_one_line(tmp_path):
    done = _drive(tmp_path, 'import os\nif __name__ == "__mp_main__":\n    os._exit(3)\n',
                  ["verify", "--only", "layer_norm,attention", "--device", "cpu", "--jobs", "2"])
    assert done.returncode == 1
    assert done.stdout == "" and done.stderr.splitlines() == [
        "formal-transformers: error: a verify worker process died before it could check anything (exit status "
        "3); --jobs 1 checks in this process"]


@slow
def test_an_exception_escaping_a_check_is_an_internal_error_as_in_one_process(tmp_path):
    plant = """
        from reference.verification import checks

        def broken(*args, **kwargs):
            raise RuntimeError("planted")

        checks.examples = broken
        """
    for jobs in ("1", "2"):
        done = _drive(tmp_path, plant, ["verify", "--only", "attention", "--device", "cpu", "--jobs", jobs])
        assert done.returncode == 1 and done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and "internal error: RuntimeError: planted" in done.stderr


@slow
@needs_proc
def test_ctrl_c_ends_the_workers_with_the_partial_report(tmp_path):
    """SIGINT to the whole process group, as a terminal sends it, while the workers check: exit 130, the rows
    finished so far and one line on stderr, no traceback, no JSON report, no worker left."""
    # the thorough profile: minutes of checks, so that the signal comes mid-check however fast the checks get
    process = subprocess.Popen([sys.executable, "-m", "formal", "verify", "--only", "dloss,eloss,edloss", "--device",
                                "cpu", "--jobs", "2", "--profile", "thorough", "--json", "report.json"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=interruptible)
    try:
        deadline = time.monotonic() + 60
        while len(workers(process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        started = workers(process.pid)
        assert len(started) == 2, "the workers did not start"
        time.sleep(3)  # they import torch, then check
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert len(err.splitlines()) == 1 and re.fullmatch(
        r"formal-transformers: verify interrupted after [012] of 3 tasks; the report above is partial; no JSON "
        r"written\n", err), err
    assert re.fullmatch(r"interrupted: [012] of 3 tasks finished — a partial report", out.splitlines()[-1])
    assert not (tmp_path / "report.json").exists()
    deadline = time.monotonic() + 10
    while any(running(w) for w in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(running(w) for w in started)


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "two", "", " ", str(MAX_JOBS + 1), "9" * 5000])
def test_bad_jobs_is_a_usage_error(capsys, value):
    assert main(["verify", "--device", "cpu", "--only", "attention", "--jobs", value]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "argument --jobs" in err and len(err) < 200


def _timeless(value):
    """A JSON report without its ``seconds`` anywhere (the run's, the reference part's, each outcome's)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "seconds"}
    return [_timeless(v) for v in value] if isinstance(value, list) else value


@slow
def test_mutants_in_workers_give_the_report_of_one_process(tmp_path):
    """``verify --mutants --jobs 2``: the kill-rate reports (conform's and the reference's) of one process, all but
    the seconds."""
    reports = []
    for jobs in ("1", "2"):
        path = tmp_path / f"mutants{jobs}.json"
        assert main(["verify", "--mutants", "--only", "attention,layer_norm", "--jobs", jobs, "--quiet", "--json",
                     str(path)]) == 0
        report = json.loads(path.read_text())
        reports.append(_timeless(report))
    assert reports[0] == reports[1] and reports[0]["done"] == reports[0]["tasks"] > 2


def test_every_algorithm_verify_checks_has_its_measured_costs():
    """Each task's cost is its algorithm's, measured and declared with its implementation in the catalogue, in
    every profile: an algorithm added without them fails here, by name (the dry run would estimate it at the
    median and say so)."""
    from reference.records import record
    missing = [(name, profile) for name in EXAMPLE_ALGORITHMS for profile in checks.PROFILES
               for variant in (False, True) if record(name).seconds(profile, variant) is None]
    assert not missing, f"no measured seconds declared for {missing}"


def test_an_unmeasured_algorithm_is_estimated_at_the_median_and_named(monkeypatch, capsys):
    from dataclasses import replace

    from reference.catalogue import catalogue
    table = dict(catalogue.implementations())
    table["conv1d"] = replace(table["conv1d"], seconds={})
    monkeypatch.setattr(catalogue, "implementations", lambda: table)
    cost = costs.task_cost("conv1d", "quick")
    assert not cost.measured and cost == costs._median("quick", False)
    assert costs.task_cost("attention", "quick").measured
    assert main(["verify", "--only", "attention,conv1d", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "not measured (their costs are the median of the measured ones; measure them with python " \
           "benchmarks/bench_campaign.py --costs --profile quick): conv1d" in out
