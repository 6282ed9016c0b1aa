"""The torch graph executor (index/scatter; FlexAttention on CUDA) equals the spec's message passing and
Algorithm 5 on the pattern's mask."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from formal import DomainError, attention as alg4, mhattention as alg5
from formal.graphs import from_mask, message_passing, patterns
from reference.model import message_passing as graph_attention
from tests.strategies.graphs import SEED, builtin, masks
from tests.tiers import fast_few


def _mh(rng, H, n_kv, d_x, d_z, bias, d=2, d_out=3):
    p = {"W_q": rng.normal(size=(H, d, d_x)), "W_k": rng.normal(size=(n_kv, d, d_z)),
         "W_v": rng.normal(size=(n_kv, d, d_z)), "W_o": rng.normal(size=(d_out, H * d))}
    if bias:
        p.update(b_q=rng.normal(size=(H, d)), b_k=rng.normal(size=(n_kv, d)), b_v=rng.normal(size=(n_kv, d)),
                 b_o=rng.normal(size=d_out))
    return p


def _rows(A):
    return torch.from_numpy(np.ascontiguousarray(A.T))[None]            # (1, ℓ, d): batch-first rows


@given(builtin(), st.sampled_from([(1, 1), (2, 2), (4, 2)]), st.booleans(),
       st.sampled_from(["scatter", "explicit", "auto"]), SEED)
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
    """decision-empty-neighbourhood: zeros for an empty query, with finite gradients."""
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
    explicit dense path (float32: within torch's float32 closeness, rtol 1e-3, atol 1e-4)."""
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


def _mh_torch(rng, pattern, H, n_kv, bias):
    params = _mh(rng, H, n_kv, 3, 3, bias)
    X, Z = rng.normal(size=(3, pattern.ell_x)), rng.normal(size=(3, pattern.ell_z))
    return X, Z, params


@pytest.mark.parametrize("ratio", fast_few([0, 2, 10**9]))
@pytest.mark.parametrize("make", [lambda: patterns.sliding_window(50, 6), lambda: patterns.causal(30),
                                  lambda: patterns.random(40, 3, window=2, n_global=1, seed=2),
                                  lambda: patterns.swin(6, 6, 3, shifted=True),
                                  lambda: from_mask(np.eye(12, 9, k=-2, dtype=bool), self_attention=False)])
def test_the_chunked_scatter_path_equals_the_spec(make, ratio, monkeypatch):
    """Blocks everywhere, gathers everywhere, or the executor's choice; chunks from one edge to all of them;
    grouped-query heads; every empty-neighbourhood policy: all equal the spec's Algorithm 5 in float64."""
    from formal.graphs import message_passing as mp
    monkeypatch.setattr(mp, "BLOCK_RATIO", ratio)
    p = make()
    rng = np.random.default_rng(5)
    X, Z, params = _mh_torch(rng, p, 4, 2, True)
    torch_params = {k: torch.from_numpy(v) for k, v in params.items()}
    Q, K, V = (torch.randn(2, 3, n, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(n))
               for n in (p.ell_x, p.ell_z, p.ell_z))
    for empty in ("zero", "nan", "error"):
        if empty == "error" and (p.in_degree == 0).any():
            with pytest.raises(DomainError, match="no admitted key"):
                graph_attention.attend_pattern(Q, K, V, p, empty=empty)
            continue
        spec = alg5.variant(n_kv_heads=2, empty=empty)(X=X, Z=Z, mask=p.mask(), **params)
        got = graph_attention.mhattention(p, _rows(X), _rows(Z), **torch_params, empty=empty, path="scatter")
        np.testing.assert_allclose(got[0].numpy().T, spec, rtol=0, atol=1e-10)
        whole = graph_attention.attend_pattern(Q, K, V, p, empty=empty, max_edges=10**6)
        for size in (1, 7):
            torch.testing.assert_close(graph_attention.attend_pattern(Q, K, V, p, empty=empty, max_edges=size), whole,
                                       rtol=0, atol=1e-12, equal_nan=True)


def test_auto_takes_the_cheaper_path_and_says_which():
    """Windows and blocks run on the scatter path; a dense or nearly dense pattern on SDPA, unless its mask would
    not fit under the memory limit; ``auto`` runs what choose_path names (both give the spec's numbers)."""
    from formal.guards import limits
    cpu = torch.device("cpu")
    assert graph_attention.choose_path(patterns.sliding_window(4096, 256), cpu) == "scatter"
    assert graph_attention.choose_path(patterns.swin(64, 64, 8), cpu) == "scatter"
    assert graph_attention.choose_path(patterns.full(256), cpu) == "sdpa"
    assert graph_attention.choose_path(from_mask(np.random.default_rng(0).random((512, 512)) < 0.3), cpu) == "sdpa"
    full = patterns.full(256)
    with limits.memory_limit("512K"):                                        # the mask and its scores would not fit
        assert graph_attention.choose_path(full, cpu) == "scatter"
    rng = np.random.default_rng(6)
    for p in (patterns.full(20), patterns.sliding_window(20, 3)):
        X = rng.normal(size=(3, 20))
        params = _mh(rng, 2, 2, 3, 3, False)
        spec = alg5(X=X, mask=p.mask(), **params, b_q=np.zeros((2, 2)), b_k=np.zeros((2, 2)), b_v=np.zeros((2, 2)),
                    b_o=np.zeros(3))
        got = graph_attention.mhattention(p, _rows(X), **{k: torch.from_numpy(v) for k, v in params.items()})
        np.testing.assert_allclose(got[0].numpy().T, spec, rtol=0, atol=1e-10)


def test_a_block_never_reads_a_value_outside_the_pattern():
    """As the numpy executor: an infinite value no query attends to leaves every output finite."""
    edges = [(k, q) for q in range(20) for k in range(max(0, q - 3), q + 1) if k != 10]
    from formal.graphs import from_pairs
    p = from_pairs(*np.array(edges).T, ell_z=20)
    Q, K, V = (torch.randn(1, 1, 20, 2, dtype=torch.float64) for _ in range(3))
    V[..., 10, :] = math.inf
    assert torch.isfinite(graph_attention.attend_pattern(Q, K, V, p)).all()


@pytest.mark.parametrize("size", [0, -3, 2.5, True])
def test_bad_chunk_size_is_a_config_error(size):
    from formal import ConfigError
    Q = torch.zeros(1, 1, 3, 2, dtype=torch.float64)
    with pytest.raises(ConfigError, match="max_edges = .* must be a positive integer"):
        graph_attention.attend_pattern(Q, Q, Q, patterns.causal(3), max_edges=size)
