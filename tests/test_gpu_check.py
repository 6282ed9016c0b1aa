"""The GPU check script (``benchmarks/gpu_check.sh``): its ``--dry-run`` on this machine writes the whole plan as
JSON, its bad usage is one line and exit 2, a step out of time is ended and recorded, and what a GPU run writes
is judged as a GPU run must be (every precision and path verified, no gpu test skipped, the speed budget met)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"
#: The issue's limit on the whole GPU run.
EIGHT_MINUTES = 480


@pytest.fixture
def bench(monkeypatch):
    """The benchmarks' modules, importable as the scripts import each other (from their folder)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import gpu_check
    import gpu_steps
    return gpu_check, gpu_steps


def _script(*args, cwd=ROOT):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHON": sys.executable}, timeout=300)


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_check")
    done = _script("--dry-run", out / "results")
    return done, out / "results"


@pytest.mark.slow
def test_dry_run_passes_and_writes_one_json(dry_run):
    done, out = dry_run
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p.name for p in out.iterdir()] == ["gpu_check.json"]
    report = json.loads((out / "gpu_check.json").read_text())
    assert report["dry_run"] is True and report["verdict"] == "pass"
    assert done.stdout.splitlines()[-1].endswith(str(out / "gpu_check.json"))


@pytest.mark.slow
def test_dry_run_records_every_planned_step(dry_run, bench, tmp_path):
    _, steps = bench
    report = json.loads((dry_run[1] / "gpu_check.json").read_text())
    planned = steps.plan(tmp_path, dry_run=True, python=sys.executable, root=ROOT)
    assert [s["name"] for s in report["steps"]] == [s.name for s in planned]
    for step in report["steps"]:
        assert step["dry_run"] is True and step["status"] == "pass", step
        assert step["exit_status"] == 0 and step["seconds"] >= 0 and isinstance(step["result"], dict)
        assert {"command", "ran", "timeout_s", "reason", "tail"} <= set(step)
    assert report["machine"]["torch"] and report["machine"]["transformers"] and report["machine"]["package"]


@pytest.mark.slow
def test_the_gpu_commands_name_cuda_every_precision_and_both_paths(dry_run):
    """The commands a GPU run executes ask for CUDA (what ran here did not); verify's covers the three precisions
    and both fused attention paths in each, which are verify's own check names; on the CPU every one ran but the
    CUDA-only ones."""
    from reference.verification.checks import CHECKS
    report = json.loads((dry_run[1] / "gpu_check.json").read_text())
    steps = {s["name"]: s for s in report["steps"]}
    for name in ("verify", "conform", "speed vs HF"):
        assert "--device cuda" in steps[name]["command"] and "--device cuda" not in steps[name]["ran"]
    covered = report["covers"]["precisions"] + report["covers"]["attention_paths"]
    assert set(report["covers"]["precisions"]) == {"float64", "float32", "bfloat16"}
    assert set(covered) <= set(CHECKS) and len(report["covers"]["attention_paths"]) == 2 * 3
    ran = steps["verify"]["result"]
    assert ran["not_run"] == [c for c in covered if CHECKS[c].cuda]
    assert all(ran["by_check"][c]["checks"] >= 1 for c in covered if not CHECKS[c].cuda)
    assert "-m gpu" in steps["gpu tests"]["command"] and steps["gpu tests"]["result"]["tests"] >= 1


@pytest.mark.slow
def test_dry_run_states_the_time_and_speed_budgets(dry_run, bench):
    import bench_reference
    report = json.loads((dry_run[1] / "gpu_check.json").read_text())
    assert report["planned_s"] == sum(s["timeout_s"] for s in report["steps"]) <= report["budget_s"] <= EIGHT_MINUTES
    budget = {s["name"]: s for s in report["steps"]}["speed vs HF"]["result"]["budget"]
    assert budget["at_most"] == bench_reference.HF_BUDGET and budget["path"] == bench_reference.BUDGET_PATH
    assert budget["judged"] is False and isinstance(budget["met"], bool) and budget["ratio"] > 0


@pytest.mark.parametrize("args, says", [
    ((), "OUTDIR is missing"),
    (("--fast", "out"), "unknown option '--fast'"),
    (("out", "other"), "got a second: 'other'"),
    (("--dry-run", "a-file"), "exists and is not a folder"),
])
def test_bad_usage_is_one_line_and_exit_2(tmp_path, args, says):
    (tmp_path / "a-file").write_text("")
    done = _script(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and says in done.stderr and "usage:" in done.stderr
    assert not (tmp_path / "out").exists()


def test_the_steps_fit_in_eight_minutes(bench):
    gpu_check, steps = bench
    assert sum(steps.TIMEOUTS.values()) <= gpu_check.BUDGET_S <= EIGHT_MINUTES


def test_a_relative_outdir_is_the_callers(tmp_path, bench):
    """OUTDIR is read from where the script is called, not from the repository (the script does not cd)."""
    gpu_check, _ = bench
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        outdir, dry = gpu_check.parse_args(["results", "--dry-run"])
    finally:
        os.chdir(here)
    assert dry and (tmp_path / "results").is_dir() and outdir == Path("results")


def test_a_step_out_of_time_is_ended_and_recorded(bench):
    gpu_check, steps = bench
    sleep = [sys.executable, "-c", "import subprocess, sys, time; "
             "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); print('started'); "
             "sys.stdout.flush(); time.sleep(60)"]
    step = steps.Step("sleep", "sleeps past its limit", sleep, sleep, 1, lambda *a: ("pass", {}, None), False)
    record = gpu_check.run_step(step, dict(os.environ))
    assert record["status"] == "timeout" and "1 s limit" in record["reason"]
    assert record["seconds"] < 30 and "started" in record["tail"]


def _gpu_judge(steps, tmp_path, name, files):
    for file, text in files.items():
        (tmp_path / file).write_text(text)
    judge = {s.name: s.judge for s in steps.plan(tmp_path, dry_run=False, python=sys.executable, root=ROOT)}[name]
    return judge(0, "", {})


def _verify_report(checks):
    rows = [{"algorithm": "attention", "check": c, "examples": 3, "max_error": 0.0, "allowed": 1e-10,
             "verdict": "pass", "detail": ""} for c in checks]
    return json.dumps({"device": "cuda", "profile": "quick", "torch": "2.11.0", "seconds": 1.0, "verdict": "pass",
                       "rows": rows})


def test_a_gpu_run_needs_every_precision_and_path_verified(bench, tmp_path):
    _, steps = bench
    every = steps.PRECISIONS + steps.PATHS
    status, result, _ = _gpu_judge(steps, tmp_path, "verify", {"verify.json": _verify_report(every)})
    assert status == "pass" and result["checks"] == len(every) and result["not_run"] == []
    status, result, reason = _gpu_judge(steps, tmp_path, "verify", {"verify.json": _verify_report(every[:-1])})
    assert status == "fail" and result["not_run"] == [every[-1]] and every[-1] in reason


def test_a_gpu_run_with_a_skipped_gpu_test_fails(bench, tmp_path):
    _, steps = bench
    xml = ('<testsuites><testsuite tests="{n}" failures="0" errors="0" skipped="{s}" time="1.5">'
           '<testcase classname="t" name="a"/></testsuite></testsuites>')
    status, result, _ = _gpu_judge(steps, tmp_path, "gpu tests", {"gpu_tests.xml": xml.format(n=5, s=0)})
    assert status == "pass" and result["passed"] == 5
    status, result, reason = _gpu_judge(steps, tmp_path, "gpu tests", {"gpu_tests.xml": xml.format(n=5, s=5)})
    assert status == "fail" and "5 skipped" in reason


def test_a_gpu_run_over_the_speed_budget_fails(bench, tmp_path):
    _, steps = bench
    figures = {"budget": {"path": "reference, sdpa path", "ratio": 1.4, "at_most": 1.25, "met": False}}
    status, result, reason = _gpu_judge(steps, tmp_path, "speed vs HF", {"speed.json": json.dumps(figures)})
    assert status == "fail" and "1.40× HF" in reason and result["budget"]["judged"] is True
    figures["budget"].update(ratio=1.1, met=True)
    assert _gpu_judge(steps, tmp_path, "speed vs HF", {"speed.json": json.dumps(figures)})[0] == "pass"


def test_a_gpu_run_needs_cuda(bench, tmp_path):
    _, steps = bench
    info = {"cuda_available": False, "errors": {}}
    status, _, reason = _gpu_judge(steps, tmp_path, "environment", {"environment.json": json.dumps(info)})
    assert status == "fail" and "no CUDA GPU" in reason


def test_without_pip_the_tree_runs_from_pythonpath(bench, tmp_path):
    """The install's fallback: the tree on PYTHONPATH; a Python that sees only it (-S: no site-packages, so no
    installed copy and no installed metadata) finds verify, conform and prove — no command is found through
    entry points."""
    _, steps = bench
    env = {}
    status, result, _ = steps._judge_install(tmp_path / "site", ROOT, False)(1, "pip failed", env)
    assert status == "pass" and result["mode"] == "PYTHONPATH" and result["pip_exit_status"] == 1
    assert env["PYTHONPATH"] == str(ROOT)
    done = subprocess.run([sys.executable, "-S", "-m", "formal", "--help"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env={**os.environ, "PYTHONPATH": env["PYTHONPATH"]})
    assert done.returncode == 0, done.stderr
    assert all(f"    {name} " in done.stdout for name in ("conform", "prove", "verify")), done.stdout


def test_the_environment_step_finds_the_package_before_it_is_installed(tmp_path):
    """The environment step runs before the install step: on a GPU machine the package is not installed yet, and
    the probe imports it from the tree.  Here a Python started with -S (no site-packages processing, so no
    installed or editable copy) sees only the third-party packages, and still reports the tree's package."""
    import numpy
    third_party = str(Path(numpy.__file__).resolve().parent.parent)
    out = tmp_path / "environment.json"
    done = subprocess.run([sys.executable, "-S", str(ROOT / "benchmarks" / "gpu_environment.py"), str(out)],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": third_party}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    info = json.loads(out.read_text())
    assert "package" not in info["errors"], info["errors"]
    assert Path(info["package"]["formal"]).resolve().is_relative_to(ROOT)


def test_the_readme_states_the_scripts_limits(bench):
    """The README's paragraph on the script names its steps' time limit and the speed budget it judges by."""
    import bench_reference
    _, steps = bench
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "bash benchmarks/gpu_check.sh gpu-results --dry-run" in readme
    assert f"({sum(steps.TIMEOUTS.values())} s together;" in readme
    assert f"within {bench_reference.HF_BUDGET}× of HF's time" in readme
