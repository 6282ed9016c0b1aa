"""The scores of Algorithms 3 and 4 (scaled dot, dot, additive) and attention pooling: derived against
executed, against the original papers' equations computed by hand, and their properties (masks,
permutations).  Sources: Bahdanau et al. 2015 (§3.1, App. A.2.2), Luong et al. 2015 (§3.1, eq. 8),
Yang et al. 2016 (eqs. 5–7), Phuong & Hutter (Algorithms 3, 4)."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from formal import ConfigError, DomainError, attention, single_query_attention
from formal.algorithms.pooling import attention_pooling
from formal.core.symbols import d_attn, d_out, d_x, d_z, ell_x, ell_z
from formal.ops import softmax
from tests.strategies.cases import SEED, evaluate, normal
from tests.strategies.scores import SCORE_STRATEGIES, SCORES, pooling_cases, scored_attention_cases

NAMES = sorted(SCORE_STRATEGIES)


def _softmax(s):
    """The spec's column softmax (formal.ops.Softmax), on a vector or a matrix."""
    return softmax("S").op.numpy(None, np.asarray(s, dtype=np.float64))


# ------------------------------------------------------------------------------ derived against executed
@pytest.mark.parametrize("name", NAMES)
def test_executed_shapes_equal_derived_shapes(name):
    """Under every score the output has the derived shape at the binding,
    and the binding is exactly the sizes the case was built from."""

    @given(SCORE_STRATEGIES[name])
    def check(case):
        run = case.algorithm.run(**case.kwargs)
        assert {str(k): v for k, v in run.binding.items()} == case.sizes
        assert np.shape(run.output) == tuple(int(evaluate(d, case.sizes)) for d in case.algorithm.output_shape)

    check()


def test_scores_differ_in_cost_by_what_they_compute():
    """The dot score saves exactly the division by √d_attn (ℓ_z·ℓ_x FLOPs under full, and that matrix of
    memory); the additive score's product with v_a costs what KᵀQ does under matmul (2·d_attn·ℓ_z·ℓ_x) and
    adds d_attn parameters; the paper's default is untouched (Algorithm 4 as Phuong & Hutter write it)."""
    paper, dot, additive = (attention.variant(score=s) for s in SCORES)
    assert sp.expand(paper.cost("full").flops - dot.cost("full").flops - ell_z * ell_x) == 0
    assert sp.expand(paper.cost("full").memory - dot.cost("full").memory - ell_z * ell_x) == 0
    assert sp.expand(additive.cost("matmul").flops - dot.cost("matmul").flops) == 0
    assert sp.expand(additive.param_count() - dot.param_count() - d_attn) == 0
    assert paper.cost("full") == attention.cost("full") and paper.cost("matmul") == attention.cost("matmul")


def test_bahdanau_attention_parameters():
    """Bahdanau et al. 2015, App. A.2.2: W_a ∈ ℝ^{n'×n}, U_a ∈ ℝ^{n'×2n}, v_a ∈ ℝ^{n'} — 3n'n + n' parameters,
    3,001,000 at n = n' = 1000.  Algorithm 4 with the additive score and no biases derives these plus W_v
    (d_out×d_z): Bahdanau's values are the annotations h_j themselves (W_v = I, not a parameter)."""
    n, n_ = sp.symbols("n n_prime", positive=True, integer=True)
    derived = attention.variant(score="additive", bias=False).param_count()
    bahdanau = (derived - d_out * d_z).xreplace({d_attn: n_, d_x: n, d_z: 2 * n})
    assert sp.expand(bahdanau - (3 * n_ * n + n_)) == 0
    assert bahdanau.xreplace({n: 1000, n_: 1000}) == 3_001_000


# ------------------------------------------------------------------------------ the papers, by hand
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 5), st.integers(1, 6), SEED)
def test_additive_score_is_bahdanaus_alignment_model(n, n_prime, T_x, T_y, seed):
    """Bahdanau et al. 2015, §3.1 and App. A.2.2: e_ij = v_aᵀ tanh(W_a s_{i−1} + U_a h_j),
    α_ij = softmax_j(e_ij), c_i = Σ_j α_ij h_j — computed here by hand, entry by entry, for decoder states
    s_{i−1} (n) and annotations h_j (2n): Algorithm 4 with the additive score, queries s, keys h, W_q = W_a,
    W_k = U_a, W_v = I and no biases, gives e as its scores and c as its output; Algorithm 3 gives one
    step's weights α_i."""
    rng = np.random.default_rng(seed)
    W_a, U_a, v_a = normal(rng, n_prime, n), normal(rng, n_prime, 2 * n), normal(rng, n_prime)
    s, h = normal(rng, n, T_y), normal(rng, 2 * n, T_x)              # s_{i−1} as columns; h_j as columns
    e = np.array([[v_a @ np.tanh(W_a @ s[:, i] + U_a @ h[:, j]) for i in range(T_y)] for j in range(T_x)])
    alpha = np.exp(e - e.max(axis=0)) / np.exp(e - e.max(axis=0)).sum(axis=0)
    c = h @ alpha
    params = {"W_q": W_a, "W_k": U_a, "W_v": np.eye(2 * n), "v_a": v_a}
    run = attention.variant(score="additive", bias=False).run(X=s, Z=h, **params)
    np.testing.assert_allclose(run.values["S"], e, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(run.output, c, rtol=1e-10, atol=1e-12)
    # Algorithm 3 has one input width (d_in): one decoder step with a state as wide as the annotations
    state, W_state = normal(rng, 2 * n), normal(rng, n_prime, 2 * n)
    e_i = np.array([v_a @ np.tanh(W_state @ state + U_a @ h[:, j]) for j in range(T_x)])
    step = single_query_attention.variant(score="additive", bias=False).run(
        e=state, e_t=h, W_q=W_state, W_k=U_a, W_v=np.eye(2 * n), v_a=v_a)
    np.testing.assert_allclose(step.values["alpha"], _softmax(e_i), rtol=1e-12, atol=1e-14)


@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), SEED)
def test_luong_general_is_the_dot_score_with_W_q_identity(d_t, d_s, T_y, T_x, seed):
    """Luong et al. 2015, eq. (8): score(h_t, h̄_s) = h_tᵀ W_a h̄_s (general), a_t = softmax_s, c_t = Σ_s a_t(s) h̄_s.
    Algorithm 4 with score="dot", W_q = I, W_k = W_a, W_v = I and no biases computes it (the module
    docstring's equivalence; "dot", h_tᵀ h̄_s, is the case W_a = I)."""
    rng = np.random.default_rng(seed)
    W_a, h_t, h_s = normal(rng, d_t, d_s), normal(rng, d_t, T_y), normal(rng, d_s, T_x)
    score = np.array([[h_t[:, t] @ W_a @ h_s[:, u] for t in range(T_y)] for u in range(T_x)])
    c = h_s @ _softmax(score)
    out = attention.variant(score="dot", bias=False)(X=h_t, Z=h_s, W_q=np.eye(d_t), W_k=W_a, W_v=np.eye(d_s))
    np.testing.assert_allclose(out, c, rtol=1e-10, atol=1e-12)
    if d_t == d_s:
        plain = np.array([[h_t[:, t] @ h_s[:, u] for t in range(T_y)] for u in range(T_x)])
        out = attention.variant(score="dot", bias=False)(X=h_t, Z=h_s, W_q=np.eye(d_t), W_k=np.eye(d_s),
                                                         W_v=np.eye(d_s))
        np.testing.assert_allclose(out, h_s @ _softmax(plain), rtol=1e-10, atol=1e-12)


@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5), st.integers(1, 5), SEED)
def test_luong_concat_is_the_additive_score(d_t, d_a, T_y, T_x, seed):
    """Luong et al. 2015, eq. (8): score(h_t, h̄_s) = v_aᵀ tanh(W_a [h_t; h̄_s]) (concat) is the additive
    score with W_q and W_k the two column blocks of W_a."""
    rng = np.random.default_rng(seed)
    W_a, v_a = normal(rng, d_a, 2 * d_t), normal(rng, d_a)
    h_t, h_s = normal(rng, d_t, T_y), normal(rng, d_t, T_x)
    score = np.array([[v_a @ np.tanh(W_a @ np.concatenate([h_t[:, t], h_s[:, u]])) for t in range(T_y)]
                      for u in range(T_x)])
    run = attention.variant(score="additive", bias=False).run(
        X=h_t, Z=h_s, W_q=W_a[:, :d_t], W_k=W_a[:, d_t:], W_v=np.eye(d_t), v_a=v_a)
    np.testing.assert_allclose(run.values["S"], score, rtol=1e-12, atol=1e-12)


@given(st.integers(1, 4), st.integers(1, 4), st.integers(2, 6), SEED, SEED)
def test_a_linear_score_ignores_the_decoder_state(n, d_h, T_x, seed, other):
    """The lecture notes (seed 003) call f_att "a Linear Layer"; Bahdanau's is an MLP, and must be: with a
    linear score e_j = wᵀ[s; h_j] + b = w_sᵀ s + w_hᵀ h_j + b the term w_sᵀ s is the same for every j and
    cancels in the softmax, so the weights α_j do not depend on the decoder state s at all (any random s
    gives the same α).  The additive score's weights do."""
    rng = np.random.default_rng(seed)
    w, b, h = normal(rng, n + d_h), rng.normal(), normal(rng, d_h, T_x)
    states = [normal(rng, n), normal(np.random.default_rng(other), n) * 3]

    def linear(s):
        return _softmax(np.array([w @ np.concatenate([s, h[:, j]]) + b for j in range(T_x)]))

    np.testing.assert_allclose(linear(states[0]), linear(states[1]), rtol=1e-12, atol=1e-14)
    W_a, U_a, v_a = normal(rng, 4, n), normal(rng, 4, d_h), normal(rng, 4)
    additive = attention.variant(score="additive", bias=False)
    alphas = [_softmax(additive.run(X=s[:, None], Z=h, W_q=W_a, W_k=U_a, W_v=np.eye(d_h), v_a=v_a).values["S"][:, 0])
              for s in states]
    assert not np.allclose(alphas[0], alphas[1], rtol=0, atol=1e-9)


# ------------------------------------------------------------------------------ masks
@given(scored_attention_cases(self_attention=False), st.integers(0, 4), SEED)
def test_a_hidden_key_has_no_influence(case, key, seed):
    """Algorithm 4, line 5, under every score: a key position the mask hides from every query can be
    changed arbitrarily without changing the output (NaN columns of empty="nan" included, bit for bit) — but
    for a query that admits no key under empty="uniform", which averages every value by design."""
    ell_z, ell_x = case.sizes["ell_z"], case.sizes["ell_x"]
    key %= ell_z
    kw = dict(case.kwargs)
    mask = np.ones((ell_z, ell_x), dtype=bool) if kw.get("mask") is None or isinstance(kw["mask"], str) \
        else np.array(kw["mask"], dtype=bool)
    mask[key, :] = False
    kw["mask"] = mask
    out = case.algorithm(**kw)
    Z = kw["Z"].copy()
    Z[:, key] = np.random.default_rng(seed).normal(size=Z.shape[0]) * 100
    kept = mask.any(axis=0) if case.algorithm.options["empty"] == "uniform" else np.ones(ell_x, dtype=bool)
    np.testing.assert_array_equal(case.algorithm(**{**kw, "Z": Z})[:, kept], out[:, kept])


@pytest.mark.parametrize("policy", ["zero", "nan", "error", "uniform"])
@given(case=scored_attention_cases(masked=False), column=st.integers(0, 4))
def test_empty_neighbourhood_follows_the_policy_for_every_score(policy, case, column):
    """decision-empty-neighbourhood under every score: a query that admits no key returns a zero column, a NaN column,
    a DomainError or (uniform, what a −10⁹ fill gives) the mean of every value W_v Z + b_v; the other columns
    are as without the mask."""
    ell_z, ell_x = case.sizes["ell_z"], case.sizes["ell_x"]
    column %= ell_x
    mask = np.ones((ell_z, ell_x), dtype=bool)
    mask[:, column] = False
    algorithm = case.algorithm.variant(empty=policy)
    kw = {**case.kwargs, "mask": mask}
    if policy == "error":
        with pytest.raises(DomainError, match="no admitted key"):
            algorithm(**kw)
        return
    out, full = algorithm(**kw), algorithm(**{**kw, "mask": None})
    others = np.arange(ell_x) != column
    np.testing.assert_allclose(out[:, others], full[:, others], rtol=0, atol=1e-12)
    if policy == "nan":
        assert np.all(np.isnan(out[:, column]))
    elif policy == "uniform":
        Z = kw["X"] if kw.get("Z") is None else kw["Z"]
        values = kw["W_v"] @ Z + (kw["b_v"][:, None] if "b_v" in kw else 0.0)
        np.testing.assert_allclose(out[:, column], values.mean(axis=1), rtol=0, atol=1e-12)
    else:
        np.testing.assert_array_equal(out[:, column], 0.0)


@given(scored_attention_cases(self_attention=True, bias=None, masked=False))
def test_algorithm_3_is_a_column_of_algorithm_4_under_every_score(case):
    """Phuong & Hutter: Algorithm 3 on token t equals column t of Algorithm 4 without a mask — under every
    score (Algorithm 3's single query reads the same score op)."""
    options = case.algorithm.options
    alg3 = single_query_attention.variant(bias=options["bias"], score=options["score"],
                                          activation=options["activation"])
    out = case.algorithm(**case.kwargs)
    params = {k: case.kwargs[k] for k in case.params}
    for t in range(case.sizes["ell_x"]):
        np.testing.assert_allclose(alg3(e=case.kwargs["X"][:, t], e_t=case.kwargs["X"], **params), out[:, t],
                                   rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------ attention pooling
@given(pooling_cases(), st.randoms(use_true_random=False))
def test_attention_pooling_is_permutation_invariant(case, random):
    """Pooling ⇒ invariance (seed 004; Yang et al. 2016, eq. 7 is a sum over t): permuting the columns of Z
    leaves s unchanged (up to the order of a floating-point sum)."""
    order = list(range(case.sizes["ell"]))
    random.shuffle(order)
    shuffled = {**case.kwargs, "Z": case.kwargs["Z"][:, order]}
    np.testing.assert_allclose(case.algorithm(**shuffled), case.algorithm(**case.kwargs), rtol=1e-12, atol=1e-12)


@given(pooling_cases())
def test_attention_pooling_equals_the_papers_equations(case):
    """Seed 004: s = Z softmax(Zᵀq) (dot); Yang et al. 2016, eqs. (5)–(7): u_t = tanh(W z_t + b),
    α_t = exp(u_tᵀu_w)/Σ exp(·), s = Σ_t α_t z_t (mlp); average pooling, α_t = 1/ℓ (mean) — computed here column
    by column."""
    kw, Z = case.kwargs, case.kwargs["Z"]
    if case.algorithm.options["score"] == "mean":
        e = np.zeros(Z.shape[1])                                   # equal scores: every weight 1/ℓ
    elif case.algorithm.options["score"] == "dot":
        e = np.array([Z[:, t] @ kw["q"] for t in range(Z.shape[1])])
    else:
        e = np.array([np.tanh(kw["W"] @ Z[:, t] + kw["b"]) @ kw["u_w"] for t in range(Z.shape[1])])
    alpha = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
    np.testing.assert_allclose(case.algorithm(**kw), sum(alpha[t] * Z[:, t] for t in range(Z.shape[1])),
                               rtol=1e-10, atol=1e-12)


@given(pooling_cases())
def test_attention_pooling_is_algorithm_3_with_a_learned_query(case):
    """Attention pooling is Algorithm 3 with the query a parameter and W_v = I: the dot score with e = q and
    W_q = W_k = I; the mlp score as Bahdanau's additive score whose query term is the constant b (W_q = 0,
    b_q = b, W_k = W, b_k = 0, v_a = u_w); average pooling as the dot score with the query 0 (every score equal)."""
    kw, d_z = case.kwargs, case.sizes["d_z"]
    I = np.eye(d_z)
    if case.algorithm.options["score"] == "mean":
        alg3 = single_query_attention.variant(score="dot", bias=False)
        got = alg3(e=np.zeros(d_z), e_t=kw["Z"], W_q=I, W_k=I, W_v=I)
    elif case.algorithm.options["score"] == "dot":
        alg3 = single_query_attention.variant(score="dot", bias=False)
        got = alg3(e=kw["q"], e_t=kw["Z"], W_q=I, W_k=I, W_v=I)
    else:
        d_a = case.sizes["d_a"]
        alg3 = single_query_attention.variant(score="additive")
        got = alg3(e=np.zeros(d_z), e_t=kw["Z"], W_q=np.zeros((d_a, d_z)), b_q=kw["b"], W_k=kw["W"],
                   b_k=np.zeros(d_a), W_v=I, b_v=np.zeros(d_z), v_a=kw["u_w"])
    np.testing.assert_allclose(got, case.algorithm(**kw), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("build, options, words", [
    (attention, {"score": "cosine"}, ["score", "'cosine'"]),
    (single_query_attention, {"score": "general"}, ["score", "'general'"]),
    (attention, {"score": "additive", "activation": "gelu"}, ["activation", "'gelu'"]),
    (attention, {"score": "dot", "activation": "leaky_relu"}, ["activation", "'leaky_relu'", "additive"]),
    (attention, {"score": None}, ["score", "None"]),
    (attention_pooling, {"score": "additive"}, ["score", "'additive'"]),
])
def test_unknown_scores_and_activations_are_config_errors(build, options, words):
    """Bad options are ConfigErrors that name the option and the value."""
    with pytest.raises(ConfigError) as error:
        build.variant(**options)
    assert all(w in str(error.value) for w in words), str(error.value)


@given(scored_attention_cases(score="additive"))
def test_the_additive_score_without_v_a_is_a_config_error(case):
    """The additive score's parameter v_a is required, and the error names it."""
    kw = {k: v for k, v in case.kwargs.items() if k != "v_a"}
    with pytest.raises(ConfigError, match="v_a"):
        case.algorithm(**kw)
