"""Hypothesis strategies for the embeddings and the unembedding (Algorithms 1, 2 and 7), built
constructively; parameter shapes written here by hand, never read from the algorithm objects."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from formal import algorithms
from tests.strategies.cases import SEED, SIZE, Case, normal


@st.composite
def token_embedding_cases(draw):
    s = {"N_V": draw(SIZE), "d_e": draw(SIZE)}
    rng = np.random.default_rng(draw(SEED))
    params = {"W_e": normal(rng, s["d_e"], s["N_V"])}
    v = draw(st.integers(0, s["N_V"] - 1))
    return Case(algorithms.token_embedding, {"v": v, **params}, s, tuple(params))


@st.composite
def positional_embedding_cases(draw):
    encoding = draw(st.sampled_from(["learned", "sinusoidal-paper", "sinusoidal-vaswani"]))
    s = {"ell_max": draw(SIZE), "d_e": draw(SIZE) * (1 if encoding == "learned" else 2)}
    rng = np.random.default_rng(draw(SEED))
    t = draw(st.integers(0, s["ell_max"] - 1))
    algorithm = algorithms.positional_embedding.variant(encoding=encoding)
    if encoding == "learned":
        params = {"W_p": normal(rng, s["d_e"], s["ell_max"])}
        return Case(algorithm, {"t": t, **params}, s, tuple(params))
    return Case(algorithm, {"t": t, "d_e": s["d_e"], "ell_max": s["ell_max"]}, s, ())


@st.composite
def unembedding_cases(draw):
    s = {"N_V": draw(SIZE), "d_e": draw(SIZE)}
    rng = np.random.default_rng(draw(SEED))
    params = {"W_u": normal(rng, s["N_V"], s["d_e"])}
    return Case(algorithms.unembedding, {"e": normal(rng, s["d_e"]), **params}, s, tuple(params))


EMBEDDING_STRATEGIES = {
    "token_embedding": token_embedding_cases(),
    "positional_embedding": positional_embedding_cases(),
    "unembedding": unembedding_cases(),
}
