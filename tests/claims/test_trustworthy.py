"""Verdicts that can be trusted: each family of silent wrong answer, through the real command line (one claims
file, checked once, read back with a strict JSON parser) and as a property over random instances.

Families: growth in a name that is no size; floating point deciding an exact question; property claims
ignoring the claim's sizes or crashing on an output without a token axis; a claim's graph arguments reaching
the command line; one claim's crash losing the report; JSON that is not strict; figures at any magnitude."""

import json
import math
import os
import subprocess
import sys
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings, strategies as st

from formal.guards.files import json_text
from formal.tools.claims import check_text
from formal.tools.claims.claim import parse_claims
from formal.tools.claims.decide import decide
from tests.tiers import slow

from .test_check import claim

GPT2 = 124_439_808                           # GPT-2 small's parameters (tests/claims/test_check.py counts them)
GPT3_FORWARD_AT_1000 = 734_804_261_732_352_000

EXAMPLES = {
    # id: (fields, the verdict a careful reader gives)
    "in-names-no-size": (dict(algorithm="attention", quantity="flops", theta="ell_x**3", **{"in": ["ell"]}),
                         "invalid"),
    "sqrt-squared-at-most": (dict(model="gpt3-175b", batch=1000, quantity="flops.forward",
                                  at_most="sqrt(734804261732351999)*sqrt(734804261732351999)"), "fails"),
    "sqrt-of-a-square-equals": (dict(model="gpt2", quantity="params.total", equals="sqrt(15485265815076864)"),
                                "holds"),
    "causal-at-one-token": (dict(algorithm="attention", property="causal", sizes={"ell_x": 1, "ell_z": 1}),
                            "holds"),
    "graph-help": (dict(graph="sliding-window", args={"n": 8, "help": 1}, quantity="edges", equals=1), "invalid"),
    "graph-named-help": (dict(graph="--help", quantity="edges", equals=1), "invalid"),
    "graph-max-prefix": (dict(graph="sliding-window", args={"n": 8, "max": "8G"}, quantity="edges", equals=1),
                         "invalid"),
    "graph-max-memory": (dict(graph="sliding-window", args={"n": 8, "max_memory": "1T"}, quantity="edges",
                              equals=1), "invalid"),
    "loss-causal": (dict(algorithm="show_attend_tell_loss", property="causal"), "invalid"),
    "loss-equivariant": (dict(algorithm="show_attend_tell_loss", property="permutation_equivariant"), "invalid"),
    "loss-invariant": (dict(algorithm="show_attend_tell_loss", property="permutation_invariant"), "holds"),
    "softmax-of-infinity": (dict(op="softmax", inputs={"x": [math.inf, 1.0]}, equals=[1, 0]), "fails"),
    "relu-of-infinities": (dict(op="relu", inputs={"x": [math.inf, -math.inf]}, equals=[0, 0]), "fails"),
    "approx-tiny-figure": (dict(model="gpt2", quantity="params.total", approx="1e-400", rel_tol=0.1), "fails"),
    "sizes-bind-the-claim-too": (dict(algorithm="mhattention", options={"bias": False},
                                      sizes={"d_z": "d_x", "d_out": "d_x", "d_mid": "d_attn"}, quantity="params",
                                      equals="3*d_x*d_attn*H + H*d_mid*d_x"), "holds"),
    "training-step-3x-forward": (dict(model="gpt2", quantity="flops.training_step",
                                      ratio_to={"quantity": "flops.forward"}, equals=3), "holds"),
    "rounds-to-124M": (dict(model="gpt2", quantity="params.total", rounds_to="124M"), "holds"),
    "rounds-to-125M": (dict(model="gpt2", quantity="params.total", rounds_to="125M"), "fails"),
    "approx-125M": (dict(model="gpt2", quantity="params.total", approx="125M"), "holds"),
}


def _file(examples) -> str:
    return "\n".join(claim(**{"id": key, **fields}).replace('id = "c"\n', "") for key, (fields, _) in
                     examples.items())


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def through_the_cli(tmp_path_factory):
    path = tmp_path_factory.mktemp("claims") / "claims.toml"
    path.write_text(_file(EXAMPLES))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "formal", "check", str(path), "--json"], capture_output=True,
                          text=True, env=env, timeout=300)
    return done


def test_every_example_gets_the_careful_verdict_through_the_cli(through_the_cli):
    """The command reports every claim of the file (none lost to another's crash or to a help text), in strict
    JSON, with the verdict a careful reader gives."""
    report = _strict(through_the_cli.stdout)
    got = {c["id"]: c["verdict"] for c in report["claims"]}
    assert got == {key: want for key, (_, want) in EXAMPLES.items()}, {
        c["id"]: c["reason"] for c in report["claims"] if c["verdict"] != EXAMPLES[c["id"]][1]}
    assert through_the_cli.returncode == 2                       # invalid claims: exit 2, one line on stderr
    assert through_the_cli.stderr.count("\n") == 1 and "is invalid" in through_the_cli.stderr


def test_non_finite_outputs_are_named_in_strict_json(through_the_cli):
    report = {c["id"]: c for c in _strict(through_the_cli.stdout)["claims"]}
    assert report["softmax-of-infinity"]["derived"] == ["NaN", "NaN"]
    assert report["relu-of-infinities"]["derived"] == ["Infinity", 0.0]


def test_the_reasons_say_what_was_decided(through_the_cli):
    reasons = {c["id"]: c["reason"] for c in _strict(through_the_cli.stdout)["claims"]}
    assert "'ell', which is not a size" in reasons["in-names-no-size"]
    assert reasons["sqrt-squared-at-most"].startswith(f"derived {GPT3_FORWARD_AT_1000:,}")
    assert "single token" in reasons["causal-at-one-token"]
    assert "no parameter 'help'" in reasons["graph-help"]
    assert "only permutation_invariant applies" in reasons["loss-causal"]
    assert "% from the claim" in reasons["approx-tiny-figure"]
    assert "124,500,000" in reasons["rounds-to-125M"] and "round" in reasons["rounds-to-125M"]
    assert "124,000,000–126,000,000" in reasons["approx-125M"]


# ------------------------------------------------------------------------------ growth in a name that is no size
ATTENTION_SIZES = ("d_attn", "d_out", "d_x", "d_z", "ell_x", "ell_z")


@settings(max_examples=40, deadline=None)
@given(name=st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: n not in ATTENTION_SIZES))
def test_a_growing_name_that_is_no_size_is_always_invalid(name):
    """Property: ``in`` naming anything but a size of the subject (or a name its size formulas introduce) is
    invalid, whatever the claimed growth; never judged on a formula constant in it."""
    for theta in ("ell_x**3", "1", "ell_x*ell_z"):
        [v] = check_text(claim(algorithm="attention", quantity="flops", theta=theta, **{"in": [name]}))
        assert v.verdict == "invalid" and repr(name) in v.reason


@settings(max_examples=25, deadline=None)
@given(name=st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,8}", fullmatch=True))
def test_a_growing_name_is_checked_for_every_kind_of_subject(name):
    """Property: the same rule for every subject: a model, an algorithm's cost, a stack of convolutions and a
    graph each refuse to grow in a name that is not theirs."""
    subjects = [(dict(model="gpt2", quantity="flops.forward"), {"L", "H", "N_V", "d_e", "d_mlp", "ell", "seq_len",
                                                                 "d_attn", "d_mid", "ell_max", "batch"}),
                (dict(algorithm="conv1d", sizes={"k": 3}, quantity="receptive_field"), {"L"}),
                (dict(algorithm="layer_norm", quantity="params"), {"d_e"}),
                (dict(graph="sliding-window", args={"n": 64, "window": 4}, quantity="edges"), {"n", "window"})]
    for fields, names in subjects:
        if name in names:
            continue
        [v] = check_text(claim(**fields, theta="1", **{"in": [name]}))
        assert v.verdict == "invalid", (fields, name, v.reason)


def test_names_introduced_by_size_formulas_may_grow():
    [v] = check_text(claim(algorithm="attention", sizes={"ell_x": "n", "ell_z": "n"}, quantity="flops",
                           big_o="n**2", **{"in": ["n"]}))
    assert v.verdict == "holds", v.reason
    [v] = check_text(claim(algorithm="attention", sizes={"ell_z": 4}, quantity="flops", theta="ell_z",
                           **{"in": ["ell_z"]}))
    assert v.verdict == "invalid" and "cannot also be fixed" in v.reason


def test_a_model_claims_sizes_reach_the_claimed_formula_and_its_names_may_grow():
    """The same rule for a model as for an algorithm: ``d_e = "D"`` introduces D, which may grow, and the claimed
    formula may name any size the claim or the preset binds (L = 12 here, d_mlp = 4·D)."""
    fields = dict(model="gpt2", sizes={"d_e": "D", "d_mlp": "4*D"}, quantity="params.non_embedding", **{"in": ["D"]})
    [v] = check_text(claim(**fields, leading="L*(4*D**2 + 2*d_mlp*D)"))
    assert v.verdict == "holds", v.reason
    [v] = check_text(claim(**fields, leading="L*(4*D**2 + 2*d_mlp*D + 1)"))
    assert v.verdict == "fails"


def test_sizes_held_constant_are_named():
    [v] = check_text(claim(algorithm="attention", quantity="flops", theta="ell_z*d_x", **{"in": ["ell_z"]}))
    assert v.verdict == "holds" and "d_x held constant" in v.reason


# ---------------------------------------------------------------------------------------- exact arithmetic
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=st.integers(1, 10**20), delta=st.integers(-3, 3), how=st.sampled_from(["equals", "at_most", "at_least"]))
def test_irrational_claims_are_compared_exactly(a, delta, how):
    """Property: a claim ``sqrt(a)*sqrt(b)`` against GPT-2's count N is decided as the integers decide it
    (N² against a·b), even where a float cannot tell them apart (b = N²/a ± a few)."""
    b = max(1, GPT2 * GPT2 // a + delta)
    [v] = check_text(claim(model="gpt2", quantity="params.total", **{how: f"sqrt({a})*sqrt({b})"}))
    square, product = GPT2 * GPT2, a * b
    want = {"equals": square == product, "at_most": square <= product, "at_least": square >= product}[how]
    assert v.verdict == ("holds" if want else "fails"), (a, b, v.reason)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(2, 50), q=st.integers(2, 50), k=st.integers(1, 6))
def test_algebraic_identities_hold_exactly(p, q, k):
    """Property: a claimed value equal to the derived one in exact algebra holds: (√p·√q)² · k·N/(p·q) = k·N, and
    one part in 10³⁰ off fails."""
    claimed = f"(sqrt({p})*sqrt({q}))**2 * {k} * {GPT2} / ({p} * {q}) / {k}"
    [v] = check_text(claim(model="gpt2", quantity="params.total", equals=claimed))
    assert v.verdict == "holds", v.reason
    [v] = check_text(claim(model="gpt2", quantity="params.total", equals=f"{claimed} * (1 + 10**-30)"))
    assert v.verdict == "fails"


@slow
def test_a_comparison_that_cannot_be_decided_exactly_is_undecided():
    """log(8)/log(2) is 3, which sympy proves: the claim holds.  log(5 + 2√6) − 2·log(√2 + √3) is 0 too (the
    square of √2 + √3 is 5 + 2√6), which neither its digits nor sympy's simplification can show: undecided,
    never a guess from digits that agree."""
    [v] = check_text(claim(model="gpt2", quantity="params.total", equals=f"log(8)/log(2)*{GPT2 // 3}"))
    assert v.verdict == "holds", v.reason
    hard = f"{GPT2} + log(5 + 2*sqrt(6)) - 2*log(sqrt(2) + sqrt(3))"
    for how in ("equals", "at_most", "at_least"):
        [v] = check_text(claim(model="gpt2", quantity="params.total", **{how: hard}))
        assert v.verdict == "undecided" and "cannot be compared with it exactly" in v.reason
    [v] = check_text(claim(model="gpt2", quantity="params.total", at_most="log(2)*10**9"))
    assert v.verdict == "holds"                 # 693,147,180.6 ≥ 124,439,808


def test_the_exact_module_against_sympy():
    from formal.tools.claims.exact import compare, sign
    assert sign(sp.sqrt(2) + sp.sqrt(3) - sp.sqrt(5 + 2 * sp.sqrt(6))) == 0
    assert sign(sp.pi - Fraction(355, 113)) == -1
    assert compare(Fraction(GPT2), sp.sqrt(GPT2 * GPT2 + 1)) == -1


@settings(max_examples=50, deadline=None)
@given(mantissa=st.integers(1, 999), exponent=st.integers(-450, 450))
def test_figures_at_any_magnitude_are_judged(mantissa, exponent):
    """Property: a figure of any magnitude is judged (holds or fails), never invalid from a float overflow."""
    [v] = check_text(claim(model="gpt2", quantity="params.total", approx=f"{mantissa}e{exponent}", rel_tol=0.5))
    want = abs(GPT2 - Fraction(mantissa) * Fraction(10) ** exponent) <= Fraction(1, 2) * Fraction(mantissa) * \
        Fraction(10) ** exponent
    assert v.verdict == ("holds" if want else "fails"), v.reason


# ------------------------------------------------------------------------------------------ property claims
@settings(max_examples=12, deadline=None)
@given(ell=st.integers(2, 5), d=st.integers(1, 4))
def test_property_claims_run_at_the_claims_sizes(ell, d):
    """Property: a counterexample to a property is found at the sizes the claim pins (unmasked attention is not
    causal at any length of two or more), and a holding property says which sizes it held at."""
    [v] = check_text(claim(algorithm="attention", property="causal", sizes={"ell_x": ell, "ell_z": ell, "d_x": d}))
    assert v.verdict == "fails" and f"ell_x = {ell}" in v.reason and f"d_x = {d}" in v.reason
    [v] = check_text(claim(algorithm="attention", mask="causal", property="causal",
                           sizes={"ell_x": ell, "ell_z": ell, "d_x": d}))
    assert v.verdict == "holds" and f"ell_x = {ell}" in v.reason


def test_property_sizes_out_of_range_or_unknown_are_invalid():
    for sizes, words in (({"ell_x": 500}, "from 1 to 64"), ({"ell": 3}, "no size 'ell'"),
                         ({"ell_x": "n"}, "integers")):
        [v] = check_text(claim(algorithm="attention", property="causal", sizes=sizes))
        assert v.verdict == "invalid" and words in v.reason


# --------------------------------------------------------------------------------- graph args are data only
GRAPH_PARAMETERS = {"n", "window", "causal", "layers", "heads", "d_head"}
FLAG_LIKE = st.sampled_from(["help", "h", "max", "max_memory", "json", "draw", "summary", "file", "n_z", "version",
                             "-n", "--help", "layers"])


@settings(max_examples=60, deadline=None)
@given(args=st.dictionaries(st.one_of(FLAG_LIKE, st.text(min_size=1, max_size=12)),
                            st.one_of(st.integers(1, 64), st.text(max_size=8), st.booleans()), max_size=4))
def test_graph_args_from_arbitrary_keys_never_reach_a_command_line(args):
    """Property: a claim's graph args are checked against the pattern's parameters only: argparse is never
    asked to read them, a key that is no parameter makes the claim invalid, and nothing is printed."""
    import argparse
    import contextlib
    import io
    from unittest import mock

    def refuse(*a, **k):
        raise AssertionError("a claim's graph args reached argparse")
    printed = io.StringIO()
    with mock.patch.object(argparse.ArgumentParser, "parse_args", refuse), \
            mock.patch.object(argparse.ArgumentParser, "parse_known_args", refuse), \
            contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        [c] = parse_claims({"claim": [{"id": "c", "graph": "sliding-window", "args": {"n": 8, **args},
                                       "quantity": "edges", "at_least": 0}]})
        v = decide(c)
    assert printed.getvalue() == ""
    if set(args) - GRAPH_PARAMETERS:
        assert v.verdict == "invalid"
    assert v.verdict in ("holds", "invalid")


# -------------------------------------------------------------------------------------- one crash, one claim
def test_an_internal_error_in_one_claim_leaves_the_others_judged(monkeypatch):
    from formal.tools.claims import decide
    real = decide.value_of

    def broken(subject, *a, **k):
        if subject.get("model") == "gpt2-medium":
            raise IndexError("planted")
        return real(subject, *a, **k)
    monkeypatch.setattr(decide, "value_of", broken)
    text = (claim(model="gpt2-medium", quantity="params.total", approx="355M")
            + claim(model="gpt2", quantity="params.total", equals=GPT2).replace('"c"', '"d"'))
    first, second = check_text(text)
    assert first.verdict == "undecided" and "internal error (IndexError: planted)" in first.reason
    assert second.verdict == "holds"


# ------------------------------------------------------------------------------------------------ strict JSON
FLOATS = st.floats(allow_nan=True, allow_infinity=True)
JSON_LIKE = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), FLOATS, st.text(max_size=5)),
                         lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                 st.dictionaries(st.text(max_size=4), inner, max_size=4)),
                         max_leaves=20)


@settings(max_examples=100, deadline=None)
@given(obj=JSON_LIKE)
def test_json_text_is_strict_and_keeps_finite_values(obj):
    """Property: every --json goes through json_text, whose output a strict parser reads; finite values come
    back as they went in, and a non-finite float comes back as its name."""
    back = _strict(json_text(obj))

    def expected(x):
        if isinstance(x, float) and not math.isfinite(x):
            return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[repr(x)]
        if isinstance(x, dict):
            return {k: expected(v) for k, v in x.items()}
        if isinstance(x, list):
            return [expected(v) for v in x]
        return x
    assert back == expected(obj)


# ------------------------------------------------------------------------------------------ the time budget
def test_a_time_budget_reports_the_claims_it_did_not_reach(tmp_path):
    path = tmp_path / "claims.toml"
    path.write_text("".join(claim(model="gpt2", quantity="params.total", equals=GPT2).replace('"c"', f'"c{i}"')
                            for i in range(3)))
    from formal.tools.commands.check import run_files
    verdicts = run_files([path], budget=1e-9)
    assert [v.reached for v in verdicts] == [False, False, False]
    assert all(v.verdict == "undecided" and "not reached" in v.reason for v in verdicts)
    done = subprocess.run([sys.executable, "-m", "formal", "check", str(path), "--json", "--time-budget", "1000"],
                          capture_output=True, text=True, timeout=120)
    report = _strict(done.stdout)
    assert done.returncode == 0 and report["summary"]["not_reached"] == 0 and done.stderr == ""


@pytest.mark.parametrize("spelled", ["3", '"3"', '"1 + 2"', "3.0", '"3.0"'])
def test_a_convolutions_token_axis_is_decided_at_the_claims_sizes(spelled):
    """conv1d's output keeps a token axis (ℓ + 2p − k + 1 columns: ℓ at k = 2p + 1): "a kernel-3 convolution
    padded by 1 on each side is not causal" (WaveNet §2.1) is decided — the claim of causality fails — in
    every spelling of k; a kernel-1 convolution is causal and permutation equivariant; at k = 2 the output has
    ℓ + 1 columns, no axis over the tokens, and a causality claim is invalid with that reason."""
    def one(**fields):
        lines = "".join(f"{k} = {v}\n" for k, v in fields.items())
        [v] = check_text('[[claim]]\nid = "c"\nalgorithm = "conv1d"\n' + lines)
        return v
    padded = one(options="{ padding = 1 }", sizes=f"{{ k = {spelled} }}", property='"causal"')
    assert padded.verdict == "fails" and "k = 3" in padded.reason, padded.reason
    assert one(sizes="{ k = 1 }", property='"causal"').verdict == "holds"
    assert one(sizes="{ k = 1 }", property='"permutation_equivariant"').verdict == "holds"
    even = one(options="{ padding = 1 }", sizes="{ k = 2 }", property='"causal"')
    assert even.verdict == "invalid" and "no axis over its tokens" in even.reason, even.reason
