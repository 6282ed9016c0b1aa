"""The theorems about softmax, the √d scaling and the norms: symbolic, proved, twins rejected with a
counterexample, and each bug of proofs/mutants/numerics.py failing every theorem it is about (in a fresh
interpreter, as ``prove --mutants`` plants it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from proofs.mutants.numerics import MUTANTS
from tests.tiers import slow

pytestmark = slow   # every theorem here is proved once for the module: seconds

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("softmax-shift-invariance", "online-softmax-merge", "online-softmax-associative", "sqrt-d-scaling",
         "layer-norm-moments", "rms-norm-root-mean-square")


@pytest.mark.parametrize("name", NAMES)
def test_proved_and_twin_rejected_with_a_counterexample(results, name):
    r = results[name]
    assert r.proved, r.detail
    assert r.twin_rejected and r.counterexample.startswith(("softmax", "e^", "Var", "Σ", "RMS", "(1·2)")), \
        r.counterexample
    assert r.theorem.level == "symbolic"


@pytest.mark.parametrize("name", [n for n in NAMES if n != "online-softmax-associative"])
def test_method_says_the_meaning_is_tied_to_the_execution(results, name):
    assert "numpy execution" in results[name].theorem.method
    assert "counterexample" not in results[name].detail


def test_every_bug_named_is_about_these_theorems():
    assert len({m.name for m in MUTANTS}) == len(MUTANTS) >= 7
    assert all(set(m.about) <= set(NAMES) and m.about for m in MUTANTS)
