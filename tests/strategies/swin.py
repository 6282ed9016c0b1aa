"""Hypothesis strategies for Swin (formal.algorithms.vision): grids of whole windows, and every parameter
shape written out by hand as Liu et al.'s code builds it (qkv and proj of width C = H·d_attn, a
(2M−1)×(2M−1) bias table per head, an MLP of width d_mlp, a 4C→2C reduction)."""

import numpy as np
from hypothesis import strategies as st

from formal import algorithms
from tests.strategies.cases import SEED, Case, normal


def _attention(rng, H, d, lead=()):
    C = H * d["d_attn"]
    shapes = {"W_q": (H, d["d_attn"], C), "b_q": (H, d["d_attn"]), "W_k": (H, d["d_attn"], C),
              "b_k": (H, d["d_attn"]), "W_v": (H, d["d_attn"], C), "b_v": (H, d["d_attn"]), "W_o": (C, C),
              "b_o": (C,), "B_hat": (H, 2 * d["M"] - 1, 2 * d["M"] - 1)}
    return {n: normal(rng, *(lead + s)) for n, s in shapes.items()}


def _block(rng, H, d, d_mlp, lead=(), prefix=""):
    C = H * d["d_attn"]
    p = _attention(rng, H, d, lead)
    p.update({"gamma1": 1 + normal(rng, *(lead + (C,)), scale=0.3), "beta1": normal(rng, *(lead + (C,))),
              "gamma2": 1 + normal(rng, *(lead + (C,)), scale=0.3), "beta2": normal(rng, *(lead + (C,))),
              "W_mlp1": normal(rng, *(lead + (d_mlp, C))), "b_mlp1": normal(rng, *(lead + (d_mlp,))),
              "W_mlp2": normal(rng, *(lead + (C, d_mlp))), "b_mlp2": normal(rng, *(lead + (C,)))})
    return {prefix + k: v for k, v in p.items()}


def _merge(rng, width, prefix=""):
    return {f"{prefix}gamma_m": 1 + normal(rng, 4 * width, scale=0.3), f"{prefix}beta_m": normal(rng, 4 * width),
            f"{prefix}W_m": normal(rng, 2 * width, 4 * width)}


@st.composite
def _grid(draw, *, max_windows=2):
    M = draw(st.integers(1, 3))
    return {"M": M, "n_h": M * draw(st.integers(1, max_windows)), "n_w": M * draw(st.integers(1, max_windows)),
            "H": draw(st.integers(1, 2)), "d_attn": draw(st.integers(1, 3))}


def _sizes(g, **more):
    return {"swin_window": g["M"], "height": g["n_h"], "width": g["n_w"], "H": g["H"], "d_attn": g["d_attn"], **more}


@st.composite
def window_mhattention_cases(draw):
    g, rng = draw(_grid()), np.random.default_rng(draw(SEED))
    params = _attention(rng, g["H"], g)
    algorithm = algorithms.get("window_mhattention", shifted=draw(st.booleans()))
    X = normal(rng, g["n_h"], g["n_w"], g["H"] * g["d_attn"])
    return Case(algorithm, {"X": X, **params}, _sizes(g), tuple(params))


@st.composite
def swin_block_cases(draw):
    g, rng = draw(_grid()), np.random.default_rng(draw(SEED))
    d_mlp = draw(st.integers(1, 4))
    params = _block(rng, g["H"], g, d_mlp)
    algorithm = algorithms.get("swin_block", shifted=draw(st.booleans()), eps=draw(st.sampled_from([1e-5, 0.1])))
    X = normal(rng, g["n_h"], g["n_w"], g["H"] * g["d_attn"])
    return Case(algorithm, {"X": X, **params}, _sizes(g, d_mlp=d_mlp), tuple(params))


@st.composite
def patch_merging_cases(draw):
    rng = np.random.default_rng(draw(SEED))
    n_h, n_w, width = 2 * draw(st.integers(1, 3)), 2 * draw(st.integers(1, 3)), draw(st.integers(2, 4))
    params = _merge(rng, width)
    X = normal(rng, n_h, n_w, width)
    return Case(algorithms.get("patch_merging", eps=draw(st.sampled_from([1e-5, 0.1]))), {"X": X, **params},
                {"height": n_h, "width": n_w, "d_e": width}, tuple(params))


@st.composite
def swin_stage_cases(draw):
    merge = draw(st.booleans())
    g = draw(_grid())
    if merge:   # merging halves the grid: whole 2×2 groups
        g["n_h"], g["n_w"] = 2 * g["n_h"], 2 * g["n_w"]
    rng = np.random.default_rng(draw(SEED))
    d_mlp, pairs = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    params = {**_block(rng, g["H"], g, d_mlp, (pairs,)), **_block(rng, g["H"], g, d_mlp, (pairs,), "sw_")}
    if merge:
        params.update(_merge(rng, g["H"] * g["d_attn"]))
    algorithm = algorithms.get("swin_stage", merge=merge)
    X = normal(rng, g["n_h"], g["n_w"], g["H"] * g["d_attn"])
    return Case(algorithm, {"X": X, **params}, _sizes(g, d_mlp=d_mlp, L=2 * pairs), tuple(params))


@st.composite
def swin_cases(draw):
    M, P, C_in, H, d_attn = (draw(st.integers(1, 2)) for _ in range(5))
    ratio, n_classes = draw(st.sampled_from([1, 2])), draw(st.integers(2, 3))
    n = 8 * M                     # stage 4 is a single window: the grid halves three times
    rng = np.random.default_rng(draw(SEED))
    depths = [2 * draw(st.integers(1, 1)) for _ in range(4)]
    C = H * d_attn
    params = {"W_patch": normal(rng, C, P * P * C_in), "b_patch": normal(rng, C),
              "gamma_e": 1 + normal(rng, C, scale=0.3), "beta_e": normal(rng, C)}
    for i in range(4):
        scale = 2 ** i
        g = {"M": M, "d_attn": d_attn}
        for prefix in ("", "sw_"):
            params.update(_block(rng, scale * H, g, ratio * scale * C, (depths[i] // 2,), f"s{i + 1}_{prefix}"))
        if i < 3:
            params.update(_merge(rng, scale * C, f"s{i + 1}_"))
    params.update({"gamma": 1 + normal(rng, 8 * C, scale=0.3), "beta": normal(rng, 8 * C),
                   "W_head": normal(rng, n_classes, 8 * C), "b_head": normal(rng, n_classes)})
    X = normal(rng, P * n, P * n, C_in)
    sizes = {"swin_window": M, "patch": P, "channels": C_in, "height": n, "width": n, "H": H, "d_attn": d_attn,
             "n_classes": n_classes, **{f"L_{i + 1}": depths[i] for i in range(4)}}
    return Case(algorithms.get("swin", mlp_ratio=ratio), {"X_img": X, **params}, sizes, tuple(params))


#: The examples a property affords per slow algorithm (a whole Swin runs in a few hundredths of a second, its
#: windows and their heads batched; 12 and 45 while they ran one by one).
SWIN_EXAMPLES = {"swin": 40, "swin_stage": 60}

SWIN_STRATEGIES = {"window_mhattention": window_mhattention_cases(), "swin_block": swin_block_cases(),
                   "patch_merging": patch_merging_cases(), "swin_stage": swin_stage_cases(), "swin": swin_cases()}
