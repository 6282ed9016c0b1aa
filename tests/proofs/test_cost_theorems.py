"""The cost and graph theorems: an undecided check neither proves nor rejects; Kaplan's N and C_forward and
the training step read from the lines; honest levels for the graph counts; and every catalogued bug of the
cost side and of the graphs makes the theorems it is about fail, each in a fresh interpreter."""

import json

import pytest
import sympy as sp

from formal.core.symbols import by_name
from proofs.checks import nonnegative
from proofs.mutants.costs import MUTANTS as COST_MUTANTS
from proofs.mutants.entry import WHERE
from proofs.mutants.graphs import MUTANTS as GRAPH_MUTANTS
from proofs.registry import theorems
from proofs.theorem import Outcome, Theorem, run

MUTANTS = COST_MUTANTS + GRAPH_MUTANTS
NAMES = {t.name: t for t in theorems()}


def _theorem(main, twin):
    return Theorem("fake", "s", "s", ("attention",), "symbolic", "m", "twin",
                   lambda perturbed: twin if perturbed else main)


# ------------------------------------------------------------------------------------ undecided outcomes
def test_an_undecided_twin_is_not_rejected():
    result = run(_theorem(Outcome(True, "held"), Outcome.undecided("the test does not apply")))
    assert result.proved and not result.twin_rejected and result.twin_undecided and not result.ok
    assert result.as_json()["twin"]["result"] == "undecided"


def test_a_twin_refuted_without_a_counterexample_is_not_rejected():
    result = run(_theorem(Outcome(True, "held"), Outcome(False, "")))
    assert not result.twin_rejected and result.twin_verdict == "undecided"


def test_an_undecided_statement_is_not_proved():
    result = run(_theorem(Outcome.undecided("no test applies"), Outcome(False, "at n = 1")))
    assert not result.proved and result.undecided and result.as_json()["result"] == "undecided"
    assert run(_theorem(Outcome(False, "at n = 1"), Outcome(False, "at n = 1"))).verdict == "failed"


def test_nonnegative_is_undecided_where_its_sufficient_test_fails_and_no_point_is_negative():
    H, d = by_name("H"), by_name("d")
    square = nonnegative((H - d) ** 2)          # ≥ 0, but not coefficientwise after x = 1 + t
    assert square.holds is None and not square.decided
    negative = nonnegative(H - 2 * d)
    assert negative.holds is False and "H = 1, d = 1" in negative.detail and "-1" in negative.detail


def test_the_prove_table_says_undecided(monkeypatch, capsys):
    from formal.tools.cli import main
    from proofs import registry
    fake = _theorem(Outcome(True, "held"), Outcome.undecided("the test does not apply"))
    monkeypatch.setattr(registry, "theorems", lambda: [fake])
    assert main(["prove", "fake"]) == 1
    out = capsys.readouterr().out
    assert "UNDECIDED (FAIL)" in out and "0 twins rejected" in out
    assert main(["prove", "fake", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["theorems"][0]["twin"]["result"] == "undecided"


# ------------------------------------------------------------------------------ the lines' products
def test_product_flops_are_the_matmul_forward_pass_and_less_than_full():
    from formal import algorithms
    from proofs.products import product_flops
    for name in ("dtransformer", "etransformer", "mhattention"):
        algorithm = algorithms.get(name)
        assert sp.expand(product_flops(algorithm) - algorithm.cost("matmul").flops) == 0, name
        assert sp.expand(product_flops(algorithm, "full") - algorithm.cost("full").flops) != 0, name
    weights = product_flops(algorithms.get("dtransformer"), roles=("weight",))
    assert sp.expand(algorithms.get("dtransformer").cost("matmul").flops - weights) != 0


def test_weight_matrices_are_the_multiplied_parameters():
    from formal import algorithms
    from proofs.products import weight_matrices
    names = [p.name for p in weight_matrices(algorithms.get("dtransformer", bias=False, position="none"))]
    assert names == ["W_q", "W_k", "W_v", "W_o", "W_mlp1", "W_mlp2"]


def test_the_kaplan_remainder_names_a_term_that_is_not_o_of_l_d():
    from proofs.kaplan import _remainder_is_o
    L, d, ell_max = by_name("L"), by_name("d"), by_name("ell_max")
    assert _remainder_is_o(4 * L * d + 2 * d, L * d).holds is True
    outcome = _remainder_is_o(4 * L * d + 2 * d + ell_max * d, L * d)
    assert outcome.holds is False and "d·ℓ_max" in outcome.detail


def test_kaplan_c_forward_per_token_matches_table_1_at_a_point():
    """An independent reading at one size: 2N + 2·L·ℓ·H·d_attn, with N written out from Kaplan's Table 1."""
    from formal import algorithms
    sizes = {"L": 3, "H": 2, "d_attn": 5, "d_mid": 7, "d_e": 11, "d_mlp": 13, "ell": 17, "N_V": 19}
    flops = algorithms.get("dtransformer", bias=False, position="none").cost("kaplan").flops
    n = 2 * 3 * 11 * (2 * 5 + 2 * 7 + 13)            # L·(W_q, W_k: H·d_attn·d_e; W_v, W_o: H·d_mid·d_e; MLP)
    assert flops.xreplace({by_name(k): v for k, v in sizes.items()}) == 17 * (2 * n + 2 * 3 * 17 * 2 * 5)


# ---------------------------------------------------------------------------------------------- levels
@pytest.mark.parametrize("name", ["causal-edge-count", "sliding-window-edge-count"])
def test_graph_counts_checked_up_to_a_bound_say_so(name):
    theorem = NAMES[name]
    assert theorem.level == "exhaustive" and "≤ 40" in theorem.method


def test_new_and_restated_theorems_are_registered():
    for name in ("kaplan-n", "kaplan-c-forward", "training-step-3x-forward"):
        assert NAMES[name].level == "symbolic"
    assert "product" in NAMES["training-step-3x-forward"].statement


# --------------------------------------------------------------------------------------------- mutants
def test_the_catalogue_is_well_formed():
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)
    for m in MUTANTS:
        assert m.about and set(m.about) <= set(NAMES) and m.where in WHERE, m.name
    covered = {name for m in MUTANTS for name in m.about}
    assert covered >= {"kaplan-n", "kaplan-c-forward", "parameter-closed-forms", "gqa-kv-cache-ratio",
                       "generation-growth", "kv-cache-saves-work", "training-step-3x-forward",
                       "sliding-window-edge-count", "causal-edge-count", "window-receptive-field",
                       "table1-path-lengths"}
