"""`formal-transformers conform` on targets that hang, exit, crash, print or return what is not an array:
each is one FAIL of the target (exit 1) naming what it did, within bounded time, and ``--json`` stays one
valid JSON object whatever the target prints."""

import json
import sys
import time
from pathlib import Path

import pytest

from formal.tools.cli import main
from reference.conformance.conform import conform
from reference.conformance.sandbox import Failed, InProcess
from tests.reference.conformance.targets import HANG_LIMIT, hostile
from tests.tiers import fast_few, slow

#: The files conform loads by path, as it loads a user's.
TARGETS = Path(__file__).parent / "targets"


def run(capsys, target, *args):
    status = main(["conform", f"{TARGETS}/{target}", "--algorithm", "attention", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("function, prop, words", fast_few([
    ("exits_0", "runs", "called sys.exit(0)"),
    ("exits_3", "runs", "called sys.exit(3)"),
    ("interrupts", "runs", "raised KeyboardInterrupt"),
    ("ends_the_process", "runs", "ended the process (exit status 7)"),
    ("raises_deep", "runs", "raised ValueError: shapes (4,3) and (5,2) not aligned (hostile.py:"),
    ("returns_none", "type", "is None, not an array"),
    ("returns_ragged", "type", "ragged"),
    ("returns_complex", "type", "is complex (complex128)"),
    ("returns_strings", "type", "has dtype <U3"),
    ("returns_objects", "type", "has dtype object"),
    ("returns_text", "type", "is a str"),
], keep=3, unpack=True))
def test_a_misbehaving_target_is_one_fail_line(capsys, function, prop, words):
    """Whatever the target does — exit, interrupt, crash, raise, return a non-array — conform reports it as
    the failing property with the configuration, exit 1, no traceback."""
    status, out, err = run(capsys, f"hostile.py:{function}")
    verdict = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert status == 1, out + err
    assert len(verdict) == 1 and verdict[0].startswith(f"FAIL {prop}: ") and words in verdict[0], out
    assert f"hostile.py:{function}" in verdict[0], out
    assert "smallest failing configuration: " in out and "attention(bias=True" in out
    assert "Traceback" not in out + err and err == ""


@pytest.mark.parametrize("function", fast_few(["hangs", "sleeps"]))
def test_a_hanging_target_is_ended_by_the_timeout(capsys, function):
    """A call that outlives --timeout is ended (the worker process is killed): FAIL runs, exit 1, in about
    the time given."""
    start = time.perf_counter()
    status, out, _ = run(capsys, f"hostile.py:{function}", "--timeout", "1")
    assert status == 1
    assert "FAIL runs: " in out and "did not return within 1 s" in out
    assert time.perf_counter() - start < HANG_LIMIT


def test_in_process_timeout_ends_a_python_loop():
    """The in-process runner's timer ends a pure-Python hang too (main thread of Unix)."""
    report = conform(hostile.hangs, "attention", n_examples=1, timeout=0.5)
    assert report.failure["property"] == "runs" and "did not return within 0.5 s" in report.failure["message"]


def test_printing_target_keeps_json_valid(capsys):
    """A correct target that prints to stdout, stderr and file descriptor 1: the JSON report parses, the
    verdict is pass, and what it printed is in the report, not on the terminal."""
    status, out, err = run(capsys, "hostile.py:prints", "--json", "--examples", "3")
    report = json.loads(out)
    assert status == 0 and report["verdict"] == "pass"
    assert all(text in report["printed"] for text in ("{ not json", "raw write to fd 1", "debug"))
    assert err == ""


@slow
def test_a_flood_of_output_keeps_only_its_end(capsys):
    """20 MB printed per call: the report keeps the last few thousand characters, nothing more."""
    status, out, _ = run(capsys, "hostile.py:floods", "--json", "--examples", "2")
    report = json.loads(out)
    assert status == 0 and report["printed"].endswith("last line\n") and len(report["printed"]) <= 4000


def test_printing_in_process_is_captured(capfd):
    """In process too, the target's output (Python and file-descriptor level) goes to the report."""
    report = conform(hostile.prints, "attention", n_examples=2)
    captured = capfd.readouterr()
    assert report.ok and "raw write to fd 1" in report.printed
    assert "not json" not in captured.out and "raw write" not in captured.out


@pytest.mark.parametrize("module, words", [
    ("exits_at_import.py", "importing"),
    ("interrupts_at_import.py", "raised KeyboardInterrupt"),
])
def test_a_module_that_exits_while_importing_is_the_targets_fault(capsys, module, words):
    status, out, err = run(capsys, f"{module}:attention")
    assert status == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err


def test_in_process_runner_catches_exits():
    """sys.exit and KeyboardInterrupt inside a function object never leave the in-process runner."""
    for function, words in ((lambda: sys.exit(3), "sys.exit(3)"), (hostile.interrupts, "KeyboardInterrupt")):
        with pytest.raises(Failed) as failed:
            InProcess(function).call({} if "exit" in words else dict.fromkeys(
                ("X", "mask", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v")), (("V_tilde", "real"),))
        assert failed.value.property == "runs" and words in str(failed.value)


@slow
def test_a_target_that_takes_all_memory_fails_runs_within_the_limit(capsys):
    """The worker's address space is capped (--max-memory): a function that would take 80 GB gets a
    MemoryError at the cap — one FAIL of `runs`, exit 1 — instead of taking the machine's memory."""
    start = time.perf_counter()
    status, out, err = run(capsys, "hostile.py:hoards", "--max-memory", "1G")
    assert status == 1 and err == "", out + err
    assert "FAIL runs: " in out and "raised MemoryError" in out
    assert time.perf_counter() - start < HANG_LIMIT
