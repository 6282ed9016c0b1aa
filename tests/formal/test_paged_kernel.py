"""The paged-attention kernel's contract (Kwon et al. 2023, §4.1; vLLM's ``paged_attention``): projected
queries over a cache read through a block table.  Checked against oracles written here from the paper —
context gathered slot by slot as ``table[j // B]``, ``j % B``, a softmax per head — and tied to the spec's
other contracts: PagedMHAttention, and Algorithm 5 on the whole sequence, with the projections applied
outside."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from formal import algorithms
from formal.algorithms.paged import PagedCache
from formal.algorithms.paged_kernel import reads
from formal.core.symbols import H, block, d_attn, d_mid, ell_c, ell_x, n_pool
from formal.errors import ConfigError, DomainError
from tests.strategies.cases import evaluate
from tests.strategies.paged import paged_attention_cases


def _kernel(Q, K_pool, V_pool, table, ell_c, scale=None, touched=None):
    """The kernel as Kwon et al. describe it, one query at a time: query t of ℓ_x sees the cache's first
    ℓ_c − ℓ_x + t + 1 tokens, token j at slot j % B of block table[j // B]; ``touched`` collects the table
    positions read."""
    H, d, n_x = Q.shape
    n_kv, B = K_pool.shape[1], K_pool.shape[3]
    scale = 1 / math.sqrt(d) if scale is None else scale
    Y = np.zeros((H, V_pool.shape[2], n_x))
    for t in range(n_x):
        n = ell_c - n_x + t + 1
        for h in range(H):
            g = h // (H // n_kv)
            k = np.array([K_pool[table[j // B], g, :, j % B] for j in range(n)])
            v = np.array([V_pool[table[j // B], g, :, j % B] for j in range(n)])
            if touched is not None:
                touched.update(j // B for j in range(n))
            s = scale * k @ Q[h, :, t]
            p = np.exp(s - s.max())
            Y[h, :, t] = v.T @ (p / p.sum())
    return Y


@settings(max_examples=60)
@given(paged_attention_cases())
def test_the_kernel_is_attention_over_the_blocks_its_table_names(case):
    """For any table — distinct blocks in any order, or repeated (shared) ones — and any grouping, each new
    token's output is its heads' softmax over the cache up to itself, read slot by slot (Kwon et al.'s
    eq. 4 computes the same softmax block by block)."""
    got = case.algorithm(**case.kwargs)
    np.testing.assert_allclose(got, _kernel(**case.kwargs), rtol=1e-12, atol=1e-12)


@settings(max_examples=40)
@given(paged_attention_cases())
def test_several_new_tokens_are_that_many_decoding_calls(case):
    """ℓ_x new tokens in one call give what ℓ_x one-token calls give, token t with context length
    ℓ_c − ℓ_x + t + 1 and the table's first ⌈that/B⌉ blocks — vLLM's batch of sequences sharing a table."""
    k = case.kwargs
    got = case.algorithm(**k)
    B, n_x = k["K_pool"].shape[3], k["Q"].shape[2]
    for t in range(n_x):
        n = k["ell_c"] - n_x + t + 1
        one = case.algorithm(Q=k["Q"][:, :, t:t + 1], K_pool=k["K_pool"], V_pool=k["V_pool"],
                             table=k["table"][:-(-n // B)], ell_c=n)
        np.testing.assert_allclose(got[:, :, t:t + 1], one, rtol=1e-12, atol=1e-12)   # sums of other lengths


def _sequence(rng, n_kv, d, n_c, B):
    """Two sequences written into one pool in turns (so their tables interleave, out of order), and the
    first one's tokens: its cached keys and values (contiguous) and the weights projecting its new tokens."""
    cache = PagedCache(n_blocks=16, block=B, heads=n_kv, d_k=d, d_v=d)
    mine, other = cache.new(), cache.new()
    K_c, V_c = rng.normal(size=(n_kv, d, n_c)), rng.normal(size=(n_kv, d, n_c))
    for start in range(0, n_c, B):
        cache.append(mine, K_c[..., start:start + B], V_c[..., start:start + B])
        cache.append(other, rng.normal(size=(n_kv, d, 1)), rng.normal(size=(n_kv, d, 1)))
    return cache, mine, K_c, V_c


@pytest.mark.parametrize("n_kv", [1, 2, 4])
def test_with_the_projections_outside_it_is_paged_mhattention(n_kv):
    """PagedMHAttention of new tokens X over a paged cache equals W_o·[Y¹; …; Yᴴ] + b_o, Y the kernel's
    output for the projected queries W_q X + b_q once the new keys and values are written into the cache —
    the two contracts tied together, and both tied to Algorithm 5 on the whole sequence, causally masked."""
    rng = np.random.default_rng(n_kv)
    H_, d, d_x, d_out, n_c, n_x, B = 4, 3, 5, 2, 5, 3, 2
    cache, seq, K_c, V_c = _sequence(rng, n_kv, d, n_c, B)
    W = {"W_q": rng.normal(size=(H_, d, d_x)), "W_k": rng.normal(size=(n_kv, d, d_x)),
         "W_v": rng.normal(size=(n_kv, d, d_x)), "W_o": rng.normal(size=(d_out, H_ * d)),
         "b_q": rng.normal(size=(H_, d)), "b_k": rng.normal(size=(n_kv, d)), "b_v": rng.normal(size=(n_kv, d)),
         "b_o": rng.normal(size=d_out)}
    X = rng.normal(size=(d_x, n_x))
    mask = np.arange(n_c + n_x)[:, None] <= np.arange(n_x)[None, :] + n_c
    paged = algorithms.get("paged_mhattention", n_kv_heads=n_kv)
    want, _, _ = paged(X=X, K_pool=cache.K, V_pool=cache.V, table=cache.table(seq), mask=mask, ell_c=n_c, **W)

    def project(name, X):
        return np.einsum("hdi,it->hdt", W[f"W_{name}"], X) + W[f"b_{name}"][:, :, None]
    cache.append(seq, project("k", X), project("v", X))
    kernel = algorithms.get("paged_attention", n_kv_heads=n_kv)
    Y = kernel(Q=project("q", X), K_pool=cache.K, V_pool=cache.V, table=cache.table(seq), ell_c=n_c + n_x)
    got = W["W_o"] @ Y.reshape(H_ * d, n_x) + W["b_o"][:, None]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    # Algorithm 5 on the whole sequence: its last ℓ_x columns, when the cached tokens' keys came from it too
    X_all = rng.normal(size=(d_x, n_c + n_x))
    whole = algorithms.get("mhattention", n_kv_heads=n_kv)(
        X=X_all, mask=np.arange(n_c + n_x)[:, None] <= np.arange(n_c + n_x)[None, :], **W)
    fresh = PagedCache(n_blocks=8, block=B, heads=n_kv, d_k=d, d_v=d)
    s = fresh.new()
    fresh.append(s, project("k", X_all), project("v", X_all))
    Y = kernel(Q=project("q", X_all)[:, :, n_c:], K_pool=fresh.K, V_pool=fresh.V, table=fresh.table(s), ell_c=n_c + n_x)
    np.testing.assert_allclose(W["W_o"] @ Y.reshape(H_ * d, n_x) + W["b_o"][:, None], whole[:, n_c:],
                               rtol=1e-12, atol=1e-12)


def test_a_kernels_scale_is_the_contract_on_rescaled_queries():
    """Why the scale is not an option: softmax(s·KᵀQ) is the spec's softmax(KᵀQ'/√d_attn) for
    Q' = s·√d_attn·Q, for any s a kernel is passed."""
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(2, 4, 1)), rng.normal(size=(3, 2, 4, 2)), rng.normal(size=(3, 2, 3, 2))
    table = np.array([2, 0])
    for s in (1.0, 0.1, 3.7):
        got = algorithms.paged_attention(Q=s * math.sqrt(4) * Q, K_pool=K, V_pool=V, table=table, ell_c=3)
        np.testing.assert_allclose(got, _kernel(Q, K, V, table, 3, scale=s), rtol=1e-12, atol=1e-12)


def test_what_lies_outside_the_context_is_never_read():
    """Slots past ℓ_c in the last block, and blocks the table does not name, do not move the output."""
    rng = np.random.default_rng(4)
    Q, K, V = rng.normal(size=(2, 3, 2)), rng.normal(size=(5, 2, 3, 4)), rng.normal(size=(5, 2, 2, 4))
    table = np.array([3, 1])
    before = algorithms.paged_attention(Q=Q, K_pool=K, V_pool=V, table=table, ell_c=6)
    K[1, ..., 2:], V[1, ..., 2:] = 1e3, -1e3                 # the last block's stale slots
    K[[0, 2, 4]], V[[0, 2, 4]] = 7.0, 7.0                   # blocks of other sequences
    np.testing.assert_array_equal(algorithms.paged_attention(Q=Q, K_pool=K, V_pool=V, table=table, ell_c=6),
                                  before)


def test_the_flops_are_a_score_and_a_weighted_value_per_query_and_cached_token():
    """Per head, query and visible token: d_attn multiply-adds for the score, d_mid for the values — counted
    over the whole context, as the kernel's matrix products do (the mask zeroes weights, not work)."""
    want = 2 * H * ell_x * ell_c * (d_attn + d_mid)
    assert sp.expand(algorithms.paged_attention.cost("matmul").flops - want) == 0


@settings(max_examples=40)
@given(paged_attention_cases())
def test_the_derived_reads_are_the_blocks_the_kernel_touches(case):
    """``reads``: the kernel touches ⌈ℓ_c/B⌉ table positions (counted on the slot-by-slot kernel), reads
    those blocks whole from both pools, of which ℓ_c slots are used; the pool's size does not enter."""
    touched = set()
    _kernel(**case.kwargs, touched=touched)
    r = {k: evaluate(sp.sympify(v), case.sizes) for k, v in reads(case.algorithm).items()}
    k = case.kwargs
    n_kv, B = k["K_pool"].shape[1], k["K_pool"].shape[3]
    assert r["blocks"] == len(touched) == len(k["table"])
    assert r["cache"] == len(touched) * B * n_kv * (k["K_pool"].shape[2] + k["V_pool"].shape[2])
    assert r["used"] == k["ell_c"] * n_kv * (k["K_pool"].shape[2] + k["V_pool"].shape[2])
    assert r["queries"] == k["Q"].size
    assert all(n_pool not in sp.sympify(v).free_symbols for v in reads(case.algorithm).values())


def test_reads_waste_at_most_one_blocks_slack():
    """Whole blocks cost at most B − 1 unused slots per key/value head and pool, none when B divides ℓ_c."""
    r = reads()
    slack = sp.expand(r["cache"] - r["used"])
    for n, b in [(6, 3), (7, 3), (1, 4), (8, 1)]:
        at = {ell_c: n, block: b, H: 2, d_attn: 3, d_mid: 5}
        assert 0 <= slack.xreplace(at) <= (b - 1) * 2 * (3 + 5)
        assert (slack.xreplace(at) == 0) == (n % b == 0)


def test_bad_calls_are_refused_with_what_is_wrong():
    rng = np.random.default_rng(0)
    args = dict(Q=rng.normal(size=(2, 3, 3)), K_pool=rng.normal(size=(4, 2, 3, 2)),
                V_pool=rng.normal(size=(4, 2, 3, 2)))
    kernel = algorithms.paged_attention
    with pytest.raises(ConfigError, match="the cache already holds the new tokens"):
        kernel(table=np.array([0]), ell_c=2, **args)
    with pytest.raises(DomainError, match=r"block table entries \[4\] are outside the pool's \[0, 4\)"):
        kernel(table=np.array([0, 4]), ell_c=3, **args)
    with pytest.raises(ConfigError, match="a block is taken only when the last one is full"):
        kernel(table=np.array([0, 1, 2]), ell_c=3, **args)
    with pytest.raises(ConfigError, match="H_kv|n_kv_heads|divid"):
        algorithms.get("paged_attention", n_kv_heads=2)(table=np.array([0, 1]), ell_c=3,
                                                        **{**args, "Q": rng.normal(size=(3, 3, 3))})


@given(st.integers(1, 3))
def test_one_token_per_head_decodes_over_every_cached_token(n_kv):
    """ℓ_x = 1, vLLM's decoding call: the query sees all ℓ_c cached tokens, its own key the last of them."""
    rng = np.random.default_rng(n_kv)
    Q, K, V = rng.normal(size=(n_kv * 2, 2, 1)), rng.normal(size=(3, n_kv, 2, 3)), rng.normal(size=(3, n_kv, 2, 3))
    table = np.array([2, 0, 1])
    got = algorithms.get("paged_attention", n_kv_heads=n_kv)(Q=Q, K_pool=K, V_pool=V, table=table, ell_c=7)
    K_seen = np.concatenate([K[b] for b in table], axis=-1)[..., :7]
    V_seen = np.concatenate([V[b] for b in table], axis=-1)[..., :7]
    for h in range(n_kv * 2):
        s = K_seen[h // 2].T @ Q[h, :, 0] / math.sqrt(2)
        np.testing.assert_allclose(got[h, :, 0], V_seen[h // 2] @ (np.exp(s) / np.exp(s).sum()), rtol=1e-12)
