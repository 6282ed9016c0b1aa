"""The message-passing executors are Algorithms 4 and 5 on the pattern's mask: equal outputs,
equivariance, causality, and empty neighbourhoods as the ``empty`` option says."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, strategies as st

from formal import ConfigError, DomainError, attention as alg4, mhattention as alg5
from formal.graphs import from_mask, from_pairs, message_passing, patterns
from formal.graphs.message_passing import EXECUTORS
from tests.strategies.graphs import SEED, builtin, digraphs, masks

EXECUTOR = st.sampled_from(EXECUTORS)


def _params(rng, d_x, d_z, d_attn, d_out, bias):
    p = {"W_q": rng.normal(size=(d_attn, d_x)), "W_k": rng.normal(size=(d_attn, d_z)),
         "W_v": rng.normal(size=(d_out, d_z))}
    if bias:
        p.update(b_q=rng.normal(size=d_attn), b_k=rng.normal(size=d_attn), b_v=rng.normal(size=d_out))
    return p


def _mh_params(rng, H, n_kv, d_x, d_z, d_attn, d_mid, d_out, bias):
    p = {"W_q": rng.normal(size=(H, d_attn, d_x)), "W_k": rng.normal(size=(n_kv, d_attn, d_z)),
         "W_v": rng.normal(size=(n_kv, d_mid, d_z)), "W_o": rng.normal(size=(d_out, H * d_mid))}
    if bias:
        p.update(b_q=rng.normal(size=(H, d_attn)), b_k=rng.normal(size=(n_kv, d_attn)),
                 b_v=rng.normal(size=(n_kv, d_mid)), b_o=rng.normal(size=d_out))
    return p



@given(masks(min_len=1), st.integers(1, 4), st.integers(1, 4), st.booleans(), st.sampled_from(["zero", "nan"]),
       EXECUTOR, SEED)
def test_attention_on_a_graph_is_algorithm_4_on_its_mask(m, d_attn, d_out, bias, empty, executor, seed):
    """Algorithm 4 (line 5: masked scores to −∞) on the converted mask equals message passing along the
    graph, float64 within 1e-10, empty neighbourhoods included (zeros or NaN, as the core)."""
    rng = np.random.default_rng(seed)
    ell_z, ell_x = m.shape
    X, Z = rng.normal(size=(3, ell_x)), rng.normal(size=(2, ell_z))
    params = _params(rng, 3, 2, d_attn, d_out, bias)
    pattern = from_mask(m, self_attention=False)
    got = message_passing.attention(pattern, X, Z, **params, empty=empty, executor=executor)
    spec = alg4.variant(bias=bias, empty=empty)(X=X, Z=Z, mask=m, **params)
    np.testing.assert_allclose(got, spec, rtol=0, atol=1e-10)


@given(builtin(), st.integers(1, 3), st.sampled_from([1, 2, 3]), st.booleans(), EXECUTOR, SEED)
def test_multi_head_attention_on_a_pattern_is_algorithm_5(case, n_kv, group, bias, executor, seed):
    """Algorithm 5 (and grouped-query attention, H = H_kv·group) over every built-in pattern equals the
    spec's dense execution on the pattern's mask."""
    _, _, pattern, _ = case
    if pattern.ell_x == 0:
        return
    rng = np.random.default_rng(seed)
    H, d_x = n_kv * group, 4
    X = rng.normal(size=(d_x, pattern.ell_x))
    params = _mh_params(rng, H, n_kv, d_x, d_x, 2, 3, 5, bias)
    got = message_passing.mhattention(pattern, X, **params, executor=executor)
    spec = alg5.variant(bias=bias, n_kv_heads=None if n_kv == H else n_kv)(X=X, mask=pattern.mask(), **params)
    np.testing.assert_allclose(got, spec, rtol=0, atol=1e-10)


@given(masks(min_len=1), EXECUTOR, SEED)
def test_empty_neighbourhood_error_policy(m, executor, seed):
    """empty='error' raises a DomainError naming the empty query columns exactly when there are some."""
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(2, m.shape[1])), rng.normal(size=(2, m.shape[0]))
    params = _params(rng, 2, 2, 2, 2, False)
    lonely = np.flatnonzero(~m.any(axis=0)).tolist()
    def call():
        return message_passing.attention(from_mask(m, self_attention=False), X, Z, **params, empty="error",
                                         executor=executor)
    if lonely:
        with pytest.raises(DomainError, match=rf"query column \[{', '.join(map(str, lonely))}\]"):
            call()
    else:
        call()


@given(digraphs(), SEED, EXECUTOR)
def test_adjacency_attention_is_permutation_equivariant(G, seed, executor):
    """Relabelling the graph's nodes by π and permuting the input columns by π permutes the output columns
    by π: attention on a graph sees structure, not node names (as a GNN layer)."""
    rng = np.random.default_rng(seed)
    ell = G.number_of_nodes()
    perm = rng.permutation(ell)
    X = rng.normal(size=(3, ell))
    params = _params(rng, 3, 3, 2, 3, True)
    out = message_passing.attention(patterns.adjacency(G), X, **params, executor=executor)
    H = nx.relabel_nodes(G, {i: int(perm[i]) for i in range(ell)})
    X_perm = np.empty_like(X)
    X_perm[:, perm] = X                                                   # node i's features move to π(i)
    out_perm = message_passing.attention(patterns.adjacency(H), X_perm, **params, executor=executor)
    np.testing.assert_allclose(out_perm[:, perm], out, rtol=0, atol=1e-10)


@given(st.sampled_from(["causal", "sliding_window", "strided"]), st.integers(2, 16), st.integers(0, 15), SEED)
def test_causal_graph_output_at_t_ignores_inputs_after_t(name, ell, t, seed):
    """On a causal pattern, changing the inputs after position t leaves outputs 0..t unchanged."""
    t = t % ell
    pattern = {"causal": lambda: patterns.causal(ell), "sliding_window": lambda: patterns.sliding_window(ell, 3),
               "strided": lambda: patterns.strided(ell, 3)}[name]()
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3, ell))
    Y = X.copy()
    Y[:, t + 1:] = rng.normal(size=(3, ell - t - 1))
    params = _mh_params(rng, 2, 2, 3, 3, 2, 2, 3, True)
    a = message_passing.mhattention(pattern, X, **params)
    b = message_passing.mhattention(pattern, Y, **params)
    np.testing.assert_array_equal(a[:, :t + 1], b[:, :t + 1])


def test_a_pattern_a_graph_and_a_mask_give_the_same_attention():
    rng = np.random.default_rng(0)
    p = patterns.dilated(9, 3, 2)
    X = rng.normal(size=(3, 9))
    params = _params(rng, 3, 3, 2, 3, True)
    results = [message_passing.attention(obj, X, **params) for obj in (p, p.to_networkx(), p.mask())]
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


def test_chunking_does_not_change_the_result():
    """The vectorised executor processes queries in chunks; any chunk size gives the same output."""
    rng = np.random.default_rng(1)
    p = patterns.random(40, 3, window=4, n_global=2, seed=5)
    Q, K, V = rng.normal(size=(4, 40)), rng.normal(size=(4, 40)), rng.normal(size=(2, 40))
    whole = message_passing.propagate_edges(p, Q, K, V, max_edges=10**9)
    for size in (1, 7, 64):
        np.testing.assert_allclose(message_passing.propagate_edges(p, Q, K, V, max_edges=size), whole,
                                   rtol=0, atol=1e-14)


@pytest.mark.parametrize("call, error, message", [
    (lambda X, P: message_passing.attention(P, X[:, :4], **P_), ConfigError, "ell_z = 5 keys but X has 4 columns"),
    (lambda X, P: message_passing.attention(P, X, X[:, :2], **P_), ConfigError, "ell_z = 5 keys but Z has 2 columns"),
    (lambda X, P: message_passing.attention(P, X, executor="gpu", **P_), ConfigError, "unknown executor 'gpu'"),
    (lambda X, P: message_passing.attention(P, X, empty="skip", **P_), ConfigError, "policy 'skip'"),
    (lambda X, P: message_passing.attention(P, X[0], **P_), ConfigError, "one column per token"),
    (lambda X, P: message_passing.attention(np.ones((4, 4)), X, **P_), ConfigError, r"shape \(4, 4\)"),
    (lambda X, P: message_passing.attention(P, X, **{**P_, "W_q": np.ones((2, 7))}), ConfigError, "W_q has shape"),
    (lambda X, P: message_passing.mhattention(P, X, W_q=np.ones((3, 2, 3)), W_k=np.ones((2, 2, 3)),
                                              W_v=np.ones((2, 2, 3)), W_o=np.ones((3, 6))), ConfigError, "divisible"),
    (lambda X, P: message_passing.mhattention(P, X, W_q=np.ones(3), W_k=np.ones((2, 2, 3)),
                                              W_v=np.ones((2, 2, 3)), W_o=np.ones((3, 6))),
     ConfigError, "stacked per head"),
    # complex numbers, strings and objects are not real arrays (formal.guards.arrays): named with their dtype
    (lambda X, P: message_passing.attention(P, X + 1j, **P_), ConfigError, "X must be a real array, got complex128"),
    (lambda X, P: message_passing.attention(P, X, X + 0j, **P_), ConfigError, "Z must be a real array, got complex128"),
    (lambda X, P: message_passing.attention(P, X.astype(str), **P_), ConfigError, "X must be a real array, got <U32"),
    (lambda X, P: message_passing.attention(P, np.full(X.shape, "a", dtype=object), **P_),
     ConfigError,
     "X must be a real array, got an object array holding str"),
    (lambda X, P: message_passing.attention(P, X, **{**P_, "W_k": P_["W_k"] + 1j}), ConfigError,
     "W_k must be a real array, got complex128"),
    (lambda X, P: message_passing.attention(P, X, **P_, b_v=np.ones(3) + 1j), ConfigError,
     "b_v must be a real array, got complex128"),
    (lambda X, P: message_passing.attention(np.ones((5, 5)) + 0j, X, **P_), ConfigError,
     r"mask must be a 0/1 array of shape \(5, 5\), got complex128"),
    (lambda X, P: message_passing.attention(np.full((5, 5), np.nan), X, **P_), ConfigError, "got nan"),
    (lambda X, P: message_passing.mhattention(P, X, **MH_, b_q=np.ones((2, 2)) + 1j), ConfigError,
     "b_q must be a real array, got complex128"),
    (lambda X, P: message_passing.mhattention(P, X, **{**MH_, "W_o": MH_["W_o"] + 1j}), ConfigError,
     "W_o must be a real array, got complex128"),
    (lambda X, P: message_passing.mhattention(P, X, **{**MH_, "W_v": MH_["W_v"] + 1j}), ConfigError,
     "W_v must be a real array, got complex128"),
    (lambda X, P: message_passing.propagate_edges(P, X + 1j, X, X), ConfigError,
     "Q must be a real array, got complex128"),
    (lambda X, P: message_passing.propagate_loop(P.to_networkx(), X, X, np.datetime64("2024") + X.astype(int)),
     ConfigError, r"V must be a real array, got datetime64\[Y\]"),
])
def test_bad_input(call, error, message):
    X = np.ones((3, 5))
    with pytest.raises(error, match=message):
        call(X, patterns.causal(5))


P_ = {"W_q": np.ones((2, 3)), "W_k": np.ones((2, 3)), "W_v": np.ones((3, 3))}
MH_ = {"W_q": np.ones((2, 2, 3)), "W_k": np.ones((1, 2, 3)), "W_v": np.ones((1, 2, 3)), "W_o": np.ones((3, 4))}


def test_the_spec_takes_a_pattern_as_its_mask():
    """Algorithms 4 and 5 accept a pattern wherever they take a mask (its mask() is used), and check its size."""
    rng = np.random.default_rng(2)
    p = patterns.strided(7, 2)
    X = rng.normal(size=(3, 7))
    params = {"W_q": rng.normal(size=(2, 3)), "W_k": rng.normal(size=(2, 3)), "W_v": rng.normal(size=(3, 3))}
    spec = alg4.variant(bias=False)
    np.testing.assert_array_equal(spec(X=X, mask=p, **params), spec(X=X, mask=p.mask(), **params))
    with pytest.raises(ConfigError, match=r"mask has shape \(7, 7\)"):
        spec(X=X[:, :5], mask=p, **params)


@pytest.mark.parametrize("ratio", [0, 2, 10**9])
@pytest.mark.parametrize("make", [lambda: patterns.sliding_window(60, 7), lambda: patterns.causal(33),
                                  lambda: patterns.random(50, 3, window=3, n_global=2, seed=1),
                                  lambda: patterns.fixed(45, 6, 2), lambda: patterns.swin(6, 6, 3, shifted=True),
                                  lambda: from_mask(np.eye(12, 9, k=-2, dtype=bool), self_attention=False)])
def test_blocks_and_gathers_equal_the_readable_loop(make, ratio, monkeypatch):
    """Every chunk gathered (ratio 0), the executor's own choice (2), every chunk a dense block (10**9):
    each equals the loop executor, for chunks that split queries' keys or not, empty queries included."""
    monkeypatch.setattr(message_passing, "BLOCK_RATIO", ratio)
    rng = np.random.default_rng(3)
    p = make()
    Q, K, V = rng.normal(size=(4, p.ell_x)), rng.normal(size=(4, p.ell_z)), rng.normal(size=(3, p.ell_z))
    for empty in ("zero", "nan"):
        loop = message_passing.propagate_loop(p.to_networkx(), Q, K, V, empty=empty)
        for size in (1, 5, 64, 10**6):
            got = message_passing.propagate_edges(p, Q, K, V, empty=empty, max_edges=size)
            np.testing.assert_allclose(got, loop, rtol=0, atol=1e-13)


def test_a_block_never_reads_a_value_outside_the_pattern():
    """An infinite value at a key no query attends to — but inside a window's key range — leaves every output
    finite: the definition never reads it, so neither does a block (it multiplies by 0 only finite values)."""
    rng = np.random.default_rng(4)
    edges = [(k, q) for q in range(20) for k in range(max(0, q - 3), q + 1) if k != 10]
    p = from_pairs(*np.array(edges).T, ell_z=20)
    Q, K, V = rng.normal(size=(2, 20)), rng.normal(size=(2, 20)), rng.normal(size=(2, 20))
    V[:, 10], K[:, 10] = np.inf, np.nan
    got = message_passing.propagate_edges(p, Q, K, V)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, message_passing.propagate_loop(p.to_networkx(), Q, K, V), rtol=0, atol=1e-13)


@pytest.mark.parametrize("size", [0, -1, 1.5, True, "8"])
def test_bad_chunk_size_is_a_config_error(size):
    p = patterns.causal(4)
    with pytest.raises(ConfigError, match="max_edges = .* must be a positive integer"):
        message_passing.propagate_edges(p, np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)), max_edges=size)
