"""Hypothesis strategies for paged attention (Kwon et al. 2023): a pool of blocks, a block table of
⌈ℓ_c/B⌉ blocks anywhere in it, new tokens and Algorithm 5's weights, written out by hand."""

import numpy as np
from hypothesis import strategies as st

from formal import algorithms
from tests.strategies.cases import SEED, Case, normal


@st.composite
def paged_mhattention_cases(draw):
    bias, grouped = draw(st.booleans()), draw(st.booleans())
    s = {k: draw(st.integers(1, 3)) for k in ("d_x", "d_attn", "d_mid", "d_out", "ell_x", "ell_c", "block")}
    s["n_kv_heads"] = kv = draw(st.integers(1, 2))
    s["H"] = kv * (draw(st.integers(1, 2)) if grouped else 1)
    s["n_blocks"] = -(-s["ell_c"] // s["block"])
    s["n_pool"] = s["n_blocks"] + draw(st.integers(0, 2))
    if not grouped:
        del s["n_kv_heads"]
    rng = np.random.default_rng(draw(SEED))
    H = s["H"]
    shapes = {"W_q": (H, s["d_attn"], s["d_x"]), "W_k": (kv, s["d_attn"], s["d_x"]),
              "W_v": (kv, s["d_mid"], s["d_x"]), "W_o": (s["d_out"], H * s["d_mid"])}
    if bias:
        shapes.update(b_q=(H, s["d_attn"]), b_k=(kv, s["d_attn"]), b_v=(kv, s["d_mid"]), b_o=(s["d_out"],))
    params = {n: normal(rng, *shape) for n, shape in shapes.items()}
    table = rng.permutation(s["n_pool"])[:s["n_blocks"]]
    inputs = {"X": normal(rng, s["d_x"], s["ell_x"]),
              "K_pool": normal(rng, s["n_pool"], kv, s["d_attn"], s["block"]),
              "V_pool": normal(rng, s["n_pool"], kv, s["d_mid"], s["block"]),
              "table": table, "mask": rng.random((s["ell_c"] + s["ell_x"], s["ell_x"])) < 0.7,
              "ell_c": s["ell_c"]}
    algorithm = algorithms.get("paged_mhattention", bias=bias, n_kv_heads="symbolic" if grouped else None)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


@st.composite
def paged_attention_cases(draw):
    """The kernel's contract: H query heads over H_kv key/value heads, ℓ_x ≤ ℓ_c new tokens already in the
    cache, a table of ⌈ℓ_c/B⌉ blocks drawn with repeats (shared blocks) or as distinct blocks in any order."""
    grouped = draw(st.booleans())
    s = {k: draw(st.integers(1, 3)) for k in ("d_attn", "d_mid", "block")}
    s["ell_c"] = draw(st.integers(1, 7))
    s["ell_x"] = draw(st.integers(1, s["ell_c"]))
    s["n_kv_heads"] = kv = draw(st.integers(1, 2))
    s["H"] = kv * (draw(st.integers(1, 2)) if grouped else 1)
    s["n_blocks"] = -(-s["ell_c"] // s["block"])
    s["n_pool"] = draw(st.integers(1, s["n_blocks"] + 2))
    if not grouped:
        del s["n_kv_heads"]
    rng = np.random.default_rng(draw(SEED))
    shared = s["n_pool"] < s["n_blocks"] or draw(st.booleans())
    table = (rng.integers(0, s["n_pool"], s["n_blocks"]) if shared
             else rng.permutation(s["n_pool"])[:s["n_blocks"]])
    inputs = {"Q": normal(rng, s["H"], s["d_attn"], s["ell_x"]),
              "K_pool": normal(rng, s["n_pool"], kv, s["d_attn"], s["block"]),
              "V_pool": normal(rng, s["n_pool"], kv, s["d_mid"], s["block"]),
              "table": table, "ell_c": s["ell_c"]}
    algorithm = algorithms.get("paged_attention", n_kv_heads="symbolic" if grouped else None)
    return Case(algorithm, inputs, s, ())


PAGED_STRATEGIES = {"paged_mhattention": paged_mhattention_cases(), "paged_attention": paged_attention_cases()}
