"""Hypothesis strategies for graph attention (formal.algorithms.graph_attention): every version, head
combination, self-loop and bias setting and slope, with adjacencies that leave a node without neighbours —
parameter shapes written by hand (per head d_out×d_in transforms, d_out score vectors), never read from the
objects."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from formal.algorithms.graph_attention import gat
from tests.strategies.cases import SEED, Case, normal
from tests.strategies.convolution import SMALL, adjacencies


@st.composite
def gat_cases(draw):
    version, heads = draw(st.sampled_from([1, 2])), draw(st.sampled_from(["concat", "mean"]))
    self_loops, bias = draw(st.booleans()), draw(st.booleans())
    slope = draw(st.sampled_from([0.2, 0.01, 0.0, 0.5]))
    s = {"d_in": draw(SMALL), "d_out": draw(SMALL), "H": draw(st.integers(1, 3)), "ell": draw(st.integers(1, 6))}
    rng = np.random.default_rng(draw(SEED))
    H, d_in, d_out = s["H"], s["d_in"], s["d_out"]
    if version == 1:
        params = {"W": normal(rng, H, d_out, d_in), "a_l": normal(rng, H, d_out), "a_r": normal(rng, H, d_out)}
    else:
        params = {"W_s": normal(rng, H, d_out, d_in), "W_t": normal(rng, H, d_out, d_in), "a": normal(rng, H, d_out)}
        if bias:
            params.update(b_s=normal(rng, H, d_out), b_t=normal(rng, H, d_out))
    if bias:
        params["b"] = normal(rng, H * d_out if heads == "concat" else d_out)
    inputs = {"X": normal(rng, d_in, s["ell"])}
    A = draw(adjacencies(s["ell"], rng))
    inputs["A"] = np.ones((s["ell"], s["ell"]), dtype=bool) if A is None else A
    algorithm = gat.variant(version=version, heads=heads, self_loops=self_loops, bias=bias, slope=slope)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


GRAPH_ATTENTION_STRATEGIES = {"gat": gat_cases()}
