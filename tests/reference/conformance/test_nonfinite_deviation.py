"""A deviation from the spec is never blind to a NaN (:func:`reference.tolerances.differences`): an output that is
NaN or infinite where the spec's is a number deviates by ``inf`` — shown as "non-finite", ranked last among the
nearest variants of ``conform --identify`` — never by the 0 that ``max`` of a NaN-masked difference, ``np.nanmax``
or a comparison with NaN (always False) would make of it.  The same difference decides ``spec`` and the
``masks``/``causality``/``equivariance`` moves, and ``verify``'s relative error."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from formal.tools.cli import main
from reference import tolerances
from reference.conformance.candidates import Trial
from reference.conformance.conform import _deviation
from reference.conformance.identify import identify
from reference.conformance.properties import Checker
from reference.conformance.targets import Failed

NAN, INF = np.nan, np.inf


def all_nan(X, Z, mask, W_q, W_k, W_v, b_q, b_k, b_v):
    """Algorithm 4's signature, every output entry NaN."""
    return np.full((W_v.shape[0], X.shape[1]), np.nan)


@pytest.mark.parametrize("want, got, expected", [
    ([1.0, 2.0], [1.0, 2.5], 0.25),             # scale max(1, 2) = 2
    ([1.0, 2.0], [NAN, NAN], INF),              # all NaN: not 0
    ([1.0, 2.0], [1.0, NAN], INF),              # one NaN beside a finite difference: not that difference
    ([1.0, 2.0], [INF, 2.0], INF),
    ([NAN, 2.0], [NAN, 2.0], 0.0),              # the spec's NaN (empty='nan') met
    ([INF, 1.0], [INF, 1.5], 0.5),              # the same infinity agrees; the finite entries still count
    ([INF, 1.0], [-INF, 1.0], INF),
    ([NAN, 1.0], [3.0, 1.0], INF),              # a number where the spec gives NaN
])
def test_the_deviation_is_never_blind_to_a_nan(want, got, expected):
    found = tolerances.deviation(np.array(want), np.array(got))
    assert found == expected
    assert _deviation((np.array(want),), (np.array(got),)) == expected


def test_differences_mark_each_non_finite_disagreement():
    diff = tolerances.differences(np.array([1.0, NAN, INF, 2.0, 5.0]), np.array([1.5, NAN, INF, NAN, -INF]))
    assert diff.tolist() == [0.5, 0.0, 0.0, INF, INF]


def test_the_spec_comparison_sees_a_difference_beside_an_agreeing_infinity():
    """An infinity the function shares with the spec (|∞ − ∞| is NaN) must not hide a real difference elsewhere:
    argmax would pick the NaN and the comparison NaN > allowed is False."""
    checker = Checker.__new__(Checker)
    checker.relative = 1e-10
    checker.target = SimpleNamespace(algorithm=SimpleNamespace(outputs=[SimpleNamespace(name="y")]),
                                     shape=lambda shape, name: shape, index=lambda at, name: at)
    want, got = (np.array([INF, 1.0]),), (np.array([INF, 5.0]),)
    with pytest.raises(Failed) as failed:
        checker.compare_spec(want, got, values=True)
    assert failed.value.property == "spec" and "|Δ| = 4" in str(failed.value)


def test_a_column_that_turns_nan_has_moved():
    """``masks``, ``causality`` and ``equivariance`` compare two runs of the function: a column that becomes NaN
    when hidden inputs change moved (by inf), it did not stay."""
    checker = Checker.__new__(Checker)
    checker.relative = 1e-10
    before, after = (np.array([[1.0, 2.0]]),), (np.array([[1.0, NAN]]),)
    with pytest.raises(Failed) as failed:
        checker._moved("masks", before, after, slice(None), "moved")
    assert failed.value.property == "masks" and "|Δ| = inf" in str(failed.value)
    assert checker._moved("masks", (np.array([[NAN, 2.0]]),), (np.array([[NAN, 2.0]]),), slice(None), "") == 0.0


def test_verify_relative_error_is_never_blind_to_a_nan():
    pytest.importorskip("torch")
    from reference.verification.checks import relative_error
    assert relative_error(np.array([INF, 1.0]), np.array([INF, 3.0])) == 2.0
    assert relative_error(np.array([1.0, 2.0]), np.array([1.0, INF])) == INF


def test_non_finite_ranks_last_among_the_nearest():
    def trial(deviation):
        return Trial({}, {}, failure={"property": "spec", "deviation": deviation})
    ranked = sorted([trial(INF), trial(NAN), trial(None), trial(0.5), trial(0.0)], key=Trial.distance)
    assert [t.failure["deviation"] for t in ranked[:2]] == [0.0, 0.5]
    assert all(t.distance()[2] == INF for t in ranked[2:])


def test_identify_of_an_all_nan_function_says_non_finite(capsys):
    """The issue: every nearest variant read "fails finite, deviation 0.00e+00"."""
    result = identify(all_nan, "attention", n_examples=1, max_size=3, budget=4)
    nearest = [t for t in result.nearest() if t.failure["property"] == "finite"]   # (others take no mask)
    assert len(nearest) >= 2 and all(t.failure["deviation"] == INF for t in nearest)   # as many as the budget meets
    status = main(["conform", f"{__file__}:all_nan", "--algorithm", "attention", "--identify", "--budget", "4",
                   "--examples", "1", "--max-size", "3"])
    out = capsys.readouterr().out
    assert status == 1 and "deviation 0.00e+00" not in out
    assert out.count("fails finite, deviation non-finite") == len(nearest)
    status = main(["conform", f"{__file__}:all_nan", "--algorithm", "attention", "--identify", "--budget", "4",
                   "--examples", "1", "--max-size", "3", "--json"])
    report = json.loads(capsys.readouterr().out)
    finite = [n["failure"]["deviation"] for n in report["nearest"] if n["failure"]["property"] == "finite"]
    assert status == 1 and finite == ["Infinity"] * len(nearest)
