"""Targets whose harm comes from what they return or do after returning (:mod:`targets.escapes`): each output
that cannot be converted is one FAIL line of the target, in a worker and in process, without hanging; what
a target prints once its call has returned (an atexit handler, a thread) stays in the report; and the JSON of
``conform --json`` parses strictly after each."""

import json
import time
from pathlib import Path

import numpy as np
import pytest

from formal.tools.cli import main
from reference.conformance.conform import conform
from reference.conformance.outputs import Failed, as_arrays
from tests.reference.conformance.targets import HANG_LIMIT, escapes
from tests.tiers import fast_few, slow

TARGETS = Path(__file__).parent / "targets"

#: function → (the property it fails, words its one line names)
HOSTILE = {
    "returns_a_huge_view": ("shape", "has shape (1000000, 1000000), the spec's is"),
    "returns_array_that_raises": ("type", "cannot be read as an array of numbers (RuntimeError: no array for you"),
    "returns_lying_len": ("type", "(_Liar) cannot be read as an array of numbers (MemoryError"),
    "returns_recursive_list": ("type", "not an array of numbers"),
    "returns_meta_tensor": ("type", "(Tensor) cannot be read as an array of numbers (NotImplementedError"),
    "returns_object_array_of_arrays": ("type", "has dtype object"),
    "returns_hostile_getattr": ("type", "(_Hostile) cannot be read as an array of numbers (RuntimeError"),
}


def _strict(text: str) -> dict:
    """The whole of ``text`` as one JSON object: nothing before or after it, no NaN."""
    def refuse(constant):
        raise ValueError(f"non-standard JSON constant {constant}")
    return json.loads(text, parse_constant=refuse)


def _conform_json(capsys, function, *args):
    status = main(["conform", f"{TARGETS}/escapes.py:{function}", "--algorithm", "attention", "--examples", "2",
                   "--json", *args])
    out, err = capsys.readouterr()
    return status, _strict(out), err


@pytest.mark.parametrize("function", fast_few(sorted(HOSTILE), keep=2))
def test_a_hostile_output_is_one_fail_in_a_worker(capsys, function):
    """In the worker conform runs a named target in: one FAIL of the property, exit 1, the JSON parses
    strictly, nothing on stderr, and no traceback anywhere."""
    if function == "returns_meta_tensor":
        pytest.importorskip("torch")
    prop, words = HOSTILE[function]
    start = time.perf_counter()
    status, report, err = _conform_json(capsys, function)
    assert status == 1 and report["verdict"] == "fail" and err == "", (report, err)
    assert report["failure"]["property"] == prop and words in report["failure"]["message"], report["failure"]
    assert len(report["failure"]["message"].splitlines()) == 1 and "Traceback" not in json.dumps(report)
    assert time.perf_counter() - start < HANG_LIMIT


@pytest.mark.parametrize("function", sorted(HOSTILE))
def test_a_hostile_output_is_one_fail_in_process(function):
    """The same outputs from a function object run in this process: the report names the same failure, and
    nothing escapes as an exception."""
    if function == "returns_meta_tensor":
        pytest.importorskip("torch")
    prop, words = HOSTILE[function]
    report = conform(getattr(escapes, function), "attention", n_examples=2)
    assert report.failure["property"] == prop and words in report.failure["message"], report.failure


def test_a_huge_view_fails_before_it_is_copied():
    """The shape is compared with the spec's before any copy: 10¹² entries fail at once, without memory."""
    with pytest.raises(Failed) as failed:     # a copy would be 8 TB: a MemoryError, not this failure
        as_arrays(np.broadcast_to(0.5, (10**6, 10**6)), (("Y", "real"),), ((3, 4),))
    assert failed.value.property == "shape"


def test_an_output_of_the_right_shape_converts_as_before():
    """The bound changes nothing for an output of the spec's shape: a view, a list, ints."""
    got = as_arrays((np.broadcast_to(1.5, (3, 4)), [[1, 2]]), (("A", "real"), ("B", "real")), ((3, 4), (1, 2)))
    assert got[0].dtype == np.float64 and got[0].shape == (3, 4) and got[1].tolist() == [[1.0, 2.0]]


@slow
def test_a_hanging_array_conversion_is_ended(capsys):
    """An ``__array__`` that never returns: in process the timer ends it as a failure of ``type``; in a worker
    the worker is ended at the time limit (a failure of ``runs``: only silence reaches the checker)."""
    report = conform(escapes.returns_array_that_hangs, "attention", n_examples=1, timeout=0.5)
    assert report.failure["property"] == "type"
    assert "converting its output did not finish within 0.5 s" in report.failure["message"]
    start = time.perf_counter()
    status, report, err = _conform_json(capsys, "returns_array_that_hangs", "--timeout", "1")
    assert status == 1 and report["failure"]["property"] == "runs" and err == ""
    assert time.perf_counter() - start < HANG_LIMIT


def test_an_ndarray_subclass_is_read_as_its_values(capsys):
    """A subclass whose ``__array_finalize__`` raises on every later view: the conversion makes no view of the
    subclass, so its (correct) values pass."""
    status, report, err = _conform_json(capsys, "returns_odd_subclass")
    assert status == 0 and report["verdict"] == "pass" and err == "", report["failure"]


@pytest.mark.parametrize("function, texts", fast_few([
    ("registers_atexit", ("atexit: goodbye from the target", "atexit: raw write to fd 2")),
    ("prints_from_a_thread", ("thread: printed after the call returned", "thread: raw write to fd 1")),
], unpack=True))
def test_printing_after_the_call_stays_in_the_report(capfd, function, texts):
    """A correct target that prints after its call has returned — from an atexit handler as its worker ends,
    from a thread it left running, to Python's streams and to the file descriptors — passes, the JSON on
    stdout parses strictly, what it printed is in ``printed``, and nothing reaches the terminal."""
    status = main(["conform", f"{TARGETS}/escapes.py:{function}", "--algorithm", "attention", "--examples", "3",
                   "--json"])
    time.sleep(0.2)   # a thread that outlived the worker would print by now
    out, err = capfd.readouterr()
    report = _strict(out)
    assert status == 0 and report["verdict"] == "pass", report["failure"]
    assert all(text in report["printed"] for text in texts), report["printed"]
    assert err == ""
