"""Algorithms 1, 2, 6 and 7 against independent statements of the paper's definitions."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from formal import ConfigError, DomainError, layer_norm, positional_embedding, token_embedding
from tests.strategies.cases import SEED
from tests.strategies.embedding import unembedding_cases
from tests.strategies.normalization import layer_norm_cases

sizes = st.integers(1, 6)


@given(sizes, sizes, SEED, st.data())
def test_token_embedding_is_the_column_of_the_token(d_e, n_v, seed, data):
    """Algorithm 1: e = W_e[:, v]."""
    W_e = np.random.default_rng(seed).normal(size=(d_e, n_v))
    v = data.draw(st.integers(0, n_v - 1))
    np.testing.assert_array_equal(token_embedding(v=v, W_e=W_e), W_e[:, v])


@pytest.mark.parametrize("v", [-1, 5, 99])
def test_token_id_outside_the_vocabulary_is_a_domain_error(v):
    with pytest.raises(DomainError, match=f"token id v = {v} is outside"):
        token_embedding(v=v, W_e=np.ones((3, 5)))


def test_non_integer_token_id_is_a_config_error():
    with pytest.raises(ConfigError, match="integer"):
        token_embedding(v=1.5, W_e=np.ones((3, 5)))


def paper_sinusoid(d_e, ell_max, t0):
    """Phuong & Hutter Alg. 2 with 1-indexed t and rows: W_p[2i−1, t] = sin(t/ℓ_max^{2i/d_e}),
    W_p[2i, t] = cos(...), for 0 < i ≤ d_e/2 (here t0 = t − 1 is the Python position)."""
    t = t0 + 1
    col = [0.0] * d_e
    for i in range(1, d_e // 2 + 1):
        col[2 * i - 2] = math.sin(t / ell_max ** (2 * i / d_e))
        col[2 * i - 1] = math.cos(t / ell_max ** (2 * i / d_e))
    return col


def vaswani_sinusoid(d_e, pos):
    """Vaswani et al. §3.5, 0-indexed: PE(pos, 2i) = sin(pos/10000^{2i/d}), PE(pos, 2i+1) = cos(...)."""
    col = [0.0] * d_e
    for i in range(d_e // 2):
        col[2 * i] = math.sin(pos / 10000 ** (2 * i / d_e))
        col[2 * i + 1] = math.cos(pos / 10000 ** (2 * i / d_e))
    return col


@given(st.integers(1, 5), st.integers(1, 50), st.data())
def test_sinusoidal_encodings_match_their_papers(half, ell_max, data):
    """decision-sinusoids: both sinusoids, each as its paper writes it."""
    d_e = 2 * half
    t = data.draw(st.integers(0, ell_max - 1))
    paper = positional_embedding.variant(encoding="sinusoidal-paper")(t=t, d_e=d_e, ell_max=ell_max)
    vaswani = positional_embedding.variant(encoding="sinusoidal-vaswani")(t=t, d_e=d_e, ell_max=ell_max)
    np.testing.assert_allclose(paper, paper_sinusoid(d_e, ell_max, t), rtol=0, atol=1e-12)
    np.testing.assert_allclose(vaswani, vaswani_sinusoid(d_e, t), rtol=0, atol=1e-12)


def test_the_two_sinusoids_differ():
    """Neither encoding silently replaces the other."""
    a = positional_embedding.variant(encoding="sinusoidal-paper")(t=3, d_e=8, ell_max=64)
    b = positional_embedding.variant(encoding="sinusoidal-vaswani")(t=3, d_e=8, ell_max=64)
    assert not np.allclose(a, b)


@pytest.mark.parametrize("encoding", ["sinusoidal-paper", "sinusoidal-vaswani"])
def test_sinusoid_with_odd_width_is_a_config_error(encoding):
    with pytest.raises(ConfigError, match="d_e = 7 must be even"):
        positional_embedding.variant(encoding=encoding)(t=0, d_e=7, ell_max=10)


def test_position_outside_the_context_is_a_domain_error():
    with pytest.raises(DomainError, match="position t = 10 is outside"):
        positional_embedding(t=10, W_p=np.ones((4, 10)))
    with pytest.raises(DomainError, match="outside"):
        positional_embedding.variant(encoding="sinusoidal-vaswani")(t=10, d_e=4, ell_max=10)


@given(layer_norm_cases())
def test_layer_norm_matches_its_definition(case):
    """Algorithm 6: (e − m)/√(v + ε) ⊙ γ + β with the biased variance; RMSNorm: e/√(mean(e²) + ε) ⊙ γ."""
    kw, eps = case.kwargs, case.algorithm.options["eps"]
    e = kw["e"]
    if case.algorithm.options["norm"] == "layer":
        expected = (e - e.mean()) / np.sqrt(e.var() + eps) * kw["gamma"] + kw["beta"]
    else:
        expected = e / np.sqrt(np.mean(e**2) + eps) * kw["gamma"]
    np.testing.assert_allclose(case.algorithm(**kw), expected, rtol=1e-12, atol=1e-12)


@given(layer_norm_cases())
def test_layer_norm_with_unit_scale_standardises(case):
    """With γ = 1, β = 0 and ε = 0 the output has mean 0 and (biased) variance 1; RMSNorm, mean square 1."""
    d_e = case.sizes["d_e"]
    algorithm = case.algorithm.variant(eps=0.0)
    params = {"gamma": np.ones(d_e)} | ({"beta": np.zeros(d_e)} if "beta" in case.kwargs else {})
    out = algorithm(e=case.kwargs["e"], **params)
    if case.algorithm.options["norm"] == "layer":
        assert abs(out.mean()) < 1e-12
        assert abs(out.var() - 1) < 1e-12
    else:
        assert abs(np.mean(out**2) - 1) < 1e-12


@pytest.mark.parametrize("norm", ["layer", "rms"])
def test_constant_column_under_zero_eps_is_a_domain_error_not_nan(norm):
    """decision-layer-norm-eps: with eps = 0 a constant (RMSNorm: zero) column is an error."""
    d_e = 4
    e = np.full(d_e, 3.0) if norm == "layer" else np.zeros(d_e)
    params = {"gamma": np.ones(d_e)} | ({"beta": np.zeros(d_e)} if norm == "layer" else {})
    with pytest.raises(DomainError, match="eps > 0"):
        layer_norm.variant(norm=norm)(e=e, **params)
    out = layer_norm.variant(norm=norm, eps=1e-5)(e=e, **params)
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("eps", [-1e-5, float("nan"), "1e-5", True])
def test_bad_eps_is_a_config_error(eps):
    with pytest.raises(ConfigError, match="eps"):
        layer_norm.variant(eps=eps)


@given(unembedding_cases())
def test_unembedding_is_a_distribution(case):
    """Algorithm 7: p = softmax(W_u e) is a probability distribution over the vocabulary."""
    p = case.algorithm(**case.kwargs)
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(), 1.0, rtol=0, atol=1e-12)
    logits = case.kwargs["W_u"] @ case.kwargs["e"]
    assert np.argmax(p) == np.argmax(logits)
