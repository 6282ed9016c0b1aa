"""Receptive fields, coverage and path lengths against networkx on the layered graph; Vaswani et al.'s
Table 1; attention FLOPs against a count of the products the sparse executor performs."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, strategies as st

from formal import ConfigError
from formal.graphs import analysis, patterns
from tests.strategies.graphs import builtin, digraphs


def layered(patterns_, L, residual):
    """The unrolled stack as a networkx DAG: node (l, t) is position t after layer l; an edge of layer l's
    pattern k → q becomes (l−1, k) → (l, q); the residual path adds (l−1, q) → (l, q)."""
    D = nx.DiGraph()
    ell = patterns_[0].ell_x
    D.add_nodes_from((l, t) for l in range(L + 1) for t in range(ell))
    for l in range(1, L + 1):
        p = patterns_[(l - 1) % len(patterns_)]
        D.add_edges_from(((l - 1, k), (l, q)) for k, q in zip(p.keys.tolist(), p.queries.tolist()))
        if residual:
            D.add_edges_from(((l - 1, t), (l, t)) for t in range(ell))
    return D


def reach_by_networkx(patterns_, L, residual):
    ell = patterns_[0].ell_x
    D = layered(patterns_, L, residual)
    R = np.zeros((ell, ell), dtype=bool)
    for q in range(ell):
        for l, k in nx.ancestors(D, (L, q)) | {(L, q)}:
            R[k, q] |= l == 0
    return R


PATTERN_LISTS = st.one_of(builtin().map(lambda c: [c[2]]),
                          st.lists(builtin(("sliding_window", "dilated", "strided")), min_size=2, max_size=3).map(
                              lambda cs: [c[2] for c in cs]))


@given(PATTERN_LISTS, st.integers(0, 5), st.booleans())
def test_receptive_fields_equal_reachability_on_the_layered_graph(items, L, residual):
    """R_L[k, q] (with or without the residual path, one pattern or layers cycling through several) is
    networkx reachability from (0, k) to (L, q) in the unrolled stack."""
    ell = items[0].ell_x
    items = [p for p in items if p.ell_x == ell]
    if ell == 0:
        return
    R = analysis.receptive_field(items, L, residual=residual)
    np.testing.assert_array_equal(R, reach_by_networkx(items, L, residual))
    sizes = analysis.receptive_field_sizes(items, L, residual=residual)
    assert sizes.shape == (L, ell)
    if L:
        np.testing.assert_array_equal(sizes[-1], R.sum(axis=0))


@given(st.one_of(builtin().map(lambda c: c[2]), digraphs().map(patterns.adjacency)))
def test_max_path_length_is_the_largest_shortest_path(p):
    """With the residual path, the most layers any connected pair needs is the largest finite shortest-path
    distance in the graph (networkx BFS)."""
    if p.ell_x == 0:
        return
    G = p.to_networkx()
    longest = max((d for _, lengths in nx.all_pairs_shortest_path_length(G) for d in lengths.values()), default=0)
    assert analysis.max_path_length(p) == longest


@given(st.one_of(builtin().map(lambda c: c[2]), digraphs().map(patterns.adjacency)), st.booleans())
def test_layers_to_coverage_is_the_first_depth_that_covers(p, residual):
    """layers_to_coverage is the smallest L at which every position depends on every position it may (those
    at or before it for a causal pattern), or None when no L does.  Oracle: powers of the 0/1 adjacency
    matrix (plus I with the residual path) in integer arithmetic, up to 2ℓ² + 60 — past the index
    ((ℓ−1)² + 1, Wielandt) plus a period of the boolean power sequence for these sizes (ℓ ≤ 12)."""
    ell = p.ell_x
    if ell == 0 or ell > 12:
        return
    allowed = np.triu(np.ones((ell, ell), bool)) if p.is_causal else np.ones((ell, ell), bool)
    step = p.mask().astype(np.int64) + (np.eye(ell, dtype=np.int64) if residual else 0)
    R, first = np.eye(ell, dtype=np.int64), None
    for L in range(2 * ell * ell + 60):
        if np.all(R[allowed] > 0):
            first = L
            break
        R = np.minimum(R @ step, 1)
    assert analysis.layers_to_coverage(p, residual=residual) == first


def test_dilated_heads_never_cover_and_say_so():
    """Purely dilated heads split the positions into δ classes: never full coverage, at any depth."""
    p = patterns.dilated(32, 4, 2, causal=False)
    assert analysis.layers_to_coverage(p) is None
    R = analysis.receptive_field(p, 40)
    assert not R[0, 1] and R[0, 30]


@pytest.mark.parametrize("n", [8, 27, 64, 100])
def test_vaswani_table1_maximum_path_lengths(n):
    """Vaswani et al. 2017, Table 1, maximum path length: self-attention O(1), recurrent O(n), contiguous
    convolutions O(n/k), restricted self-attention O(n/r), dilated convolutions O(log_k n) — exact values
    for the first four (hand oracles), and for the dilated stack a bound of twice its layer count."""
    k, r = 3, 4
    rows = {row["layer type"]: row["max path length"] for row in analysis.vaswani_table1(n, kernel=k, radius=r)}
    assert rows["self-attention"] == 1
    assert rows["recurrent"] == n - 1
    assert rows[f"convolutional, k = {k}"] == -(-(n - 1) // ((k - 1) // 2))
    assert rows[f"self-attention (restricted), r = {r}"] == -(-(n - 1) // r)
    levels = int(np.ceil(np.log(2 * n - 1) / np.log(k)))
    assert rows[f"convolutional, k = {k}, dilated"] <= 2 * levels


def test_attention_flops_charge_each_edge_what_a_score_costs():
    """Sparse FLOPs = dense FLOPs with ℓ_z·ℓ_x score entries replaced by |E| (matmul convention): counted by
    hand from the products the edge executor performs — per head 2·d_attn per score and 2·d_mid per
    weighted value, plus the projections."""
    p = patterns.sliding_window(100, 10)
    H, d, d_model = 2, 8, 16
    sizes = {"H": H, "d_attn": d, "d_mid": d, "d_x": d_model, "d_z": d_model, "d_out": d_model}
    got = analysis.attention_flops(p, sizes)
    projections = H * (3 * 2 * d * d_model * 100) + 2 * d_model * H * d * 100
    assert got["sparse"] == projections + H * (2 * d + 2 * d) * p.n_edges
    assert got["dense"] == projections + H * (2 * d + 2 * d) * 100 * 100
    assert got["ratio"] == got["sparse"] / got["dense"]
    with pytest.raises(ConfigError, match="need the sizes"):
        analysis.attention_flops(p, {"H": 1})


@pytest.mark.parametrize("call, message", [
    (lambda: analysis.receptive_field(patterns.cross(3, 4), 2), "cross-attention"),
    (lambda: analysis.receptive_field([patterns.full(3), patterns.full(4)], 1), "different lengths"),
    (lambda: analysis.receptive_field([], 1), "at least one pattern"),
    (lambda: analysis.receptive_field(patterns.full(3), -1), "layers = -1"),
    (lambda: analysis.vaswani_table1(8, kernel=4), "kernel = 4 must be odd"),
])
def test_bad_input(call, message):
    with pytest.raises(ConfigError, match=message):
        call()
