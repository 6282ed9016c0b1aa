"""The losses of Algorithms 11–13 (the training algorithms' gradient steps minimise them).

Algorithm 12's masking is random: it follows the spec's procedure (:func:`draw_mask`) so that a seed masks
the spec's tokens; an implementation drawing its mask otherwise cannot be checked by conform.
"""

from __future__ import annotations

import numpy as np

from .decoder import dtransformer
from .encoder import etransformer
from .encoder_decoder import edtransformer
from .numerics import special_tokens

__all__ = ["next_token_nll", "draw_mask", "masked_nll", "dloss", "edloss", "eloss"]


def next_token_nll(P, x):
    """``−Σ_{t=1}^{ℓ−1} log P[x[t+1], t]``: column t predicts token t + 1."""
    return -np.sum(np.log(P[x[1:], np.arange(len(x) - 1)]))


def draw_mask(rng, x, p_mask):
    """Algorithm 12, line 4: ``m[t] = 1`` with probability p_mask, one uniform draw per token from ``seed``'s
    generator (``numpy.random.default_rng(seed).random(ℓ) < p_mask``)."""
    return (rng.random(len(x)) < p_mask).astype(float)


def masked_nll(P, x, m):
    """``−Σ_{t: m[t]=1} log P[x[t], t]``: only the masked tokens count."""
    return -np.sum(m * np.log(P[x, np.arange(len(x))]))


def dloss(*, _nll=next_token_nll, **options):
    """Algorithm 13, lines 3–4: the loss of one sequence under Algorithm 10."""
    model = dtransformer(**options)

    def dloss(x, params, ell_max=None):
        return _nll(model(x=x, params=params, ell_max=ell_max), x)
    return dloss


def edloss(*, _nll=next_token_nll, **options):
    """Algorithm 11, lines 3–4: the loss of one pair under Algorithm 8."""
    model = edtransformer(**options)

    def edloss(z, x, params, ell_max=None):
        return _nll(model(z=z, x=x, params=params, ell_max=ell_max), x)
    return edloss


def eloss(*, p_mask=0.15, _draw=draw_mask, _replace=lambda x, m, mask_token: np.where(m == 1, mask_token, x),
          _nll=masked_nll, **options):
    """Algorithm 12, lines 3–5: mask tokens at random (from ``seed``), replace them by mask_token (N_V − 3,
    0-based), and sum the loss of predicting them under Algorithm 9."""
    model = etransformer(**options)

    def eloss(x, params, seed, s=None, ell_max=None):
        m = _draw(np.random.default_rng(seed), x, p_mask)
        x_tilde = _replace(x, m, special_tokens(params["W_e"].shape[1])["mask"])
        return _nll(model(x=x_tilde, s=s, params=params, ell_max=ell_max), x, m)
    return eloss
