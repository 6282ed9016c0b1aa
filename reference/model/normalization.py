"""Algorithm 6 in torch: layer normalisation (and RMS normalisation), over the last axis."""

from __future__ import annotations

from formal.errors import ConfigError

from .. import require_torch
from .convert import to_numpy
from .runners import runs

__all__ = ["layer_norm", "run_layer_norm"]

torch = require_torch()
F = torch.nn.functional

def layer_norm(e, gamma, beta=None, *, norm="layer", eps=0.0):
    """Algorithm 6 over the last axis: ``(e − m)/√(v + eps) ⊙ γ + β`` with the biased variance (÷d_e);
    ``norm="rms"``: ``e/√(mean(e²) + eps) ⊙ γ`` (RMSNorm)."""
    if norm == "layer":
        centred = e - e.mean(-1, keepdim=True)
        return centred / torch.sqrt(centred.square().mean(-1, keepdim=True) + eps) * gamma + beta
    if norm == "rms":
        return e / torch.sqrt(e.square().mean(-1, keepdim=True) + eps) * gamma
    raise ConfigError(f"unknown norm {norm!r}; known: layer, rms")


@runs("layer_norm")
def run_layer_norm(c):
    return to_numpy(layer_norm(c.tensor("e"), c.params["gamma"], c.params.get("beta"), norm=c.options["norm"],
                               eps=c.options["eps"]))
