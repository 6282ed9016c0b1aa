"""Algorithm 6: layer normalisation of every column, and RMSNorm (the case m = β = 0); its planted bugs."""

from __future__ import annotations

import numpy as np

from .entry import Implementation, makers

__all__ = ["spread", "normalise", "layer_norm", "spread_eps_outside", "spread_unbiased", "IMPLEMENTATIONS",
           "MUTANTS", "EQUIVALENT"]


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


# ------------------------------------------------------------------------------------- planted pieces
def spread_eps_outside(E, eps):
    """``√v + ε`` for ``√(v + ε)``."""
    return np.sqrt((E**2).mean(axis=0)) + eps


def spread_unbiased(E, eps):
    """``√(Σ_i E[i]²/(d_e − 1) + ε)``: the unbiased variance."""
    return np.sqrt((E**2).sum(axis=0) / (len(E) - 1) + eps)


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("layer_norm", layer_norm,
                   seconds={"quick": (0.05, 0.01), "thorough": (0.4, 0.07)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)

MUTANTS = (
    _seam("layer_norm_unbiased_variance", "layer_norm", {},
          "divides the squared deviations by d_e − 1 (the unbiased variance)", "review",
          _spread=spread_unbiased),
    _seam("layer_norm_eps_outside_sqrt", "layer_norm", {"eps": 1e-5},
          "adds eps outside the square root: (e − m)/(√v + ε)", "review", _spread=spread_eps_outside),
    _variant("layer_norm_subtracts_mean_under_rms", "layer_norm", {"norm": "rms"}, {"norm": "layer"},
             "subtracts the mean under norm=rms"),
    _variant("layer_norm_rms_under_layer", "layer_norm", {}, {"norm": "rms"},
             "neither subtracts the mean nor adds β under the default norm=layer"),
    _variant("layer_norm_fixed_eps", "layer_norm", {}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (torch's default) under the default eps = 0"),
    _variant("layer_norm_ignores_eps", "layer_norm", {"eps": 1e-5}, {"eps": 0.0},
             "leaves eps out under eps=1e-5"),
)

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {"eps outside the square root under eps = 0": "√v + 0 = √(v + 0)"}
