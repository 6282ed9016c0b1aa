"""The examples `conform` and `verify` draw: every size constraint holds (the spec is defined on each),
the boundary cases are always there, and sizes grow with the budget."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from formal import algorithms
from formal.core.symbols import by_name
from formal.engine.declarations import same_value
from formal.errors import ConfigError
from formal.sampling.examples import EXAMPLE_ALGORITHMS, PROFILES, boundary_cases, example, examples
from formal.sampling.variants import draw_options
from tests.tiers import fast_few, in_fast_tier, slow

_LENGTHS = ("ell", "ell_x", "ell_z", "T")


def _lengths(ex):
    return [v for k, v in ex.sizes.items() if k in _LENGTHS]


def _shortest(ex) -> bool:
    """Whether every sequence is as short as the constraints allow: 1, or one less would break one (a
    next-token loss needs ℓ ≥ 2)."""
    def breaks(sizes):
        return any(not c.holds({s: sizes[str(s)] for s in c.symbols}) for c in ex.algorithm.size_constraints)
    return all(v == 1 or breaks(dict(ex.sizes, **{k: v - 1})) for k, v in ex.sizes.items() if k in _LENGTHS)


def _full(ex) -> bool:
    """Whether the context is full: the longest sequence fills the table, or one position less in the table
    would break a constraint (a KV cache's ℓ_c + ℓ_x ≤ ℓ_max)."""
    smaller = dict(ex.sizes, ell_max=ex.sizes["ell_max"] - 1)
    return ex.sizes["ell_max"] == max(_lengths(ex)) or any(
        not c.holds({s: smaller[str(s)] for s in c.symbols}) for c in ex.algorithm.size_constraints
        if "ell_max" in {str(s) for s in c.symbols})


@pytest.mark.parametrize("name", fast_few(EXAMPLE_ALGORITHMS, keep=in_fast_tier))
@settings(max_examples=4)
@given(seed=st.integers(0, 2**31))
def test_every_example_satisfies_the_constraints_and_the_spec_is_defined(name, seed):
    """Sizes are drawn, then mended until every constraint the algorithm states (its own and its callees':
    Algorithm.size_constraints) holds; the spec then executes on every example without an error."""
    for ex in examples(name, 3, seed=seed, max_size=9):
        for c in ex.algorithm.size_constraints:
            values = {s: ex.sizes[str(s)] for s in c.symbols}
            assert c.holds(values), f"{ex.describe()}: {c.text}"
        ex.algorithm(**ex.arguments)


@pytest.mark.parametrize("name", fast_few(EXAMPLE_ALGORITHMS, keep=in_fast_tier))
def test_boundary_cases_are_always_there(name):
    """Whatever the seed: a sequence of length 1, ℓ = ℓ_max (the longest sequence fills the table), ℓ_z ≠ ℓ_x
    both ways, H = 1 and L = 1, several heads and layers, and a length past every power of two ≤ max_size."""
    algorithm = algorithms.get(name)
    have = {str(s) for s in algorithm.symbols}
    for seed in (0, 1, 33):
        cases = examples(algorithm, 2, seed=seed, max_size=17)
        lengths = [max(_lengths(e), default=0) for e in cases]
        if have & set(_LENGTHS):
            assert any(_shortest(e) for e in cases)
            for power in (2, 4, 8, 16):
                assert any(power < n <= 2 * power for n in lengths), (power, lengths)
        if "ell_max" in have and have & set(_LENGTHS):
            assert any(_full(e) and max(_lengths(e)) > 1 for e in cases)
        if {"ell_x", "ell_z"} <= have:
            assert any(e.sizes["ell_z"] > e.sizes["ell_x"] for e in cases)
            assert any(e.sizes["ell_z"] < e.sizes["ell_x"] for e in cases)
        if "H" in have:
            assert any(e.sizes["H"] == 1 for e in cases) and any(e.sizes["H"] >= 2 for e in cases)
        for layers in ("L", "L_enc", "L_dec"):
            if layers in have:   # the fewest layers the constraints allow (Swin's blocks come in pairs)
                fewest = 2 if any(c.relation == "divides" and c.args == (2, by_name(layers))
                                  for c in algorithm.size_constraints) else 1
                assert any(e.sizes[layers] == fewest for e in cases)
                assert any(e.sizes[layers] >= 2 for e in cases)


def test_boundary_cases_name_what_they_pin():
    labels = [label for label, _ in boundary_cases(algorithms.dtransformer, 65)]
    assert labels[:2] == ["every sequence of length 1", "ℓ = ℓ_max (the context full)"]
    assert [label for label in labels if label.startswith("ℓ = ") and "past" in label] == \
        [f"ℓ = {p + 1}, past {p}" for p in (2, 4, 8, 16, 32, 64)]


def test_sizes_grow_with_the_budget():
    """The size bound grows along the list up to max_size: the random examples alone reach past 8 when
    max_size allows it (the old generator capped ℓ at 6 whatever --examples asked)."""
    small = examples("attention", 20, seed=0, max_size=4, boundary=False)
    large = examples("attention", 20, seed=0, max_size=40, boundary=False)
    assert max(max(_lengths(e)) for e in small) <= 4
    assert max(max(_lengths(e)) for e in large) > 8
    assert PROFILES["thorough"].max_size > 64 and PROFILES["quick"].max_size > 16


def test_a_stack_draws_widths_where_layer_norm_sees_the_input():
    """d_e ≥ 4 in a stack: with d_e = 2, layer norm maps every column to ±γ + β and hides what came before."""
    for ex in examples("dtransformer", 20, seed=0):
        assert ex.sizes["d_e"] >= 4


def test_examples_are_deterministic():
    a, b = examples("mhattention", 5, seed=7), examples("mhattention", 5, seed=7)
    assert [e.describe() for e in a] == [e.describe() for e in b]
    for x, y in zip(a, b):
        assert all(np.array_equal(x.arguments[k], y.arguments[k]) for k in x.arguments
                   if isinstance(x.arguments[k], np.ndarray))


@pytest.mark.parametrize("call, message", [
    (lambda: example("attention", -1), "seed = -1"),
    (lambda: examples("attention", -2), "-2"),
    (lambda: examples("attention", 3, max_size=1), "max_size = 1"),
    (lambda: examples("nope", 3), "no examples for 'nope'"),
    (lambda: examples("attention", 3, colour="red"), "no option 'colour'"),
])
def test_bad_arguments(call, message):
    with pytest.raises(ConfigError, match=message):
        call()


@slow
def test_examples_are_the_same_in_every_process():
    """The same seed gives the same examples whatever Python's string hashing (a set iterated in a different
    order once drew sizes in a different order)."""
    import os
    import subprocess
    import sys
    code = ("from formal.sampling.examples import examples; "
            "print([e.describe() for n in ('dtransformer', 'mhattention', 'kv_dtransformer') "
            "for e in examples(n, 4, seed=3)])")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout for h in (1, 2, 3)}
    assert len(runs) == 1


# ------------------------------------------------------------------------------------------ options
_SEEDS = 80   # the bound on the seeds searched for an example of each declared value


def _unreached(name, seeds=_SEEDS) -> list:
    """``(option, value)`` for each value of a finite domain and each stated example value of ``name``'s
    declarations that no example among ``seeds`` has and whose declaration states no reason."""
    specs = algorithms.get(name).option_specs
    wanted = {(option, value) for option, spec in specs.items()
              for value in (*spec.domain.values(), *spec.examples)
              if not any(same_value(value, skip) for skip, _ in spec.unexampled)}
    for seed in range(seeds):
        options = example(name, seed, small=2).algorithm.options
        wanted = {(o, v) for o, v in wanted if not same_value(options[o], v)}
        if not wanted:
            break
    return sorted(wanted, key=repr)


@pytest.mark.parametrize("name", fast_few(EXAMPLE_ALGORITHMS, keep=in_fast_tier))
def test_every_declared_option_value_is_reached_by_an_example(name):
    """Each choice of each option, and each example value a range states, is some example's (seeds 0–79), or
    its declaration says why none is (``empty="error"`` raises by design; ``n_kv_heads="symbolic"``)."""
    assert _unreached(name) == []


def test_an_unreached_value_without_a_reason_is_found():
    """The search above can fail: a value the examples never draw is reported unless a reason is declared."""
    spec = algorithms.attention.option_specs["empty"]
    assert spec.unexampled and spec.unexampled[0][0] == "error" and spec.unexampled[0][1]
    reasonless = algorithms.attention.option_specs.replaced(spec.but(unexampled=(), examples=("zero", "nan")))
    wanted = {("empty", v) for v in reasonless["empty"].domain.values()}
    drawn = {("empty", example("attention", seed, small=2).algorithm.options["empty"]) for seed in range(40)}
    assert wanted - drawn == {("empty", "error")}


def test_training_algorithms_are_checked_through_their_losses():
    """No examples of Algorithms 11–13 themselves: their options are their losses' declarations."""
    assert {"edtraining", "etraining", "dtraining"}.isdisjoint(EXAMPLE_ALGORITHMS)
    assert set(algorithms.ALGORITHMS) - set(EXAMPLE_ALGORITHMS) == {"edtraining", "etraining", "dtraining"}
    for training, loss in (("edtraining", "edloss"), ("etraining", "eloss"), ("dtraining", "dloss")):
        assert algorithms.get(training).option_specs is algorithms.get(loss).option_specs
        assert loss in EXAMPLE_ALGORITHMS


class _Untouchable:
    def __getattr__(self, name):
        raise AssertionError(f"the generator drew {name} with every option fixed")


@pytest.mark.parametrize("name", fast_few(EXAMPLE_ALGORITHMS, keep=in_fast_tier))
def test_with_every_option_fixed_nothing_is_drawn(name):
    """conform checks an algorithm object: its examples are drawn with no option drawn at all."""
    a = algorithms.get(name)
    assert draw_options(a.option_specs, _Untouchable(), dict(a.options), name) == a.options


@pytest.mark.parametrize("name, fixed, implied", [
    ("etransformer", {"patch_order": "channel-last"}, {"inputs": "image", "head": "classifier", "tied": False}),
    ("etransformer", {"tied": True}, {"inputs": "tokens", "head": "mlm"}),
    ("etransformer", {"head": "classifier"}, {"tied": False, "unembedding_bias": False}),
    ("conv1d", {"padding": "same"}, {"stride": 1}),
    ("rnn", {"reset": "after"}, {"cell": "gru"}),
    ("rnn_layer", {"nonlinearity": "relu"}, {"cell": "rnn"}),
    ("seq2seq", {"score": "dot"}, {"encoder": "forward", "init": "final"}),
    ("seq2seq", {"init": "backward"}, {"encoder": "bidirectional"}),
    ("attention", {"activation": "leaky_relu"}, {"score": "additive"}),
])
def test_a_fixed_option_narrows_what_is_drawn(name, fixed, implied):
    """A fixed value moves the drawn ones the declarations tie it to, never itself."""
    for seed in range(12):
        options = example(name, seed, small=2, **fixed).algorithm.options
        assert {k: options[k] for k in {**fixed, **implied}} == {**fixed, **implied}, seed


def test_drawn_combinations_are_mended_as_the_declarations_say():
    """Options that apply only with another value keep their defaults otherwise, and no rule is broken."""
    for name in ("attention", "etransformer", "seq2seq", "rnn", "conv1d", "han"):
        specs = algorithms.get(name).option_specs
        for seed in range(25):
            options = example(name, seed, small=2).algorithm.options
            assert not any(rule.broken(options) for rule in specs.rules), (name, seed)
            for option, spec in specs.items():
                if not specs.applies(option, options):
                    assert same_value(options[option], spec.default), (name, seed, option)
