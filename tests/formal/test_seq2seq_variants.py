"""seq2seq's variants real code writes: the additive score's bias inside the tanh (``align_bias``) and an output
layer that reads the fed token's embedding too (``output``) — derived parameters and FLOPs against hand counts,
and exact properties of the executions."""

import numpy as np
import pytest

from formal.algorithms.seq2seq import build_seq2seq
from formal.core.symbols import by_name, ell_x
from formal.errors import ConfigError

SIZES = {"N_V": 5, "d_e": 3, "d_h": 2, "d_a": 2, "ell_z": 4, "ell_x": 3}


def _arguments(model, seed=0):
    rng = np.random.default_rng(seed)
    params = {p.name: rng.normal(size=tuple(int(d.xreplace({by_name(k): v for k, v in SIZES.items()}))
                                            for d in p.shape)) for p in model.params}
    return {"z": rng.integers(0, 5, 4), "x": rng.integers(0, 5, 3), **params}


def test_align_bias_adds_b_a_and_one_addition_per_entry_per_step():
    """b_a (d_a) is the only new parameter, and W_a s + b_a costs d_a additions at each of the ℓ_x steps (full
    convention; the matmul convention counts no additions)."""
    plain, biased = build_seq2seq(), build_seq2seq(align_bias=True)
    d_a = by_name("d_a")
    assert biased.param_count() - plain.param_count() == d_a
    assert [p.name for p in biased.params if p.name not in {q.name for q in plain.params}] == ["b_a"]
    assert biased.cost(convention="full").flops - plain.cost(convention="full").flops == d_a * ell_x
    assert biased.cost().flops == plain.cost().flops


@pytest.mark.parametrize("attention", ["bahdanau", "luong"])
def test_a_zero_b_a_is_the_score_without_it_and_another_moves_p(attention):
    """With b_a = 0 the biased score is the plain one exactly; with b_a ≠ 0 the distributions move (b_a is read
    inside the tanh, where the softmax cannot cancel it)."""
    biased = build_seq2seq(attention=attention, align_bias=True)
    kw = _arguments(biased)
    plain = build_seq2seq(attention=attention)(**{k: v for k, v in kw.items() if k != "b_a"})
    np.testing.assert_array_equal(biased(**{**kw, "b_a": np.zeros(2)}), plain)
    assert np.abs(biased(**kw) - plain).max() > 1e-6


@pytest.mark.parametrize("attention", ["none", "bahdanau"])
def test_the_output_layer_reads_the_embedding_where_its_option_says(attention):
    """W_u gains d_e columns: with them zero each readout is the plain [s; c] one, and [E x_t; s; c] with W_u's
    blocks moved to match is [s; c; E x_t] (to rounding: the same products summed in another order)."""
    after = build_seq2seq(attention=attention, output="state_context_embedding")
    before = build_seq2seq(attention=attention, output="embedding_state_context")
    plain = build_seq2seq(attention=attention)
    N_V, d_e = by_name("N_V"), by_name("d_e")
    assert after.param_count() - plain.param_count() == N_V * d_e == before.param_count() - plain.param_count()
    kw = _arguments(after, seed=1)
    W_u, e = kw["W_u"], SIZES["d_e"]
    zeroed = {**kw, "W_u": np.concatenate([W_u[:, :-e], np.zeros((5, e))], axis=1)}
    np.testing.assert_allclose(after(**zeroed), plain(**{**kw, "W_u": W_u[:, :-e]}), rtol=1e-13, atol=1e-15)
    moved = {**kw, "W_u": np.concatenate([W_u[:, -e:], W_u[:, :-e]], axis=1)}
    np.testing.assert_allclose(before(**moved), after(**kw), rtol=1e-13, atol=1e-15)
    assert np.abs(after(**kw) - plain(**{**kw, "W_u": W_u[:, :-e]})).max() > 1e-6


@pytest.mark.parametrize("options, message", [
    ({"attention": "none", "align_bias": True}, "align_bias = True needs attention = 'bahdanau' or 'luong'"),
    ({"score": "general", "encoder": "forward", "align_bias": True},
     "align_bias = True applies to score = 'additive' only, not 'general'"),
    ({"attention": "luong", "output": "state_context_embedding"},
     "output = 'state_context_embedding' applies to attention = 'none' or 'bahdanau' only, not 'luong'"),
    ({"output": "embedding"}, "output = 'embedding' must be"),
])
def test_the_new_options_name_what_is_wrong(options, message):
    """The options' domains and the rules between them are ConfigErrors naming the option and its value."""
    with pytest.raises(ConfigError, match=message):
        build_seq2seq(**options)
