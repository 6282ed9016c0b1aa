"""Attention pooling: a learned query weighs the columns of Z and returns their weighted sum; its planted bugs.

``score="dot"``: ``α = softmax(Zᵀq)``; ``score="mlp"`` (Yang et al.'s hierarchical attention):
``u_t = tanh(W z_t + b)``, ``α = softmax([u_tᵀ u_w]_t)``; ``score="mean"``: ``α_t = 1/ℓ`` (average pooling); each
returns ``s = Σ_t α_t z_t = Z α`` (d_z).

The factory takes the variant's options and returns the function conform calls; the keyword-only
``_``-arguments are the seams the catalogue plants bugs through.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from .entry import Entry, Implementation, makers
from .numerics import softmax

__all__ = ["dot_scores", "mlp_scores", "pool", "average", "attention_pooling", "IMPLEMENTATIONS", "MUTANTS"]


def dot_scores(Z, q):
    """``e = Zᵀq``: one score per column."""
    return Z.T @ q


def mlp_scores(Z, W, b, u_w, phi=np.tanh):
    """``e_t = u_wᵀ tanh(W z_t + b)`` (Yang et al., eqs. 5–6)."""
    return phi(W @ Z + b[:, None]).T @ u_w


def pool(Z, e):
    """``s = Z softmax(e)``."""
    return Z @ softmax(e)


def average(Z):
    """``s = Σ_t z_t / ℓ``: every column weighs 1/ℓ."""
    return Z.sum(axis=1) / Z.shape[1]


def attention_pooling(*, score="dot", _dot=dot_scores, _mlp=mlp_scores, _pool=pool, _average=average):
    """Attention pooling of the columns of ``Z`` (d_z×ℓ) into one d_z-vector."""
    if score == "mean":
        def attention_pooling(Z):
            return _average(Z)
    elif score == "dot":
        def attention_pooling(Z, q):
            return _pool(Z, _dot(Z, q))
    else:
        def attention_pooling(Z, W, b, u_w):
            return _pool(Z, _mlp(Z, W, b, u_w))
    return attention_pooling


# ------------------------------------------------------------------------------------- planted pieces
def _pools_hidden(Z, W, b, u_w):
    """The weights are right, but the hidden vectors u_t are pooled instead of the z_t."""
    U = np.tanh(W @ Z + b[:, None])
    return U @ softmax(U.T @ u_w)


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("attention_pooling", attention_pooling,
                   seconds={"quick": (0.1, 0.02), "thorough": (0.4, 0.1)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_MLP = {"score": "mlp"}
_MEAN = {"score": "mean"}

MUTANTS = (
    _seam("attention_pooling_averages", "attention_pooling", {},
          "averages the columns of Z instead of attending: every weight 1/ℓ", "review",
          _pool=lambda Z, e: Z.mean(axis=1)),
    _seam("attention_pooling_softmax_over_singleton_axis", "attention_pooling", {},
          "takes the softmax of the ℓ×1 score column over its axis of length 1: every weight is 1, s = Σ_t z_t",
          "review", _pool=lambda Z, e: Z @ softmax(e[:, None], axis=1)[:, 0]),
    _seam("attention_pooling_dot_scaled", "attention_pooling", {},
          "divides the dot scores by √d_z, as scaled dot-product attention does", "review",
          _dot=lambda Z, q: Z.T @ q / math.sqrt(len(q))),
    _seam("attention_pooling_tanh_under_dot", "attention_pooling", {},
          "scores tanh(Z)ᵀq: the mlp score's tanh under score=dot", "variant option score",
          _dot=lambda Z, q: np.tanh(Z).T @ q),
    _seam("attention_pooling_mlp_without_tanh", "attention_pooling", _MLP,
          "leaves out the tanh of the hidden layer: (W Z + b1ᵀ)ᵀu_w, a dot score with query Wᵀu_w",
          "variant option score", _mlp=partial(mlp_scores, phi=lambda a: a)),
    _seam("attention_pooling_mlp_tanh_after_u_w", "attention_pooling", _MLP,
          "applies tanh after the product with u_w: tanh(u_wᵀ(W z_t + b))", "review",
          _mlp=lambda Z, W, b, u_w: np.tanh((W @ Z + b[:, None]).T @ u_w)),
    _seam("attention_pooling_mlp_without_bias", "attention_pooling", _MLP,
          "leaves the bias b out of the hidden layer", "review",
          _mlp=lambda Z, W, b, u_w: mlp_scores(Z, W, np.zeros_like(b), u_w)),
    Entry("attention_pooling_mlp_pools_hidden", "attention_pooling", _MLP, _pools_hidden,
          "pools the hidden vectors u_t = tanh(W z_t + b) instead of the z_t", "review"),
    _seam("attention_pooling_mlp_softmax_over_hidden", "attention_pooling", _MLP,
          "normalises each column of tanh(W Z + b1ᵀ) over the hidden units, then scores the result with u_w",
          "review", _mlp=lambda Z, W, b, u_w: softmax(np.tanh(W @ Z + b[:, None]), axis=0).T @ u_w),
    _seam("attention_pooling_mean_sums", "attention_pooling", _MEAN,
          "sums the columns under score=mean: s = Σ_t z_t, every weight 1 instead of 1/ℓ", "variant option score",
          _average=lambda Z: Z.sum(axis=1)),
    _seam("attention_pooling_mean_over_rows", "attention_pooling", _MEAN,
          "averages each column over its d_z entries (axis 0) instead of the columns: ℓ numbers, not a d_z-vector",
          "review", _average=lambda Z: Z.mean(axis=0)),
    _seam("attention_pooling_mean_divides_by_ell_minus_1", "attention_pooling", _MEAN,
          "divides the sum by ℓ − 1 (a sample variance's correction) instead of ℓ", "review",
          _average=lambda Z: Z.sum(axis=1) / max(Z.shape[1] - 1, 1)),
)
