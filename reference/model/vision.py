"""The Swin Transformer (Liu et al. 2021) in torch, batch-first: W-MSA and SW-MSA, the block, patch merging,
the stage and the classifier, with the spec's parameter names and orientation (``formal.algorithms.vision``).

A grid of tokens is channel-last, (B, n_h, n_w, C) with C = H·d_attn, token (r, c) at row r·n_w + c when
read as rows.  Windows are numbered row-major over the grid of windows and their tokens row-major inside a
window, as in Swin's ``window_partition``; the attention in a window is Algorithm 5 (:mod:`.attention`) with the
relative-position bias added to the scaled scores before the mask.  A shifted block rolls the grid by −σ
(σ = ⌊M/2⌋, 0 where the grid is one window) and masks the scores of tokens from different regions of the
unrolled grid with −∞ (Swin's code: −100).
"""

from __future__ import annotations

import math

from formal.errors import ConfigError, shown

from .. import require_torch
from .architectures import image_patches, probabilities
from .attention import ATTENTION_PATHS, MHA, attend_heads, heads
from .convert import single
from .feedforward import mlp
from .normalization import layer_norm
from .runners import SDPA_PATHS, runs

__all__ = ["shift_of", "window_partition", "window_reverse", "shift_mask", "relative_bias", "biased_attend",
           "window_mhattention", "swin_block", "patch_merging", "swin_stage", "swin", "window_side",
           "run_window_mhattention", "run_swin_block", "run_patch_merging", "run_swin_stage", "run_swin"]

torch = require_torch()
F = torch.nn.functional

_BLOCK = ("gamma1", "beta1", *MHA, "B_hat", "gamma2", "beta2", "W_mlp1", "b_mlp1", "W_mlp2", "b_mlp2")
_MERGE = ("gamma_m", "beta_m", "W_m")


# ------------------------------------------------------------------------------------------ windows
def window_side(B_hat) -> int:
    """M, from the bias table B̂ (…, H, 2M − 1, 2M − 1)."""
    return (B_hat.shape[-1] + 1) // 2


def shift_of(n_h: int, n_w: int, M: int, shifted: bool) -> int:
    """σ = ⌊M/2⌋ for a shifted block, 0 for a regular one or where min(n_h, n_w) ≤ M (Swin's rule)."""
    return M // 2 if shifted and min(n_h, n_w) > M else 0


def window_partition(X, M: int):
    """A grid X (B, n_h, n_w, C) as its windows (B·n_h·n_w/M², M², C): window (a, b) of image i is row
    i·(n_h/M)(n_w/M) + a·(n_w/M) + b, token (r, c) of a window row r·M + c."""
    B, n_h, n_w, C = X.shape
    if n_h % M or n_w % M:
        raise ConfigError(f"a {n_h}×{n_w} grid does not fall into whole {M}×{M} windows")
    blocks = X.reshape(B, n_h // M, M, n_w // M, M, C)                  # [i, a, r, b, c, ch]
    return blocks.permute(0, 1, 3, 2, 4, 5).reshape(-1, M * M, C)


def window_reverse(Y, n_h: int, n_w: int, M: int):
    """The reverse of :func:`window_partition`: windows (B·n_h·n_w/M², M², C) put back as (B, n_h, n_w, C)."""
    C = Y.shape[-1]
    blocks = Y.reshape(-1, n_h // M, n_w // M, M, M, C)                 # [i, a, b, r, c, ch]
    return blocks.permute(0, 1, 3, 2, 4, 5).reshape(-1, n_h, n_w, C)


def _regions(n: int, M: int, shift: int, device):
    """Per row (or column) of the rolled grid, its region: [0, n − M) → 0, [n − M, n − σ) → 1,
    [n − σ, n) → 2."""
    label = torch.zeros(n, dtype=torch.long, device=device)
    if shift:
        label[n - M:n - shift] = 1
        label[n - shift:] = 2
    return label


def shift_mask(n_h: int, n_w: int, M: int, shift: int, *, device=None):
    """The mask of every window as rows, (n_h·n_w/M², M², M²), True where query and key come from the same
    region of the grid before the roll (every entry True when σ = 0)."""
    labels = 3 * _regions(n_h, M, shift, device)[:, None] + _regions(n_w, M, shift, device)[None, :]
    per_window = window_partition(labels[None, :, :, None], M)[..., 0]   # (windows, M²)
    return per_window[:, :, None] == per_window[:, None, :]


def relative_bias(B_hat, M: int):
    """``B̂[rel]`` as rows, (H, M², M²):
    ``[h, query i, key j] = B̂[h, r_i − r_j + M − 1, c_i − c_j + M − 1]``, a gather (no products)."""
    position = torch.arange(M * M, device=B_hat.device)
    r, c = position // M, position % M
    index = (r[:, None] - r[None, :] + M - 1) * (2 * M - 1) + (c[:, None] - c[None, :] + M - 1)
    return B_hat.reshape(B_hat.shape[0], -1)[:, index]


# ------------------------------------------------------------------------------------------ attention
def biased_attend(Q, K, V, bias, mask=None, *, path="explicit"):
    """Lines 4–6 of Algorithm 4 with a score bias, per head: ``V·softmax(KᵀQ/√d_attn + B)``, masked scores
    at −∞.  Q, K (N, H, ℓ, d_attn), V (N, H, ℓ, d_mid); ``bias`` (H, ℓ, ℓ) as rows [query, key]; ``mask``
    (N, ℓ, ℓ), True where admitted (every query admits itself: no row is empty).  ``sdpa`` passes
    bias + (−∞ where masked) as ``scaled_dot_product_attention``'s float ``attn_mask``."""
    if mask is not None:
        mask = mask[:, None]                                                # (N, 1, ℓ, ℓ)
    if path == "explicit":
        S = Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1]) + bias         # (N, H, ℓ, ℓ)
        if mask is not None:
            S = S.masked_fill(~mask, -math.inf)
        return torch.softmax(S, dim=-1) @ V
    if path == "sdpa":
        additive = bias.to(Q.dtype).expand(Q.shape[0], *bias.shape)
        if mask is not None:
            additive = additive.masked_fill(~mask, -math.inf)
        return F.scaled_dot_product_attention(Q, K, V, attn_mask=additive)
    if path == "flex":
        raise ConfigError("the flex attention path takes no score bias; use path='explicit' or 'sdpa' for Swin")
    raise ConfigError(f"unknown attention path {shown(path)}; known: {', '.join(ATTENTION_PATHS)}")


def window_mhattention(X, *, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, B_hat, shifted=False, path="explicit"):
    """W-MSA (SW-MSA with ``shifted``): X (B, n_h, n_w, C) → (B, n_h, n_w, C).  Roll by −σ, Algorithm 5 with
    the relative-position bias (and, shifted, the region mask) in every M×M window, put the windows back,
    roll by +σ."""
    B, n_h, n_w, _ = X.shape
    M = window_side(B_hat)
    shift = shift_of(n_h, n_w, M, shifted)
    if shift:
        X = torch.roll(X, shifts=(-shift, -shift), dims=(1, 2))
    X_w = window_partition(X, M)                                            # (B·n_win, M², C)
    mask = shift_mask(n_h, n_w, M, shift, device=X.device).repeat(B, 1, 1) if shift else None
    bias = relative_bias(B_hat, M)

    def attend(Q, K, V, mask, *, empty, path):
        return biased_attend(Q, K, V, bias, mask, path=path)

    K, V = heads(X_w, W_k, b_k), heads(X_w, W_v, b_v)                       # (B·n_win, H, M², d_attn)
    Y_w = attend_heads(X_w, K, V, mask, W_q, b_q, W_o, b_o, "zero", path, attend_fn=attend)
    Y = window_reverse(Y_w, n_h, n_w, M)
    return torch.roll(Y, shifts=(shift, shift), dims=(1, 2)) if shift else Y


# ------------------------------------------------------------------------------------------ block, merge
def swin_block(X, p, *, shifted=False, eps=1e-5, path="explicit"):
    """One Swin block, pre-LN: ``Z ← Z + (S)W-MSA(LN₁(Z))``, ``Z ← Z + MLP(LN₂(Z))`` (exact GELU):
    X (B, n_h, n_w, C) → (B, n_h, n_w, C); ``p`` the block's parameters under the spec's names."""
    B, n_h, n_w, C = X.shape
    Z = X.reshape(B, n_h * n_w, C)                                          # the grid as rows, row-major
    normed = layer_norm(Z, p["gamma1"], p["beta1"], eps=eps).reshape(B, n_h, n_w, C)
    attended = window_mhattention(normed, shifted=shifted, path=path, B_hat=p["B_hat"],
                                  **{n: p[n] for n in MHA})
    Z = Z + attended.reshape(B, n_h * n_w, C)
    Z = Z + mlp(layer_norm(Z, p["gamma2"], p["beta2"], eps=eps), W_mlp1=p["W_mlp1"], b_mlp1=p["b_mlp1"],
                W_mlp2=p["W_mlp2"], b_mlp2=p["b_mlp2"], kind="gelu")
    return Z.reshape(B, n_h, n_w, C)


def patch_merging(X, *, gamma_m, beta_m, W_m, eps=1e-5):
    """Patch merging: each 2×2 group ``[x(2r, 2c); x(2r+1, 2c); x(2r, 2c+1); x(2r+1, 2c+1)]`` (4d_e), layer
    norm, ``W_m`` (no bias): X (B, n_h, n_w, d_e) → (B, n_h/2, n_w/2, 2d_e)."""
    if X.shape[1] % 2 or X.shape[2] % 2:
        raise ConfigError(f"patch merging takes 2×2 groups: a {X.shape[1]}×{X.shape[2]} grid has odd sides")
    G = torch.cat([X[:, 0::2, 0::2], X[:, 1::2, 0::2], X[:, 0::2, 1::2], X[:, 1::2, 1::2]], dim=-1)
    return F.linear(layer_norm(G, gamma_m, beta_m, eps=eps), W_m)


# ------------------------------------------------------------------------------------------ stage, model
def swin_stage(X, p, *, merge=True, eps=1e-5, path="explicit"):
    """A stage: for every pair l, the regular block (``p[name][l]``), then the shifted one
    (``p["sw_" + name][l]``); then, with ``merge``, patch merging (``gamma_m``, ``beta_m``, ``W_m``)."""
    for l in range(p["W_q"].shape[0]):
        X = swin_block(X, {n: p[n][l] for n in _BLOCK}, shifted=False, eps=eps, path=path)
        X = swin_block(X, {n: p["sw_" + n][l] for n in _BLOCK}, shifted=True, eps=eps, path=path)
    if merge:
        X = patch_merging(X, eps=eps, **{n: p[n] for n in _MERGE})
    return X


def _strip(p, prefix):
    return {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}


def swin(X_img, p, *, P: int, eps=1e-5, path="explicit"):
    """The Swin classifier: channel-last images X_img (B, P·n_h, P·n_w, C_in) → class logits (B, N_C).
    Patches in (c, i, j) order embedded by ``W_patch`` (a matrix product: Swin's stride-P convolution), layer
    norm (``gamma_e``, ``beta_e``), stages ``s1_`` … ``s4_`` (the first three merging), the final layer norm,
    the mean over the tokens and ``W_head x̄ + b_head``; the distribution is its softmax."""
    B, rows, columns, _ = X_img.shape
    X = F.linear(image_patches(X_img, P, "channel-first"), p["W_patch"], p["b_patch"])   # (B, n_h·n_w, C)
    X = layer_norm(X, p["gamma_e"], p["beta_e"], eps=eps).reshape(B, rows // P, columns // P, -1)
    for i in range(1, 5):
        X = swin_stage(X, _strip(p, f"s{i}_"), merge=i < 4, eps=eps, path=path)
    Z = layer_norm(X.reshape(B, -1, X.shape[-1]), p["gamma"], p["beta"], eps=eps)
    return F.linear(Z.mean(dim=1), p["W_head"], p["b_head"])


# ------------------------------------------------------------------------------------- runs of the spec
@runs("window_mhattention", paths=SDPA_PATHS)
def run_window_mhattention(c):
    return single(window_mhattention(c.grid("X"), shifted=c.options["shifted"], path=c.path,
                                     **c.weights(*MHA, "B_hat")))


@runs("swin_block", paths=SDPA_PATHS)
def run_swin_block(c):
    return single(swin_block(c.grid("X"), c.params, shifted=c.options["shifted"], eps=c.options["eps"], path=c.path))


@runs("patch_merging")
def run_patch_merging(c):
    return single(patch_merging(c.grid("X"), eps=c.options["eps"], **c.weights(*_MERGE)))


@runs("swin_stage", paths=SDPA_PATHS)
def run_swin_stage(c):
    return single(swin_stage(c.grid("X"), c.params, merge=c.options["merge"], eps=c.options["eps"], path=c.path))


@runs("swin", paths=SDPA_PATHS)
def run_swin(c):
    """Swin from a channel-last image; the patch side from W_patch (C × P²·C_in) and the image's C_in."""
    C_in = c["X_img"].shape[-1]
    P = c.get("patch") or round((c.params["W_patch"].shape[1] // C_in) ** 0.5)
    return single(probabilities(swin(c.grid("X_img"), c.params, P=P, eps=c.options["eps"], path=c.path)))
