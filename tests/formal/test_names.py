"""One naming scheme from a value's name to its symbol (:mod:`formal.engine.names`): what ``show``, ``show --latex``
and the docs write for a parameter, in its list and in the lines — never a name spelt out in italic letters."""

import re

import pytest

from formal import algorithms
from formal.engine.names import symbol, with_index
from formal.engine.render import display, view

#: The paper's own multi-letter italic subscript: W_qkv, the query, key and value weights together.
PAPERS_OWN = {"qkv"}


def italic_words(tex: str) -> list:
    """Runs of three or more letters a LaTeX formula sets in italic: a name read as a product of variables."""
    t = re.sub(r"\\(?:mathrm|text|operatorname|textbf|mathbf|mathbb|begin|end)\{(?:[^{}]|\{[^{}]*\})*\}", " ", tex)
    t = re.sub(r"\\[A-Za-z]+", " ", t)
    return [w for w in re.findall(r"[A-Za-z]{3,}", t) if w not in PAPERS_OWN]


VARIANTS = [(name, {}) for name in algorithms.ALGORITHMS] + [
    ("mhattention", {"n_kv_heads": 2}), ("dtransformer", {"n_kv_heads": 2, "activation": "swiglu"}),
    ("etransformer", {"inputs": "image", "head": "classifier", "position": "learned"})]


@pytest.mark.parametrize("name, options", VARIANTS, ids=[f"{n}{o or ''}" for n, o in VARIANTS])
def test_no_name_is_set_as_italic_letters(name, options):
    v = view(algorithms.get(name, **options))
    texts = [e for e, _ in v.params] + [line.latex for line in v.lines] + list(v.inputs) + list(v.outputs)
    found = {w for tex in texts + [v.header_latex] for w in italic_words(tex)}
    assert not found, f"{name} {options}: italic words {sorted(found)}"


@pytest.mark.parametrize("name, text, tex", [
    ("gamma1", "γ^1", r"\gamma^{1}"),                      # the paper's γ¹_l of the first layer norm
    ("beta", "β", r"\beta"),
    ("W_mlp1", "W_mlp1", r"W_{\mathrm{mlp1}}"),            # a word subscript is upright
    ("enc_W_mlp1", "W_mlp1^(enc)", r"W_{\mathrm{mlp1}}^{\mathrm{enc}}"),
    ("cross_W_q", "W_q^(e/d)", r"W_{q}^{\mathrm{e/d}}"),   # the paper's W^{e/d}
    ("s1_sw_gamma1", "γ^(1,s1,sw)", r"\gamma^{1,\mathrm{s1},\mathrm{sw}}"),
    ("s2_B_hat", "B̂^(s2)", r"\hat{B}^{\mathrm{s2}}"),
    ("W_head", "W_head", r"W_{\mathrm{head}}"),
    ("x_bar", "x̄", r"\bar{x}"),
    ("loss", "loss", r"\mathrm{loss}"),
])
def test_a_name_and_its_symbol(name, text, tex):
    assert (display(name), display(name, True)) == (text, tex)
    assert symbol(name) == text and symbol(name, True) == tex


def test_a_plain_name_is_left_as_it_is():
    assert symbol("W_q") is None and symbol("X") is None and display("W_q", True) == "W_{q}"


def test_a_layer_index_joins_a_prefix_and_replaces_a_loop_variable():
    assert with_index(r"W_{\mathrm{mlp1}}^{\mathrm{enc}}", "l", True) == r"W_{\mathrm{mlp1}}^{\mathrm{enc},l}"
    assert with_index("W_mlp1^(enc)", "l") == "W_mlp1^(enc,l)"
    assert with_index("K^{g}", r"\lceil 2h / H \rceil", True) == r"K^{\lceil 2h / H \rceil}"
    assert with_index("W_q", "l") == "W_q^l"


def test_a_parameter_reads_the_same_in_its_list_and_in_the_lines():
    """Algorithm 10: the norms' γ¹, β¹ and the MLP's W_mlp1 are written alike in the parameter list and the lines
    (with the layer index l there); Swin's classifier is W_head, b_head in both."""
    v = view(algorithms.get("dtransformer"))
    params = " ".join(e for e, _ in v.params)
    lines = " ".join(line.text for line in v.lines)
    assert r"\gamma^{1}" in params and "γ^1_l" in lines and "gamma1" not in params + lines
    assert r"W_{\mathrm{mlp1}}" in params and "W_mlp1^l" in lines
    swin = view(algorithms.get("swin"))
    assert r"W_{\mathrm{head}}" in " ".join(e for e, _ in swin.params)
    assert r"W_{\mathrm{head}}, b_{\mathrm{head}}" in swin.lines[-1].latex


def test_grouped_query_heads_read_as_a_ratio():
    """Head h reads key/value group ⌈h·H_kv/H⌉: with two groups ``⌈2h/H⌉`` (never ``h2``); one per head, h."""
    gqa = " ".join(line.text for line in view(algorithms.get("mhattention", n_kv_heads=2)).lines)
    assert "⌈2h/H⌉" in gqa and "h2" not in gqa.replace(" ", "")
    plain = algorithms.get("kv_mhattention")
    assert "⌈" not in " ".join(line.text for line in view(plain).lines)


def test_no_theorem_formula_sets_a_name_in_italic_letters():
    from proofs.registry import theorems
    found = {t.name: italic_words(t.latex) for t in theorems() if italic_words(t.latex)}
    assert not found, found
