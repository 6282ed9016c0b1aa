"""One record per algorithm (:mod:`reference.records`): every algorithm with examples has its runner,
its correct implementation's factory, its tolerances, mutants and controls, each declared once beside the code
it is about; the roles and properties declared on the formal objects hold on the spec itself, and a wrong one
is caught; a property claim needs an input of role "tokens"."""

import copy

import numpy as np
import pytest

from formal import algorithms
from formal.errors import ConfigError
from formal.sampling.examples import EXAMPLE_ALGORITHMS, example
from formal.tools.claims import check_text
from reference import records as records_module
from reference.catalogue import catalogue
from reference.conformance.conform import conform
from reference.model import runners
from reference.records import permute, record, records
from tests.tiers import fast_few, in_fast_tier


def test_every_algorithm_with_examples_has_a_record():
    pytest.importorskip("torch")  # the runners are found in the torch modules
    assert [r.name for r in records()] == list(EXAMPLE_ALGORITHMS)
    assert set(runners.supported()) == set(EXAMPLE_ALGORITHMS) == set(catalogue.implementations())
    for r in records():
        assert r.runner.algorithm == r.name and callable(r.runner.run), r.name
        assert callable(r.factory) and callable(r.factory()), r.name
        assert set(r.paths) >= {"explicit"}, r.name
        assert r.controls and all(e.algorithm == r.name for e in r.controls + r.mutants), r.name


def test_a_bound_is_measured_on_its_example():
    """float64's bound is fixed; a lower precision's comes from the example (its baseline), so it needs the
    example's arguments, and an unknown precision has none."""
    from formal.sampling.examples import examples
    from reference import tolerances
    ex = examples("attention", 1, seed=2, boundary=False)[0]
    want = ex.algorithm(**ex.arguments)
    assert tolerances.allowed("float64", ex.algorithm, want) == tolerances.FLOAT64 * tolerances.scale(want)
    assert 0 < tolerances.allowed("float32", ex.algorithm, want, ex.arguments) < \
        tolerances.allowed("bfloat16", ex.algorithm, want, ex.arguments) < tolerances.scale(want)
    with pytest.raises(ConfigError, match="pass its arguments"):
        tolerances.allowed("bfloat16", ex.algorithm, want)
    with pytest.raises(ConfigError, match="no bound for dtype 'float16'"):
        tolerances.allowed("float16", ex.algorithm, want, ex.arguments)


def test_the_losses_are_those_the_training_algorithms_step_along():
    """Algorithms 11–13 take gradient steps on edloss, eloss and dloss: those have the SGD-step check."""
    assert {r.name for r in records() if r.loss} == {"edloss", "eloss", "dloss"}


def test_unknown_algorithms_have_no_record():
    pytest.importorskip("torch")  # the runners are found in the torch modules
    with pytest.raises(ConfigError, match="no record of 'dtraining'"):
        record("dtraining")
    with pytest.raises(ConfigError, match="dtraining is trained with reference.model.training.train"):
        runners.runner("dtraining")
    with pytest.raises(ConfigError, match="verify knows no algorithm 'nope'"):
        records_module.chosen(["nope"])


def _the_spec(algorithm):
    """The spec's own numpy execution as a function conform calls (a model's parameters come as one dict)."""
    def spec(**arguments):
        arguments.pop("device", None)
        return algorithm(**arguments.pop("params", {}), **arguments)
    return spec


DECLARED = [  # (algorithm, options): variants whose objects declare masks, causality or a permutation
    ("single_query_attention", {}), ("attention", {}), ("mhattention", {"n_kv_heads": 1}),
    ("dtransformer", {}), ("edtransformer", {"position": "none"}), ("seq2seq", {}),
    ("etransformer", {"position": "none", "token_types": True}),
    ("rnn_layer", {"direction": "backward", "cell": "gru"}), ("rnn", {"cell": "rnn"}),
]


@pytest.mark.parametrize("name, options", fast_few(DECLARED, keep=lambda d: in_fast_tier(d[0]), unpack=True),
                         ids=[n for n, _ in DECLARED])
def test_the_declared_properties_hold_on_the_spec(name, options):
    """conform runs on the spec itself the properties its object declares: each one applies and holds."""
    algorithm = algorithms.get(name, **options)
    r = record(algorithm)
    report = conform(_the_spec(algorithm), algorithm, n_examples=6, max_size=5)
    assert report.ok, report.failure
    declared = {"masks": bool(r.hidden), "causality": r.causal is not None, "equivariance": bool(r.permutation)}
    assert any(declared.values())
    for prop, applies in declared.items():
        assert (report.checks[prop].examples > 0) == applies, (prop, report.checks[prop])


@pytest.mark.parametrize("name, options, wrong, prop", [
    ("rnn_layer", {"direction": "backward"}, {"causal": "forward"}, "causality"),
    ("dtransformer", {}, {"permutation": {"x": "equivariant"}}, "equivariance"),
])
def test_a_wrong_declaration_is_caught(name, options, wrong, prop):
    """A property declared where it does not hold fails on the spec itself, naming the property."""
    algorithm = copy.copy(algorithms.get(name, **options))
    for key, value in wrong.items():
        setattr(algorithm, key, value)
    report = conform(_the_spec(algorithm), algorithm, n_examples=6, max_size=5)
    assert not report.ok and report.failure["property"] == prop, report.failure


def test_permuting_the_tokens_permutes_what_runs_over_them():
    """The token types of BERT run over the same positions as its tokens: they move with them."""
    ex = example(algorithms.etransformer.variant(token_types=True), 3, small=6)
    x, s = ex.arguments["x"], ex.arguments["s"]
    perm = np.roll(np.arange(len(x)), 1)
    moved = permute(ex.algorithm, ex.arguments, "x", perm)
    assert np.array_equal(moved["x"], x[perm]) and np.array_equal(moved["s"], s[perm])
    assert moved["W_e"] is ex.arguments["W_e"]


@pytest.mark.parametrize("name", ["gat", "graph_conv", "attention", "mhattention"])
@pytest.mark.parametrize("seed", range(4))
def test_renumbering_the_tokens_with_their_masks_renumbers_the_spec(name, seed):
    """With ``masks=True`` a mask's axes over the tokens move with them (a graph's adjacency, an attention
    mask's columns and, in self-attention, its rows): the spec on the renumbered call is the spec's output with
    its columns renumbered — what conform's equivariance check relies on for masked inputs.  A rotation reads the
    tokens' positions, not their renumbering, so the attention variants are drawn without one."""
    from reference.conformance.conform import normalise
    ex = example(name, seed, small=6, **({"rope": None} if "attention" in name else {}))
    arguments = normalise(ex)
    token = "X"
    n = arguments[token].shape[-1]
    perm = np.random.default_rng(seed).permutation(n)
    moved = permute(ex.algorithm, arguments, token, perm, masks=True)
    before = np.asarray(ex.algorithm(**arguments))
    after = np.asarray(ex.algorithm(**moved))
    np.testing.assert_allclose(after, before[..., perm], rtol=1e-12, atol=1e-12)
    fixed = permute(ex.algorithm, arguments, token, perm)
    masks = [s.name for s in ex.algorithm.inputs if s.kind == "mask"]
    assert all(fixed[m] is arguments[m] for m in masks)   # a claim's fixed mask stays as it is


@pytest.mark.parametrize("name, fragment", [
    ("layer_norm", 'layer_norm has no input of role "tokens"'),
    ("show_attend_tell", "show_attend_tell has several outputs"),
    ("dtraining", "property claims are checked for attention, mhattention"),
])
def test_a_property_claim_needs_tokens(name, fragment):
    [verdict] = check_text(f'[[claim]]\nid = "c"\nalgorithm = "{name}"\nproperty = "causal"\n')
    assert verdict.verdict == "invalid" and fragment in verdict.reason, verdict.reason



def _homes(name) -> tuple:
    """The modules that define algorithm ``name``: its formal family's, its torch runner's, its catalogue entry's —
    each as its file's name."""
    return (algorithms.family(name).rpartition(".")[2], record(name).runner.run.__module__.rpartition(".")[2],
            record(name).factory.__module__.rpartition(".")[2])


def _apart(names) -> dict:
    return {name: homes for name in names if len(set(homes := _homes(name))) > 1}


def test_an_algorithm_lives_in_modules_of_one_name_in_every_tree():
    """The recipe for an algorithm touches one module per tree, with matching names: formal/algorithms/F.py,
    reference/model/F.py (its torch runner) and reference/catalogue/F.py (its independent implementation)."""
    pytest.importorskip("torch")
    apart = _apart(EXAMPLE_ALGORITHMS)
    assert not apart, f"algorithms whose modules are named apart (formal, torch, catalogue): {apart}"


def test_the_name_check_catches_an_algorithm_moved_out_of_its_family(monkeypatch):
    pytest.importorskip("torch")
    from reference.catalogue import recurrent
    monkeypatch.setattr(recurrent.rnn_cell, "__module__", "reference.catalogue.cells")   # as it was, in cells.py
    assert _apart(["rnn_cell", "gru_cell"]) == {"rnn_cell": ("recurrent", "recurrent", "cells")}
