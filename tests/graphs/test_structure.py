"""The structure of the built-in patterns (formal.graphs.structure) against the edges themselves.

Oracles: the bit-set analysis (formal.graphs.layered) of the same edges, stripped of their structure so it
walks them; in-degrees counted by numpy from the edge arrays; the patterns' own definitions, written in
tests/strategies/graphs.py from the papers, for the hypothesis draws.  Every figure the structure derives —
edge count, in-degree spread, receptive-field spreads per layer with and without the residual path, layers
to coverage, maximum path length, causality — must equal them."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from formal import ConfigError
from formal.graphs import analysis, from_mask, from_pairs, layered, patterns, structure
from formal.graphs.pattern import plain as formal_plain
from tests.strategies.graphs import builtin
from tests.tiers import slow

LAYERS = 6


def plain(p):
    """The same edges as a pattern without a structure: the layered analysis walks its bit sets."""
    q = formal_plain(p)
    assert structure.of(q) is None
    return q


def degrees(p) -> dict:
    d = p.in_degree
    if not d.size:
        return {"min": 0, "mean": 0.0, "max": 0, "empty": 0}
    return {"min": int(d.min()), "mean": float(d.mean()), "max": int(d.max()), "empty": int((d == 0).sum())}


def agree(s, edges, context):
    """Every figure of structure ``s`` equals the one computed from ``edges`` (a pattern without structure)."""
    assert s.n_edges == edges.n_edges, context
    assert (s.ell_z, s.ell_x, s.self_attention) == (edges.ell_z, edges.ell_x, edges.self_attention), context
    got, want = s.in_degree_spread(), degrees(edges)
    assert got == pytest.approx(want, rel=1e-12, abs=0) and got["min"] == want["min"], context
    if not edges.self_attention:
        return
    assert s.is_causal == edges.is_causal, context
    for residual in (True, False):
        mine, walked = s.summary(LAYERS, residual=residual), layered.summary(edges, LAYERS, residual=residual)
        for layer, (a, b) in enumerate(zip(mine.spread, walked.spread), 1):
            assert (a[0], a[2]) == (b[0], b[2]) and a[1] == pytest.approx(b[1], rel=1e-12), (context, residual, layer)
        assert mine.coverage == walked.coverage, (context, residual)
        assert mine.max_path_length == walked.max_path_length, (context, residual)


def cases():
    """Every built-in structured pattern for ℓ < 14 and every small parameter (the edge cases: windows wider
    than ℓ, one class per position, no global positions, a summary per position, shifts of every size)."""
    for ell in range(14):
        yield "full", (ell,), {}
        yield "causal", (ell,), {}
        for ell_z, align in itertools.product(range(5), ("top-left", "bottom-right")):
            yield "causal", (ell_z, ell), {"align": align}
            yield "cross", (ell_z, ell), {}
        for window, causal in itertools.product(range(1, 7), (True, False)):
            yield "sliding_window", (ell, window), {"causal": causal}
            for dilation in range(1, 5):
                yield "dilated", (ell, window, dilation), {"causal": causal}
            for n_global in range(min(ell, 4) + 1):
                yield "global_local", (ell, window, n_global), {"causal": causal}
        for stride in range(1, 7):
            for part in ("both", "local", "stride"):
                yield "strided", (ell, stride), {"part": part}
            for summary, part in itertools.product(range(1, stride + 1), ("both", "local", "summary")):
                yield "fixed", (ell, stride, summary), {"part": part}
    for height, width, window in itertools.product((1, 2, 3, 4, 6), (1, 2, 3, 4, 6), (1, 2, 3)):
        if height % window or width % window:
            continue
        yield "swin", (height, width, window), {}
        for shift in range(1, window):
            yield "swin", (height, width, window), {"shifted": True, "shift": shift}


@slow
def test_every_small_pattern_agrees_with_its_edges():
    count = 0
    for name, args, kwargs in cases():
        s = structure.describe(name, *args, **kwargs)
        built = patterns.PATTERNS[name].build(*args, **kwargs)
        assert s.params == built.params, (name, args, kwargs)
        agree(s, plain(built), (name, args, kwargs))
        count += 1
    assert count > 3000


@settings(max_examples=150, deadline=None)
@given(builtin(names=tuple(structure.STRUCTURED[:2]) + tuple(structure.STRUCTURED[3:])))
def test_the_structure_agrees_with_the_papers_definitions(case):
    """Against the oracle masks written from the papers' definitions (not the builders)."""
    name, kwargs, _, oracle = case
    s = structure.describe(name, **kwargs)
    agree(s, from_mask(oracle), (name, kwargs))


@st.composite
def longer(draw):
    """Lengths to 300 with parameters that leave most positions away from the borders."""
    ell = draw(st.integers(14, 300))
    name = draw(st.sampled_from(["sliding_window", "dilated", "global_local", "strided", "fixed"]))
    causal = draw(st.booleans())
    if name == "sliding_window":
        return name, (ell, draw(st.integers(1, 80))), {"causal": causal}
    if name == "dilated":
        return name, (ell, draw(st.integers(1, 20)), draw(st.integers(1, 12))), {"causal": causal}
    if name == "global_local":
        return name, (ell, draw(st.integers(1, 40)), draw(st.integers(0, 12))), {"causal": causal}
    stride = draw(st.integers(1, 40))
    if name == "strided":
        return name, (ell, stride), {"part": draw(st.sampled_from(["both", "local", "stride"]))}
    return name, (ell, stride, draw(st.integers(1, stride))), {"part": draw(st.sampled_from(["both", "local",
                                                                                         "summary"]))}


@settings(max_examples=60, deadline=None)
@given(longer())
def test_longer_patterns_agree_with_their_edges(case):
    name, args, kwargs = case
    agree(structure.describe(name, *args, **kwargs), plain(patterns.PATTERNS[name].build(*args, **kwargs)), case)


def test_a_built_pattern_is_analysed_by_its_structure():
    """The builders' patterns carry their structure; a pattern assembled from arrays under a built-in name
    does not, and is walked (it could hold any edges)."""
    p = patterns.sliding_window(300, 7)
    assert isinstance(structure.of(p), structure.Structure)
    assert analysis.layers_to_coverage(p) == structure.of(p).layers_to_coverage()
    fake = from_pairs(np.arange(300), np.arange(300), ell_z=300, name="sliding_window", params=p.params)
    assert structure.of(fake) is None and analysis.layers_to_coverage(fake) is None
    assert structure.of(patterns.random(40, 2, window=2)) is None


def test_long_contexts_are_answered_without_edges():
    """Mistral's claim: a 4,096 window over 32 layers reaches 32·4,095 + 1 = 131,041 tokens back; a window w
    covers ℓ positions after ⌈(ℓ − 1)/(w − 1)⌉ layers (the hand-written oracles of a causal band)."""
    s = structure.describe("sliding_window", 1_000_000, 4096)
    assert s.spread(32)[2] == 32 * 4095 + 1
    assert s.layers_to_coverage() == -(-(1_000_000 - 1) // 4095) == s.max_path_length()
    assert s.n_edges == 4096 * 4097 // 2 + (1_000_000 - 4096) * 4096        # Σ_q min(q + 1, w)
    huge = structure.describe("strided", 10**12, 1000)
    assert huge.layers_to_coverage() == 2 and huge.spread(2) == (1, (10**12 + 1) / 2, 10**12)


def test_describe_checks_its_arguments_as_the_builder_does():
    for name, args in [("sliding_window", (10, 0)), ("dilated", (10, 2, 0)), ("fixed", (10, 2, 3)),
                       ("global_local", (4, 2, 5)), ("swin", (6, 4, 3)), ("causal", (3, 4))]:
        with pytest.raises(ConfigError) as built:
            patterns.PATTERNS[name].build(*args)
        with pytest.raises(ConfigError) as described:
            structure.describe(name, *args)
        assert str(described.value) == str(built.value)
    with pytest.raises(ConfigError, match="the 'random' pattern has no structure"):
        structure.describe("random", 10, 2)
    with pytest.raises(ConfigError, match="cross-attention"):
        structure.describe("cross", 3, 4).summary(2)


def test_build_makes_the_same_pattern():
    s = structure.describe("swin", 8, 8, 4, shifted=True)
    assert s.build() == patterns.swin(8, 8, 4, shifted=True)
    assert repr(s) == f"Structure('swin', ell=64, height=8, width=8, window=4, shift=2, {s.build().n_edges:,} edges)"
