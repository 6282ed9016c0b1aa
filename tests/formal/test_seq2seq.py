"""Properties of the recurrent encoder–decoders (formal.algorithms.seq2seq): RNNsearch, Luong's global
attention and the fixed-context encoder–decoder."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from formal import algorithms
from formal.algorithms.seq2seq import build_seq2seq
from formal.core.symbols import by_name, ell_x, ell_z
from formal.errors import ConfigError
from tests.strategies.recurrent import seq2seq_cases


@given(seq2seq_cases(), st.data())
def test_the_decoder_reads_only_the_target_tokens_so_far(case, data):
    """Algorithm 8's convention, kept: P[:, t] is the distribution of token t + 1 given z and x[1…t], so
    changing the target tokens after t leaves columns 1…t alone (teacher forcing)."""
    x = case.kwargs["x"]
    t = data.draw(st.integers(0, len(x) - 1))
    moved = x.copy()
    moved[t + 1:] = (moved[t + 1:] + 1) % case.sizes["N_V"]
    before, after = case.algorithm(**case.kwargs), case.algorithm(**{**case.kwargs, "x": moved})
    np.testing.assert_array_equal(after[:, :t + 1], before[:, :t + 1])
    np.testing.assert_allclose(before.sum(axis=0), 1.0, rtol=1e-12)


@given(seq2seq_cases())
def test_attention_weights_are_a_distribution_over_the_source(case):
    """The notes: "0 < a_{t,i} < 1, Σ_i a_{t,i} = 1" — the last step's weights, for every score."""
    if case.algorithm.options["attention"] == "none":
        return
    alpha = case.algorithm.run(**case.kwargs).values["alpha"]
    assert alpha.shape == (case.sizes["ell_z"],)
    assert np.all(alpha > 0) and np.all(alpha < 1 + 1e-15)
    np.testing.assert_allclose(alpha.sum(), 1.0, rtol=1e-12)


@pytest.mark.parametrize("attention", ["none", "bahdanau", "luong"])
def test_sequential_steps_are_the_source_and_target_lengths(attention):
    """Cho et al., Bahdanau et al.: the encoder steps through T_x tokens, then the decoder through T_y —
    the derived depth is linear in ℓ_z + ℓ_x, with no product term."""
    depth = build_seq2seq(attention=attention, score="additive").cost().depth
    assert depth.diff(ell_z) > 0 and depth.diff(ell_x) > 0 and depth.diff(ell_z).diff(ell_x) == 0
    assert depth.diff(ell_z, 2) == 0 and depth.diff(ell_x, 2) == 0


def test_bahdanau_attention_has_three_million_and_one_thousand_parameters():
    """Bahdanau et al. §A.1.2 with n = n' = 1000 and no biases: W_a (n'×n), U_a (n'×2n), v_a (n') — the
    alignment model's parameters are 3n'n + n' = 3,001,000."""
    model = build_seq2seq(attention="bahdanau", bias="none")
    alignment = sum(p.size() for p in model.params if p.name in ("W_a", "U_a", "v_a"))
    assert alignment.xreplace({by_name("d_a"): 1000, by_name("d_h"): 1000}) == 3_001_000


def test_the_fixed_context_is_the_same_at_every_step():
    """Cho et al.: c is the encoder's final state and "doesn't change during decoding" — the context read
    after the loop is the one computed before it."""
    rng = np.random.default_rng(0)
    model = build_seq2seq(attention="none")
    sizes = {"N_V": 5, "d_e": 3, "d_h": 2, "ell_z": 4, "ell_x": 3}
    kwargs = {p.name: rng.normal(size=tuple(int(d.xreplace({by_name(k): v for k, v in sizes.items()}))
                                          for d in p.shape)) for p in model.params}
    run = model.run(z=rng.integers(0, 5, 4), x=rng.integers(0, 5, 3), **kwargs)
    H = run.values["H"]
    np.testing.assert_array_equal(run.values["c"], np.concatenate([H[:2, -1], H[2:, 0]]))


@pytest.mark.parametrize("options, message", [
    ({"attention": "transformer"}, "attention = 'transformer' must be 'none', 'bahdanau' or 'luong'"),
    ({"score": "dot"}, "score = 'dot' needs encoder = 'forward', not 'bidirectional' .the dot score needs the "
                       "encoder's states as wide as the decoder's"),
    ({"attention": "none", "score": "general"},
     "score = 'general' applies to attention = 'bahdanau' or 'luong' only, not 'none'"),
    ({"init": "backward", "encoder": "forward"},
     "init = 'backward' needs encoder = 'bidirectional', not 'forward' .it reads h⃖_1"),
    ({"cell": "rnn"}, "cell = 'rnn' must be 'gru' or 'lstm'"),
    ({"cell": "lstm", "reset": "after"}, "reset = 'after' applies to cell = 'gru' only, not 'lstm'"),
])
def test_bad_options_name_the_option_and_its_value(options, message):
    with pytest.raises(ConfigError, match=message):
        algorithms.get("seq2seq", **options)
