"""The steps of the GPU check (``benchmarks/gpu_check.py``): each one's command on a GPU, its stand-in under
``--dry-run``, its time limit, and the judge that reads what it wrote into a status, a result and a reason.

A judge is called as ``judge(exit_status, output, env)`` and returns ``(status, result, reason)``: status
``"pass"`` or ``"fail"``, the parsed result (a dict for the JSON), and why it failed (None when it passed).
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

#: The precisions and the attention paths the GPU check must see verified on CUDA, named as verify's checks.
PRECISIONS = ("float64", "float32", "bfloat16")
PATHS = tuple(f"{d} {p}" for d in PRECISIONS for p in ("sdpa", "flex"))

#: Each step's time limit in seconds, about 3× to 5× what it took on an H100 (environment and install: a few
#: seconds; verify 30 s; the gpu tests 39 s; conform a few seconds; the benchmark's GPT-2 built on the CPU, then
#: 60 timed passes).
TIMEOUTS = {"environment": 30, "install": 45, "verify": 150, "gpu tests": 110, "conform": 45, "speed vs HF": 80}
#: A third party's kernel that conform checks on CUDA: PagedAttention as vLLM's test oracle writes it.
CONFORMED = ("tests/reference/conformance/targets/vllm_paged.py:paged_attention", "paged_attention")


#: What a path that is not a regular file is, by the test of its mode.
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def unwritable(path) -> str | None:
    """Why the file ``path`` cannot be written whole (a temporary file beside it, then one rename), or None: it
    exists and is not a regular file (a directory, a FIFO, a device, a link to nothing), or its folder is missing
    or refuses a new file — tried, not guessed from its mode bits, which root and ``/proc`` ignore.  The check
    script and its helpers ask this of every path they write before any work.  (The package's own commands ask
    :func:`formal.guards.files.destination`; these scripts run before the package is installed, and import
    nothing of it.)"""
    path = os.path.abspath(os.fspath(path))
    if os.path.lexists(path):
        if not os.path.exists(path):
            return "it is a link to nothing"
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            return f"it is {next((name for test, name in _KINDS if test(mode)), 'not a regular file')}"
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        return f"its folder {folder!r} does not exist"
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".gpu_check-probe-"):
            pass
    except OSError as exc:
        return f"its folder {folder!r} takes no new file ({exc.strerror or exc})"
    return None


@dataclass(frozen=True)
class Step:
    name: str
    purpose: str
    command: list          # what runs on a GPU machine
    dry_command: list      # what runs under --dry-run, without a GPU
    timeout_s: float
    judge: Callable
    dry_run: bool


def plan(work: Path, *, dry_run: bool, python: str, root: Path) -> list:
    """The steps, in order; their outputs go to ``work`` (a scratch folder)."""
    env_json, verify_json, junit, speed_json = (work / n for n in ("environment.json", "verify.json",
                                                                    "gpu_tests.xml", "speed.json"))
    pip = [python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-e", str(root)]
    verify = [python, "-m", "formal", "verify", "--quiet", "--json", str(verify_json)]
    tests = [python, "-m", "pytest", "-m", "gpu", "tests/reference", "-q", "-p", "no:cacheprovider",
             "--junitxml", str(junit)]
    bench = [python, "benchmarks/bench_reference.py", "--skip-verify", "--json", str(speed_json)]
    probe = [python, "benchmarks/gpu_environment.py", str(env_json)]
    conform = [python, "-m", "formal", "conform", CONFORMED[0], "--algorithm", CONFORMED[1], "--examples", "4",
               "--json"]

    def step(name, purpose, command, dry_command, judge):
        return Step(name, purpose, command, dry_command, TIMEOUTS[name], judge, dry_run)

    return [
        step("environment", "Python, torch and its CUDA, the GPU and its driver, transformers, the package",
             probe, probe, _judge_environment(env_json, dry_run)),
        step("install", "the package from this tree, without its dependencies (no internet there)",
             pip, pip[:4] + ["--dry-run"] + pip[4:], _judge_install(work / "site", root, dry_run)),
        step("verify", "the reference on CUDA against the spec: float64, float32, bfloat16, the SDPA and "
             "FlexAttention paths", verify[:4] + ["--device", "cuda"] + verify[4:],
             verify[:4] + ["--device", "cpu", "--only", "attention", "--jobs", "1"] + verify[4:],
             _judge_verify(verify_json, dry_run)),
        step("gpu tests", "the tests marked gpu", tests, tests, _judge_tests(junit, dry_run)),
        step("conform", "a paged kernel written as vLLM's test oracle writes it, run with device='cuda'",
             conform + ["--device", "cuda"], conform + ["--device", "cpu"], _judge_conform),
        step("speed vs HF", "GPT-2 small forward, the reference against HF transformers on the same GPU",
             bench[:2] + ["--device", "cuda", "--repeats", "20", "--seq-len", "1024"] + bench[2:],
             bench[:2] + ["--device", "cpu", "--repeats", "1", "--seq-len", "8", "--tiny"] + bench[2:],
             _judge_speed(speed_json, dry_run)),
    ]


def _read_json(path: Path):
    try:
        return json.loads(path.read_text()), None
    except (OSError, ValueError) as exc:
        return None, f"{path.name} was not written or is not JSON ({type(exc).__name__})"


def _judge_environment(path, dry_run):
    def judge(status, output, env):
        info, missing = _read_json(path)
        if info is None:
            return "fail", {}, missing
        broken = [f"{name}: {why}" for name, why in info["errors"].items() if name != "driver"]
        if status != 0 or broken:
            return "fail", info, "; ".join(broken) or f"exit status {status}"
        if not dry_run and not info["cuda_available"]:
            return "fail", info, "torch sees no CUDA GPU"
        return "pass", info, None
    return judge


def _judge_install(site, root, dry_run):
    def judge(status, output, env):
        mode = "pip --dry-run" if dry_run else "pip"
        if status == 0 and (not dry_run or "Would install formal-transformers" in output):
            return "pass", {"mode": mode}, None
        # pip could not (no setuptools new enough, a read-only environment): the tree on PYTHONPATH (every
        # command is imported from it, none found through installed metadata); a dry run takes the same way, so
        # that what it runs next is what a GPU run would
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
        return "pass", {"mode": "PYTHONPATH", "pip_exit_status": status}, None
    return judge


def _judge_verify(path, dry_run):
    def judge(status, output, env):
        report, missing = _read_json(path)
        if report is None:
            return "fail", {}, missing
        rows = report["rows"]
        by_check = {}
        for r in rows:
            c = by_check.setdefault(r["check"], {"checks": 0, "failed": 0, "examples": 0})
            c["checks"] += 1
            c["failed"] += r["verdict"] == "FAIL"
            c["examples"] += r["examples"]
        failures = [{k: r[k] for k in ("algorithm", "check", "max_error", "allowed", "detail")}
                    for r in rows if r["verdict"] == "FAIL"]
        absent = [c for c in PRECISIONS + PATHS if c not in by_check]
        result = {"device": report["device"], "profile": report["profile"], "torch": report["torch"],
                  "checks": len(rows), "passed": len(rows) - len(failures), "failed": len(failures),
                  "examples": sum(r["examples"] for r in rows), "seconds": round(report["seconds"], 2),
                  "by_check": by_check, "not_run": absent, "failures": failures[:20]}
        if failures:
            return "fail", result, f"{len(failures)} of {len(rows)} checks failed"
        if status != 0:
            return "fail", result, f"exit status {status}"
        if absent and not dry_run:  # the CPU runs no FlexAttention check: only a GPU run must have them all
            return "fail", result, f"no {', '.join(absent)} check ran"
        return "pass", result, None
    return judge


def _judge_conform(status, output, env):
    """conform's JSON report (on stdout, after anything torch may have warned) read into its verdict."""
    lines = output.splitlines()
    if "{" not in lines:
        return "fail", {}, f"no JSON report in the output (exit status {status})"
    try:
        report = json.loads("\n".join(lines[lines.index("{"):]))
    except ValueError:
        return "fail", {}, f"conform's JSON report is cut short (exit status {status})"
    result = {"verdict": report["verdict"], "examples": report["examples"], "boundary": report["boundary"],
              "properties": {c["property"]: c["verdict"] for c in report["checks"]}, "failure": report["failure"]}
    if status != 0 or report["verdict"] != "pass":
        return "fail", result, f"conform's verdict: {report['verdict']} (exit status {status})"
    return "pass", result, None


def _judge_tests(path, dry_run):
    def judge(status, output, env):
        try:
            suites = ET.parse(path).getroot().iter("testsuite")
        except (OSError, ET.ParseError) as exc:
            return "fail", {}, f"{path.name} was not written or is not XML ({type(exc).__name__})"
        result = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "seconds": 0.0, "failed": []}
        for suite in suites:
            for key in ("tests", "failures", "errors", "skipped"):
                result[key] += int(suite.get(key, 0))
            result["seconds"] += float(suite.get("time", 0))
            result["failed"] += [f"{case.get('classname')}::{case.get('name')}" for case in suite.iter("testcase")
                                 if case.find("failure") is not None or case.find("error") is not None]
        result["passed"] = result["tests"] - result["failures"] - result["errors"] - result["skipped"]
        if result["failures"] or result["errors"] or status != 0:
            return "fail", result, f"{result['failures']} failed, {result['errors']} errors (exit status {status})"
        if not result["tests"]:
            return "fail", result, "no test marked gpu was collected"
        if result["skipped"] and not dry_run:  # they skip where torch sees no GPU: on a GPU run, a failure
            return "fail", result, f"{result['skipped']} skipped"
        return "pass", result, None
    return judge


def _judge_speed(path, dry_run):
    def judge(status, output, env):
        figures, missing = _read_json(path)
        if figures is None:
            return "fail", {}, missing if status == 0 else f"exit status {status}"
        figures["budget"]["judged"] = not dry_run   # a CPU's figures for a tiny model say nothing of the budget
        budget = figures["budget"]
        if status != 0:
            return "fail", figures, f"exit status {status}"
        if not dry_run and not budget["met"]:
            return "fail", figures, (f"the reference's {budget['path']} took {budget['ratio']:.2f}× HF's time, "
                                     f"over the budget of {budget['at_most']}×")
        return "pass", figures, None
    return judge
