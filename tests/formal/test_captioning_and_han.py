"""Properties of Show, Attend and Tell (Xu et al. 2015) and the hierarchical attention network (Yang et al.
2016), checked on the spec's execution against the papers' equations."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from recurrent_cases import han_cases, show_attend_tell_cases

from formal import algorithms
from formal.algorithms import recurrent
from formal.algorithms.pooling import build_attention_pooling
from formal.errors import ConfigError
from formal.symbols import ell, ell_x, n_sent


@given(show_attend_tell_cases())
def test_every_step_attends_with_a_distribution_over_the_locations(case):
    """Xu et al. eq. (5): α_t = softmax over the L locations, so every column of the attention map sums to 1;
    every column of P is a distribution over the vocabulary."""
    P, alpha = case.algorithm(**case.kwargs)
    assert alpha.shape == (case.sizes["ell_z"], case.sizes["ell_x"])
    np.testing.assert_allclose(alpha.sum(axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=1e-12)


@given(show_attend_tell_cases(loss=True))
def test_the_loss_is_the_captions_nll_plus_the_doubly_stochastic_penalty(case):
    """Xu et al. eq. (14): L_d = −Σ_t log p(y_{t+1}) + λ Σ_i (1 − Σ_t α_ti)², computed here by hand from the
    model's own outputs."""
    options = {k: v for k, v in case.algorithm.options.items() if k != "penalty"}
    P, alpha = algorithms.get("show_attend_tell", **options)(**case.kwargs)
    x = case.kwargs["x"]
    nll = -sum(np.log(P[x[t + 1], t]) for t in range(len(x) - 1))
    penalty = case.algorithm.options["penalty"] * np.sum((1 - alpha.sum(axis=1)) ** 2)
    np.testing.assert_allclose(case.algorithm(**case.kwargs), nll + penalty, rtol=1e-10)


@given(show_attend_tell_cases(), st.data())
def test_the_caption_is_decoded_left_to_right(case, data):
    """Teacher forcing: column t of P and of α depends on the words 1…t only."""
    x = case.kwargs["x"]
    t = data.draw(st.integers(0, len(x) - 1))
    moved = x.copy()
    moved[t + 1:] = (moved[t + 1:] + 1) % case.sizes["N_V"]
    before, after = case.algorithm(**case.kwargs), case.algorithm(**{**case.kwargs, "x": moved})
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a[:, :t + 1], b[:, :t + 1])


def test_show_attend_tell_decodes_sequentially():
    """The decoder takes one step per word: depth Θ(ℓ_x), whatever the number of locations."""
    depth = algorithms.get("show_attend_tell").cost().depth
    assert depth.diff(ell_x) > 0 and depth.diff(ell_x, 2) == 0 and not depth.has(algorithms.get(
        "show_attend_tell").inputs[0].shape[1])


@given(han_cases())
def test_han_is_its_levels_composed(case):
    """Yang et al. §2: each sentence j is encoded by the word bi-GRU and pooled by word attention; the
    sentence vectors are encoded and pooled the same way, then classified — composed here from the layer
    and pooling objects."""
    k, options = case.kwargs, case.algorithm.options
    layer = recurrent.build_rnn_layer(cell=options["cell"], direction="bidirectional", bias=options["bias"],
                                      **({"reset": options["reset"], "update": options["update"]}
                                         if options["cell"] == "gru" else {}))
    pool = build_attention_pooling(score="mlp")
    words = {n[2:]: v for n, v in k.items() if n.startswith("w_")}
    sentences = {n[2:]: v for n, v in k.items() if n.startswith("s_")}
    vectors = [pool(Z=layer(X=k["W_e"][:, k["x"][:, j]], **words), W=k["W_w"], b=k["b_w"], u_w=k["u_w"])
               for j in range(k["x"].shape[1])]
    v = pool(Z=layer(X=np.stack(vectors, axis=1), **sentences), W=k["W_s"], b=k["b_s"], u_w=k["u_s"])
    logits = k["W_c"] @ v + k["b_c"]
    want = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    np.testing.assert_allclose(case.algorithm(**k), want, rtol=1e-10, atol=1e-12)


def test_han_encodes_its_sentences_in_parallel():
    """The word level runs once per sentence in a parallel loop: depth Θ(ℓ + n_s), with no ℓ·n_s term."""
    depth = algorithms.get("han").cost().depth
    assert depth.diff(ell) > 0 and depth.diff(n_sent) > 0 and depth.diff(ell).diff(n_sent) == 0


@pytest.mark.parametrize("name, options, message", [
    ("show_attend_tell", {"gate": 1}, "gate = 1 must be True or False"),
    ("show_attend_tell_loss", {"penalty": -1.0}, "penalty = -1.0 must be a finite number ≥ 0"),
    ("han", {"cell": "rnn"}, "unknown HAN cell 'rnn'"),
    ("han", {"cell": "lstm", "reset": "before"}, "reset and update apply to cell = 'gru' only"),
])
def test_bad_options_name_the_option_and_its_value(name, options, message):
    with pytest.raises(ConfigError, match=message):
        algorithms.get(name, **options)
