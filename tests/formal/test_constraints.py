"""Constraints on sizes as data (formal.core.constraints), and the constraints an algorithm inherits from the
algorithms it calls (Algorithm.size_constraints), renamed into its own symbols."""

import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from formal import ConfigError, algorithms, layer_norm
from formal.core.constraints import Constraint, at_most, divides, even
from formal.core.shapes import Binding
from formal.core.symbols import H, by_name, d_e, d_f, ell, ell_gen, ell_max, n_kv_heads
from formal.models.presets import resolve_sizes
from tests.tiers import fast_few, in_fast_tier

sizes = st.integers(1, 40)


def test_constraints_are_a_relation_between_two_sizes():
    assert even(d_e, "r") == Constraint("divides", (2, d_e))
    assert (divides(n_kv_heads, H, "r").relation, divides(n_kv_heads, H, "r").args) == ("divides", (n_kv_heads, H))
    assert at_most(2, d_e, "r").args == (sp.Integer(2), d_e)
    assert at_most(ell, ell_max, "one reason") == at_most(ell, ell_max, "another")  # the reason is not the fact


def test_text_and_symbols():
    assert even(d_e, "r").text == "d_e is even"
    assert divides(n_kv_heads, H, "r").text == "H_kv divides H"
    assert at_most(ell + ell_gen - 1, ell_max, "r").text == "ℓ + ℓ_gen - 1 ≤ ℓ_max"
    assert at_most(2, d_e, "r").text == "2 ≤ d_e"
    assert at_most(ell + ell_gen, ell_max, "r").symbols == (ell, ell_gen, ell_max)
    assert at_most(2, d_e, "r").symbols == (d_e,)


@given(sizes, sizes)
def test_holds_is_the_relation_at_the_values(a, b):
    values = {n_kv_heads: a, H: b, ell: a, ell_max: b}
    assert divides(n_kv_heads, H, "r").holds(values) == (b % a == 0)
    assert at_most(ell, ell_max, "r").holds(values) == (a <= b)
    assert at_most(2, d_e, "r").holds({d_e: a}) == (a >= 2)
    assert even(d_e, "r").holds({d_e: a}) == (a % 2 == 0)


def test_explain_names_the_sizes_their_values_and_the_reason():
    assert even(d_e, "sin/cos").explain({d_e: 7}) == "d_e = 7 must be even (sin/cos)"
    assert divides(n_kv_heads, H, "g").explain({H: 3, n_kv_heads: 2}) == "H = 3 is not divisible by n_kv_heads = 2 (g)"
    assert divides(2, H, "g").explain({H: 3}) == "H = 3 is not divisible by 2 (g)"
    assert at_most(ell, ell_max, "t").explain({ell: 3, ell_max: 2}) == "ell = 3 exceeds ell_max = 2 (t)"
    assert at_most(2, d_e, "v").explain({d_e: 1}) == "d_e = 1 must be at least 2 (v)"


def test_renamed_replaces_the_symbols_and_recomputes_text_and_symbols():
    c = at_most(2, d_e, "r").renamed({d_e: d_f})
    assert (c.text, c.symbols, c.reason) == ("2 ≤ d_f", (d_f,), "r")
    c = divides(n_kv_heads, H, "r").renamed({n_kv_heads: sp.Integer(2)})
    assert (c.text, c.symbols) == ("2 divides H", (H,))
    assert even(d_e, "r").renamed({d_e: d_f}).text == "d_f is even"
    assert at_most(ell, ell_max, "r").renamed({ell: ell + ell_gen - 1}).text == "ℓ + ℓ_gen - 1 ≤ ℓ_max"


@pytest.mark.parametrize("c, always", [
    (at_most(2, 3, "r"), True), (at_most(1, d_e, "r"), True), (at_most(ell, ell, "r"), True),
    (at_most(ell, ell + ell_gen, "r"), True), (divides(2, 4, "r"), True), (divides(H, 2 * H, "r"), True),
    (at_most(2, d_e, "r"), False), (at_most(3, 2, "r"), False), (divides(2, 3, "r"), False),
    (divides(2, H, "r"), False), (at_most(ell, ell_max, "r"), False),
])
def test_always_holds(c, always):
    assert c.always_holds is always


@pytest.mark.parametrize("bad", [
    lambda: Constraint("<", (ell, ell_max)), lambda: Constraint("<=", (ell,)),
    lambda: Constraint("<=", ("ell", ell_max)), lambda: Constraint("<=", (ell, ell_max), wording="even"),
])
def test_a_malformed_constraint_is_a_config_error(bad):
    with pytest.raises(ConfigError):
        bad()


# ------------------------------------------------------------------------------- inherited by the caller
def _texts(algorithm):
    return [c.text for c in algorithm.size_constraints]


@pytest.mark.parametrize("name, options, expected", [
    ("etransformer", {}, ["ℓ ≤ ℓ_max", "2 ≤ d_e", "2 ≤ d_f"]),   # the final layer norm is over d_f
    ("dtransformer", {}, ["ℓ ≤ ℓ_max", "2 ≤ d_e"]),
    ("dtransformer", {"eps": 1e-5}, ["ℓ ≤ ℓ_max"]),
    ("dtransformer", {"norm": "rms"}, ["ℓ ≤ ℓ_max"]),
    ("dtransformer", {"position": "sinusoidal-paper", "eps": 0.1}, ["ℓ ≤ ℓ_max", "d_e is even"]),
    ("mhattention", {"n_kv_heads": 2}, ["2 divides H"]),
    ("mhattention", {"n_kv_heads": "symbolic"}, ["H_kv divides H"]),
    ("dtransformer", {"n_kv_heads": 2, "eps": 0.1}, ["ℓ ≤ ℓ_max", "2 divides H"]),
    ("kv_mhattention", {"n_kv_heads": 2}, ["2 divides H"]),
    ("kv_mhattention", {"n_kv_heads": 2, "step": "prefill"}, ["2 divides H"]),
    ("kv_dtransformer", {"n_kv_heads": 2, "eps": 0.1}, ["ℓ_c + ℓ_x ≤ ℓ_max", "2 divides H"]),
    ("mhattention", {"n_kv_heads": 1}, []),                                   # 1 divides every H
    ("edinference", {"eps": 0.1}, ["ℓ_z ≤ ℓ_max", "ℓ_gen ≤ ℓ_max"]),          # x̂ grows to ℓ_gen tokens
    ("dinference", {"eps": 0.1}, []),                                       # the context is truncated
    ("dinference", {"eps": 0.1, "kv_cache": True}, ["ℓ ≤ ℓ_max", "ℓ + ℓ_gen - 1 ≤ ℓ_max"]),
    ("dloss", {"eps": 0.1}, ["ℓ ≤ ℓ_max", "2 ≤ ℓ"]),                          # an op's: the next-token loss
    ("edloss", {"eps": 0.1}, ["ℓ_z ≤ ℓ_max", "ℓ_x ≤ ℓ_max", "2 ≤ ℓ_x"]),
    ("dtraining", {"eps": 0.1}, ["ℓ ≤ ℓ_max", "2 ≤ ℓ"]),
    ("layer_norm", {}, ["2 ≤ d_e"]),
    ("layer_norm", {"norm": "rms"}, []),
    ("layer_norm", {"eps": 1e-5}, []),
])
def test_size_constraints_are_the_callees_in_the_callers_symbols(name, options, expected):
    assert sorted(_texts(algorithms.get(name, **options))) == sorted(expected)


@pytest.mark.parametrize("name", fast_few(sorted(algorithms.ALGORITHMS), keep=in_fast_tier))
def test_size_constraints_are_unique_and_in_the_algorithms_symbols(name):
    algorithm = algorithms.ALGORITHMS[name]
    found = algorithm.size_constraints
    assert len(set(found)) == len(found)
    assert set(algorithm.constraints) - {c for c in algorithm.constraints if c.always_holds} <= set(found)
    assert all(not c.always_holds for c in found)
    assert {s for c in found for s in c.symbols} <= set(algorithm.symbols)


# ------------------------------------------------------------------------- layer norm over one feature
def test_layer_norm_with_eps_0_over_one_feature_is_a_config_error():
    """Algorithm 6 with eps = 0 (decision-layer-norm-eps): with d_e = 1 every column is constant, v = 0."""
    with pytest.raises(ConfigError, match=r"layer_norm\): d_e = 1 must be at least 2 \(layer norm with eps = 0"):
        layer_norm(e=np.array([3.0]), gamma=np.ones(1), beta=np.zeros(1))


@pytest.mark.parametrize("options", [{"norm": "rms"}, {"eps": 1e-5}])
def test_rmsnorm_or_eps_over_one_feature_runs(options):
    a = layer_norm.variant(**options)
    out = a(e=np.array([3.0]), **{p.name: np.ones(1) for p in a.params})
    assert np.all(np.isfinite(out))


def _params(algorithm, values):
    b = Binding({by_name(k): v for k, v in values.items()})
    rng = np.random.default_rng(0)
    return {p.name: rng.normal(size=tuple(b.evaluate(d) for d in p.shape)) for p in algorithm.params}


@pytest.mark.parametrize("name, width", [("dtransformer", "d_e"), ("etransformer", "d_e"), ("etransformer", "d_f")])
def test_a_stack_inherits_the_layer_norm_constraint(name, width):
    a = algorithms.get(name)
    values = {"N_V": 5, "ell_max": 4, "d_e": 2, "d_f": 2, "L": 1, "H": 1, "d_attn": 1, "d_mid": 1, "d_mlp": 1,
              width: 1}
    with pytest.raises(ConfigError, match=re.escape(f"{a.label}: {width} = 1 must be at least 2")):
        a(x=np.array([0, 1]), **_params(a, values))


def test_the_next_token_loss_of_one_token_is_a_config_error():
    """Algorithm 13's loss sums over t = 1..ℓ−1: its op states 2 ≤ ℓ, checked before anything runs."""
    a = algorithms.dloss.variant(eps=0.1)
    values = {"N_V": 5, "ell_max": 4, "d_e": 2, "L": 1, "H": 1, "d_attn": 1, "d_mid": 1, "d_mlp": 1}
    with pytest.raises(ConfigError, match=re.escape("Algorithm 13 (dloss): ell = 1 must be at least 2")):
        a(x=np.array([3]), **_params(a, values))


def test_resolve_sizes_checks_the_inherited_constraints():
    values = {"N_V": 5, "ell_max": 4, "d_e": 1, "L": 1, "H": 1, "d_mlp": 1}
    with pytest.raises(ConfigError, match="d_e = 1 must be at least 2"):
        resolve_sizes(algorithms.dtransformer, values, 2)
    assert resolve_sizes(algorithms.dtransformer.variant(eps=1e-5), values, 2)["d_e"] == 1
