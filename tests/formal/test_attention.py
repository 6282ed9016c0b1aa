"""Properties of Algorithms 3–5 and grouped-query attention (Phuong & Hutter §5; the decisions
decision-causal-alignment and decision-empty-neighbourhood)."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from formal import DomainError, attention, mhattention, single_query_attention
from formal.ops import softmax
from tests.strategies.attention import attention_cases, mhattention_cases, single_query_attention_cases
from tests.strategies.cases import SEED, normal


@given(attention_cases(same_width=True))
def test_alg3_equals_alg4_column_by_column(case):
    """Algorithm 3 on token t (with the context Z) equals column t of Algorithm 4 without a mask."""
    kw = {k: v for k, v in case.kwargs.items() if k != "mask"}
    out = attention.variant(bias=case.algorithm.options["bias"])(**kw)
    Z = kw.get("Z", kw["X"])
    params = {k: kw[k] for k in case.params}
    for t in range(kw["X"].shape[1]):
        alg3 = single_query_attention.variant(bias=case.algorithm.options["bias"])
        np.testing.assert_allclose(alg3(e=kw["X"][:, t], e_t=Z, **params), out[:, t], rtol=0, atol=1e-12)


@given(attention_cases())
def test_alg5_with_one_head_and_identity_projection_equals_alg4(case):
    """Algorithm 5 with H = 1, W_o = I and b_o = 0 computes Algorithm 4."""
    bias = case.algorithm.options["bias"]
    d_out = case.sizes["d_out"]
    inputs = {k: v for k, v in case.kwargs.items() if k not in case.params}
    heads = {k: v[None] for k, v in case.kwargs.items() if k in case.params}
    output = {"W_o": np.eye(d_out), **({"b_o": np.zeros(d_out)} if bias else {})}
    alg5 = mhattention.variant(bias=bias, empty=case.algorithm.options["empty"])
    np.testing.assert_allclose(alg5(**inputs, **heads, **output), case.algorithm(**case.kwargs),
                               rtol=0, atol=1e-12)


@given(mhattention_cases(grouped=False))
def test_grouped_query_attention_with_n_kv_heads_equal_to_H_is_alg5(case):
    """Grouped-query attention with one key/value head per query head equals Algorithm 5, and so does
    its derived cost once H_kv = H."""
    options = case.algorithm.options
    gqa = mhattention.variant(bias=options["bias"], empty=options["empty"], n_kv_heads="symbolic")
    np.testing.assert_allclose(gqa(**case.kwargs), case.algorithm(**case.kwargs), rtol=0, atol=1e-12)
    from formal.core.symbols import H, n_kv_heads
    for convention in ("matmul", "full"):
        mine, paper = gqa.cost(convention), case.algorithm.cost(convention)
        assert (mine.flops - paper.flops).xreplace({n_kv_heads: H}).expand() == 0
        assert (mine.params - paper.params).xreplace({n_kv_heads: H}).expand() == 0


@given(mhattention_cases(grouped=True))
def test_grouped_query_attention_shares_keys_and_values_within_a_group(case):
    """Under GQA with H_kv groups, repeating each key/value head H/H_kv times (the group layout) and
    running Algorithm 5 gives the same output."""
    H = case.sizes["H"]
    kw = dict(case.kwargs)
    n_kv = kw["W_k"].shape[0]
    for name in ("W_k", "b_k", "W_v", "b_v"):
        if name in kw:
            kw[name] = np.repeat(kw[name], H // n_kv, axis=0)
    options = case.algorithm.options
    alg5 = mhattention.variant(bias=options["bias"], empty=options["empty"])
    np.testing.assert_allclose(alg5(**kw), case.algorithm(**case.kwargs), rtol=0, atol=1e-12)


@given(st.integers(1, 6), st.integers(1, 6), SEED)
def test_softmax_columns_sum_to_one(n, m, seed):
    """softmax normalises each column over axis 0: entries in [0, 1], each column sums to 1."""
    rng = np.random.default_rng(seed)
    S = normal(rng, n, m, scale=10)
    S[rng.random((n, m)) < 0.3] = -np.inf
    S[rng.integers(n, size=m), np.arange(m)] = rng.normal(size=m)  # one admitted entry per column
    P = softmax("S").op.numpy(None, S)
    assert np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=0, atol=1e-12)


@given(single_query_attention_cases())
def test_alg3_attention_weights_sum_to_one(case):
    """Algorithm 3, line 4: the weights α_t form a distribution over the context."""
    alpha = case.algorithm.run(**case.kwargs).values["alpha"]
    assert np.all(alpha >= 0)
    np.testing.assert_allclose(alpha.sum(), 1.0, rtol=0, atol=1e-12)


def _perturb_after(rng, X, t):
    X = X.copy()
    X[:, t + 1:] = rng.normal(size=X[:, t + 1:].shape) * 10
    return X


@pytest.mark.parametrize("strategy", [attention_cases(self_attention=True),
                                      mhattention_cases(self_attention=True)], ids=["alg4", "alg5"])
def test_causal_output_column_ignores_later_tokens(strategy):
    """Under the causal mask, output column t does not change when the tokens after t change."""

    @given(strategy, SEED)
    def check(case, seed):
        rng = np.random.default_rng(seed)
        kw = {**case.kwargs, "mask": "causal"}
        out = case.algorithm(**kw)
        for t in range(kw["X"].shape[1]):
            changed = case.algorithm(**{**kw, "X": _perturb_after(rng, kw["X"], t)})
            np.testing.assert_array_equal(changed[:, : t + 1], out[:, : t + 1])

    check()


@given(mhattention_cases(self_attention=False), SEED)
def test_bottom_right_causal_ignores_context_after_the_aligned_position(case, seed):
    """With bottom-right alignment, query t sees context positions up to t + ℓ_z − ℓ_x, and no later one."""
    rng = np.random.default_rng(seed)
    kw = {**case.kwargs, "mask": "causal-bottom-right"}
    ell_x, ell_z = case.sizes["ell_x"], case.sizes["ell_z"]
    out = case.algorithm(**kw)
    for t in range(ell_x):
        last = t + ell_z - ell_x
        if last < 0:
            continue
        changed = case.algorithm(**{**kw, "Z": _perturb_after(rng, kw["Z"], last)})
        np.testing.assert_array_equal(changed[:, t], out[:, t])


@pytest.mark.parametrize("policy", ["zero", "nan", "error"])
@given(case=mhattention_cases(), column=st.integers(0, 4))
def test_fully_masked_column_follows_the_policy(policy, case, column):
    """A query with no admitted key (decision-empty-neighbourhood): ``zero`` gives Ṽ's column as if the heads
    returned 0 (so just b_o), ``nan`` a NaN column, ``error`` a DomainError; other columns are unchanged."""
    ell_z, ell_x = case.sizes["ell_z"], case.sizes["ell_x"]
    column %= ell_x
    mask = np.ones((ell_z, ell_x), dtype=bool)
    mask[:, column] = False
    options = case.algorithm.options
    algorithm = mhattention.variant(**{**options, "empty": policy})
    kw = {**case.kwargs, "mask": mask}
    if policy == "error":
        with pytest.raises(DomainError, match="no admitted key"):
            algorithm(**kw)
        return
    out = algorithm(**kw)
    others = np.arange(ell_x) != column
    full = algorithm(**{**kw, "mask": None})
    np.testing.assert_allclose(out[:, others], full[:, others], rtol=0, atol=1e-12)
    if policy == "nan":
        assert np.all(np.isnan(out[:, column]))
    else:
        expected = kw.get("b_o", np.zeros(case.sizes["d_out"]))
        np.testing.assert_allclose(out[:, column], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mask", [None, "causal"])
@given(case=attention_cases(self_attention=True), sign=st.sampled_from([1.0, -1.0]))
def test_huge_logits_give_finite_outputs(mask, case, sign):
    """Scores of size ±1e4 (far beyond exp's range) give neither NaN nor inf: softmax subtracts the
    column maximum."""
    kw = dict(case.kwargs, mask=mask)
    scale = np.sqrt(1e4 * np.sqrt(case.sizes["d_attn"]))
    ell = case.sizes["ell_x"]
    kw["X"] = np.ones_like(kw["X"]) * (-1.0) ** np.arange(ell)  # columns ±1: scores ±1e4·d_x·√d_attn
    kw["W_q"] = sign * scale * np.ones_like(kw["W_q"]) / np.sqrt(kw["W_q"].size)
    kw["W_k"] = scale * np.ones_like(kw["W_k"]) / np.sqrt(kw["W_k"].size)
    run = case.algorithm.run(**kw)
    assert np.max(np.abs(run.values["S"])) > 1e3
    assert np.all(np.isfinite(run.output))


@given(attention_cases(self_attention=True))
def test_z_defaults_to_x(case):
    """decision-self-attention: MHAttention(X | W, Mask) means MHAttention(X, X | W, Mask)."""
    kw = dict(case.kwargs)
    np.testing.assert_array_equal(case.algorithm(**kw), case.algorithm(**kw, Z=kw["X"]))


def test_attention_matches_a_direct_formula():
    """Algorithm 4 against an independent one-line formula of the paper's equation, on a fixed case."""
    rng = np.random.default_rng(7)
    X, Z = rng.normal(size=(3, 4)), rng.normal(size=(5, 6))
    W_q, W_k, W_v = rng.normal(size=(2, 3)), rng.normal(size=(2, 5)), rng.normal(size=(4, 5))
    b_q, b_k, b_v = rng.normal(size=2), rng.normal(size=2), rng.normal(size=4)
    mask = rng.random((6, 4)) < 0.7
    mask[0] = True
    Q, K, V = W_q @ X + b_q[:, None], W_k @ Z + b_k[:, None], W_v @ Z + b_v[:, None]
    S = np.where(mask, K.T @ Q / np.sqrt(2), -np.inf)
    A = np.exp(S - S.max(axis=0)) / np.exp(S - S.max(axis=0)).sum(axis=0)
    got = attention(X=X, Z=Z, mask=mask, W_q=W_q, b_q=b_q, W_k=W_k, b_k=b_k, W_v=W_v, b_v=b_v)
    np.testing.assert_allclose(got, V @ A, rtol=1e-13, atol=1e-13)


def direct_attention(X, Z, mask, W_q, W_k, W_v, b_q=0.0, b_k=0.0, b_v=0.0):
    """The paper's equation in one place, written independently of the algorithm objects."""
    Q = W_q @ X + np.reshape(b_q, (-1, 1))
    K = W_k @ Z + np.reshape(b_k, (-1, 1))
    V = W_v @ Z + np.reshape(b_v, (-1, 1))
    S = np.where(mask, K.T @ Q / np.sqrt(W_q.shape[0]), -np.inf)
    top = np.max(S, axis=0)
    weights = np.exp(S - np.where(np.isfinite(top), top, 0))
    total = weights.sum(axis=0)
    return V @ (weights / np.where(total > 0, total, 1))


def direct_mhattention(kw, ell_z, ell_x):
    """Algorithm 5 (or GQA, head h using key/value head h // (H/H_kv)) from :func:`direct_attention`:
    heads stacked with head 1 on top, then W_o Y + b_o 1ᵀ."""
    from formal.core.masks import resolve
    X = kw["X"]
    Z = kw.get("Z", X)
    mask = resolve(kw.get("mask"), ell_z, ell_x)
    H, n_kv = kw["W_q"].shape[0], kw["W_k"].shape[0]
    heads = []
    for h in range(H):
        g = h // (H // n_kv)
        heads.append(direct_attention(X, Z, mask, kw["W_q"][h], kw["W_k"][g], kw["W_v"][g],
                                      kw.get("b_q", np.zeros((H, 1)))[h], kw.get("b_k", np.zeros((n_kv, 1)))[g],
                                      kw.get("b_v", np.zeros((n_kv, 1)))[g]))
    Y = np.concatenate(heads, axis=0)
    return kw["W_o"] @ Y + np.reshape(kw.get("b_o", 0.0), (-1, 1))


@given(mhattention_cases())
def test_alg5_and_gqa_match_a_direct_formula(case):
    """Algorithm 5 (and its grouped-query variant) equals per-head attention computed directly, the
    heads concatenated in order [Y^1; …; Y^H] and projected by W_o."""
    kw = {k: v for k, v in case.kwargs.items() if k != "n_kv_heads"}
    expected = direct_mhattention(kw, case.sizes["ell_z"], case.sizes["ell_x"])
    got = case.algorithm(**case.kwargs)
    if case.algorithm.options["empty"] == "nan":
        got = np.nan_to_num(got, nan=0.0)
        ok = ~np.isnan(case.algorithm(**case.kwargs)).any(axis=0)
        got, expected = got[:, ok], expected[:, ok]
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n_kv", [1, 2, "symbolic"])
def test_gqa_with_four_heads_and_two_groups(n_kv):
    """A fixed case where the grouping matters: H = 4 query heads over H_kv = 2 (or 1) key/value heads."""
    rng = np.random.default_rng(3)
    kv = 2 if n_kv == "symbolic" else n_kv
    kw = dict(X=rng.normal(size=(3, 5)), W_q=rng.normal(size=(4, 2, 3)), W_k=rng.normal(size=(kv, 2, 3)),
              W_v=rng.normal(size=(kv, 2, 3)), W_o=rng.normal(size=(3, 8)), mask="causal")
    got = mhattention.variant(bias=False, n_kv_heads=n_kv)(**kw)
    np.testing.assert_allclose(got, direct_mhattention(kw, 5, 5), rtol=1e-12, atol=1e-12)


def test_explicit_none_context_means_the_default():
    rng = np.random.default_rng(0)
    kw = dict(X=rng.normal(size=(3, 4)), W_q=rng.normal(size=(2, 3)), W_k=rng.normal(size=(2, 3)),
              W_v=rng.normal(size=(3, 3)))
    plain = attention.variant(bias=False)
    np.testing.assert_array_equal(plain(**kw, Z=None), plain(**kw))


def test_a_variant_is_built_once_and_shared():
    """Algorithm objects do not change once built: asking again for the same options gives the same object
    (derived once), other options another one, and the defaults the object itself."""
    import formal
    nan = formal.attention.variant(empty="nan")
    assert formal.attention.variant(empty="nan") is nan
    assert formal.attention.variant(empty="error") is not nan
    assert nan.options["empty"] == "nan" and formal.attention.variant(empty="zero").options == formal.attention.options


def test_options_equal_in_python_are_different_variants():
    """True == 1 == 1.0 in Python, but the builder refuses True for a head count (a cached variant must not
    answer for it); 1.0 is the count 1, as the gate every number passes reads it, and the variant holds the int."""
    import formal
    assert formal.mhattention.variant(n_kv_heads=1).options["n_kv_heads"] == 1
    with pytest.raises(formal.ConfigError, match="n_kv_heads"):
        formal.mhattention.variant(n_kv_heads=True)
    for value in (1.0, 2.0):
        held = formal.mhattention.variant(n_kv_heads=value).options["n_kv_heads"]
        assert held == value and type(held) is int
