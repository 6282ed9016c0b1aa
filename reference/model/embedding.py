"""Algorithms 1 and 2 in torch, batch-first: token embedding and positional embedding (learned or sinusoidal)."""

from __future__ import annotations

from formal.errors import ConfigError

from .. import require_torch
from .convert import to_numpy
from .runners import runs

__all__ = ["token_embedding", "sinusoid_table", "positional_embedding", "run_token_embedding",
           "run_positional_embedding"]

torch = require_torch()
F = torch.nn.functional

def token_embedding(v, W_e):
    """Algorithm 1: ``W_e[:, v]`` for every id in ``v`` (any shape) → v.shape + (d_e,)."""
    return W_e.t()[v]


def sinusoid_table(encoding: str, d_e: int, ell_max: int, *, dtype=None, device=None):
    """The fixed table of ``encoding`` as rows, (ℓ_max, d_e) (:ref:`decision-sinusoids`).

    ``sinusoidal-paper`` (Phuong & Hutter, Alg. 2; 1-indexed t, i): row t, entries 2i−1 and 2i are
    ``sin(t / ℓ_max^{2i/d_e})`` and ``cos(…)``; ``sinusoidal-vaswani`` (Vaswani et al. §3.5; 0-indexed):
    ``sin(pos / 10000^{2i/d_e})`` and ``cos(…)``.
    """
    if d_e % 2:
        raise ConfigError(f"d_e = {d_e} must be even (a {encoding} encoding pairs sin and cos rows)")
    one_indexed = encoding == "sinusoidal-paper"
    base = float(ell_max) if one_indexed else 10000.0
    pairs = torch.arange(d_e // 2, dtype=torch.float64, device=device)
    exponent = (2 * (pairs + 1) if one_indexed else 2 * pairs) / d_e
    t = torch.arange(ell_max, dtype=torch.float64, device=device) + (1 if one_indexed else 0)
    angle = t[:, None] * base ** -exponent                              # (ℓ_max, d_e/2)
    table = torch.stack((angle.sin(), angle.cos()), dim=-1).reshape(ell_max, d_e)
    return table.to(dtype or torch.get_default_dtype())


def positional_embedding(t, encoding="learned", *, W_p=None, d_e=None, ell_max=None, dtype=None, device=None):
    """Algorithm 2: row ``t`` of the positional table, learned (``W_p``) or fixed sinusoidal."""
    if encoding == "learned":
        return W_p.t()[t]
    return sinusoid_table(encoding, d_e, ell_max, dtype=dtype, device=device)[t]


@runs("token_embedding")
def run_token_embedding(c):
    return to_numpy(token_embedding(torch.as_tensor(c["v"], device=c.device), c.params["W_e"]))


@runs("positional_embedding")
def run_positional_embedding(c):
    t = torch.as_tensor(c["t"], device=c.device)
    encoding = c.options["encoding"]
    if encoding == "learned":
        return to_numpy(positional_embedding(t, W_p=c.params["W_p"]))
    return to_numpy(positional_embedding(t, encoding, d_e=c["d_e"], ell_max=c["ell_max"], dtype=c.dtype,
                                         device=c.device))
