"""Hypothesis strategies for single-query, masked and multi-head attention (Algorithms 3, 4 and 5, with
grouped-query heads and every mask kind), built constructively; parameter shapes written here by hand,
never read from the algorithm objects."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from formal import algorithms
from tests.strategies.cases import SEED, SIZE, Case, normal, projections


@st.composite
def single_query_attention_cases(draw):
    bias = draw(st.booleans())
    s = {k: draw(SIZE) for k in ("d_in", "T", "d_attn", "d_out")}
    rng = np.random.default_rng(draw(SEED))
    params = projections(rng, s, {
        "W_q": (s["d_attn"], s["d_in"]), "b_q": (s["d_attn"],),
        "W_k": (s["d_attn"], s["d_in"]), "b_k": (s["d_attn"],),
        "W_v": (s["d_out"], s["d_in"]), "b_v": (s["d_out"],)}, bias)
    inputs = {"e": normal(rng, s["d_in"]), "e_t": normal(rng, s["d_in"], s["T"])}
    algorithm = algorithms.single_query_attention.variant(bias=bias)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


@st.composite
def masks(draw, ell_z, ell_x, rng):
    kind = draw(st.sampled_from(["none", "bidirectional", "causal-top-left", "causal-bottom-right", "random"]))
    if kind == "none":
        return {}
    if kind == "random":
        return {"mask": rng.random((ell_z, ell_x)) < 0.6}
    return {"mask": kind}


@st.composite
def attention_cases(draw, *, self_attention=None, same_width=False):
    bias = draw(st.booleans())
    empty = draw(st.sampled_from(["zero", "nan"]))
    s = {k: draw(SIZE) for k in ("d_x", "ell_x", "d_attn", "d_out")}
    same = draw(st.booleans()) if self_attention is None else self_attention
    s["d_z"], s["ell_z"] = (s["d_x"], s["ell_x"]) if same else (draw(SIZE), draw(SIZE))
    if same_width:
        s["d_z"] = s["d_x"]
    rng = np.random.default_rng(draw(SEED))
    params = projections(rng, s, {
        "W_q": (s["d_attn"], s["d_x"]), "b_q": (s["d_attn"],),
        "W_k": (s["d_attn"], s["d_z"]), "b_k": (s["d_attn"],),
        "W_v": (s["d_out"], s["d_z"]), "b_v": (s["d_out"],)}, bias)
    X = normal(rng, s["d_x"], s["ell_x"])
    inputs = {"X": X} if same else {"X": X, "Z": normal(rng, s["d_z"], s["ell_z"])}
    inputs.update(draw(masks(s["ell_z"], s["ell_x"], rng)))
    algorithm = algorithms.attention.variant(bias=bias, empty=empty)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


@st.composite
def mhattention_cases(draw, *, grouped=None, self_attention=None):
    bias = draw(st.booleans())
    empty = draw(st.sampled_from(["zero", "nan"]))
    grouped = draw(st.booleans()) if grouped is None else grouped
    s = {k: draw(SIZE) for k in ("d_x", "ell_x", "d_attn", "d_mid", "d_out")}
    s["H"] = draw(st.integers(1, 4))
    same = draw(st.booleans()) if self_attention is None else self_attention
    s["d_z"], s["ell_z"] = (s["d_x"], s["ell_x"]) if same else (draw(SIZE), draw(SIZE))
    option = None
    n_kv = s["H"]
    if grouped:
        n_kv = draw(st.sampled_from([d for d in range(1, s["H"] + 1) if s["H"] % d == 0]))
        option = draw(st.sampled_from(["symbolic", n_kv]))
        if option == "symbolic":
            s["n_kv_heads"] = n_kv
    rng = np.random.default_rng(draw(SEED))
    H = s["H"]
    params = projections(rng, s, {
        "W_q": (H, s["d_attn"], s["d_x"]), "b_q": (H, s["d_attn"]),
        "W_k": (n_kv, s["d_attn"], s["d_z"]), "b_k": (n_kv, s["d_attn"]),
        "W_v": (n_kv, s["d_mid"], s["d_z"]), "b_v": (n_kv, s["d_mid"]),
        "W_o": (s["d_out"], H * s["d_mid"]), "b_o": (s["d_out"],)}, bias)
    X = normal(rng, s["d_x"], s["ell_x"])
    inputs = {"X": X} if same else {"X": X, "Z": normal(rng, s["d_z"], s["ell_z"])}
    inputs.update(draw(masks(s["ell_z"], s["ell_x"], rng)))
    algorithm = algorithms.mhattention.variant(bias=bias, empty=empty, n_kv_heads=option)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


ATTENTION_STRATEGIES = {
    "single_query_attention": single_query_attention_cases(),
    "attention": attention_cases(),
    "mhattention": mhattention_cases(),
}
