"""One naming scheme from parameter name to symbol: no rendering spells a Greek letter out, sets a word in
multi-letter italics or splits a name inside a word, and a parameter reads the same in the parameter list and
in the lines that use it."""

from __future__ import annotations

import re

import pytest

import formal
from formal.algorithms import ALGORITHMS
from formal.engine import render
from formal.engine.calls import CallOp
from formal.engine.names import symbol
from formal.ops import Apply, Ref
from formal.ops.indexing import Pick
from tests.tiers import fast_few, in_fast_tier

VARIANTS = [(name, {}) for name in ALGORITHMS] + [
    ("mhattention", {"n_kv_heads": 2}), ("dtransformer", {"n_kv_heads": 2}), ("mhattention", {"n_kv_heads": None}),
    ("edtransformer", {"norm_position": "pre"}), ("etransformer", {"norm_position": "pre"}),
]
FAST_VARIANTS = fast_few(VARIANTS, keep=lambda v: in_fast_tier(v[0]), unpack=True)

#: Words that are names, never products of italic letters.
WORDS = ("enc", "dec", "head", "mlp", "bar", "hat", "tilde", "patch", "init", "class", "loss", "data", "gamma",
         "beta", "theta", "alpha", "sources", "targets", "pool")
#: The marks of a name split inside a word by a misread underscore or Greek letter.
SPLITS = re.compile(r"b eta|g amma|t heta|_b ar|_h at|_h ead|\{sw_|_\{sw|enc_W|dec_W|(?<![\^(,])s\d_")


def _texts(algorithm):
    view = render.view(algorithm)
    latex = [view.header_latex, *view.inputs, *view.outputs, *(entry for entry, _ in view.params),
             *(line.latex for line in view.lines)]
    text = [view.header_text, *(line.text for line in view.lines),
            *(render._signature_entry(p) for p in algorithm.params)]
    return text, latex


def _italic_words(latex: str) -> list:
    """The known words left in ``latex`` once upright text (``\\mathrm{…}``, ``\\text{…}``) and macros are
    removed: each is a word set in multi-letter italics."""
    bare = re.sub(r"\\(?:mathrm|operatorname|text|textbf|mathbf)\{[^{}]*\}", " ", latex)
    bare = re.sub(r"\\[A-Za-z]+", " ", bare)
    return [w for w in WORDS if re.search(rf"(?<![A-Za-z]){w}", bare)]


@pytest.mark.parametrize("name, options", FAST_VARIANTS)
def test_no_mangled_names(name, options):
    algorithm = formal.get(name, **options)
    text, latex = _texts(algorithm)
    for entry in latex:
        assert not _italic_words(entry), f"{entry!r}: {_italic_words(entry)} in italics"
        assert not SPLITS.search(entry), entry
    for entry in text:
        assert not re.search(r"(?<![A-Za-z])(gamma|beta|theta)", entry), entry
        assert not SPLITS.search(entry), entry


def _used(node, found):
    """(parameter name, index) of every parameter a line reads itself (not through a call's label)."""
    if isinstance(node, Ref):
        found.append((node.name, None))
    elif isinstance(node, Apply) and not isinstance(node.op, CallOp):
        if isinstance(node.op, Pick) and isinstance(node.args[0], Ref):
            found.append((node.args[0].name, node.op.index.text()))
            return
        for arg in node.args:
            _used(arg, found)


@pytest.mark.parametrize("name, options", FAST_VARIANTS)
def test_a_parameter_reads_the_same_in_the_list_and_the_lines(name, options):
    algorithm = formal.get(name, **options)
    params = {p.name for p in algorithm.params}
    for record in algorithm.derivation.records:
        if not hasattr(record.line, "expr"):
            continue
        found = []
        _used(record.line.expr, found)
        line = render.line_text(record.line)
        for param, index in found:
            if param in params:
                assert symbol(param, index=index) in line, f"{param} as {symbol(param, index=index)!r}: {line!r}"


@pytest.mark.parametrize("name, text, latex", [
    ("gamma1", "γ^1", r"\gamma^{1}"), ("beta_f", "β_f", r"\beta_{f}"), ("W_mlp1", "W_mlp1", r"W_{\mathrm{mlp1}}"),
    ("enc_W_q", "W^enc_q", r"W^{\mathrm{enc}}_{q}"), ("cross_W_o", "W^e/d_o", r"W^{\mathrm{e/d}}_{o}"),
    ("s1_sw_beta1", "β^(1,s1,sw)", r"\beta^{1,\mathrm{s1},\mathrm{sw}}"), ("B_hat", "B̂", r"\hat{B}"),
    ("W_head", "W_head", r"W_{\mathrm{head}}"), ("theta_hat", "θ̂", r"\hat{\theta}"), ("x_class", "x_class",
                                                                                     r"x_{\mathrm{class}}"),
    ("enc_W_xi_back", "W^(enc,←)_xi", r"W^{\mathrm{enc},\leftarrow}_{xi}"), ("Y_h", "Y^h", "Y^{h}"),
])
def test_the_scheme(name, text, latex):
    assert symbol(name) == text and symbol(name, latex=True) == latex


def test_a_layer_slice_is_written_as_the_paper():
    assert symbol("gamma1", index="l") == "γ^1_l" and symbol("W_mlp1", index="l") == "W^l_mlp1"
    assert symbol("gamma1", latex=True, index="l") == r"\gamma^{1}_{l}"


def test_grouped_query_heads_read_unambiguously():
    """⌈2h/H⌉ for two key/value heads (never h2, which reads as h₂); h itself at one per head."""
    two = render.to_latex(formal.get("mhattention", n_kv_heads=2))
    assert r"\lceil 2h/H \rceil" in two and "h 2" not in two
    assert "⌈" not in render.to_text(formal.get("mhattention"))


@pytest.mark.parametrize("name, options", FAST_VARIANTS)
def test_no_raw_latex_in_the_views_text(name, options):
    """The View's text fields (summary, notes, meanings, the leading order) hold no LaTeX; the leading order
    has a LaTeX form of its own."""
    view = render.view(formal.get(name, **options))
    texts = [view.summary, *view.notes, *(doc for _, doc in view.params), *view.assumptions,
             *(lead for lead in view.leading.values() if lead), *(o.meaning for o in view.options)]
    assert not [t for t in texts if "_{" in t or "^{" in t or "\\" in t]
    for convention, lead in view.leading.items():
        assert (lead is None) == (view.leading_latex[convention] is None)
        assert lead is None or view.leading_latex[convention].startswith(r"\Theta\left(")


def test_parameters_are_grouped_as_the_paper():
    """Algorithm 10's parameters as the paper lists them: W_e, W_p; for l ∈ [L]: the attention's, γ¹_l, β¹_l,
    γ²_l, β²_l, W^l_mlp1, b^l_mlp1, W^l_mlp2, b^l_mlp2; γ, β, W_u — each per-layer one written as its slice."""
    groups = render.view(formal.get("dtransformer")).param_groups
    headings = [heading for heading, _ in groups]
    assert headings == ["", r"\text{for } l \in [L]", ""]
    first, layer, last = (entries for _, entries in groups)
    assert [e.split(r" \in")[0] for e in first] == ["W_{e}", "W_{p}"]
    assert [e.split(r" \in")[0] for e in last] == [r"\gamma", r"\beta", "W_{u}"]
    names = [e.split(r" \in")[0] for e in layer]
    assert {r"\gamma^{1}_{l}", r"\beta^{1}_{l}", r"\gamma^{2}_{l}", r"\beta^{2}_{l}", r"W^{l}_{\mathrm{mlp1}}",
            r"b^{l}_{\mathrm{mlp1}}", r"W^{l}_{\mathrm{mlp2}}", r"b^{l}_{\mathrm{mlp2}}", "W^{l}_{q}"} <= set(names)
    assert layer[names.index(r"\gamma^{1}_{l}")].endswith(r"\mathbb{R}^{d_{\mathrm{e}}}")  # the slice's shape
    assert [h for h, _ in render.view(formal.get("swin")).param_groups][1:5] == [
        rf"\text{{stage {n}}}" for n in range(1, 5)]
