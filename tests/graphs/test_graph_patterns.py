"""Patterns: each built-in equals its paper's definition, conversions are exact, counts are right, and bad
input is refused by name."""

import networkx as nx
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from formal import ConfigError
from formal.core import masks as spec_masks
from formal.graphs import analysis, from_graph, from_mask, from_pairs, patterns, to_mask
from tests.strategies.graphs import builtin, digraphs, masks, randoms


@given(builtin())
def test_every_builtin_pattern_is_its_papers_definition(case):
    """Each builder's mask equals the predicate written from its paper (Longformer, Sparse Transformer,
    Swin's roll-and-mask procedure, ...), for windows wider than the sequence too."""
    name, args, pattern, oracle = case
    np.testing.assert_array_equal(pattern.mask(), oracle)
    assert pattern.self_attention and pattern.name == name


@given(st.integers(0, 12), st.integers(0, 12), st.sampled_from(["top-left", "bottom-right"]))
def test_causal_patterns_are_the_specs_causal_masks(ell_z, ell_x, align):
    """decision-causal-alignment: the causal pattern is formal.core.masks.causal in both alignments; a bipartite graph
    when ℓ_z ≠ ℓ_x, and an alignment is required then."""
    if ell_z != ell_x:
        with pytest.raises(ConfigError, match="alignment"):
            patterns.causal(ell_z, ell_x)
    p = patterns.causal(ell_z, ell_x, align=align)
    np.testing.assert_array_equal(p.mask(), spec_masks.causal(ell_z, ell_x, align=align))
    assert p.self_attention == (ell_z == ell_x)


@given(masks())
def test_mask_to_graph_to_mask_is_identity(m):
    """mask → pattern → networkx graph → pattern → mask returns the mask, square masks included."""
    p = from_mask(m)
    G = p.to_networkx()
    assert G.number_of_edges() == int(m.sum()) == p.n_edges
    back = from_graph(G)
    assert back == p
    np.testing.assert_array_equal(to_mask(G), m)


@given(digraphs(loops=False))
def test_graph_to_pattern_adds_no_self_loops(G):
    """A user graph without self-loops gives a pattern whose tokens never attend to themselves."""
    p = patterns.adjacency(G)
    assert not np.any(p.keys == p.queries)
    assert set(zip(p.keys.tolist(), p.queries.tolist())) == set(G.edges)


def test_undirected_graph_lets_both_ends_attend():
    G = nx.path_graph(4)
    p = patterns.adjacency(G)
    assert sorted(zip(p.keys.tolist(), p.queries.tolist())) == [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)]


def test_networkx_form_has_positions_and_sides():
    """Nodes carry position and side; cross-attention is bipartite (networkx's own check agrees)."""
    G = patterns.cross(3, 2).to_networkx()
    assert nx.is_bipartite(G)
    assert {d["side"] for _, d in G.nodes(data=True)} == {"z", "x"}
    assert all(u[0] == "z" and v[0] == "x" for u, v in G.edges)
    assert G.nodes["z", 2]["position"] == 2
    S = patterns.causal(3).to_networkx()
    assert all(S.nodes[t] == {"position": t, "side": "self"} for t in range(3))


@given(builtin())
def test_symbolic_edge_counts_equal_networkx_counts(case):
    """The symbolic |E| of every built-in pattern, evaluated at its parameters, is networkx's edge count."""
    _, _, pattern, _ = case
    expr, values = analysis.symbolic_edge_count(pattern)
    assert expr.xreplace(values) == pattern.to_networkx().number_of_edges()
    regime, conditions, holds = analysis.edge_count_regime(pattern)
    assert not regime.has(sp.Max)
    if holds:
        assert regime.xreplace(values) == pattern.n_edges


@given(randoms())
def test_random_pattern_count_and_draws(a):
    """BigBird: |E| = base + r·(ℓ − g) exactly (networkx count); each non-global query gets r distinct
    keys outside its window and the global positions; the same seed gives the same graph."""
    p = patterns.random(**a)
    expr, values = analysis.symbolic_edge_count(p)
    assert expr.xreplace(values) == p.to_networkx().number_of_edges()
    base = (patterns.global_local(a["ell"], a["window"], a["n_global"]) if a["window"]
            else from_mask(_global_mask(a["ell"], a["n_global"])))
    extra = p.mask() & ~base.mask()
    np.testing.assert_array_equal(p.mask() | base.mask(), p.mask())      # the base is kept
    assert extra[:, :a["n_global"]].sum() == 0
    np.testing.assert_array_equal(extra[:, a["n_global"]:].sum(axis=0), a["n_random"])
    assert patterns.random(**a) == p


def _global_mask(ell, g):
    k, q = np.meshgrid(np.arange(ell), np.arange(ell), indexing="ij")
    return (k < g) | (q < g)


def test_random_draws_are_spread_over_the_free_keys():
    """Each free key is drawn about equally often over many seeds (Floyd's algorithm is uniform)."""
    counts = np.zeros(40)
    for seed in range(300):
        p = patterns.random(40, 3, window=2, seed=seed)
        counts += p.mask()[:, 20] & ~patterns.sliding_window(40, 2, causal=False).mask()[:, 20]
    free = counts[np.r_[0:19, 22:40]]
    assert counts[19:22].sum() == 0
    assert free.sum() == 900 and free.min() > 8 and free.max() < 45        # expectation 900/37 ≈ 24.3


def test_swin_alternating_windows_connect_the_grid():
    """Swin's point: windows alone never mix, shifted windows alternated with them reach every token."""
    plain, shifted = patterns.swin(8, 8, 4), patterns.swin(8, 8, 4, shifted=True)
    assert analysis.layers_to_coverage(plain) is None
    assert analysis.layers_to_coverage(shifted) is None
    assert analysis.layers_to_coverage([plain, shifted]) is not None


@pytest.mark.parametrize("call, message", [
    (lambda: patterns.sliding_window(8, 0), "window = 0 must be a positive integer"),
    (lambda: patterns.sliding_window(8, -2), "window = -2"),
    (lambda: patterns.dilated(8, 2, 0), "dilation = 0"),
    (lambda: patterns.global_local(4, 2, 5), "n_global = 5 is more than the ell = 4"),
    (lambda: patterns.swin(6, 8, 4), "height 6 is not divisible by the Swin window 4"),
    (lambda: patterns.swin(8, 6, 4), "width 6 is not divisible by the Swin window 4"),
    (lambda: patterns.swin(8, 8, 4, shifted=True, shift=4), "shift = 4 must be between 1 and window − 1 = 3"),
    (lambda: patterns.swin(8, 8, 4, shift=1), "shift = 1 is given but shifted = False"),
    (lambda: patterns.fixed(8, 2, 3), "summary = 3 must be at most stride = 2"),
    (lambda: patterns.strided(8, 2, part="summary"), "part = 'summary'"),
    (lambda: patterns.random(6, 5, window=2), "n_random = 5 is more than the 3 keys query"),
    (lambda: patterns.sliding_window(8, 2, causal="yes"), "causal = 'yes' must be True or False"),
    (lambda: from_mask(np.ones((3, 4)), ell_z=3, ell_x=3), r"mask has shape \(3, 4\)"),
    (lambda: from_mask(np.ones((3, 4)), self_attention=True), "self-attention mask is square"),
    (lambda: from_mask(np.array([[0, 2]])), "0 or 1"),
    (lambda: from_mask(np.array([[0, np.nan]])), "0 or 1 .*got nan"),
    (lambda: from_mask(np.array([[0, 1 + 0j]])), "mask must be a 0/1 array .*got complex128"),
    (lambda: from_mask(np.array([["0", "1"]])), "mask must be a 0/1 array .*got <U1"),
    (lambda: from_pairs(np.array([0, 1]) + 0j, [1, 1], ell_z=2), "keys must be a 1-D array of integer positions, "
                                                                  "got complex128"),
    (lambda: from_pairs([0, 1], [[1, 1]], ell_z=2), r"queries must be a 1-D array .*shape \(1, 2\)"),
    (lambda: from_pairs([[0], [0, 1]], [1, 1], ell_z=2), "keys must be a 1-D array of integer positions, got list"),
    (lambda: from_mask(np.ones(3)), "2-D"),
    (lambda: from_graph(nx.DiGraph([(0, 5)]), ell=4), "node 5 is outside the sequence 0..3"),
    (lambda: from_graph(nx.DiGraph([(0, "a")])), "node 'a' is not a position"),
    (lambda: from_graph(nx.MultiDiGraph([(0, 1), (0, 1)])), "duplicate edges are rejected"),
    (lambda: from_graph([(0, 1)]), "expected a networkx Graph"),
    (lambda: from_pairs([0, 0], [1, 1], ell_z=2), "duplicate edge 0 → 1"),
    (lambda: from_pairs([0, 3], [1, 1], ell_z=2), "key position 3 is outside"),
    (lambda: from_graph(nx.DiGraph([(("x", 0), ("z", 0))])), "must go from a key"),
    (lambda: analysis.symbolic_edge_count(from_mask(np.ones((2, 2)))), "no symbolic edge count"),
])
def test_bad_input_is_a_config_error_naming_it(call, message):
    with pytest.raises(ConfigError, match=message):
        call()


@pytest.mark.parametrize("build", [
    lambda: patterns.sliding_window(4096, 64), lambda: patterns.dilated(4096, 32, 3, causal=False),
    lambda: patterns.global_local(4096, 32, 4), lambda: patterns.strided(2048, 64), lambda: patterns.fixed(2048, 64, 8),
    lambda: patterns.random(4096, 3, window=16, n_global=2), lambda: patterns.swin(64, 64, 8, shifted=True)])
def test_patterns_are_built_without_a_python_loop_per_edge(build):
    """Building a pattern of 10⁵–10⁶ edges makes a few hundred Python calls, not one per edge: counted
    by the profiler (deterministic), never timed."""
    import cProfile
    import pstats
    profile = cProfile.Profile()
    p = profile.runcall(build)
    calls = pstats.Stats(profile).total_calls
    assert p.n_edges > 100_000
    assert calls < 2_000, calls


def test_patterns_are_immutable():
    """A pattern's arrays are read-only: no caller can change a graph another holds."""
    p = patterns.full(3)
    for array in (p.keys, p.queries, p.indptr):
        with pytest.raises(ValueError):
            array[0] = 1


def test_from_pairs_leaves_the_callers_arrays_alone():
    keys, queries = np.array([0, 0, 1]), np.array([0, 1, 1])
    p = from_pairs(keys, queries, ell_z=2)
    keys[0] = 1                                                           # still writable, and not shared
    assert p.keys.tolist() == [0, 0, 1]
