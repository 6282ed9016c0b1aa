"""Graph claims users write, through the real command (``formal-transformers check FILE --json``): the growth of
BigBird's random pattern, the receptive field against layers, args that are formulas in the growing argument,
a field's span beside the positions it reaches, and the receptive field of stacked convolutions — each with
the verdict a careful reader gives, and each derived figure checked against the built graphs."""

from __future__ import annotations

import contextlib
import io
import json
import time

import pytest
from hypothesis import given, settings, strategies as st

from formal import graphs
from formal.graphs import layered, patterns, structure
from formal.tools.claims.graph_subjects import graph_value
from formal.tools.cli import main
from tests.graphs.test_structure import cases, plain


def check(tmp_path, **fields) -> dict:
    """The verdict ``formal-transformers check`` gives one claim with ``fields`` (as JSON)."""
    lines = ['[[claim]]', 'id = "c"'] + [f"{k} = {_toml(v)}" for k, v in fields.items()]
    path = tmp_path / "claim.toml"
    path.write_text("\n".join(lines) + "\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["check", str(path), "--json"])
    [verdict] = json.loads(out.getvalue())["claims"]
    return verdict


def _toml(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


BIGBIRD = {"n": 4096, "random": 3, "window": 3, "global": 2}


# ------------------------------------------------------------------------------------- random patterns
@pytest.mark.parametrize("theta, verdict", [("n", "holds"), ("n^2", "fails"), ("n*log(n)", "fails")])
def test_bigbird_edges_grow_linearly(tmp_path, theta, verdict):
    """BigBird's O(n): the random pattern's edge count, the same at every seed, grows as n."""
    v = check(tmp_path, graph="random", args=BIGBIRD, quantity="edges", theta=theta, **{"in": ["n"]})
    assert v["verdict"] == verdict, v["reason"]
    assert "expected count" in v["reason"] and "every draw" in v["reason"]


def test_what_depends_on_the_draw_is_not_measured(tmp_path):
    v = check(tmp_path, graph="random", args=BIGBIRD, quantity="layers.receptive_field.max", theta="1",
              **{"in": ["n"]})
    assert v["verdict"] == "invalid" and "depends on the keys drawn" in v["reason"], v["reason"]


def test_an_exact_count_is_the_built_graph_at_its_seed(tmp_path):
    built = patterns.random(4096, 3, window=3, n_global=2, seed=7)
    v = check(tmp_path, graph="random", args={**BIGBIRD, "seed": 7}, quantity="edges", equals=built.n_edges)
    assert v["verdict"] == "holds", v["reason"]


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.integers(0, 6), st.integers(0, 4), st.integers(1, 5), st.data())
def test_the_expected_edge_count_is_the_count_of_every_seed(n, window, n_global, n_random, data):
    """The count the growth is measured on equals the built graph's at every seed drawn — so it equals their
    mean with no statistical margin: the drawn keys never repeat a fixed edge."""
    n_global = min(n_global, n)
    s = graphs.spec("random", n=n, random=n_random, window=window, n_global=n_global)
    try:
        counted = s.edge_count()
    except Exception as exc:                       # too few keys left to draw: the builder refuses the same
        with pytest.raises(type(exc)):
            patterns.random(n, n_random, window=window, n_global=n_global)
        return
    seeds = data.draw(st.lists(st.integers(0, 2**32), min_size=1, max_size=20))
    counts = [patterns.random(n, n_random, window=window, n_global=n_global, seed=seed).n_edges for seed in seeds]
    assert counts == [counted] * len(seeds)


# ------------------------------------------------------------------------------ receptive field in layers
LONGFORMER = {"window": 512, "layers": 4}


@pytest.mark.parametrize("theta, verdict", [("layers", "holds"), ("1", "fails"), ("layers^2", "fails")])
def test_a_windows_field_grows_linearly_in_layers(tmp_path, theta, verdict):
    start = time.process_time()
    v = check(tmp_path, graph="sliding-window", args=LONGFORMER, quantity="layers.receptive_field.max", theta=theta,
              **{"in": ["layers"]})
    assert time.process_time() - start < 1.0                     # closed forms: no row per layer
    assert v["verdict"] == verdict, v["reason"]
    assert "n left out, so unbounded" in v["reason"], v["reason"]


@pytest.mark.parametrize("theta, verdict", [("layers", "fails"), ("1", "holds")])
def test_a_bound_n_stays_bound_in_a_growth_claim_in_layers(tmp_path, theta, verdict):
    """Over a 10⁶-token sequence the field of a 512-window stops growing after 1,957 layers: a size the claim
    binds is part of it, so the growth in layers at that n is Θ(1), never "linear" (the checker once measured
    with n unbounded and said the claim held)."""
    v = check(tmp_path, graph="sliding-window", args={**LONGFORMER, "n": 1_000_000},
              quantity="layers.receptive_field.max", theta=theta, **{"in": ["layers"]})
    assert v["verdict"] == verdict, v["reason"]
    assert "at the claim's n = 1,000,000" in v["reason"] and "after 1,957 layer" in v["reason"], v["reason"]


def test_a_field_that_reaches_a_share_of_n_needs_n_to_grow_in_layers(tmp_path):
    v = check(tmp_path, graph="strided", args={"stride": 1000}, quantity="layers.receptive_field.max", theta="1",
              **{"in": ["layers"]})
    assert v["verdict"] == "invalid" and "give n in args" in v["reason"], v["reason"]


def test_a_field_that_reaches_everything_in_two_layers_is_constant_in_layers(tmp_path):
    v = check(tmp_path, graph="strided", args={"n": 10**6, "stride": 1000}, quantity="layers.receptive_field.max",
              theta="1", **{"in": ["layers"]})
    assert v["verdict"] == "holds" and "n = 1,000,000" in v["reason"] and "after 2 layer" in v["reason"]


def test_a_random_pattern_in_layers_is_refused_quickly(tmp_path):
    v = check(tmp_path, graph="random", args={**BIGBIRD, "layers": 4}, quantity="layers.receptive_field.max",
              theta="1", **{"in": ["layers"]})
    assert v["verdict"] == "invalid" and "depends on the keys drawn" in v["reason"]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 8), st.integers(1, 12))
def test_the_sliding_window_field_is_min_n_and_w_minus_1_times_l_plus_1(n, w, layers):
    """min(n, (w − 1)·L + 1) for a causal window: the report, the built graph's bit sets, and the growth."""
    want = min(n, (w - 1) * layers + 1)
    assert graphs.report("sliding-window", n=n, window=w, layers=layers)["layers"]["receptive_field"][-1]["max"] == want
    walked = layered.summary(plain(patterns.sliding_window(n, w)), layers)
    assert walked.spread[-1][2] == want
    growth = graph_value({"graph": "sliding-window", "args": {"window": w, "layers": 4}},
                         "layers.receptive_field.max", ("layers",)).measure
    assert growth.at(layers) == (w - 1) * layers + 1                  # n left out, so unbounded: never cut
    bound = graph_value({"graph": "sliding-window", "args": {"n": n, "window": w, "layers": 4}},
                        "layers.receptive_field.max", ("layers",)).measure
    assert bound.at(layers) == (n if w > 1 else 1)    # n bound: cut by the sequence's ends, measured past them


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([c for c in cases() if c[0] in ("strided", "fixed", "swin", "full", "causal")
                        and structure.describe(c[0], *c[1], **c[2]).self_attention]), st.integers(1, 6))
def test_a_settling_field_is_measured_at_the_claims_size(case, layers):
    """Where the field settles whatever n is, its growth in layers is the report's at the claim's size,
    which is the built graph's."""
    name, args, kwargs = case
    walked = layered.summary(plain(patterns.PATTERNS[name].build(*args, **kwargs)), layers)
    s = structure.describe(name, *args, **kwargs)
    assert s.spread(layers)[2] == walked.spread[-1][2] and s.span(layers) == walked.span[-1]


# ---------------------------------------------------------------------------------- formula args
@pytest.mark.parametrize("theta, verdict", [("n*sqrt(n)", "holds"), ("n", "fails"), ("n^2", "fails")])
def test_sparse_transformer_with_stride_sqrt_n(tmp_path, theta, verdict):
    v = check(tmp_path, graph="strided", args={"n": 4096, "stride": "sqrt(n)"}, quantity="edges", theta=theta,
              **{"in": ["n"]})
    assert v["verdict"] == verdict, v["reason"]


def test_a_formula_arg_is_taken_at_its_floor():
    growth = graph_value({"graph": "strided", "args": {"n": 4096, "stride": "sqrt(n)"}}, "edges", ("n",)).measure
    assert growth.at(2048) == graphs.report("strided", n=2048, stride=45)["edges"]       # √2048 ≈ 45.25


@pytest.mark.parametrize("args, growing, message", [
    ({"n": 4096, "stride": "sqrt(d)"}, ["n"], "names 'd'"),
    ({"n": 4096, "stride": "sqrt(n)"}, None, "stride"),
    ({"n": "2^12", "stride": 64}, ["n"], "the growing argument is a number"),
])
def test_formulas_elsewhere_are_invalid(tmp_path, args, growing, message):
    fields = {"graph": "strided", "args": args, "quantity": "edges"}
    fields.update({"theta": "n", "in": growing} if growing else {"equals": 1})
    v = check(tmp_path, **fields)
    assert v["verdict"] == "invalid" and message in v["reason"], v["reason"]


# ------------------------------------------------------------------------------------------- span
def test_longformers_span_is_layers_dilation_window(tmp_path):
    """Longformer's ℓ·d·w: after ℓ layers of a dilated window the field spans ℓ·d·(w − 1) + 1 positions and
    reaches ℓ·(w − 1) + 1 of them."""
    args = {"n": 100_000, "window": 512, "dilation": 4, "layers": 12}
    assert check(tmp_path, graph="dilated", args=args, quantity="layers.receptive_field.max_span",
                 equals=12 * 4 * 511 + 1)["verdict"] == "holds"
    assert check(tmp_path, graph="dilated", args=args, quantity="layers.receptive_field.max",
                 equals=12 * 511 + 1)["verdict"] == "holds"
    unbounded = {k: v for k, v in args.items() if k != "n"}
    v = check(tmp_path, graph="dilated", args=unbounded, quantity="layers.receptive_field.max_span", theta="layers",
              **{"in": ["layers"]})
    assert v["verdict"] == "holds", v["reason"]


def test_every_structures_span_is_its_bit_sets():
    """The closed-form span of every small built-in pattern equals the bit sets' of its built edges."""
    count = 0
    for name, args, kwargs in cases():
        s = structure.describe(name, *args, **kwargs)
        if s.self_attention and (count % 3 == 0 or args[0] < 8):
            walked = layered.summary(plain(patterns.PATTERNS[name].build(*args, **kwargs)), 5).span
            assert list(s.summary(5).span) == list(walked), (name, args, kwargs)
        count += 1


# ---------------------------------------------------------------------------- stacked convolutions
def test_wavenets_receptive_field(tmp_path):
    v = check(tmp_path, algorithm="conv1d", sizes={"L": 10, "k": 2}, quantity="receptive_field_exponential",
              equals=1024)
    assert v["verdict"] == "holds", v["reason"]


@pytest.mark.parametrize("fields, verdict", [
    ({"options": {"dilation": 2}, "equals": "2*L*(k - 1) + 1"}, "holds"),
    ({"sizes": {"k": 3}, "theta": "L", "in": ["L"]}, "holds"),
    ({"sizes": {"k": 3}, "theta": "L^2", "in": ["L"]}, "fails"),
    ({"options": {"stride": 2}, "sizes": {"L": 3, "k": 3}, "equals": 7}, "invalid"),
    ({"sizes": {"d": 3}, "equals": 7}, "invalid"),
])
def test_stacked_convolutions(tmp_path, fields, verdict):
    v = check(tmp_path, algorithm="conv1d", quantity="receptive_field", **fields)
    assert v["verdict"] == verdict, v["reason"]


@pytest.mark.parametrize("kernel, layers", [(2, 5), (3, 3), (2, 1)])
def test_the_stacks_field_is_the_layered_graphs(kernel, layers):
    """The derived k^L equals the field of a stack of causal dilated windows (dilation k^(l−1) at layer l)
    walked on its edges."""
    from formal.tools.claims.stack_subjects import stack_value
    n = kernel**layers + 3
    stack = [patterns.dilated(n, kernel, kernel**l) for l in range(layers)]
    walked = layered.summary(stack, layers, coverage=False).spread[-1][2]
    value = stack_value({"algorithm": "conv1d", "sizes": {"L": layers, "k": kernel}}, "receptive_field_exponential")
    assert value.value == walked == kernel**layers
