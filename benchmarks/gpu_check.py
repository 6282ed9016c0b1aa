"""The GPU check: everything this project checks on an NVIDIA GPU, in one run that writes one JSON file.

    bash benchmarks/gpu_check.sh OUTDIR [--dry-run]

Each step runs in its own process with its own time limit (together within ``BUDGET_S``, 8 minutes); a step that
fails or runs out of time is recorded as such and the next one runs:

1. ``environment`` — Python, torch and its CUDA, the GPU and its driver, transformers, the package
   (``benchmarks/gpu_environment.py``);
2. ``install`` — ``pip install --no-deps --no-build-isolation -e .`` (such a machine has no internet); where pip
   cannot, the tree goes on ``PYTHONPATH``;
3. ``verify`` — ``formal-transformers verify --device cuda``: float64, float32 and bfloat16 against the spec, on
   the SDPA and the FlexAttention paths, as checks of one run (its ``--json`` report, summed up per check);
4. ``gpu tests`` — the tests marked ``gpu`` (``python -m pytest -m gpu tests/reference``), read from JUnit XML;
5. ``conform`` — ``formal-transformers conform --device cuda`` of a paged kernel as vLLM's test oracle writes it;
6. ``speed vs HF`` — ``benchmarks/bench_reference.py --device cuda``: GPT-2 small through the reference and
   through HF transformers on the same GPU, judged against the design's budget.

``OUTDIR/gpu_check.json`` holds the machine, each step (its command, exit status, wall seconds, parsed result
and the tail of its output) and the verdict; it is rewritten after each step, so a run cut short leaves what
it did.  The package's commands run as ``python -m formal ...`` (``formal-transformers ...`` under the
interpreter that runs the check, installed or not).  ``--dry-run`` needs no GPU: it runs each step in a form a
CPU can (pip's own ``--dry-run``, verify on the CPU for one algorithm, the ``gpu`` tests collected and skipped,
conform on the CPU, the benchmark on a tiny GPT-2) and writes the same JSON, every step marked
``"dry_run": true`` and its GPU command beside what ran.

Exit status: 0 when every step passed, 1 when one failed or ran out of time, 2 on bad usage.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from gpu_steps import PATHS, PRECISIONS, Step, plan, unwritable

ROOT = Path(__file__).resolve().parent.parent
#: The whole run's limit: the steps' time limits add up to no more (the issue's 8 minutes).
BUDGET_S = 480
USAGE = "usage: benchmarks/gpu_check.sh OUTDIR [--dry-run]"
#: How much of a step's output its record keeps: the end, where the summary and the error are.
TAIL_CHARS = 3000
#: The file the check writes in OUTDIR (its only output there).
REPORT = "gpu_check.json"


class UsageError(Exception):
    """Bad usage of the script: printed as one line, exit status 2."""


def parse_args(argv) -> tuple[Path, bool]:
    """``(OUTDIR, dry_run)`` from the command line; OUTDIR is made if missing.  Its report's path is checked here,
    before any step runs (:func:`gpu_steps.unwritable`): a directory, a FIFO or a folder that takes no file there
    is bad usage, not a traceback after the first step."""
    outdir, dry_run = None, False
    for arg in argv:
        if arg in ("-h", "--help"):
            print(__doc__)
            raise SystemExit(0)
        if arg == "--dry-run":
            dry_run = True
        elif arg.startswith("-"):
            raise UsageError(f"unknown option {arg!r}")
        elif outdir is None:
            outdir = arg
        else:
            raise UsageError(f"one OUTDIR expected, got a second: {arg!r}")
    if not outdir:
        raise UsageError("OUTDIR is missing: the folder gpu_check.json is written into")
    path = Path(outdir)
    if path.exists() and not path.is_dir():
        raise UsageError(f"OUTDIR {outdir!r} exists and is not a folder")
    made = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"OUTDIR {outdir!r} cannot be made: {exc.strerror}") from None
    why = unwritable(path / REPORT)
    if why is not None:
        if made:                 # bad usage leaves nothing behind
            path.rmdir()
        raise UsageError(f"{os.path.join(outdir, REPORT)!r} cannot be written: {why}")
    return path, dry_run


def run_step(step: Step, env: dict) -> dict:
    """Run one step's command (the stand-in under --dry-run) in its own process group, within its time limit;
    a step out of time is killed with every process it started."""
    argv = step.dry_command if step.dry_run else step.command
    start = time.perf_counter()
    record = {"name": step.name, "purpose": step.purpose, "command": shlex.join(step.command),
              "dry_run": step.dry_run, "ran": shlex.join(argv), "timeout_s": step.timeout_s}
    try:
        child = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as exc:
        return {**record, "exit_status": None, "seconds": 0.0, "status": "fail",
                "reason": f"could not start {argv[0]!r}: {exc.strerror}", "result": {}, "tail": ""}
    try:
        output, _ = child.communicate(timeout=step.timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, 9)  # the step's workers too (verify's, pytest's)
        output, _ = child.communicate()
        timed_out = True
    seconds = time.perf_counter() - start
    text = output.decode("utf-8", errors="replace")
    record.update(exit_status=child.returncode, seconds=round(seconds, 2))
    if timed_out:
        status, result, reason = "timeout", {}, f"ran past its {step.timeout_s:g} s limit and was ended"
    else:
        status, result, reason = step.judge(child.returncode, text, env)
    return {**record, "status": status, "reason": reason, "result": result, "tail": text[-TAIL_CHARS:]}


def _tree() -> str | None:
    """The commit the tree is at, where it is a git checkout (a copy of the tree may not be)."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _write(report: dict, outdir: Path) -> None:
    """Atomically: a reader never sees half a file (a temporary file of a name of its own beside it, then one
    rename: no file the user keeps there is written over)."""
    partial = outdir / f".{REPORT}.{os.getpid()}-{os.urandom(4).hex()}.partial"
    try:
        with open(partial, "x") as f:    # as open() makes files: the umask applies (mkstemp's would be 0600)
            f.write(json.dumps(report, indent=2) + "\n")
        os.replace(partial, outdir / REPORT)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def check(outdir: Path, dry_run: bool, *, python=sys.executable) -> dict:
    """Run every step, writing ``outdir/gpu_check.json`` after each; the report."""
    with tempfile.TemporaryDirectory(prefix="gpu_check-") as work:
        steps = plan(Path(work), dry_run=dry_run, python=python, root=ROOT)
        report = {"check": "formal-transformers GPU check", "dry_run": dry_run,
                  "started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "tree": _tree(),
                  "budget_s": BUDGET_S, "planned_s": sum(s.timeout_s for s in steps),
                  "covers": {"precisions": list(PRECISIONS), "attention_paths": list(PATHS)},
                  "machine": None, "steps": [], "seconds": 0.0, "verdict": "incomplete"}
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        start = time.perf_counter()
        for i, step in enumerate(steps, 1):
            print(f"gpu_check [{i}/{len(steps)}] {step.name}: {step.purpose}", flush=True)
            record = run_step(step, env)
            if step.name == "environment":
                report["machine"] = record["result"]
            report["steps"].append(record)
            report["seconds"] = round(time.perf_counter() - start, 2)
            _write(report, outdir)
            why = f" ({record['reason']})" if record["reason"] else ""
            print(f"gpu_check [{i}/{len(steps)}] {step.name}: {record['status']} in {record['seconds']:.1f} s{why}",
                  flush=True)
        report["verdict"] = "pass" if all(r["status"] == "pass" for r in report["steps"]) else "fail"
        _write(report, outdir)
    return report


def main(argv=None) -> int:
    try:
        outdir, dry_run = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        sys.stderr.write(f"gpu_check: {exc}; {USAGE}\n")
        return 2
    try:
        report = check(outdir, dry_run)
    except OSError as exc:   # OUTDIR changed under the run (removed, made read-only): one line, not a traceback
        sys.stderr.write(f"gpu_check: cannot write {os.path.join(outdir, REPORT)!r}: {exc.strerror or exc}\n")
        return 2
    print(f"gpu_check: {report['verdict']}{' (dry run)' if dry_run else ''} in {report['seconds']:.0f} s; "
          f"{outdir / 'gpu_check.json'}")
    return 0 if report["verdict"] == "pass" else 1


if __name__ == "__main__":
    sys.exit(main())
