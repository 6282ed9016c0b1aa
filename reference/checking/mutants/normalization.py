"""Algorithm 6: layer normalisation of every column, and RMSNorm (the case m = β = 0)."""

from __future__ import annotations

import numpy as np

__all__ = ["spread", "normalise", "layer_norm"]


def spread(E, eps):
    """``√(v + ε)`` per column, v = Σ_i E[i]²/d_e: the biased variance of a centred column."""
    return np.sqrt((E**2).mean(axis=0) + eps)


def normalise(X, gamma, beta=None, *, norm="layer", eps=0.0, _spread=spread):
    """Algorithm 6 on every column of X (d_e×ℓ): ``(e − m)/√(v + ε) ⊙ γ + β``; ``norm="rms"``:
    ``e/√(v + ε) ⊙ γ`` with v the mean square.  A missing β is zero."""
    E = X - X.mean(axis=0) if norm == "layer" else X
    out = E / _spread(E, eps) * gamma[:, None]
    return out if beta is None or norm == "rms" else out + beta[:, None]


def layer_norm(*, norm="layer", eps=0.0, _spread=spread):
    """Algorithm 6 as conform calls it, on one column ``e`` (d_e)."""
    def layer_norm(e, gamma, beta=None):
        return normalise(e[:, None], gamma, beta, norm=norm, eps=eps, _spread=_spread)[:, 0]
    return layer_norm
