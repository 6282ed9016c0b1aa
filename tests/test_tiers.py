"""The test tiers (tests/tiers.py): the fast tier leaves out what is marked slow and still runs every area."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tiers import fast_few, slow

ROOT = Path(__file__).resolve().parent.parent
# areas that are one file of tests/ rather than a folder: the command line's help and the bad-input catalogue
TOP_LEVEL_AREAS = ("tests/test_cli_help.py", "tests/test_bad_input.py", "tests/test_fuzz_inputs.py")


def _areas() -> list[str]:
    """Every folder of tests/ that holds tests, the top-level areas, and the doctests of formal, reference and
    proofs."""
    folders = sorted({str(path.parent.relative_to(ROOT)) + "/" for path in (ROOT / "tests").rglob("test_*.py")
                      if path.parent != ROOT / "tests"})
    return [*folders, *TOP_LEVEL_AREAS, "formal/", "reference/", "proofs/"]


def _collect(*marker: str) -> tuple[list[str], str]:
    """The ids ``python -m pytest --collect-only`` lists (with ``-m`` and ``marker``, where given), and its summary."""
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    argv += ["-m", *marker] if marker else []
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    return [line for line in lines if "::" in line], next(line for line in reversed(lines) if "collected" in line)


@slow
def test_the_fast_tier_leaves_out_the_slow_tests_and_keeps_every_area():
    """``python -m pytest -m "not slow"`` deselects the tests marked slow (the marker is used), and still runs
    tests of every folder of tests/, of the command line, of the bad-input catalogue and the doctests."""
    ids, summary = _collect("not slow")
    counts = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", summary)
    assert counts, f"nothing deselected: no test is marked slow ({summary!r})"
    fast, everything, deselected = map(int, counts.groups())
    assert deselected > 0 and fast + deselected == everything and fast == len(ids)
    empty = [area for area in _areas() if not any(i.startswith(area) for i in ids)]
    assert not empty, f"the fast tier runs no test of {empty}"


def test_fast_few_marks_all_but_the_kept_values_slow():
    """By count, by value and by predicate; a pytest.param keeps its id and marks; keeping none is an error."""
    def slow(params):
        return [any(m.name == "slow" for m in p.marks) for p in params]
    assert slow(fast_few("abc")) == [False, True, True]
    assert slow(fast_few("abc", keep=2)) == [False, False, True]
    assert slow(fast_few("abc", keep=("b",))) == [True, False, True]
    assert slow(fast_few([1, 2, 3], keep=lambda v: v > 1)) == [True, False, False]
    both = fast_few([(1, 2), (3, 4)], unpack=True)
    assert [p.values for p in both] == [(1, 2), (3, 4)] and slow(both) == [False, True]
    marked = fast_few([pytest.param(1, id="one", marks=pytest.mark.gpu), 2], keep=(2,))
    assert marked[0].id == "one" and [m.name for m in marked[0].marks] == ["gpu", "slow"]
    with pytest.raises(ValueError, match="keeps none"):
        fast_few("abc", keep=("z",))
