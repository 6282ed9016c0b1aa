"""The command line: `list` and `show`, one-line errors with exit status 2, never a traceback."""

import argparse
import json
import re
import subprocess
import sys

import pytest
import sympy as sp

import formal
from formal import ConfigError
from formal.cli import bounded_int, main
from formal.symbols import dim


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_list_names_every_algorithm(capsys):
    status, out, _ = run(capsys, "list")
    assert status == 0
    for algorithm in formal.ALGORITHMS.values():
        assert algorithm.name in out


def test_list_json(capsys):
    status, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)["algorithms"]
    assert sorted({r["number"] for r in rows}) == list(range(1, 16))
    assert rows[4]["options"].keys() == {"bias", "empty", "n_kv_heads"}


def _parse(expr: str):
    """Parse a JSON dim string without evaluating text: only integers, symbols, + and *."""
    terms = []
    for term in expr.replace(" ", "").replace("-", "+-").split("+"):
        if not term:
            continue
        factor = sp.Integer(1)
        for part in term.split("*"):
            sign = -1 if part.startswith("-") else 1
            part = part.lstrip("-")
            factor *= sign * (sp.Integer(int(part)) if part.isdigit() else dim(part))
        terms.append(factor)
    return sp.Add(*terms)


@pytest.mark.parametrize("name", list(formal.ALGORITHMS))
def test_show_json_has_the_signature_and_costs(capsys, name):
    status, out, _ = run(capsys, "show", name, "--json")
    assert status == 0
    data = json.loads(out)
    algorithm = formal.ALGORITHMS[name]
    assert data["number"] == algorithm.number and data["name"] == name
    assert set(data) >= {"inputs", "params", "outputs", "cost"}
    assert data["params"] == {p.name: [str(d) for d in p.shape] for p in algorithm.params}
    assert set(data["cost"]) >= {"params", "flops", "memory"}
    assert sp.expand(_parse(data["cost"]["params"]) - algorithm.param_count()) == 0


def test_show_mhattention_json_shapes(capsys):
    _, out, _ = run(capsys, "show", "mhattention", "--json")
    data = json.loads(out)
    assert data["outputs"] == {"V_tilde": ["d_out", "ell_x"]}
    assert data["params"]["W_o"] == ["d_out", "H*d_mid"]
    assert data["params"]["W_q"] == ["H", "d_attn", "d_x"]


def test_show_text_is_numbered_pseudocode_with_shapes_and_totals(capsys):
    status, out, _ = run(capsys, "show", "attention")
    assert status == 0
    assert "Algorithm 4: Ṽ ← Attention(X, Z | W_qkv, Mask)" in out
    for number, text in [(1, "Q ← W_q X + b_q1ᵀ"), (4, "S ← Kᵀ Q"), (5, "if ¬Mask[t_z, t_x]"),
                         (6, "return Ṽ = V softmax(S/√d_attn)")]:
        assert any(line.lstrip().startswith(f"{number}  ") and text in line for line in out.splitlines())
    assert "Totals (matmul convention)" in out and "Θ(" in out


def test_show_convention_full_differs(capsys):
    _, matmul, _ = run(capsys, "show", "attention", "--json")
    _, full, _ = run(capsys, "show", "attention", "--json", "--convention", "full")
    assert json.loads(matmul)["cost"]["flops"] != json.loads(full)["cost"]["flops"]


def test_show_latex_is_balanced(capsys):
    status, out, _ = run(capsys, "show", "mhattention", "--latex")
    assert status == 0
    assert out.count(r"\For{") == out.count(r"\EndFor") == 1
    assert out.startswith(r"\begin{algorithm}") and out.rstrip().endswith(r"\end{algorithm}")


def test_show_params_lists_canonical_names(capsys):
    status, out, _ = run(capsys, "show", "mhattention", "--params")
    assert status == 0
    assert "W_q" in out and "H×d_attn×d_x" in out
    status, out, _ = run(capsys, "show", "mhattention", "--params", "--json", "-o", "n_kv_heads=1")
    data = json.loads(out)
    assert data["params"]["W_k"]["shape"] == ["1", "d_attn", "d_z"]


def test_show_variant_options(capsys):
    _, out, _ = run(capsys, "show", "layer_norm", "-o", "norm=rms", "-o", "eps=1e-5", "--json")
    data = json.loads(out)
    assert data["options"] == {"norm": "rms", "eps": 1e-5} and "beta" not in data["params"]


def test_show_option_value_none_names_a_variant(capsys):
    """``position=none`` is the variant without positional embedding, not Python's None."""
    status, out, _ = run(capsys, "show", "dtransformer", "-o", "position=none", "--json")
    assert status == 0 and "W_p" not in json.loads(out)["params"]


@pytest.mark.parametrize("argv, message", [
    (["show", "nope"], "unknown algorithm 'nope'"),
    (["show", "attention", "--bogus"], "unrecognized arguments: --bogus"),
    (["show", "attention", "--convention", "flops"], "invalid choice: 'flops'"),
    (["show", "attention", "-o", "heads=2"], "no option 'heads'"),
    (["show", "attention", "-o", "bias"], "must be KEY=VALUE"),
    (["show", "layer_norm", "-o", "eps=-1"], "eps = -1"),
    (["show", "attention", "--json", "--latex"], "not allowed with"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
    # integer options are parsed with their bounds (bounded_int): a usage error, never a traceback
    (["complexity", "gpt2", "--seq-len", "-1"], "argument --seq-len: -1 must be a positive integer"),
    (["complexity", "gpt2", "--seq-len", "1.5"], "argument --seq-len: '1.5' must be a positive integer"),
    (["complexity", "gpt2", "--batch", "0"], "argument --batch: 0 must be a positive integer"),
    (["complexity", "gpt2", "--batch", "lots"], "argument --batch: 'lots' must be a positive integer"),
    (["graph", "random", "--n", "64", "--random", "2", "--seed", "-1"],
     "argument --seed: -1 must be a non-negative integer"),
])
def test_bad_usage_prints_one_line_and_exits_2(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
    assert err.startswith("formal-transformers: error:")


@pytest.mark.parametrize("minimum, maximum, text, value", [
    (0, None, "0", 0), (0, None, " 12 ", 12), (1, None, "1", 1), (-3, 3, "-3", -3), (-3, 3, "3", 3),
])
def test_bounded_int_parses_integers_within_its_bounds(minimum, maximum, text, value):
    assert bounded_int(minimum, maximum)(text) == value


@pytest.mark.parametrize("minimum, maximum, text, message", [
    (0, None, "-1", "-1 must be a non-negative integer"), (1, None, "0", "0 must be a positive integer"),
    (2, None, "1", "1 must be an integer ≥ 2"), (1, 8, "9", "9 must be an integer from 1 to 8"),
    (0, None, "1.0", "'1.0' must be a non-negative integer"), (0, None, "", "'' must be a non-negative integer"),
    (0, None, "0x10", "'0x10' must be"), (0, None, "9" * 5000, "must be a non-negative integer"),
])
def test_bounded_int_rejects_the_rest_in_one_line(minimum, maximum, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(message)) as caught:
        bounded_int(minimum, maximum)(text)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200


@pytest.mark.parametrize("minimum, maximum", [(1.5, None), (True, None), (3, 2), (0, "9")])
def test_bounded_int_with_bad_bounds_is_a_config_error(minimum, maximum):
    with pytest.raises(ConfigError, match="bounded_int"):
        bounded_int(minimum, maximum)


def test_python_dash_m_formal_works_as_a_process():
    """`python -m formal show attention --json` runs as a whole process; a bad name exits 2 without a
    traceback."""
    good = subprocess.run([sys.executable, "-m", "formal", "show", "attention", "--json"],
                          capture_output=True, text=True, check=False)
    assert good.returncode == 0 and json.loads(good.stdout)["number"] == 4
    bad = subprocess.run([sys.executable, "-m", "formal", "show", "nope"], capture_output=True, text=True,
                         check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.splitlines()) == 1
