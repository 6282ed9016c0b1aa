"""`formal-transformers conform --identify`: the search finds the variant an implementation written as real code
writes it is (GPT-2's decoder, torch's GRU cell, torch's layer norm), names every variant that passes, tries only
the variants the declarations allow, and names the nearest variants with their failing property when none
passes (a planted bug)."""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from formal import algorithms
from formal.errors import ConfigError
from formal.tools.cli import main
from reference.conformance.candidates import identify_text
from reference.conformance.identify import identify, variants
from tests.tiers import slow

ROOT = Path(__file__).parents[3]
TARGETS = Path(__file__).parent / "targets"
#: The GPT-2 searches fix the options GPT-2 shares with the spec's defaults, and stay small, so that each test
#: takes seconds: 4 eps × 4 activations × bias × tied × norm position = 128 variants.
GPT2_FIXED = ("-o", "position=learned", "-o", "n_kv_heads=none", "-o", "norm=layer")
SMALL = ("--examples", "3", "--max-size", "5")


def run(capsys, target, *args):
    status = main(["conform", target, *args])
    out, err = capsys.readouterr()
    return status, out, err


@slow
def test_gpt2_is_identified_as_exactly_its_variant(capsys):
    """GPT-2's code (eps = 1e-5, GELU's tanh approximation, tied unembedding) is that variant and no other; every
    variant tried is reported once, and variants drawing the same arguments share one call of the function."""
    status, out, err = run(capsys, f"{ROOT}/examples/gpt2.py:gpt2", "--algorithm", "dtransformer", "--identify",
                           *GPT2_FIXED, *SMALL, "--json")
    report = json.loads(out)
    assert status == 0 and report["verdict"] == "identified"
    assert report["confirmed"] == [{"eps": 1e-5, "activation": "gelu-tanh", "tied": True}]
    assert report["fixed"] == {"position": "learned", "n_kv_heads": None, "norm": "layer"}
    # 128 variants of the classic options, and 367 of today's groups (rotary, QK-norm, caps), each group with the
    # other options at their defaults
    assert report["budget"] == {"limit": 4096, "used": 495, "space": 495, "cut": False, "not_fully_searched": []}
    tried = [json.dumps(t["options"], sort_keys=True) for t in report["tried"]]
    assert len(tried) == len(set(tried)) == 495
    grouped = [t["options"] for t in report["tried"] if t["options"].get("rope") or t["options"].get("qk_norm")]
    assert grouped and all(o.get("eps", 0.0) == 0.0 and o.get("activation", "gelu") == "gelu" for o in grouped)
    assert report["searched"]["eps"] == [0.0, 1e-12, 1e-6, 1e-5]
    assert report["function_calls"] < report["calls_asked"]
    assert err == ""  # no progress under --json


@slow
def test_gpt2_text_names_only_the_options_that_differ(capsys):
    status, out, err = run(capsys, f"{ROOT}/examples/gpt2.py:gpt2", "--algorithm", "dtransformer", "--identify",
                           *GPT2_FIXED, *SMALL)
    assert status == 0
    assert "CONFORMS to dtransformer with eps=1e-05, activation='gelu-tanh', tied=True" in out
    assert "eps (the values real code uses)" in out
    assert "identify: prune stage" in err  # 128 variants: progress on stderr


def test_readme_identify_example_prints_what_the_readme_shows(capsys, monkeypatch):
    """The README's `--identify` command, copied as written, prints the lines the README shows."""
    import re
    import shlex
    monkeypatch.chdir(ROOT)
    block = re.search(r"^\$ formal-transformers (conform --identify .+?)\n```", (ROOT / "README.md").read_text(),
                      re.M | re.S).group(1)
    command, *shown = block.split("\n")
    command = command.rstrip("\\") + shown.pop(0)
    status, out, _ = run(capsys, *shlex.split(command)[1:])
    assert status == 0
    assert out.splitlines() == shown


def test_gru_cell_written_like_torch():
    """torch.nn.GRUCell in the spec's terms: two biases per gate (bias='double'), the reset gate after the
    recurrent product (reset='after'), h' = (1 − z) ⊙ n + z ⊙ h (update='cho', the default)."""
    result = identify(f"{TARGETS}/identify.py:gru_cell", "gru_cell", n_examples=4, max_size=5)
    assert [t.changes for t in result.confirmed] == [{"bias": "double", "reset": "after"}]
    assert result.space == len(result.trials) == 3 * 2 * 2


def test_layer_norm_with_torch_eps():
    """A layer norm with eps = 1e-5 is found among the searched values, and only that one."""
    result = identify(f"{TARGETS}/identify.py:layer_norm", "layer_norm", n_examples=4, max_size=5)
    assert [t.changes for t in result.confirmed] == [{"eps": 1e-5}]
    assert "CONFORMS to layer_norm with eps=1e-05\n" in identify_text(result)


def test_the_paper_eps_is_told_from_bert_eps():
    """eps = 0 (the paper's) and eps = 1e-12 (BERT's) differ by more than float64's tolerance where a token's
    features nearly agree (d_e = 2): a function object (run in this process) with eps = 0 is that variant only."""
    def layer_norm(e, gamma, beta):
        return (e - e.mean()) / np.sqrt(e.var()) * gamma + beta

    result = identify(layer_norm, "layer_norm", n_examples=4, max_size=5)
    assert [t.changes for t in result.confirmed] == [{}]
    bert = next(t for t in result.trials if t.changes == {"eps": 1e-12})
    assert bert.failure["property"] == "spec" and "d_e=2" in bert.failure["example"]


def test_several_passing_variants_are_all_named():
    """When several variants pass, the text names each and the options they differ in."""
    result = identify(f"{TARGETS}/identify.py:layer_norm", "layer_norm", n_examples=2, max_size=4)
    twin = next(t for t in result.trials if t.changes == {"eps": 1e-6})
    twin.verdict = "confirmed"          # as if eps = 1e-6 had passed too
    text = identify_text(result)
    assert "CONFORMS to 2 variants, indistinguishable on these examples (they differ in eps):" in text
    assert "  layer_norm with eps=1e-06\n  layer_norm with eps=1e-05\n" in text


@slow
def test_planted_bug_reports_the_nearest_variants(capsys):
    """GPT-2 without the 1/√d_attn of its scores: no variant passes (exit 1); the nearest is GPT-2's own
    variant, failing the spec comparison at an example it names."""
    status, out, _ = run(capsys, f"{TARGETS}/identify.py:gpt2_unscaled", "--algorithm", "dtransformer",
                         "--identify", *GPT2_FIXED, *SMALL, "--json")
    report = json.loads(out)
    assert status == 1 and report["verdict"] == "none" and report["confirmed"] == []
    nearest = report["nearest"]
    assert len(nearest) == 3
    assert nearest[0]["options"] == {"eps": 1e-5, "activation": "gelu-tanh", "tied": True}
    assert nearest[0]["failure"]["property"] == "spec" and "dtransformer(" in nearest[0]["failure"]["example"]
    passed = [n["examples_passed"] for n in nearest]
    assert passed == sorted(passed, reverse=True)
    status, out, _ = run(capsys, f"{TARGETS}/identify.py:gpt2_unscaled", "--algorithm", "dtransformer",
                         "--identify", *GPT2_FIXED, *SMALL)
    assert status == 1 and "NO VARIANT of dtransformer conforms" in out and "fails spec" in out


def _valid(name, options) -> bool:
    try:
        algorithms.get(name).option_specs.resolve(options, name)
    except ConfigError:
        return False
    return True


@pytest.mark.parametrize("name", ["rnn_layer", "conv1d", "attention", "seq2seq"])
def test_variants_are_those_the_declarations_allow(name):
    """The variants are exactly the combinations of searched values the builder accepts (an option with no
    effect kept at its default, no rule broken: the builder's own validation is the oracle), fewest changes
    from the defaults first.  The combinations: the raw product of the options of no group, today's groups (the
    rotary settings, the QK-norm, each cap) at their defaults; and each group's own raw product, everything else
    at its default."""
    specs = algorithms.get(name).option_specs
    found = variants(specs, {})
    groups = {}
    for n, o in specs.items():
        if o.group:
            groups.setdefault(o.group, set()).add(n)
    apart = set().union(*groups.values()) if groups else set()
    oracle = []
    for varied in [set(specs) - apart, *groups.values()]:
        values = [o.searched if n in varied else (o.default,) for n, o in specs.items()]
        oracle += [dict(zip(specs, combo)) for combo in itertools.product(*values)]
    want = {json.dumps(v, sort_keys=True) for v in oracle if _valid(name, v)}
    assert sorted(json.dumps(v, sort_keys=True) for v in found) == sorted(want)
    changes = [sum(v[k] != specs[k].default or type(v[k]) is not type(specs[k].default) for k in v) for v in found]
    assert changes == sorted(changes)


def test_fixed_options_are_not_searched():
    specs = algorithms.get("rnn_layer").option_specs
    found = variants(specs, {"cell": "gru", "direction": "forward"})
    assert found and all(v["cell"] == "gru" and v["direction"] == "forward" for v in found)
    assert len(found) == 3 * 2 * 2  # bias × reset × update; nonlinearity has no effect on a GRU


def test_budget_cuts_the_search_and_says_what_was_not_searched():
    result = identify(f"{TARGETS}/identify.py:layer_norm", "layer_norm", budget=3, n_examples=2, max_size=4)
    assert len(result.trials) == 3 and result.cut and not result.ok
    assert result.trials[0].changes == {}                        # the defaults first
    assert result.unsearched == ["norm", "eps"]
    assert "the budget cut the search short (5 variants untried" in identify_text(result)


@pytest.mark.parametrize("kwargs, message", [
    ({"algorithm": "token_embedding"}, "token_embedding has no option to search"),
    ({"algorithm": "dtraining"}, "conform --identify searches"),
    ({"algorithm": "layer_norm", "options": {"norm": "rms", "eps": 0.0}}, "every one is fixed by -o"),
    ({"algorithm": "layer_norm", "options": {"nosuch": 1}}, "layer_norm has no option 'nosuch'"),
    ({"algorithm": "layer_norm", "options": {"eps": -1.0}}, "eps = -1"),
    ({"algorithm": "layer_norm", "budget": 0}, "--budget = 0"),
])
def test_bad_usage_is_a_config_error(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        identify(f"{TARGETS}/identify.py:layer_norm", **kwargs)
