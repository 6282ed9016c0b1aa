"""Hypothesis strategies for the position-wise feed-forward network (``mlp``; Vaswani et al. 2017, eq. 2),
built constructively; the parameter shapes are written here by hand from the equation."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from formal import algorithms
from tests.strategies.cases import SEED, SIZE, Case, normal


@st.composite
def mlp_cases(draw):
    activation = draw(st.sampled_from(["relu", "gelu", "gelu-tanh", "swiglu"]))
    bias = draw(st.booleans())
    s = {"d_e": draw(SIZE), "d_mlp": draw(SIZE), "ell": draw(SIZE)}
    rng = np.random.default_rng(draw(SEED))
    shapes = {"W_mlp1": (s["d_mlp"], s["d_e"]), "W_mlp2": (s["d_e"], s["d_mlp"])}
    if activation == "swiglu":
        shapes["W_gate"] = (s["d_mlp"], s["d_e"])
    if bias:
        shapes.update(b_mlp1=(s["d_mlp"],), b_mlp2=(s["d_e"],))
    params = {name: normal(rng, *shape) for name, shape in shapes.items()}
    algorithm = algorithms.mlp.variant(activation=activation, bias=bias)
    return Case(algorithm, {"X": normal(rng, s["d_e"], s["ell"]), **params}, s, tuple(params))


FEEDFORWARD_STRATEGIES = {"mlp": mlp_cases()}
