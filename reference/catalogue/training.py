"""The losses of Algorithms 11–13 (the training algorithms' gradient steps minimise them), and their planted
bugs.

Algorithm 12's masking is random: it follows the spec's procedure (:func:`draw_mask`) so that a seed masks
the spec's tokens; an implementation drawing its mask otherwise cannot be checked by conform.
"""

from __future__ import annotations

import numpy as np

from .architectures import dtransformer, edtransformer, etransformer
from .entry import Implementation, makers
from .numerics import special_tokens

__all__ = ["next_token_nll", "draw_mask", "masked_nll", "dloss", "edloss", "eloss", "IMPLEMENTATIONS", "MUTANTS"]


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


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("dloss", dloss,
                   seconds={"quick": (1.5, 0.32), "thorough": (6.5, 1.53)}),
    Implementation("eloss", eloss,
                   seconds={"quick": (1.8, 0.36), "thorough": (8.8, 1.87)}),
    Implementation("edloss", edloss,
                   seconds={"quick": (3.3, 0.72), "thorough": (15.3, 3.58)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)

MUTANTS = (
    _seam("dloss_off_by_one", "dloss", {},
          "scores column t against token t instead of t + 1", "review",
          _nll=lambda P, x: -np.sum(np.log(P[x, np.arange(len(x))]))),
    _seam("dloss_mean", "dloss", {},
          "averages the ℓ − 1 terms instead of summing them", "review",
          _nll=lambda P, x: next_token_nll(P, x) / (len(x) - 1)),
    _seam("dloss_tied_not_transposed", "dloss", {"tied": True},
          "ties W_u to W_e reshaped to N_V×d_e instead of transposed", "variant option tied",
          _tie=lambda W_e: W_e.reshape(W_e.shape[::-1])),
    _seam("edloss_rolled_targets", "edloss", {},
          "takes the targets as np.roll(x, −1): the last column is scored against x[0]", "review",
          _nll=lambda P, x: -np.sum(np.log(P[np.roll(x, -1), np.arange(len(x))]))),
    _seam("edloss_without_encoder_norm", "edloss", {"norm_position": "pre"},
          "the decoder reads the pre-LN encoder's output without its final norm", "variant option norm_position",
          _encoder_norm=False),
    _seam("eloss_all_positions", "eloss", {},
          "sums the loss over every position instead of the masked ones", "review",
          _nll=lambda P, x, m: masked_nll(P, x, np.ones_like(m))),
    _seam("eloss_mask_token_one_indexed", "eloss", {},
          "replaces masked tokens by id N_V − 2 (the paper's 1-indexed mask_token, which is bos)", "review",
          _replace=lambda x, m, mask_token: np.where(m == 1, mask_token + 1, x)),
    _seam("eloss_masks_with_1_minus_p", "eloss", {},
          "masks a token with probability 1 − p_mask", "review",
          _draw=lambda rng, x, p_mask: (rng.random(len(x)) >= p_mask).astype(float)),
    _variant("eloss_ignores_token_types", "eloss", {"token_types": True}, {"token_types": False},
             "ignores the token types s (no W_s[:, s[t]])"),
    _variant("eloss_fixed_p_mask", "eloss", {"p_mask": 0.5}, {"p_mask": 0.15},
             "masks each token with BERT's hard-coded probability 0.15 under p_mask=0.5"),
)
