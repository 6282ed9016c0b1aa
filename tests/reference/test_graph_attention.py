"""The torch graph executor (index/scatter; FlexAttention on CUDA) equals the spec's message passing and
Algorithm 5 on the pattern's mask (issue 5: executors, torch)."""

import os
import sys

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from formal import DomainError
from formal import attention as alg4
from formal import mhattention as alg5
from formal.graphs import from_mask, message_passing, patterns
from reference import graph_attention

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "graphs"))
from graph_strategies import SEED, builtin, masks  # noqa: E402


def _mh(rng, H, n_kv, d_x, d_z, bias, d=2, d_out=3):
    p = {"W_q": rng.normal(size=(H, d, d_x)), "W_k": rng.normal(size=(n_kv, d, d_z)),
         "W_v": rng.normal(size=(n_kv, d, d_z)), "W_o": rng.normal(size=(d_out, H * d))}
    if bias:
        p.update(b_q=rng.normal(size=(H, d)), b_k=rng.normal(size=(n_kv, d)), b_v=rng.normal(size=(n_kv, d)),
                 b_o=rng.normal(size=d_out))
    return p


def _rows(A):
    return torch.from_numpy(np.ascontiguousarray(A.T))[None]            # (1, ℓ, d): batch-first rows


@given(builtin(), st.sampled_from([(1, 1), (2, 2), (4, 2)]), st.booleans(), st.sampled_from(["scatter", "explicit"]),
       SEED)
def test_scatter_path_equals_the_spec_on_every_builtin_pattern(case, heads, bias, path, seed):
    """Algorithm 5 over a pattern in torch (float64) equals the spec's dense Algorithm 5 on its mask and
    the numpy edge executor, within 1e-10."""
    _, _, pattern, _ = case
    if pattern.ell_x == 0:
        return
    rng = np.random.default_rng(seed)
    H, n_kv = heads
    X = rng.normal(size=(4, pattern.ell_x))
    params = _mh(rng, H, n_kv, 4, 4, bias)
    spec = alg5.variant(bias=bias, n_kv_heads=None if n_kv == H else n_kv)(X=X, mask=pattern.mask(), **params)
    got = graph_attention.mhattention(pattern, _rows(X), **{k: torch.from_numpy(v) for k, v in params.items()},
                                      path=path)
    np.testing.assert_allclose(got[0].numpy().T, spec, rtol=0, atol=1e-10)
    np.testing.assert_allclose(message_passing.mhattention(pattern, X, **params), spec, rtol=0, atol=1e-10)


@given(masks(min_len=1), st.sampled_from(["zero", "nan", "error"]), SEED)
def test_scatter_path_follows_the_empty_neighbourhood_policy(m, empty, seed):
    """Cross-attention on a random mask with empty query columns: zeros, NaN or DomainError, as the spec."""
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(3, m.shape[1])), rng.normal(size=(2, m.shape[0]))
    params = _mh(rng, 2, 2, 3, 2, True)
    pattern = from_mask(m, self_attention=False)
    torch_params = {k: torch.from_numpy(v) for k, v in params.items()}
    if empty == "error" and not m.any(axis=0).all():
        with pytest.raises(DomainError, match="no admitted key"):
            graph_attention.mhattention(pattern, _rows(X), _rows(Z), **torch_params, empty=empty)
        return
    spec = alg5.variant(empty=empty)(X=X, Z=Z, mask=m, **params)
    got = graph_attention.mhattention(pattern, _rows(X), _rows(Z), **torch_params, empty=empty)
    np.testing.assert_allclose(got[0].numpy().T, spec, rtol=0, atol=1e-10)


def test_scatter_gradients_are_finite_with_empty_neighbourhoods():
    """design decision 7: zeros for an empty query, with finite gradients."""
    pattern = from_mask(np.array([[1, 0], [1, 0]], dtype=bool), self_attention=False)
    rng = np.random.default_rng(0)
    params = {k: torch.from_numpy(v).requires_grad_() for k, v in _mh(rng, 1, 1, 3, 3, True).items()}
    X = torch.randn(1, 2, 3, dtype=torch.float64)
    Z = torch.randn(1, 2, 3, dtype=torch.float64)
    graph_attention.mhattention(pattern, X, Z, **params).sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in params.values())


def test_unknown_path_is_a_config_error():
    from formal import ConfigError
    with pytest.raises(ConfigError, match="unknown graph attention path 'dense'"):
        graph_attention.attention(patterns.causal(3), torch.zeros(1, 3, 2, dtype=torch.float64),
                                  W_q=torch.zeros(2, 2), W_k=torch.zeros(2, 2), W_v=torch.zeros(2, 2), path="dense")


@pytest.mark.gpu
@pytest.mark.parametrize("make", [lambda: patterns.sliding_window(1024, 128), lambda: patterns.strided(1024, 32),
                                  lambda: patterns.random(1024, 3, window=64, n_global=2)])
def test_flex_and_scatter_on_cuda_equal_the_explicit_path(make):
    """On a GPU: FlexAttention with the pattern as a mask function and the scatter path both equal the
    explicit dense path (float32, within the calibrated attention tolerance scale)."""
    pattern = make()
    torch.manual_seed(0)
    X = torch.randn(2, pattern.ell_x, 64, device="cuda")
    params = {"W_q": torch.randn(4, 16, 64, device="cuda") / 8, "W_k": torch.randn(4, 16, 64, device="cuda") / 8,
              "W_v": torch.randn(4, 16, 64, device="cuda") / 8, "W_o": torch.randn(64, 64, device="cuda") / 8}
    explicit = graph_attention.mhattention(pattern, X, **params, path="explicit")
    for path in ("flex", "scatter"):
        got = graph_attention.mhattention(pattern, X, **params, path=path)
        torch.testing.assert_close(got, explicit, rtol=1e-3, atol=1e-4)


@given(builtin(), st.booleans(), SEED)
def test_single_head_scatter_path_is_algorithm_4(case, bias, seed):
    """One head (Algorithm 4) over a pattern in torch equals the spec on its mask."""
    _, _, pattern, _ = case
    if pattern.ell_x == 0:
        return
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3, pattern.ell_x))
    params = {"W_q": rng.normal(size=(2, 3)), "W_k": rng.normal(size=(2, 3)), "W_v": rng.normal(size=(4, 3))}
    if bias:
        params.update(b_q=rng.normal(size=2), b_k=rng.normal(size=2), b_v=rng.normal(size=4))
    spec = alg4.variant(bias=bias)(X=X, mask=pattern, **params)
    got = graph_attention.attention(pattern, _rows(X), **{k: torch.from_numpy(v) for k, v in params.items()})
    np.testing.assert_allclose(got[0].numpy().T, spec, rtol=0, atol=1e-10)
