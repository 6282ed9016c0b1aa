"""Hierarchical attention networks (Yang et al. 2016) in torch, batch-first, with the spec's parameter names and
orientation."""

from __future__ import annotations

from .. import require_torch
from . import recurrent
from .convert import single
from .pooling import attention_pooling
from .runners import runs

__all__ = ["han", "run_han"]

torch = require_torch()

def _strip(p, prefix):
    return {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}


def han(x, p, options):
    """A document x (B, ℓ, n_s) of token ids ↦ class probabilities (B, N_C)."""
    layer = {"cell": options["cell"], "direction": "bidirectional", "bias": options["bias"], "nonlinearity": "tanh",
             "reset": options["reset"], "update": options["update"]}
    B, ell, n_s = x.shape
    E = p["W_e"].T[x.permute(0, 2, 1).reshape(B * n_s, ell)]              # every sentence at once: (B·n_s, ℓ, d_e)
    H = recurrent.layer(E, _strip(p, "w_"), layer)                      # (B·n_s, ℓ, 2d_h)
    s = attention_pooling(H, score="mlp", W=p["W_w"], b=p["b_w"], u_w=p["u_w"]).reshape(B, n_s, -1)
    H_s = recurrent.layer(s, _strip(p, "s_"), layer)                    # (B, n_s, 2d_h)
    v = attention_pooling(H_s, score="mlp", W=p["W_s"], b=p["b_s"], u_w=p["u_s"])
    return torch.softmax(v @ p["W_c"].T + p["b_c"], dim=-1)


@runs("han")
def run_han(c):
    return single(han(c.tokens("x"), c.params, c.options))
