"""proofs/: every theorem proved and every perturbed twin rejected; the runner fails a theorem whose twin is
accepted or whose check breaks; the `prove` command's table, JSON and exit statuses."""

import json

import pytest

from proofs.registry import prove, theorems
from proofs.theorem import LEVELS, Outcome, Theorem, run
from tests.tiers import fast_few

THEOREMS = theorems()
# the theorems the fast tier proves (each under a second); the full suite proves them all
FAST = {"kaplan-n", "causal-edge-count", "softmax-shift-invariance", "online-softmax-merge", "flop-conventions-ordered",
        "parameter-closed-forms"}


def test_at_least_twenty_theorems_each_labelled():
    assert len(THEOREMS) >= 20
    assert len({t.name for t in THEOREMS}) == len(THEOREMS)
    assert FAST <= {t.name for t in THEOREMS}, FAST - {t.name for t in THEOREMS}
    for t in THEOREMS:
        assert t.statement and t.latex and t.twin and t.method and t.about, t.name
        assert any(t.level.split(",")[0] == level.split(",")[0] for level in LEVELS), t.level


@pytest.mark.parametrize("theorem", fast_few(THEOREMS, keep=lambda t: t.name in FAST),
                         ids=[t.name for t in THEOREMS])
def test_proved_and_twin_rejected(theorem):
    result = run(theorem)
    assert result.proved, result.detail
    assert result.twin_rejected, f"the twin was accepted: {result.counterexample}"
    assert result.counterexample, "a rejected twin shows its counterexample"


def _fake(holds_main, holds_twin, raises=False):
    def check(perturbed):
        if raises:
            raise RuntimeError("broken")
        return Outcome(holds_twin if perturbed else holds_main, "detail")
    return Theorem("fake", "s", "s", ("attention",), "symbolic", "m", "twin", check)


@pytest.mark.parametrize("main, twin, raises, ok", [(True, False, False, True), (True, True, False, False),
                                                     (False, False, False, False), (True, False, True, False),
                                                     (True, None, False, False), (None, False, False, False)])
def test_the_runner_fails_a_checker_that_cannot_fail(main, twin, raises, ok):
    """A twin that is accepted or undecided, or a check that raises, is a failure: never a pass."""
    assert run(_fake(main, twin, raises)).ok is ok


def test_prove_command(capsys):
    from formal.tools.cli import main
    assert main(["prove", "kaplan-n", "sqrt-d-scaling", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in report["theorems"]] == ["kaplan-n", "sqrt-d-scaling"]
    first = report["theorems"][0]
    assert first["result"] == "proved" and first["twin"]["result"] == "rejected" and first["twin"]["counterexample"]
    assert set(first) >= {"name", "statement", "level", "result", "twin", "seconds"}
    assert main(["prove", "kaplan-n"]) == 0
    assert "1 theorems: 1 proved, 1 twins rejected" in capsys.readouterr().out
    assert main(["prove", "nosuch"]) == 2
    assert "no theorem 'nosuch'" in capsys.readouterr().err
    assert main(["prove", "--list"]) == 0
    assert "kaplan-n" in capsys.readouterr().out


def test_prove_returns_results_in_order():
    names = ["causal-edge-count", "kaplan-n"]
    assert [r.theorem.name for r in prove(names)] == names
