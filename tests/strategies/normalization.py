"""Hypothesis strategies for layer normalisation and RMSNorm (Algorithm 6), built constructively."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from formal import algorithms
from tests.strategies.cases import SEED, Case, normal


@st.composite
def layer_norm_cases(draw):
    norm = draw(st.sampled_from(["layer", "rms"]))
    eps = draw(st.sampled_from([0.0, 1e-5]))
    s = {"d_e": draw(st.integers(2, 6))}  # d_e ≥ 2: a random column is then almost surely not constant
    rng = np.random.default_rng(draw(SEED))
    params = {"gamma": normal(rng, s["d_e"])}
    if norm == "layer":
        params["beta"] = normal(rng, s["d_e"])
    algorithm = algorithms.layer_norm.variant(norm=norm, eps=eps)
    return Case(algorithm, {"e": normal(rng, s["d_e"]), **params}, s, tuple(params))


NORMALIZATION_STRATEGIES = {"layer_norm": layer_norm_cases()}
