"""The Swin Transformer (Liu et al. 2021): window attention with a relative-position bias (W-MSA, and SW-MSA on
the cyclically shifted grid with its mask), the block, patch merging, the stage and the classifier.

numpy only, written as Swin's own code is (``window_partition``, ``relative_position_index``, the
``img_mask`` of three slices per axis, ``x0 … x3`` of patch merging): grids are channel-last n_h×n_w×C, a
window's tokens are rows (M²×C) inside the window, row-major, and windows are numbered row-major over the
grid.  A shifted block rolls by σ = ⌊M/2⌋, or by 0 where the grid is a single window (min(n_h, n_w) ≤ M),
as Swin's ``SwinTransformerBlock`` does.  Masked scores are −∞ (Swin's −100 differs by less than e^{−100}).

The keyword-only ``_``-arguments are the seams the catalogue (at the end) plants bugs through.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from .architectures import image_patches
from .blocks import overwriting_pre_ln, pre_ln
from .entry import Implementation, makers
from .normalization import normalise, spread, spread_eps_outside, spread_unbiased
from .numerics import gelu, gelu_tanh, softmax

__all__ = ["shift_of", "partition", "reverse", "region_labels", "shift_mask", "relative_index", "relative_bias",
           "layer_norm_rows", "merge_groups", "window_mhattention", "swin_block", "patch_merging", "swin_stage",
           "swin", "IMPLEMENTATIONS", "MUTANTS", "EQUIVALENT"]

_ATTENTION = ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o", "B_hat")
_BLOCK = ("gamma1", "beta1") + _ATTENTION + ("gamma2", "beta2", "W_mlp1", "b_mlp1", "W_mlp2", "b_mlp2")


# ------------------------------------------------------------------------------------ windows and shift
def shift_of(n_h, n_w, M, shifted):
    """σ: ⌊M/2⌋ in a shifted block, 0 in a regular one or where the grid is one window."""
    return M // 2 if shifted and min(n_h, n_w) > M else 0


def partition(X, M, *, windows="row", tokens="row"):
    """Swin's ``window_partition``: the n_h×n_w×C grid as (n_h·n_w/M²)×M²×C, windows and tokens row-major
    (``"column"``: column-major)."""
    n_h, n_w, C = X.shape
    blocks = X.reshape(n_h // M, M, n_w // M, M, C)                            # [a, i, b, j, c]
    order = (0, 2) if windows == "row" else (2, 0)
    inner = (1, 3) if tokens == "row" else (3, 1)
    return blocks.transpose(order + inner + (4,)).reshape(-1, M * M, C)


def reverse(Y, n_h, n_w, M, *, windows="row", tokens="row"):
    """Swin's ``window_reverse``: the inverse of :func:`partition` of the same orders."""
    C = Y.shape[-1]
    shape = (n_h // M, n_w // M) if windows == "row" else (n_w // M, n_h // M)
    blocks = Y.reshape(shape + (M, M, C))
    if windows != "row":
        blocks = blocks.transpose(1, 0, 2, 3, 4)                                # [a, b, ., ., c]
    if tokens != "row":
        blocks = blocks.transpose(0, 1, 3, 2, 4)                                # [a, b, i, j, c]
    return blocks.transpose(0, 2, 1, 3, 4).reshape(n_h, n_w, C)


def region_labels(n_h, n_w, M, shift):
    """Swin's ``img_mask``: per token of the rolled grid, 3·(row slice) + (column slice), the slices of an
    axis of length n being [0, n − M), [n − M, n − σ), [n − σ, n)."""
    def axis(n):
        label = np.zeros(n, dtype=int)
        if shift:
            label[n - M:n - shift] = 1
            label[n - shift:] = 2
        return label
    return axis(n_h)[:, None] * 3 + axis(n_w)[None, :]


def shift_mask(n_h, n_w, M, shift):
    """Per window, M²×M² [key, query]: True where the two tokens have the same label (may attend)."""
    labels = partition(region_labels(n_h, n_w, M, shift)[:, :, None], M)[:, :, 0]   # windows × M²
    return labels[:, :, None] == labels[:, None, :]


def relative_index(M, *, _stride=None, _sign=1):
    """Swin's ``relative_position_index`` [key j, query i]: (Δr + M − 1)·(2M − 1) + (Δc + M − 1) with
    Δ = p(i) − p(j) (``_sign=-1``: p(j) − p(i)); ``_stride`` replaces the row stride 2M − 1."""
    rows, cols = np.divmod(np.arange(M * M), M)
    d_r = _sign * (rows[None, :] - rows[:, None]) + M - 1
    d_c = _sign * (cols[None, :] - cols[:, None]) + M - 1
    return d_r * (2 * M - 1 if _stride is None else _stride) + d_c


def relative_bias(B_hat, M, *, _index=relative_index, _mode="raise"):
    """B[h, j, i] = B̂[h] read flat at the relative index: H×M²×M²."""
    H = B_hat.shape[0]
    return np.take(B_hat.reshape(H, -1), _index(M), axis=1, mode=_mode)


def _hide(S, mask):
    """A score of a pair the mask separates becomes −∞."""
    return np.where(mask, S, -np.inf)


# ------------------------------------------------------------------------------------------ W-MSA, SW-MSA
def _attend(X_w, mask, B, p, *, _fill, _score):
    """Algorithm 5 in every window at once: X_w windows×M²×C (rows), B H×M²×M², mask windows×M²×M²."""
    Q = np.einsum("wtc,hdc->whtd", X_w, p["W_q"]) + p["b_q"][None, :, None, :]
    K = np.einsum("wtc,hdc->whtd", X_w, p["W_k"]) + p["b_k"][None, :, None, :]
    V = np.einsum("wtc,hdc->whtd", X_w, p["W_v"]) + p["b_v"][None, :, None, :]
    S = _score(np.einsum("whjd,whid->whji", K, Q), B[None], Q.shape[-1])      # [w, h, key, query]
    A = softmax(_fill(S, mask[:, None]), axis=2)                                # over the keys
    Y = np.einsum("whji,whjd->whid", A, V)                                      # windows × H × M² × d
    stacked = Y.transpose(0, 2, 1, 3).reshape(Y.shape[0], Y.shape[2], -1)       # heads side by side
    return stacked @ p["W_o"].T + p["b_o"]


def window_mhattention(*, shifted=False, _shift=shift_of, _roll=lambda X, s: np.roll(X, (-s, -s), axis=(0, 1)),
                       _unroll=lambda Y, s: np.roll(Y, (s, s), axis=(0, 1)), _mask=shift_mask, _fill=_hide,
                       _bias=relative_bias, _score=lambda QK, B, d: QK / math.sqrt(d) + B,
                       _partition=partition, _reverse=reverse):
    """W-MSA (SW-MSA under ``shifted``) on a channel-last grid X: roll by −σ, windows, attention with the
    relative-position bias (and the shift mask), windows back, roll by +σ.  M is read from B̂ (2M − 1)."""
    def window_mhattention(X, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o, B_hat):
        n_h, n_w, _ = X.shape
        M = (B_hat.shape[-1] + 1) // 2
        p = dict(W_q=W_q, b_q=b_q, W_k=W_k, b_k=b_k, W_v=W_v, b_v=b_v, W_o=W_o, b_o=b_o)
        s = _shift(n_h, n_w, M, shifted)
        X_w = _partition(_roll(X, s), M)
        Y_w = _attend(X_w, _mask(n_h, n_w, M, s), _bias(B_hat, M), p, _fill=_fill, _score=_score)
        return _unroll(_reverse(Y_w, n_h, n_w, M), s)
    return window_mhattention


# ------------------------------------------------------------------------------------------- the block
def layer_norm_rows(X, gamma, beta, eps, *, _spread=spread):
    """Layer norm over the last axis (the channels) of any array."""
    rows = X.reshape(-1, X.shape[-1])
    out = normalise(rows.T, gamma, beta, norm="layer", eps=eps, _spread=_spread).T
    return out.reshape(X.shape)


def swin_block(*, shifted=False, eps=1e-5, _attention=None, _arrange=pre_ln, _activation=gelu, _spread=spread):
    """Swin's block, pre-LN: ``x ← x + (S)W-MSA(LN(x))``, ``x ← x + MLP(LN(x))`` on the channel-last grid."""
    attention = _attention or window_mhattention(shifted=shifted)

    def swin_block(X, gamma1, beta1, W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o, B_hat, gamma2, beta2, W_mlp1,
                   b_mlp1, W_mlp2, b_mlp2):
        norm = lambda g, b: lambda Y: layer_norm_rows(Y, g, b, eps, _spread=_spread)  # noqa: E731
        attend = lambda Y: attention(X=Y, W_q=W_q, b_q=b_q, W_k=W_k, b_k=b_k, W_v=W_v, b_v=b_v,  # noqa: E731
                                     W_o=W_o, b_o=b_o, B_hat=B_hat)
        mlp = lambda Y: _activation(Y @ W_mlp1.T + b_mlp1) @ W_mlp2.T + b_mlp2  # noqa: E731
        X = _arrange(X, attend, norm(gamma1, beta1))
        return _arrange(X, mlp, norm(gamma2, beta2))
    return swin_block


# -------------------------------------------------------------------------------------- patch merging
def merge_groups(X, *, order=(0, 1, 2, 3)):
    """Swin's x0 = x[0::2, 0::2], x1 = x[1::2, 0::2], x2 = x[0::2, 1::2], x3 = x[1::2, 1::2], concatenated on
    the channels in ``order``."""
    parts = [X[0::2, 0::2], X[1::2, 0::2], X[0::2, 1::2], X[1::2, 1::2]]
    return np.concatenate([parts[k] for k in order], axis=-1)


def _norm_then_reduce(G, gamma_m, beta_m, W_m, eps, spread_):
    return layer_norm_rows(G, gamma_m, beta_m, eps, _spread=spread_) @ W_m.T


def patch_merging(*, eps=1e-5, _merge=merge_groups, _reduce=_norm_then_reduce, _spread=spread):
    """Swin's ``PatchMerging``: the 2×2 groups concatenated (4C), ``LayerNorm(4C)``, ``Linear(4C, 2C)``
    without a bias."""
    def patch_merging(X, gamma_m, beta_m, W_m):
        return _reduce(_merge(X), gamma_m, beta_m, W_m, eps, _spread)
    return patch_merging


# ------------------------------------------------------------------------------------------- the stage
def swin_stage(*, merge=True, eps=1e-5, _shifts=(False, True), _pair=lambda l: l, _block=swin_block,
               _merging=patch_merging):
    """A stage: for each of the L/2 pairs, the block of the unprefixed parameters (regular) and that of the
    ``sw_`` ones (shifted), then (``merge``) patch merging.  ``_shifts``: which of the pair shifts;
    ``_pair``: the pair whose parameters pair l reads."""
    blocks = [_block(shifted=s, eps=eps) for s in _shifts]
    merging = _merging(eps=eps)

    def swin_stage(X, gamma_m=None, beta_m=None, W_m=None, **params):
        for l in range(len(params["W_q"])):
            for block, prefix in zip(blocks, ("", "sw_")):
                X = block(X=X, **{n: params[prefix + n][_pair(l)] for n in _BLOCK})
        if merge:
            X = merging(X=X, gamma_m=gamma_m, beta_m=beta_m, W_m=W_m)
        return X
    return swin_stage


# ------------------------------------------------------------------------------------------- the model
def _mlp_cut(params, hidden):
    """The stage's MLP parameters cut to ``hidden`` units, as a model built from its config holds them."""
    cut = dict(params)
    for prefix in ("", "sw_"):
        cut[prefix + "W_mlp1"] = params[prefix + "W_mlp1"][:, :hidden]
        cut[prefix + "b_mlp1"] = params[prefix + "b_mlp1"][:, :hidden]
        cut[prefix + "W_mlp2"] = params[prefix + "W_mlp2"][:, :, :hidden]
    return cut


def swin(*, eps=1e-5, mlp_ratio=4, _patch_order="channel-first", _patch_norm=True, _pool=lambda Z: Z.mean(axis=0),
         _hidden=lambda mlp_ratio, width, C: mlp_ratio * width, _stage=swin_stage):
    """Swin's classifier on a channel-last image: the patch embedding (a stride-P convolution: patches in
    (c, i, j) order), its LayerNorm, four stages (the last without merging), the final LayerNorm, average
    pooling over the tokens and ``softmax(W_head x̄ + b_head)``.  Each MLP is mlp_ratio times its stage's width."""
    stages = [_stage(merge=i < 4, eps=eps) for i in range(1, 5)]

    def swin(params, X_img):
        p = params
        C = len(p["b_patch"])
        P = int(round(math.sqrt(p["W_patch"].shape[1] / X_img.shape[2])))
        n_h, n_w = X_img.shape[0] // P, X_img.shape[1] // P
        X = (p["W_patch"] @ image_patches(X_img, P, _patch_order) + p["b_patch"][:, None]).T   # tokens × C
        if _patch_norm:
            X = layer_norm_rows(X, p["gamma_e"], p["beta_e"], eps)
        X = X.reshape(n_h, n_w, C)
        for i, stage in enumerate(stages, 1):
            prefix = f"s{i}_"
            own = {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}
            X = stage(X=X, **_mlp_cut(own, _hidden(mlp_ratio, X.shape[-1], C)))
        Z = layer_norm_rows(X.reshape(-1, X.shape[-1]), p["gamma"], p["beta"], eps)
        return softmax(p["W_head"] @ _pool(Z) + p["b_head"])
    return swin


# ------------------------------------------------------------------------------------- planted pieces
def _no_shift_mask(n_h, n_w, M, shift):
    """Every pair of a window may attend: the tokens the roll wrapped around meet their new neighbours."""
    return np.ones((n_h * n_w // (M * M), M * M, M * M), dtype=bool)


def _bias_stride_2m(B_hat, M):
    """The flat relative index with row stride 2M (for 2M − 1), read from the flattened table, wrapping."""
    return relative_bias(B_hat, M, _index=lambda M: relative_index(M, _stride=2 * M), _mode="wrap")


def _norm_after_reduction(G, gamma_m, beta_m, W_m, eps, spread):
    """Swin V2's patch merging: ``LN(W_m x)`` over 2C, with the first 2C entries of the 4C-wide γ_m, β_m."""
    Y = G @ W_m.T
    return layer_norm_rows(Y, gamma_m[:Y.shape[-1]], beta_m[:Y.shape[-1]], eps, _spread=spread)


def _column_major(which):
    """Partition and reverse both with ``which`` (windows or tokens) column-major: consistent with each other."""
    return {"_partition": partial(partition, **{which: "column"}), "_reverse": partial(reverse, **{which: "column"})}



# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("window_mhattention", window_mhattention,
                   seconds={"quick": (0.4, 0.12), "thorough": (2.2, 0.72)}),
    Implementation("swin_block", swin_block,
                   seconds={"quick": (0.6, 0.15), "thorough": (2.8, 1.0)}),
    Implementation("patch_merging", patch_merging,
                   seconds={"quick": (0.1, 0.03), "thorough": (0.6, 0.18)}),
    Implementation("swin_stage", swin_stage,
                   seconds={"quick": (1.2, 0.37), "thorough": (7.0, 2.4)}),
    Implementation("swin", swin,
                   seconds={"quick": (5.6, 1.54), "thorough": (23.7, 8.28)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_SHIFTED = {"shifted": True}

MUTANTS = (
    _seam("window_mhattention_roll_reversed", "window_mhattention", _SHIFTED,
          "rolls the grid by +σ before the attention and by −σ after it (the shift's direction reversed)",
          "review", _roll=lambda X, s: np.roll(X, (s, s), axis=(0, 1)),
          _unroll=lambda Y, s: np.roll(Y, (-s, -s), axis=(0, 1))),
    _seam("window_mhattention_without_reverse_roll", "window_mhattention", _SHIFTED,
          "forgets the reverse roll by +σ after the shifted windows' attention", "review",
          _unroll=lambda Y, s: Y),
    _seam("window_mhattention_without_shift_mask", "window_mhattention", _SHIFTED,
          "leaves out the shift mask: tokens attend across the border the roll wrapped around", "review",
          _mask=_no_shift_mask),
    _seam("window_mhattention_shift_mask_inverted", "window_mhattention", _SHIFTED,
          "adds −100 to the scores of the pairs the mask admits instead of those it separates", "review",
          _fill=lambda S, mask: S - 100.0 * mask),
    _seam("window_mhattention_mask_windows_column_major", "window_mhattention", _SHIFTED,
          "numbers the windows column-major while the shift mask is built row-major: a window gets another's "
          "mask", "review", **_column_major("windows")),
    _seam("window_mhattention_shifts_single_window", "window_mhattention", _SHIFTED,
          "shifts by ⌊M/2⌋ (and masks) even where the grid is one window high or wide, where Swin's σ is 0",
          "review", _shift=lambda n_h, n_w, M, shifted: M // 2 if shifted else 0),
    _seam("window_mhattention_bias_transposed", "window_mhattention", {},
          "reads the bias table at key − query instead of query − key (B̂ transposed)", "review",
          _bias=partial(relative_bias, _index=partial(relative_index, _sign=-1))),
    _seam("window_mhattention_bias_stride_2m", "window_mhattention", {},
          "flattens the relative index with row stride 2M instead of 2M − 1 (wrapping past the table's end)",
          "review", _bias=_bias_stride_2m),
    _seam("window_mhattention_bias_scaled", "window_mhattention", {},
          "adds the relative-position bias before the 1/√d_attn scaling, so it is scaled too", "review",
          _score=lambda QK, B, d: (QK + B) / math.sqrt(d)),
    _seam("window_mhattention_tokens_column_major", "window_mhattention", {},
          "reads each window's tokens column-major (and writes them back so): the bias meets the transposed "
          "positions", "review", **_column_major("tokens")),
    _variant("window_mhattention_regular_under_shifted", "window_mhattention", _SHIFTED, {"shifted": False},
             "attends in the regular windows, neither rolled nor masked, under shifted=true"),
    _variant("window_mhattention_shifted_under_regular", "window_mhattention", {}, {"shifted": True},
             "rolls and masks the windows under the default shifted=false"),
    _seam("swin_block_res_post_norm", "swin_block", {},
          "normalises each sublayer's output before the residual, x + LN(f(x)) (Swin V2's res-post-norm)",
          "review", _arrange=lambda X, f, norm: X + norm(f(X))),
    _seam("swin_block_pre_ln_overwrites_residual", "swin_block", {},
          "each sublayer replaces the residual stream x by LN(x)", "review", _arrange=overwriting_pre_ln),
    _seam("swin_block_gelu_tanh", "swin_block", {},
          "uses GELU's tanh approximation where Swin's nn.GELU is the exact one", "review",
          _activation=gelu_tanh),
    _seam("swin_block_unbiased_variance", "swin_block", {},
          "divides the squared deviations by C − 1 in both layer norms (torch.var's default)", "review",
          _spread=spread_unbiased),
    _seam("swin_block_without_shift_mask", "swin_block", _SHIFTED,
          "its SW-MSA has no shift mask: tokens attend across the wrapped-around border", "review",
          _attention=window_mhattention(shifted=True, _mask=_no_shift_mask)),
    _variant("swin_block_regular_under_shifted", "swin_block", _SHIFTED, {"shifted": False},
             "attends in the regular windows (W-MSA) under shifted=true"),
    _variant("swin_block_fixed_eps", "swin_block", {"eps": 0.1}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (nn.LayerNorm's default) under eps=0.1"),
    _seam("patch_merging_x0_x2_x1_x3", "patch_merging", {},
          "concatenates the 2×2 group as x0, x2, x1, x3 (the column offset first, a reshape's order)", "review",
          _merge=partial(merge_groups, order=(0, 2, 1, 3))),
    _seam("patch_merging_norm_after_reduction", "patch_merging", {},
          "normalises after the reduction (Swin V2's order), with γ_m, β_m cut to 2d_e", "review",
          _reduce=_norm_after_reduction),
    _seam("patch_merging_eps_outside_sqrt", "patch_merging", {"eps": 0.1},
          "adds eps outside the square root: (x − m)/(√v + ε)", "variant option eps",
          _spread=spread_eps_outside),
    _variant("patch_merging_fixed_eps", "patch_merging", {"eps": 0.1}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (nn.LayerNorm's default) under eps=0.1"),
    _seam("swin_stage_shifts_even_blocks", "swin_stage", {},
          "shifts the first block of each pair (i % 2 == 0) instead of the second", "review",
          _shifts=(True, False)),
    _seam("swin_stage_never_shifts", "swin_stage", {},
          "gives every block regular windows: the shifted block of each pair is W-MSA", "review",
          _shifts=(False, False)),
    _seam("swin_stage_pairs_share_parameters", "swin_stage", {},
          "every pair reads pair 0's parameters", "review", _pair=lambda l: 0),
    _variant("swin_stage_without_merge", "swin_stage", {}, {"merge": False},
             "leaves out patch merging under the default merge=true"),
    _variant("swin_stage_fixed_eps", "swin_stage", {"eps": 0.1}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (nn.LayerNorm's default) in every norm under eps=0.1"),
    _seam("swin_pools_first_token", "swin", {},
          "classifies the first token instead of the mean over the tokens", "review", _pool=lambda Z: Z[0]),
    _seam("swin_channel_last_patches", "swin", {},
          "flattens each patch as (i, j, c) where the stride-P convolution reads (c, i, j)", "review",
          _patch_order="channel-last"),
    _seam("swin_without_patch_norm", "swin", {},
          "leaves out the layer norm after the patch embedding (patch_norm=False)", "review", _patch_norm=False),
    _seam("swin_shifts_even_blocks", "swin", {},
          "shifts the first block of each pair in every stage instead of the second", "review",
          _stage=partial(swin_stage, _shifts=(True, False))),
    _seam("swin_mlp_width_of_first_stage", "swin", {},
          "sizes every stage's MLP as mlp_ratio·C, the first stage's width, not mlp_ratio·(its own width)",
          "variant option mlp_ratio", _hidden=lambda mlp_ratio, width, C: mlp_ratio * C),
    _variant("swin_mlp_ratio_2_under_4", "swin", {}, {"mlp_ratio": 2},
             "builds every MLP 2·(width) wide under the default mlp_ratio=4: half of each hidden layer is lost"),
    _variant("swin_fixed_eps", "swin", {"eps": 0.1}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (nn.LayerNorm's default) in every norm under eps=0.1"),
)

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {
    "Swin's shift mask as +100 on the admitted scores (or −100, not −∞, on the others)":
        "the softmax over a query's keys cancels a constant added to all of them; the separated pairs' weights "
        "differ by less than e^{−100}",
    "Swin's windows numbered column-major for the tokens, the mask and the reverse alike":
        "attention stays inside each window: the same windows are attended, in another order",
    "Swin's MLPs cut to mlp_ratio·(width) hidden units with mlp_ratio larger than checked":
        "the parameters have fewer hidden units than the cut: every one is used",
}
