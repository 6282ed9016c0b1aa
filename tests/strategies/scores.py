"""Hypothesis strategies for the attention scores (the ``score`` option of Algorithms 3 and 4) and for
attention pooling, built constructively as in :mod:`.attention`: each :class:`~.cases.Case` carries the sizes it
was built from and parameter shapes written here by hand, never read from the algorithm objects."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from formal import algorithms
from formal.algorithms.pooling import attention_pooling
from tests.strategies.attention import masks
from tests.strategies.cases import SEED, SIZE, Case, normal, projections

SCORES = ("scaled_dot", "dot", "additive")


@st.composite
def score_options(draw, score=None):
    """``score`` (drawn unless given) and, for the additive score, its activation."""
    score = draw(st.sampled_from(SCORES)) if score is None else score
    activation = draw(st.sampled_from(["tanh", "leaky_relu", "relu"])) if score == "additive" else "tanh"
    return {"score": score, "activation": activation}


def _v_a(rng, s, options):
    return {"v_a": normal(rng, s["d_attn"])} if options["score"] == "additive" else {}


@st.composite
def scored_attention_cases(draw, *, score=None, self_attention=None, bias=None, masked=True):
    """Algorithm 4 under every score, bias, empty-neighbourhood policy and mask."""
    options = draw(score_options(score))
    bias = draw(st.booleans()) if bias is None else bias
    empty = draw(st.sampled_from(["zero", "nan", "uniform"]))
    s = {k: draw(SIZE) for k in ("d_x", "ell_x", "d_attn", "d_out")}
    same = draw(st.booleans()) if self_attention is None else self_attention
    s["d_z"], s["ell_z"] = (s["d_x"], s["ell_x"]) if same else (draw(SIZE), draw(SIZE))
    rng = np.random.default_rng(draw(SEED))
    params = projections(rng, s, {
        "W_q": (s["d_attn"], s["d_x"]), "b_q": (s["d_attn"],),
        "W_k": (s["d_attn"], s["d_z"]), "b_k": (s["d_attn"],),
        "W_v": (s["d_out"], s["d_z"]), "b_v": (s["d_out"],)}, bias)
    params.update(_v_a(rng, s, options))
    X = normal(rng, s["d_x"], s["ell_x"])
    inputs = {"X": X} if same else {"X": X, "Z": normal(rng, s["d_z"], s["ell_z"])}
    if masked:
        inputs.update(draw(masks(s["ell_z"], s["ell_x"], rng)))
    algorithm = algorithms.attention.variant(bias=bias, empty=empty, **options)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


@st.composite
def scored_single_query_cases(draw, *, score=None, bias=None):
    """Algorithm 3 under every score and bias."""
    options = draw(score_options(score))
    bias = draw(st.booleans()) if bias is None else bias
    s = {k: draw(SIZE) for k in ("d_in", "T", "d_attn", "d_out")}
    rng = np.random.default_rng(draw(SEED))
    params = projections(rng, s, {
        "W_q": (s["d_attn"], s["d_in"]), "b_q": (s["d_attn"],),
        "W_k": (s["d_attn"], s["d_in"]), "b_k": (s["d_attn"],),
        "W_v": (s["d_out"], s["d_in"]), "b_v": (s["d_out"],)}, bias)
    params.update(_v_a(rng, s, options))
    inputs = {"e": normal(rng, s["d_in"]), "e_t": normal(rng, s["d_in"], s["T"])}
    algorithm = algorithms.single_query_attention.variant(bias=bias, **options)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


@st.composite
def pooling_cases(draw, *, score=None):
    """Attention pooling under every score (its parameters written here from the papers: none under mean)."""
    score = draw(st.sampled_from(["dot", "mlp", "mean"])) if score is None else score
    s = {"d_z": draw(SIZE), "ell": draw(SIZE)}
    if score == "mlp":
        s["d_a"] = draw(SIZE)
    rng = np.random.default_rng(draw(SEED))
    if score == "dot":
        params = {"q": normal(rng, s["d_z"])}
    elif score == "mlp":
        params = {"W": normal(rng, s["d_a"], s["d_z"]), "b": normal(rng, s["d_a"]), "u_w": normal(rng, s["d_a"])}
    else:
        params = {}
    algorithm = attention_pooling.variant(score=score)
    return Case(algorithm, {"Z": normal(rng, s["d_z"], s["ell"]), **params}, s, tuple(params))


#: Name → strategy, as :data:`cases.STRATEGIES`.
SCORE_STRATEGIES = {
    "attention_scores": scored_attention_cases(),
    "single_query_attention_scores": scored_single_query_cases(),
    "attention_pooling": pooling_cases(),
}
