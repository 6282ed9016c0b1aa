"""QK-norm (Dehghani et al. 2023; Qwen3, Gemma 3) and soft-capping (Gemma 2) against hand-written oracles: where each
sits in Algorithm 4, what it costs, its parameters in the stacks, and the refusals."""

import math

import numpy as np
import pytest
import sympy as sp

from formal import ConfigError
from formal.algorithms import get
from formal.core.symbols import N_V, H, L, d_attn, ell, ell_x, ell_z

RNG = np.random.default_rng(3)


def _softmax(S):
    E = np.exp(S - S.max(0))
    return E / E.sum(0)


def _rms(M, gamma, eps):
    return M / np.sqrt((M ** 2).mean(0) + eps) * gamma[:, None]


def test_attention_normalises_queries_and_keys_then_caps_the_scaled_scores():
    """Q ← RMS(Q)⊙γ_q, K ← RMS(K)⊙γ_k, S ← c·tanh((KᵀQ/√d)/c), the mask after the cap, then the softmax."""
    d, n, cap, eps = 4, 3, 1.5, 1e-6
    X = RNG.normal(size=(5, n)) * 3
    W_q, W_k, W_v = (RNG.normal(size=(d, 5)) for _ in range(3))
    g_q, g_k = RNG.normal(size=d), RNG.normal(size=d)
    mask = np.tril(np.ones((n, n))).T                                      # causal: Mask[t_z, t_x] = t_z ≤ t_x
    got = get("attention", bias=False, qk_norm="rms", qk_eps=eps, score_cap=cap)(
        X=X, W_q=W_q, W_k=W_k, W_v=W_v, gamma_q=g_q, gamma_k=g_k, mask=mask)
    Q, K = _rms(W_q @ X, g_q, eps), _rms(W_k @ X, g_k, eps)
    S = cap * np.tanh(K.T @ Q / math.sqrt(d) / cap)
    S = np.where(mask == 1, S, -np.inf)                                   # a hidden key stays hidden
    np.testing.assert_allclose(got, (W_v @ X) @ _softmax(S), rtol=0, atol=1e-12)
    uncapped = get("attention", bias=False, qk_norm="rms", qk_eps=eps)(X=X, W_q=W_q, W_k=W_k, W_v=W_v, gamma_q=g_q,
                                                                       gamma_k=g_k, mask=mask)
    assert np.abs(uncapped - got).max() > 1e-3                             # the cap changes the output here


def test_a_cap_keeps_masked_keys_hidden():
    """Capping after the mask would turn −∞ into −c: a hidden key would get weight.  The spec caps before it."""
    algorithm = get("attention", bias=False, score_cap=1.0)
    X, W = RNG.normal(size=(2, 2)), np.eye(2)
    out = algorithm(X=X, W_q=W, W_k=W, W_v=W, mask=np.array([[1, 1], [0, 1]]))
    np.testing.assert_allclose(out[:, 0], X[:, 0], atol=1e-15)            # token 0 sees only itself


def test_multi_head_attention_shares_the_qk_norm_over_heads_and_groups():
    """Every head (and every key/value group) reads one γ_q, γ_k of d_attn: MHA with H = 2 equals the heads of
    Algorithm 4 run one by one with the same γ."""
    sizes = dict(d=4, n=3)
    X = RNG.normal(size=(6, sizes["n"]))
    W = {k: RNG.normal(size=(2, 4, 6)) for k in ("W_q", "W_k", "W_v")}
    W_o, g_q, g_k = RNG.normal(size=(6, 8)), RNG.normal(size=4), RNG.normal(size=4)
    mask = np.ones((3, 3))
    mha = get("mhattention", bias=False, qk_norm="rms", score_cap=2.0)
    got = mha(X=X, W_o=W_o, gamma_q=g_q, gamma_k=g_k, mask=mask, **W)
    one = get("attention", bias=False, qk_norm="rms", score_cap=2.0)
    heads = [one(X=X, W_q=W["W_q"][h], W_k=W["W_k"][h], W_v=W["W_v"][h], gamma_q=g_q, gamma_k=g_k, mask=mask)
             for h in range(2)]
    np.testing.assert_allclose(got, W_o @ np.vstack(heads), rtol=0, atol=1e-12)
    gqa = get("mhattention", bias=False, qk_norm="rms", score_cap=2.0, n_kv_heads=1)
    shared = {"W_q": W["W_q"], "W_k": W["W_k"][:1], "W_v": W["W_v"][:1]}
    same = {"W_q": W["W_q"], "W_k": np.repeat(W["W_k"][:1], 2, 0), "W_v": np.repeat(W["W_v"][:1], 2, 0)}
    np.testing.assert_allclose(gqa(X=X, W_o=W_o, gamma_q=g_q, gamma_k=g_k, mask=mask, **shared),
                               mha(X=X, W_o=W_o, gamma_q=g_q, gamma_k=g_k, mask=mask, **same), rtol=0, atol=1e-12)


def test_the_logit_cap_of_the_unembedding_and_the_stacks():
    e, W_u = RNG.normal(size=3), RNG.normal(size=(5, 3)) * 4
    got = get("unembedding", cap=2.0)(e=e, W_u=W_u)
    z = 2.0 * np.tanh(W_u @ e / 2.0)
    np.testing.assert_allclose(got, np.exp(z) / np.exp(z).sum(), rtol=0, atol=1e-15)
    plain, capped = get("dtransformer"), get("dtransformer", logit_cap=30.0)
    extra = sp.expand(capped.cost("full").flops - plain.cost("full").flops)
    assert extra == 3 * N_V * ell                                          # 3 per logit: divide, tanh, multiply


def test_qk_norm_and_cap_costs_and_parameters_in_a_stack():
    """rms QK-norm adds γ_q, γ_k per layer (2·L·d_attn parameters); the cap adds 3 FLOPs per score under full and
    none under matmul."""
    plain = get("dtransformer")
    normed = get("dtransformer", qk_norm="rms", score_cap=50.0)
    assert sp.expand(normed.cost("matmul").params - plain.cost("matmul").params) == 2 * L * d_attn
    assert normed.cost("matmul").flops == plain.cost("matmul").flops
    layer = get("dtransformer", qk_norm="layer")
    assert sp.expand(layer.cost("matmul").params - plain.cost("matmul").params) == 4 * L * d_attn
    shapes = {p.name: p.shape for p in normed.params}
    assert shapes["gamma_q"] == shapes["gamma_k"] == (L, d_attn)
    cap = sp.expand(get("mhattention", score_cap=5.0).cost("full").flops - get("mhattention").cost("full").flops)
    assert cap == 3 * H * ell_x * ell_z


@pytest.mark.parametrize("options, words", [
    ({"score_cap": 0}, "score_cap = 0"),
    ({"score_cap": -3.0}, "score_cap = -3.0"),
    ({"qk_norm": "batch"}, "qk_norm = 'batch'"),
    ({"qk_eps": 1e-5}, "qk_eps = 1e-05 applies to qk_norm"),
])
def test_bad_qk_norm_and_cap_settings_are_refused_by_name(options, words):
    with pytest.raises(ConfigError, match=words):
        get("mhattention", **options)


def test_the_cli_reads_a_cap():
    from formal.engine.options import parse_options
    assert parse_options(get("dtransformer"), ["score_cap=50", "logit_cap=none", "qk_norm=rms"]) == {
        "score_cap": 50.0, "logit_cap": None, "qk_norm": "rms"}
