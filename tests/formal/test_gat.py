"""The graph attention layer ``gat`` (formal/algorithms/graph_attention.py): its execution against the papers'
equations written out per node, its symmetry under renumbering the nodes, the empty neighbourhood, GATv2's head
as Algorithm 4's additive score, and its derived parameters and FLOPs against counts written here by hand."""

import itertools

import numpy as np
import pytest
import sympy as sp

from formal.algorithms import attention
from formal.algorithms.graph_attention import build_gat, gat
from formal.core.symbols import H, d_in, d_out, ell
from formal.engine import render

VARIANTS = [dict(version=v, heads=h, self_loops=s, bias=b)
            for v, h, s, b in itertools.product((1, 2), ("concat", "mean"), (True, False), (True, False))]


def _ids(options):
    return "-".join(f"{k}={v}" for k, v in options.items())


def _arguments(algorithm, rng, sizes):
    """Random parameters for ``algorithm`` at ``sizes`` (symbol → int), a random X and a random adjacency with
    one node that no edge enters."""
    n = sizes[ell]
    A = rng.random((n, n)) < 0.5
    A[:, rng.integers(n)] = False
    args = {"X": rng.normal(size=(sizes[d_in], n)), "A": A}
    for spec in algorithm.params:
        args[spec.name] = rng.normal(size=tuple(int(dim.subs(sizes)) for dim in spec.shape))
    return args


def _leaky(x, slope):
    return x if x > 0 else slope * x


def _by_the_equations(args, *, version, heads, self_loops, bias, slope):
    """Veličković et al. 2018, eq. (1)–(6), and Brody et al. 2022, eq. (7), one node and one neighbour at a time:
    N(i) = {j : A[j, i]} (∪ {i}), e_ij, α_ij = exp(e_ij)/Σ_k exp(e_ik), h'_i = Σ_j α_ij z_j."""
    X, A = args["X"], np.asarray(args["A"], dtype=bool)
    n = X.shape[1]
    blocks = []
    for h in range(len(args["W" if version == 1 else "W_s"])):
        if version == 1:
            z = [args["W"][h] @ X[:, j] for j in range(n)]
            values = z

            def e(i, j):
                return _leaky(float(np.concatenate([z[i], z[j]]) @ np.concatenate([args["a_l"][h], args["a_r"][h]])),
                              slope)
        else:
            b_s = args["b_s"][h] if bias else 0.0
            b_t = args["b_t"][h] if bias else 0.0
            source = [args["W_s"][h] @ X[:, j] + b_s for j in range(n)]
            target = [args["W_t"][h] @ X[:, i] + b_t for i in range(n)]
            values = source

            def e(i, j):
                return float(args["a"][h] @ np.array([_leaky(x, slope) for x in target[i] + source[j]]))
        Y = np.zeros((len(values[0]), n))
        for i in range(n):
            neighbours = [j for j in range(n) if A[j, i] or (self_loops and j == i)]
            if not neighbours:
                continue                                     # the sum over no neighbour: 0
            scores = np.array([e(i, j) for j in neighbours])
            alpha = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
            Y[:, i] = sum(a * values[j] for a, j in zip(alpha, neighbours))
        blocks.append(Y)
    Y = np.concatenate(blocks) if heads == "concat" else np.mean(blocks, axis=0)
    return Y + args["b"][:, None] if bias else Y


@pytest.mark.parametrize("options", VARIANTS, ids=_ids)
@pytest.mark.parametrize("seed", range(3))
def test_gat_is_the_papers_equations_node_by_node(options, seed):
    """The spec's execution = eq. (1)–(6) of Veličković et al. (version 1) and eq. (7) of Brody et al.
    (version 2), evaluated one node and one neighbour at a time, for every head combination, self-loop and
    bias option, and the slopes real code uses."""
    rng = np.random.default_rng(seed)
    slope = (0.2, 0.01, 0.0)[seed]
    algorithm = build_gat(**options, slope=slope)
    sizes = {H: int(rng.integers(1, 4)), d_in: int(rng.integers(1, 4)), d_out: int(rng.integers(1, 4)),
             ell: int(rng.integers(1, 7))}
    args = _arguments(algorithm, rng, sizes)
    np.testing.assert_allclose(algorithm(**args), _by_the_equations(args, **options, slope=slope), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("options", VARIANTS[::3], ids=_ids)
def test_renumbering_the_nodes_renumbers_the_output(options):
    """Permuting the nodes — the columns of X, and the rows and columns of A together — permutes the output
    columns alike: a graph attention layer shares W and a across nodes and sees only the graph's edges.  (The
    record declares X equivariant; its checker permutes X under a complete graph, which every renumbering
    keeps; this test renumbers a graph that is not complete.)"""
    rng = np.random.default_rng(7)
    algorithm = build_gat(**options)
    args = _arguments(algorithm, rng, {H: 2, d_in: 3, d_out: 2, ell: 6})
    perm = rng.permutation(6)
    moved = {**args, "X": args["X"][:, perm], "A": args["A"][np.ix_(perm, perm)]}
    np.testing.assert_allclose(algorithm(**moved), algorithm(**args)[:, perm], rtol=1e-12, atol=1e-12)
    assert algorithm.permutation == {"X": "equivariant"}


@pytest.mark.parametrize("version", [1, 2])
def test_a_node_without_neighbours_gets_the_bias(version):
    """Without self-loops, a node no edge enters has no neighbour: the spec's decision (PyG's) is the sum over
    no edges, 0, plus b — finite, never the NaN of a softmax over nothing."""
    rng = np.random.default_rng(version)
    algorithm = build_gat(version=version, self_loops=False)
    args = _arguments(algorithm, rng, {H: 2, d_in: 2, d_out: 3, ell: 5})
    args["A"][:, 2] = False
    Y = algorithm(**args)
    assert np.all(np.isfinite(Y))
    np.testing.assert_array_equal(Y[:, 2], args["b"])


def test_a_gatv2_head_is_algorithm_4_with_the_additive_leaky_relu_score():
    """One GATv2 head is Algorithm 4 with score="additive", activation="leaky_relu" (Brody et al.'s score is
    that module's GATv2 form): queries from W_t (targets), keys and values from W_s (sources), v_a = a, the
    mask A ∨ I; b = 0.  One definition of the score, read twice."""
    rng = np.random.default_rng(3)
    layer = build_gat(version=2)
    args = _arguments(layer, rng, {H: 1, d_in: 3, d_out: 4, ell: 6})
    args["b"] = np.zeros(4)
    algorithm4 = attention.variant(score="additive", activation="leaky_relu")
    mask = args["A"] | np.eye(6, dtype=bool)
    expected = algorithm4(X=args["X"], mask=mask, W_q=args["W_t"][0], b_q=args["b_t"][0], W_k=args["W_s"][0],
                          b_k=args["b_s"][0], W_v=args["W_s"][0], b_v=args["b_s"][0], v_a=args["a"][0])
    np.testing.assert_allclose(layer(**args), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("options", VARIANTS, ids=_ids)
def test_parameters_are_counted_by_hand(options):
    """Per head: W (d_out·d_in) and a_l, a_r (2·d_out) for GAT; W_s, W_t (2·d_out·d_in), a (d_out) and with biases
    b_s, b_t (2·d_out) for GATv2; then b, H·d_out concatenated or d_out averaged."""
    bias = options["bias"]
    width = H * d_out if options["heads"] == "concat" else d_out
    if options["version"] == 1:
        by_hand = H * (d_out * d_in + 2 * d_out)
    else:
        by_hand = H * (2 * d_out * d_in + d_out + (2 * d_out if bias else 0))
    assert sp.expand(build_gat(**options).param_count() - by_hand - (width if bias else 0)) == 0


@pytest.mark.parametrize("options", VARIANTS, ids=_ids)
def test_flops_are_counted_by_hand(options):
    """Matmul convention (products only), per head: GAT's W X (2·d_in·d_out·ℓ), a_lᵀZ and a_rᵀZ (2·d_out·ℓ each)
    and the weighting Z·α (2·d_out·ℓ²); GATv2's two transforms (4·d_in·d_out·ℓ), its score aᵀ(·) on every pair
    (2·d_out·ℓ²) and the weighting.  A dense adjacency: every pair is scored and masked, so the cost says ℓ², not
    the edge count |E| of Veličković et al.'s O(|V|FF′ + |E|F′)."""
    if options["version"] == 1:
        by_hand = H * (2 * d_in * d_out * ell + 4 * d_out * ell + 2 * d_out * ell ** 2)
    else:
        by_hand = H * (4 * d_in * d_out * ell + 4 * d_out * ell ** 2)
    assert sp.expand(build_gat(**options).cost("matmul").flops - by_hand) == 0


@pytest.mark.parametrize("options", VARIANTS, ids=_ids)
def test_full_flops_add_the_elementwise_work_counted_by_hand(options):
    """The full convention adds, per head, the softmax's 5ℓ² − 2ℓ (per column: ℓ − 1 comparisons, ℓ
    subtractions, ℓ exponentials, ℓ − 1 additions, ℓ divisions) and the score's elementwise work — GAT: ℓ²
    sums and the LeakyReLU's 2 per pair; GATv2: d_out·ℓ² sums and 2 per entry of the d_out×ℓ×ℓ tensor, and
    the transforms' biases (2·d_out·ℓ) — then the output bias (one per entry) and the mean of the heads
    (H·d_out·ℓ: H − 1 additions and a division per entry)."""
    version, bias = options["version"], options["bias"]
    width = H * d_out if options["heads"] == "concat" else d_out
    score = 3 * ell ** 2 if version == 1 else 3 * d_out * ell ** 2 + (2 * d_out * ell if bias else 0)
    by_hand = H * (5 * ell ** 2 - 2 * ell + score) + (width * ell if bias else 0) \
        + (H * d_out * ell if options["heads"] == "mean" else 0)
    algorithm = build_gat(**options)
    assert sp.expand(algorithm.cost("full").flops - algorithm.cost("matmul").flops - by_hand) == 0


def test_the_lines_show_the_slope_and_the_neighbourhood():
    """The rendering names the slope the option sets and the self-loops added to A."""
    shown = render.to_text(gat.variant(slope=0.01))
    assert "LeakyReLU_0.01" in shown and "A ∨ I" in shown


def _attention_weights(algorithm, n, rng, **params):
    """α itself, read off the output: with X = I (d_in = ℓ) and the value transform I, Y = I·α = α."""
    return algorithm(X=np.eye(n), A=np.ones((n, n)), **params)


def test_gat_attention_is_static_and_gatv2s_is_not():
    """Brody et al. 2022, Theorem 1: GAT's attention is static — LeakyReLU is monotone, so every target ranks
    its neighbours alike, by a_rᵀ z_j — while GATv2's ranking can depend on the target (their Theorem 2).  Read
    off the spec's own output on a complete graph: the columns of α (one per target) sort the sources in one
    order under version 1, for every draw; under version 2 some seeded draw gives two targets different
    favourites."""
    n, rng = 4, np.random.default_rng(0)
    identity = np.eye(n)[None]
    for _ in range(20):
        alpha = _attention_weights(build_gat(version=1, bias=False), n, rng, W=identity,
                                   a_l=rng.normal(size=(1, n)), a_r=rng.normal(size=(1, n)))
        np.testing.assert_allclose(alpha.sum(axis=0), 1.0, rtol=1e-12)
        orders = {tuple(np.argsort(alpha[:, i])) for i in range(n)}
        assert len(orders) == 1, alpha
    favourites = [set(np.argmax(_attention_weights(build_gat(version=2, bias=False), n, rng, W_s=identity,
                                                   W_t=rng.normal(size=(1, n, n)), a=rng.normal(size=(1, n))),
                                axis=0)) for _ in range(20)]
    assert any(len(f) > 1 for f in favourites)
