"""Verdicts of formal.tools.claims against independent oracles: hand-written formulas, HF-free counts, the
issue's own examples; and every kind of invalid claim named by its field."""

from fractions import Fraction

import pytest

from formal.tools.claims import check_text


def one(text: str):
    [verdict] = check_text(text)
    return verdict


def claim(**fields) -> str:
    def value(v):
        if isinstance(v, str):
            return '"' + v.replace('"', '\\"') + '"'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)
    return "[[claim]]\n" + "\n".join(f"{k} = {value(v)}" for k, v in {"id": "c", **fields}.items()) + "\n"


# ------------------------------------------------------------------------------------- numbers
def test_gpt2_total_against_a_hand_count():
    """Oracle: GPT-2 small counted by hand from its shapes (tied unembedding counted once)."""
    d, L, V, T = 768, 12, 50257, 1024
    per_layer = 4 * d * d + 4 * d + 2 * d * 4 * d + 4 * d + d + 4 * d   # attention, MLP, two layer norms
    total = V * d + T * d + L * per_layer + 2 * d
    v = one(claim(model="gpt2", quantity="params.total", equals=total))
    assert v.verdict == "holds", v.reason
    assert one(claim(model="gpt2", quantity="params.total", equals=total + 1)).verdict == "fails"


def test_the_issue_examples():
    assert one(claim(model="gpt2", quantity="params.total", approx="117M")).verdict == "fails"
    v = one(claim(model="llama-2-7b", options={"n_kv_heads": 4}, quantity="kv_cache.bytes_per_token",
                  ratio_to={"model": "llama-2-7b"}, equals="1/8"))
    assert (v.verdict, v.derived) == ("holds", "1/8")
    v = one(claim(algorithm="mhattention", options={"bias": False}, sizes={"d_x": "d", "d_z": "d", "d_out": "d"},
                  quantity="params", equals="4*H*d_attn*d"))
    assert v.verdict == "fails"
    assert "holds when d_attn = d_mid" in v.reason
    v = one(claim(algorithm="attention", quantity="flops", convention="kaplan", theta="ell_x*ell_z",
                  **{"in": ["ell_x", "ell_z"]}))
    assert (v.verdict, v.derived) == ("holds", "Θ(ℓ_x·ℓ_z)")
    v = one(claim(graph="sliding-window", args={"n": 140000, "window": 4096, "layers": 32},
                  quantity="layers.receptive_field.max", approx="131K"))
    assert (v.verdict, v.derived) == ("holds", 32 * 4095 + 1)


def test_kv_cache_bytes_against_the_hand_formula():
    """Oracle: 2 (K and V) × layers × heads × head width × bytes."""
    v = one(claim(model="llama-2-7b", dtype="bf16", quantity="kv_cache.bytes_per_token",
                  equals=2 * 32 * 32 * 128 * 2))
    assert v.verdict == "holds"


def test_per_token_figures_are_exact_fractions():
    """vit-b16's forward FLOPs per token do not divide evenly: equals compares the exact fraction."""
    from formal.models.complexity import preset_report
    per_sequence = preset_report("vit-b16")["flops"]["forward_per_sequence"]
    exact = Fraction(per_sequence, 196)
    assert exact.denominator != 1
    v = one(claim(model="vit-b16", quantity="flops.forward_per_token", equals=f"{per_sequence}/196"))
    assert v.verdict == "holds"
    assert one(claim(model="vit-b16", quantity="flops.forward_per_token",
                     equals=round(float(exact)))).verdict == "fails"


def test_a_formula_at_a_models_sizes():
    v = one(claim(model="gpt2", quantity="kv_cache.bytes_per_token", equals="2*L*H*d_attn*4"))
    assert v.verdict == "holds"


# ------------------------------------------------------------------------------------- formulas
def test_symbolic_identity_with_sizes_bound_to_formulas():
    """Oracle: MHA without biases, heads of width d/H, is 4d² (Vaswani §3.2.2)."""
    v = one(claim(algorithm="mhattention", options={"bias": False},
                  sizes={"d_x": "d", "d_z": "d", "d_out": "d", "d_attn": "d/H", "d_mid": "d/H"},
                  quantity="params", equals="4*d**2"))
    assert v.verdict == "holds"


def test_a_failed_identity_gives_a_counterexample():
    v = one(claim(algorithm="attention", quantity="flops", equals="2*d_attn*ell_x*ell_z"))
    assert v.verdict == "fails"
    assert "the derived minus the claimed is" in v.reason and " at " in v.reason


@pytest.mark.parametrize("assertion, verdict", [("at_least", "holds"), ("at_most", "fails")])
def test_inequalities_are_proved_or_refuted(assertion, verdict):
    """params(bias) ≥ params(no bias) term by term: 2Hd(d_attn + d_mid) + biases ≥ 2Hd·d_attn + 2Hd·d_mid."""
    v = one(claim(algorithm="mhattention", sizes={"d_x": "d", "d_z": "d", "d_out": "d"}, quantity="params",
                  **{assertion: "2*H*d*d_attn + 2*H*d*d_mid"}))
    assert v.verdict == verdict, v.reason


def test_leading_term_of_kaplans_n():
    v = one(claim(model="gpt2", sizes={"L": "L", "d_mlp": "4*d_e"}, quantity="params.non_embedding",
                  leading="12*L*d_e**2", **{"in": ["d_e"]}))
    assert v.verdict == "holds"
    v = one(claim(model="gpt2", sizes={"L": "L", "d_mlp": "4*d_e"}, quantity="params.non_embedding",
                  leading="12*L*d_e**2 + 13*L*d_e", **{"in": ["d_e"]}))
    assert v.verdict == "fails"


@pytest.mark.parametrize("theta, verdict", [("ell_x*ell_z", "holds"), ("ell_x**2", "fails"),
                                            ("ell_x*ell_z + ell_x", "holds"), ("ell_x*ell_z*log(ell_x)", "fails")])
def test_theta_in_two_growing_sizes(theta, verdict):
    """Strict multivariate Θ: ℓ_x·ℓ_z is not Θ(ℓ_x²) (ℓ_z may grow alone)."""
    v = one(claim(algorithm="attention", quantity="flops", theta=theta, **{"in": ["ell_x", "ell_z"]}))
    assert v.verdict == verdict, v.reason


def test_measured_growth_of_a_graph():
    v = one(claim(graph="full", args={"n": 100}, quantity="layers.max_path_length", theta="1", **{"in": ["n"]}))
    assert v.verdict == "holds"
    v = one(claim(graph="sliding-window", args={"n": 100, "window": 2}, quantity="layers.max_path_length",
                  theta="log(n)", **{"in": ["n"]}))
    assert v.verdict == "fails"


def test_op_inputs():
    v = one(claim(op="softmax", inputs={"x": [1, 2, 3]}, approx=["0.09", "0.24", "0.67"]))
    assert v.verdict == "holds"
    v = one(claim(op="softmax", inputs={"x": [1, 2, 3]}, approx=["0.10", "0.20", "0.70"]))
    assert v.verdict == "fails" and "entry 1" in v.reason


def test_sinusoid_rows():
    """Oracle: Vaswani §3.5, PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(…)."""
    import math
    pos, d = 3, 4
    want = [f(pos / 10000 ** (2 * (j // 2) / d)) for j, f in enumerate([math.sin, math.cos] * 2)]
    v = one(claim(algorithm="positional_embedding", options={"encoding": "sinusoidal-vaswani"},
                  inputs={"t": pos}, sizes={"d_e": d, "ell_max": 8}, approx=want, abs_tol=1e-12))
    assert v.verdict == "holds", v.reason


def test_properties_hold_and_fail_with_a_counterexample():
    assert one(claim(algorithm="attention", mask="causal", property="causal")).verdict == "holds"
    v = one(claim(algorithm="attention", mask="causal", property="permutation_equivariant"))
    assert v.verdict == "fails" and "seed" in v.reason


def test_expect_is_reported():
    v = one(claim(model="gpt2", quantity="params.total", approx="117M", expect="fails"))
    assert (v.verdict, v.as_expected, v.ok) == ("fails", True, True)


# ------------------------------------------------------------------------------------- invalid claims
@pytest.mark.parametrize("fields, fragment", [
    (dict(model="gpt2", quantity="params.total"), "exactly one assertion"),
    (dict(model="gpt2", quantity="params.total", equals=1, approx="1M"), "exactly one assertion"),
    (dict(model="nosuch", quantity="params.total", equals=1), "nosuch"),
    (dict(model="gpt2", quantity="params.nosuch", equals=1), "params has total"),
    (dict(model="gpt2", quantity="flops", equals=1), "flops has forward"),
    (dict(model="bert-base", quantity="kv_cache.bytes_per_token", equals=1), "no kv_cache"),
    (dict(model="gpt2", quantity="params.total", approx=124000000), "states no precision"),
    (dict(model="gpt2", quantity="params.total", equals="__import__('os')"), "not part of a formula"),
    (dict(model="gpt2", quantity="params.total", equals="nosize*2"), "not a size here"),
    (dict(model="gpt2", sizes={"H": 5}, quantity="params.total", equals=1), "not divisible"),
    (dict(model="gpt2", options={"n_kv_heads": 5}, quantity="params.total", equals=1), "not divisible"),
    (dict(algorithm="attention", quantity="flops", approx="1M"), "approx compares numbers"),
    (dict(algorithm="attention", quantity="nosuch", equals=1), "not a cost"),
    (dict(algorithm="attention", sizes={"zz": 1}, quantity="flops", equals=1), "has no size 'zz'"),
    (dict(algorithm="attention", quantity="flops", equals=1, nosuch=1), "unknown field 'nosuch'"),
    (dict(graph="full", args={"n": 10, "draw": "x.png"}, quantity="edges", equals=1),
     "graph args: draw is not a parameter of a pattern"),
    (dict(graph="full", args={"n": 0}, quantity="edges", equals=1), "graph args"),
    (dict(graph="full", args={"n": 10}, quantity="nosuch", equals=1), "not a key of graph --json"),
    (dict(graph="random", args={"n": 10, "random": 2}, quantity="layers.max_path_length", theta="n",
          **{"in": ["n"]}), "not measured"),
    (dict(algorithm="attention", property="nosuch"), "unknown property 'nosuch'; known:"),
    (dict(algorithm="attention", quantity="flops", equals=1, expect="maybe"), "expect"),
    (dict(model="gpt2", quantity="params.total", equals=1, rel_tol=0.1), "rel_tol goes with approx"),
    (dict(model="gpt2", quantity="params.total", approx="1M", rel_tol=-1), "rel_tol"),
    (dict(op="softmax", inputs={"x": [[1], [2, 3]]}, approx=["1"]), "not a rectangular array"),
    (dict(op="nosuch", inputs={"x": [1]}, equals=[1]), "not an op"),
    (dict(implementation="impl.py:f", quantity="flops"), "needs algorithm"),
])
def test_invalid_claims_name_their_field(fields, fragment):
    v = one(claim(**fields))
    assert v.verdict == "invalid"
    assert fragment in v.reason, v.reason
    assert "\n" not in v.reason and len(v.reason) < 700


def test_file_level_errors_and_duplicate_ids():
    from formal.errors import ConfigError
    with pytest.raises(ConfigError, match="no \\[\\[claim\\]\\]"):
        check_text("x = 1\n".replace("x = 1", ""))
    with pytest.raises(ConfigError, match="unknown top-level key"):
        check_text("title = 'x'\n")
    verdicts = check_text(claim(model="gpt2", quantity="params.total", approx="124M") * 2)
    assert [v.verdict for v in verdicts] == ["holds", "invalid"]
    assert "also the id of claim 1" in verdicts[1].reason


def test_a_model_claim_imports_neither_torch_nor_sympy(tmp_path):
    """A model claim at a preset's own options evaluates the shipped formulas: no sympy, no model."""
    import subprocess
    import sys
    path = tmp_path / "c.toml"
    path.write_text(claim(model="gpt2", quantity="params.total", approx="124M"))
    code = ("import sys; from formal.tools.claims import check_file; v = check_file(sys.argv[1]); "
            "print(v[0].verdict, 'torch' in sys.modules, 'sympy' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["holds", "False", "False", "False"]


# ------------------------------------------------------------------------------------- generated claims
from hypothesis import given, settings, strategies as st  # noqa: E402

_NAMES = st.sampled_from(["H", "d_attn", "ell_x", "ell_z", "d_x", "L", "d_e", "n", "1", "2", "0", "0.5", "1e300"])
_FORMULAS = st.recursive(
    _NAMES,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(lambda t: f"({t[0]}{t[1]}{t[2]})"),
        st.tuples(inner, st.sampled_from(["2", "3", "-1", "0.5", "64"])).map(lambda t: f"({t[0]})**{t[1]}"),
        st.tuples(st.sampled_from(["sqrt", "log"]), inner).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(["max", "min"]), inner, inner).map(lambda t: f"{t[0]}({t[1]}, {t[2]})")),
    max_leaves=6)
_SUBJECTS = [
    dict(algorithm="attention", quantity="flops"),
    dict(model="gpt2", quantity="params.total"),
    dict(model="gpt2", quantity="flops.forward_per_token", sizes={"L": "L"}),
    dict(graph="full", args={"n": 64}, quantity="layers.max_path_length"),
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_SUBJECTS), st.sampled_from(["equals", "approx", "at_most", "at_least", "theta", "big_o",
                                                    "leading"]), _FORMULAS, st.booleans())
def test_generated_formulas_always_get_a_verdict(subject, assertion, formula, grow):
    """Property: any formula of the grammar, under any assertion, against any kind of subject, gets a verdict
    (an overflow, a division by zero or a log of 0 is an invalid or failed claim, never an exception)."""
    fields = dict(subject, **{assertion: formula})
    if assertion == "approx":
        fields["rel_tol"] = 0.1
    if grow and assertion in ("theta", "big_o", "leading"):
        fields["in"] = ["n"] if "graph" in subject else ["ell_x"] if "algorithm" in subject else ["L"]
    v = one(claim(**fields))
    assert v.verdict in ("holds", "fails", "undecided", "invalid")
    assert "\n" not in v.reason
