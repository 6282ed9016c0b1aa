"""Attention pooling: a learned query weighs the columns of Z and returns their weighted sum.

``score="dot"``: ``α = softmax(Zᵀq)``; ``score="mlp"`` (Yang et al.'s hierarchical attention):
``u_t = tanh(W z_t + b)``, ``α = softmax([u_tᵀ u_w]_t)``; both return ``s = Σ_t α_t z_t = Z α`` (d_z).

The factory takes the variant's options and returns the function conform calls; the keyword-only
``_``-arguments are the seams the catalogue plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .numerics import softmax

__all__ = ["dot_scores", "mlp_scores", "pool", "attention_pooling"]


def dot_scores(Z, q):
    """``e = Zᵀq``: one score per column."""
    return Z.T @ q


def mlp_scores(Z, W, b, u_w, phi=np.tanh):
    """``e_t = u_wᵀ tanh(W z_t + b)`` (Yang et al., eqs. 5–6)."""
    return phi(W @ Z + b[:, None]).T @ u_w


def pool(Z, e):
    """``s = Z softmax(e)``."""
    return Z @ softmax(e)


def attention_pooling(*, score="dot", _dot=dot_scores, _mlp=mlp_scores, _pool=pool):
    """Attention pooling of the columns of ``Z`` (d_z×ℓ) into one d_z-vector."""
    if score == "dot":
        def attention_pooling(Z, q):
            return _pool(Z, _dot(Z, q))
    else:
        def attention_pooling(Z, W, b, u_w):
            return _pool(Z, _mlp(Z, W, b, u_w))
    return attention_pooling
