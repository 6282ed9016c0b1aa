"""Attention pooling in torch, batch-first: the vectors pooled are (B, ℓ, d_z), the result (B, d_z).

Parameters keep the spec's names and orientation (:mod:`formal.algorithms.pooling`): ``q`` (d_z) under the
dot score; ``W`` (d_a×d_z, acting on a vector as ``W z``), ``b`` and ``u_w`` (d_a) under Yang et al.'s mlp
score; none under mean (average pooling).
"""

from __future__ import annotations

from formal.algorithms.pooling import POOLING_SCORES
from formal.errors import ConfigError, shown

from .. import require_torch
from .convert import single
from .runners import runs

__all__ = ["attention_pooling", "run_attention_pooling"]

torch = require_torch()
F = torch.nn.functional

_PARAMS = {"dot": ("q",), "mlp": ("W", "b", "u_w"), "mean": ()}


def attention_pooling(Z, *, score="dot", q=None, W=None, b=None, u_w=None):
    """``Σ_t α_t z_t`` with ``α = softmax_t(z_tᵀ q)`` (``"dot"``), ``softmax_t(tanh(W z_t + b)ᵀ u_w)``
    (``"mlp"``, Yang et al. 2016, eqs. 5–7) or ``α_t = 1/ℓ`` (``"mean"``): Z (B, ℓ, d_z) → (B, d_z)."""
    if not isinstance(score, str) or score not in POOLING_SCORES:
        raise ConfigError(f"unknown pooling score {shown(score)}; known: {', '.join(POOLING_SCORES)}")
    given = {"q": q, "W": W, "b": b, "u_w": u_w}
    missing = [n for n in _PARAMS[score] if given[n] is None]
    if missing:
        raise ConfigError(f"score = {score!r} needs the parameter {missing[0]}")
    extra = [n for n, v in given.items() if v is not None and n not in _PARAMS[score]]
    if extra:
        raise ConfigError(f"score = {score!r} takes no parameter {extra[0]}")
    if score == "mean":
        return Z.mean(dim=1)                                               # no product: FlopCounterMode counts 0
    if score == "dot":
        e = (Z @ q[:, None])[..., 0]                                       # (B, ℓ); products FlopCounterMode counts
    else:
        e = (torch.tanh(F.linear(Z, W, b)) @ u_w[:, None])[..., 0]         # (B, ℓ, d_a)(d_a, 1) → (B, ℓ)
    alpha = torch.softmax(e, dim=-1)                                       # (B, ℓ)
    return (alpha[:, None, :] @ Z)[:, 0]                                   # Σ_t α_t z_t, (B, d_z)


@runs("attention_pooling")
def run_attention_pooling(c):
    return single(attention_pooling(c.rows("Z"), score=c.options["score"], **c.weights("q", "W", "b", "u_w")))
