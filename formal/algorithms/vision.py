"""The Swin Transformer (Liu et al. 2021): attention inside M×M windows of a token grid, windows shifted by
⌊M/2⌋ every other block, a relative-position bias, and patch merging between four stages.

Written as calls of the paper's algorithms: a window's attention is Algorithm 5 with an additive score bias
(``mhattention`` with ``score_bias=True``: ``softmax(KᵀQ/√d_attn + B)``), run on every window; the norms are
Algorithm 6 and the classifier Algorithm 7.  The tokens of a stage are an n_h×n_w grid of H·d_attn-wide
vectors, channel-last as Swin's code holds them (C = H·d_attn: every Swin model splits its width into heads
of one width, 32 in the four published ones); a block reads the grid as columns, row-major.

- :data:`window_mhattention` — W-MSA (``shifted=False``) and SW-MSA (``shifted=True``): roll the grid by
  −σ, cut it into windows, attend in each with ``B = B̂[rel]`` and, shifted, the mask that keeps tokens from
  the wrapped-around border apart, put the windows back, roll by +σ (σ = ⌊M/2⌋; 0 where the grid is one
  window, as in Swin's code).
- :data:`swin_block` — the paper's eq. (3): ``ẑ = (S)W-MSA(LN(z)) + z``, ``z' = MLP(LN(ẑ)) + ẑ`` (pre-LN).
- :data:`patch_merging` — each 2×2 group of tokens concatenated (4C), LN, ``W_m`` (2C×4C, no bias).
- :data:`swin_stage` — L/2 pairs of a regular and a shifted block, then (``merge``) patch merging.
- :data:`swin` — the model from the image: 4×4 patches embedded (a stride-4 convolution, then LN), four
  stages (widths C, 2C, 4C, 8C; heads H, 2H, 4H, 8H; grids n_h×n_w down to n_h/8×n_w/8), a final LN, the
  mean over the tokens and the classifier.

The cost of a window is the whole M²×M² score matrix, masked or not: that is what Swin computes (a
shifted window's masked scores are computed, then set to −100), so the FLOPs of SW-MSA equal W-MSA's —
more than the edges the mask admits (:func:`formal.graphs.patterns.swin` counts those).

References
----------
- Z. Liu et al., "Swin Transformer: hierarchical vision transformer using shifted windows", ICCV 2021,
  §3.1 (patch merging, eq. 1–2 the complexities), §3.2 (eq. 3 the block pair, the cyclic shift, eq. 4
  the relative position bias), Table 7 (the variants).
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import H, by_name, channels, d_attn, d_e, d_mlp, n_classes, patch
from ..engine.algorithm import Algorithm, Assign, Loop, call, call_columns, even
from ..engine.declarations import Option, Options
from ..engine.domains import BOOL, Integer
from ..ops import (
    LoopIndex,
    activation,
    add,
    column_mean,
    columns_grid,
    cyclic_shift,
    grid_columns,
    matmul,
    merge_patches,
    patchify,
    pick,
    relative_bias,
    shift_mask,
    unwindows,
    windows,
)
from .attention import affine, build_mhattention
from .normalization import EPS, build_layer_norm
from .unembedding import build_unembedding

__all__ = ["ALGORITHMS", "window_mhattention", "swin_block", "patch_merging", "swin_stage", "swin",
           "build_window_mhattention", "build_swin_block", "build_patch_merging", "build_swin_stage", "build_swin",
           "SWIN_EPS", "SHIFTED", "SWIN_NORM_EPS", "MERGE", "MLP_RATIO"]

#: The layer norms' ε in Swin's code (``nn.LayerNorm``'s default), the default here.
SWIN_EPS = 1e-5

M, n_h, n_w, L = by_name("swin_window"), by_name("height"), by_name("width"), by_name("L")
C = H * d_attn
_ATTENTION = ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o")
_GRID = "the tokens, an n_h×n_w grid of H·d_attn-wide vectors (channel-last)"

SHIFTED = Option("shifted", False, BOOL,
                 "shifted windows (SW-MSA: the grid rolled by −⌊M/2⌋, the wrapped-around border masked; the odd "
                 "blocks) or regular ones (W-MSA)")
#: Algorithm 6's ε with Swin's default.
SWIN_NORM_EPS = EPS.but(default=SWIN_EPS, doc="added to the variance in every layer norm (Swin's code: 1e-5)",
                        examples=(1e-5, 0.1))
MERGE = Option("merge", True, BOOL, "end with patch merging (every stage but the last)")
MLP_RATIO = Option("mlp_ratio", 4, Integer(1), "d_mlp = mlp_ratio·(the stage's width); 4 in every published Swin",
                   examples=(1, 2, 4))


def _attention_params(lead=()):
    """W-MSA's parameters: Swin's qkv and proj (with biases) as Algorithm 5's, and the bias table B̂."""
    shapes = {"W_q": (H, d_attn, C), "b_q": (H, d_attn), "W_k": (H, d_attn, C), "b_k": (H, d_attn),
              "W_v": (H, d_attn, C), "b_v": (H, d_attn), "W_o": (C, C), "b_o": (C,),
              "B_hat": (H, 2 * M - 1, 2 * M - 1)}
    docs = {"B_hat": "relative position bias table: B̂[h, Δr + M − 1, Δc + M − 1]"}
    return [TensorSpec(n, lead + s, doc=docs.get(n, f"{n} of Algorithm 5")) for n, s in shapes.items()]


@Options(SHIFTED).builds
def build_window_mhattention(*, shifted) -> Algorithm:
    """W-MSA (SW-MSA with ``shifted``): Algorithm 5 with the relative-position bias, in every M×M window."""
    w = LoopIndex("w")
    mha = build_mhattention(bias=True, score_bias=True)
    count = n_h * n_w / M ** 2
    mask = pick(shift_mask(n_h, n_w, M, shifted), w)
    head = call(mha, label=("W", "W"), X=pick("X_w", w), B="B", mask=mask, **{n: n for n in _ATTENTION})
    lines = [Assign("X", cyclic_shift("X", M, -1), note="cyclic shift")] if shifted else []
    lines += [Assign("X_w", windows("X", M), note="M×M windows"),
              Assign("B", relative_bias("B_hat", (M, M)), note="relative position bias"),
              Loop("w", count, (Assign("Y_w", head),), stack=("Y_w",)),
              Assign("Y", unwindows("Y_w", n_h, n_w, M))]
    if shifted:
        lines.append(Assign("Y", cyclic_shift("Y", M, 1), note="reverse shift"))
    lines[-1] = Assign(lines[-1].target, lines[-1].expr, note=lines[-1].note, returns=True)
    return Algorithm(
        number=None, source="Liu et al. 2021", name="window_mhattention",
        display="SW-MSA" if shifted else "W-MSA",
        summary=("Swin's " + ("shifted-" if shifted else "") + "window attention: Algorithm 5 with a relative-"
                 "position bias inside each M×M window" + (" of the grid rolled by ⌊M/2⌋." if shifted else ".")),
        inputs=[TensorSpec("X", (n_h, n_w, C), doc=_GRID, grid=True)],
        params=_attention_params(),
        output=TensorSpec("Y", (n_h, n_w, C), doc="the attended tokens, on the same grid", grid=True),
        lines=lines, params_label="W",
        notes=("σ = ⌊M/2⌋, or 0 where min(n_h, n_w) = M (one window), as in Swin's code.",
               "Masked scores are −∞ here and −100 in Swin's code: the weights differ by less than e^(−100)."),
    )


def _norm(x, gamma, beta, eps):
    """``∀t: layer_norm(x[:, t] | γ, β)``, its parameters written as their symbols (``γ^1``)."""
    from ..engine.names import symbol
    norm = build_layer_norm(norm="layer", eps=eps)
    label = tuple(f"{symbol(gamma, latex=latex)}, {symbol(beta, latex=latex)}" for latex in (False, True))
    return call_columns(norm, label=label, e=x, gamma=gamma, beta=beta)


def _block_params(lead=()):
    """A block's parameters: the two norms, W-MSA's, the MLP's."""
    norms = lambda i: [TensorSpec(f"gamma{i}", lead + (C,), doc=f"layer norm {i} scale"),  # noqa: E731
                       TensorSpec(f"beta{i}", lead + (C,), doc=f"layer norm {i} offset")]
    mlp = [TensorSpec("W_mlp1", lead + (d_mlp, C), doc="MLP up-projection"),
           TensorSpec("b_mlp1", lead + (d_mlp,), doc="MLP up-projection bias"),
           TensorSpec("W_mlp2", lead + (C, d_mlp), doc="MLP down-projection"),
           TensorSpec("b_mlp2", lead + (C,), doc="MLP down-projection bias")]
    return norms(1) + _attention_params(lead) + norms(2) + mlp


_BLOCK_NAMES = tuple(s.name for s in _block_params())


@Options(SHIFTED, SWIN_NORM_EPS).builds
def build_swin_block(*, shifted, eps) -> Algorithm:
    """One Swin block (Liu et al. 2021, eq. 3), pre-LN: ``ẑ = (S)W-MSA(LN(z)) + z``, ``z' = MLP(LN(ẑ)) + ẑ``,
    the MLP ``W_mlp2 GELU(W_mlp1 z + b_mlp1) + b_mlp2``."""
    attention = build_window_mhattention(shifted=shifted)
    up = affine("W_mlp1", "Z_tilde", "b_mlp1", True)
    lines = [
        Assign("Z", grid_columns("X", n_h, n_w), note="the grid as columns"),
        Assign("Z_tilde", _norm("Z", "gamma1", "beta1", eps), forall="t"),
        Assign("Y", call(attention, label=("W", "W"), X=columns_grid("Z_tilde", n_h, n_w),
                         **{n: n for n in _ATTENTION + ("B_hat",)})),
        Assign("Z", add("Z", grid_columns("Y", n_h, n_w))),
        Assign("Z_tilde", _norm("Z", "gamma2", "beta2", eps), forall="t"),
        Assign("Z", add("Z", affine("W_mlp2", activation("gelu", up), "b_mlp2", True))),
        Assign("X_out", columns_grid("Z", n_h, n_w), returns=True),
    ]
    return Algorithm(
        number=None, source="Liu et al. 2021", name="swin_block", display="SwinBlock" + ("'" if shifted else ""),
        summary="A Swin Transformer block: " + ("SW" if shifted else "W") + "-MSA and an MLP, pre-LN, residual.",
        inputs=[TensorSpec("X", (n_h, n_w, C), doc=_GRID, grid=True)], params=_block_params(),
        output=TensorSpec("X_out", (n_h, n_w, C), doc="the tokens after the block", grid=True),
        lines=lines, params_label="W",
    )


def _merge_params(width=d_e):
    return [TensorSpec("gamma_m", (4 * width,), doc="patch merging's layer norm scale"),
            TensorSpec("beta_m", (4 * width,), doc="patch merging's layer norm offset"),
            TensorSpec("W_m", (2 * width, 4 * width), doc="patch merging's reduction (no bias)")]


@Options(SWIN_NORM_EPS).builds
def build_patch_merging(*, eps) -> Algorithm:
    """Patch merging (Liu et al. 2021, §3.1): each 2×2 group of tokens concatenated, 4d_e wide, normalised and
    reduced to 2d_e by ``W_m`` — the grid halves, the width doubles."""
    half_h, half_w = n_h / 2, n_w / 2
    lines = [Assign("G", merge_patches("X"), note="2×2 groups"),
             Assign("Z", grid_columns("G", half_h, half_w)),
             Assign("Z", _norm("Z", "gamma_m", "beta_m", eps), forall="t"),
             Assign("X_out", columns_grid(matmul("W_m", "Z"), half_h, half_w), returns=True)]
    return Algorithm(
        number=None, source="Liu et al. 2021", name="patch_merging", display="PatchMerging",
        summary="Swin's patch merging: 2×2 neighbouring tokens concatenated, normalised and projected to 2d_e.",
        inputs=[TensorSpec("X", (n_h, n_w, d_e), doc="the tokens, an n_h×n_w grid of d_e-wide vectors", grid=True)],
        params=_merge_params(),
        output=TensorSpec("X_out", (half_h, half_w, 2 * d_e), doc="the merged tokens", grid=True),
        lines=lines, params_label="W_m",
    )


def _stage_params(merge, prefix=""):
    pairs = (L / 2,)
    specs = []
    for half in ("", "sw_"):
        specs += [TensorSpec(f"{prefix}{half}{s.name}", s.shape, doc=f"{s.doc}, {'shifted' if half else 'regular'}"
                             " block of every pair") for s in _block_params(pairs)]
    return specs + (_merge_params(C) if merge else [])


@Options(MERGE, SWIN_NORM_EPS).builds
def build_swin_stage(*, merge, eps) -> Algorithm:
    """A stage: ``for l ∈ [L/2]``: a regular block, then a shifted one; then (``merge``) patch merging."""
    l = LoopIndex("l")
    regular, shifted = build_swin_block(shifted=False, eps=eps), build_swin_block(shifted=True, eps=eps)
    body = (Assign("X", call(regular, label=("W_l", "W_l"), X="X", **{n: pick(n, l) for n in _BLOCK_NAMES})),
            Assign("X", call(shifted, label=("W'_l", "W'_l"), X="X", **{n: pick(f"sw_{n}", l) for n in _BLOCK_NAMES})))
    lines = [Loop("l", L / 2, body, sequential=True)]
    if merge:
        lines.append(Assign("X", call(build_patch_merging(eps=eps), label=("W_m", "W_m"), X="X",
                                      **{s.name: s.name for s in _merge_params()}), returns=True))
    out = (n_h / 2, n_w / 2, 2 * C) if merge else (n_h, n_w, C)
    return Algorithm(
        number=None, source="Liu et al. 2021", name="swin_stage", display="SwinStage",
        summary="A Swin stage: L/2 pairs of a regular and a shifted-window block" + (", then patch merging." if merge
                                                                                   else "."),
        inputs=[TensorSpec("X", (n_h, n_w, C), doc=_GRID, grid=True)], params=_stage_params(merge),
        output=TensorSpec("X", out, doc="the stage's tokens", grid=True),
        lines=lines, params_label="W", constraints=[even(L, "blocks come in pairs, regular then shifted")],
    )


#: The stages of a Swin model: their depth symbols.
STAGE_DEPTHS = tuple(by_name(f"L_{i}") for i in range(1, 5))


def _stage_call(i, stage):
    """Stage i's call: its grid n_h/2^{i−1}×n_w/2^{i−1}, width 2^{i−1}·C, heads 2^{i−1}·H, L_i blocks — the
    stage's own symbols renamed by unifying its signature with these shapes."""
    prefix = f"s{i}_"
    args = {s.name: f"{prefix}{s.name}" for s in stage.params}
    return call(stage, label=(f"θ_{i}", rf"\theta_{{{i}}}"), **args, X="X")


def _model_stage_params(i, stage, mlp_ratio):
    """The parameters of stage i under the model's names (``s2_W_q``), with the stage's shapes renamed."""
    scale = 2 ** (i - 1)
    rename = {H: scale * H, L: STAGE_DEPTHS[i - 1], d_mlp: mlp_ratio * scale * C}
    return [TensorSpec(f"s{i}_{s.name}", tuple(d.xreplace(rename) for d in s.shape), doc=f"stage {i}: {s.doc}")
            for s in stage.params]


@Options(SWIN_NORM_EPS, MLP_RATIO).builds
def build_swin(*, eps, mlp_ratio) -> Algorithm:
    """The Swin Transformer classifier (Liu et al. 2021, Fig. 3) from a channel-last image of (P·n_h)×(P·n_w)
    pixels and C_in channels: ``X ← LN(W_patch patches_P(X_img) + b_patch 1ᵀ)`` (Swin's stride-P convolution,
    HF's and timm's channel-first patch order), four stages (the first three end in patch merging), a final
    LN, the mean of the n_h·n_w/64 tokens, and ``p = softmax(W_head x̄ + b_head)``.  Stage i has L_i blocks
    (even), 2^{i−1}·H heads of width d_attn, MLPs mlp_ratio times as wide."""
    widest = 8 * C
    stages = [build_swin_stage(merge=i < 4, eps=eps) for i in range(1, 5)]
    lines = [Assign("X_p", patchify("X_img", patch, n_h, n_w, "channel-first"), note="P×P patches, (c, i, j)"),
             Assign("X", affine("W_patch", "X_p", "b_patch", True, role="embed"), note="patch embedding"),
             Assign("X", _norm("X", "gamma_e", "beta_e", eps), forall="t"),
             Assign("X", columns_grid("X", n_h, n_w))]
    lines += [Assign("X", _stage_call(i, stage), note=f"stage {i}") for i, stage in enumerate(stages, 1)]
    last_h, last_w = n_h / 8, n_w / 8
    classify = build_unembedding(bias=True)
    lines += [Assign("Z", grid_columns("X", last_h, last_w)),
              Assign("Z", _norm("Z", "gamma", "beta", eps), forall="t"),
              Assign("x_bar", column_mean("Z", last_h * last_w), note="average pooling"),
              Assign("p", call(classify, label=("W_head, b_head", "W_head, b_head"), e="x_bar", W_u="W_head",
                               b_u="b_head"), returns=True)]
    params = [TensorSpec("W_patch", (C, patch ** 2 * channels), doc="patch embedding (the convolution's kernels)",
                         embedding=True),
              TensorSpec("b_patch", (C,), doc="patch embedding bias", embedding=True),
              TensorSpec("gamma_e", (C,), doc="patch embedding's layer norm scale"),
              TensorSpec("beta_e", (C,), doc="patch embedding's layer norm offset")]
    for i, stage in enumerate(stages, 1):
        params += _model_stage_params(i, stage, mlp_ratio)
    params += [TensorSpec("gamma", (widest,), doc="final layer norm scale"),
               TensorSpec("beta", (widest,), doc="final layer norm offset"),
               TensorSpec("W_head", (n_classes, widest), doc="classifier"),
               TensorSpec("b_head", (n_classes,), doc="classifier bias")]
    return Algorithm(
        number=None, source="Liu et al. 2021", name="swin", display="Swin",
        summary="The Swin Transformer: shifted-window attention in four stages of halving grids, then a classifier.",
        inputs=[TensorSpec("X_img", (patch * n_h, patch * n_w, channels), grid=True,
                           doc="the image, channel-last: P·n_h rows and P·n_w columns of pixels, C channels")],
        params=params, output=TensorSpec("p", (n_classes,), doc="distribution over the classes"),
        lines=lines, params_label="θ",
        model=True,
    )


window_mhattention = build_window_mhattention()
swin_block = build_swin_block()
patch_merging = build_patch_merging()
swin_stage = build_swin_stage()
swin = build_swin()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (window_mhattention, swin_block, patch_merging, swin_stage, swin)
