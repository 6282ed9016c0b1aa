"""The planted pieces longer than a lambda: each replaces one seam of a correct implementation with the
version a buggy implementation has.  :mod:`.catalogue` says where each one goes."""

from __future__ import annotations

import math

import numpy as np

from .attention import attend, fill, weights
from .embedding import sinusoids
from .inference import draw
from .numerics import causal, softmax

__all__ = ["overwriting_pre_ln", "whole_tensor_norm", "einsum_ignoring_weights", "transposed_scores",
           "softmax_without_empty_rows", "large_negative_fill", "mask_after_softmax", "chunked_attention",
           "mask_right_only_at_ell_max", "rows_layout_cache_mask", "evicting_cache", "power_tau_sample",
           "sample_whatever_decoding", "zero_indexed_table", "sin_cos_swapped", "spread_eps_outside",
           "spread_unbiased"]


def overwriting_pre_ln(X, f, norm):
    """Pre-LN that overwrites the residual stream: ``X ← LN(X); X ← X + f(X)``."""
    X = norm(X)
    return X + f(X)


def whole_tensor_norm(X, gamma, beta=None, *, norm="layer", eps=0.0):
    """Layer norm with one mean and one variance over the whole d_e×ℓ tensor, not per column."""
    E = X - X.mean() if norm == "layer" else X
    out = E / np.sqrt((E**2).mean() + eps) * gamma[:, None]
    return out if beta is None or norm == "rms" else out + beta[:, None]


def einsum_ignoring_weights(Q, K, V, mask, *, empty="zero"):
    """The weights are computed, then the einsum sums the values with ones instead of them."""
    A = weights(fill(K.T @ Q, mask) / math.sqrt(len(Q)), empty)
    return np.einsum("dk,kq->dq", V, np.ones_like(A))


def transposed_scores(Q, K, V, mask, *, empty="zero"):
    """Scores as QᵀK (ℓ_x×ℓ_z) with the softmax still over axis 0: it normalises over queries, not keys."""
    S = fill(Q.T @ K, mask.T) / math.sqrt(len(Q))                              # ℓ_x×ℓ_z
    return V @ weights(S, empty).T


def softmax_without_empty_rows(S, empty="zero"):
    """A plain softmax: a query with no admitted key gets exp(−∞)/0 = NaN."""
    return softmax(S)


def large_negative_fill(S, mask):
    """Hidden scores become −10⁹, not −∞: a query with no admitted key averages every value."""
    return np.where(mask == 1, S, -1e9)


def mask_after_softmax(Q, K, V, mask, *, empty="zero"):
    """The softmax runs over every key and hidden weights are zeroed afterwards, so columns no longer sum to 1."""
    return V @ (softmax(K.T @ Q / math.sqrt(len(Q))) * mask)


def chunked_attention(Q, K, V, mask, *, empty="zero", size=8):
    """Queries in chunks of 8, each attending only to the keys of its own chunk: earlier keys are forgotten."""
    chunks = [attend(Q[:, c:c + size], K[:, c:c + size], V[:, c:c + size], mask[c:c + size, c:c + size],
                     empty=empty) for c in range(0, Q.shape[1], size)]
    return np.concatenate(chunks, axis=1)


def mask_right_only_at_ell_max(ell, ell_max):
    """The top-left ℓ×ℓ block of an ℓ_max×ℓ_max causal mask, aligned bottom-right: causal only at ℓ = ℓ_max."""
    return causal(ell, ell, shift=ell_max - ell)


def rows_layout_cache_mask(ell_z, ell_x):
    """The cached decoder's mask built query × key (rows layout) and reshaped, not transposed, to ℓ_z×ℓ_x:
    right only when a single token is new."""
    return np.tril(np.ones((ell_x, ell_z)), k=ell_z - ell_x).reshape(ell_z, ell_x)


def evicting_cache(cache, new, ell_max):
    """A cache of ℓ_max − 1 columns: it drops the oldest once the context is full."""
    return np.concatenate([cache, new], axis=-1)[..., -(ell_max - 1):]


def power_tau_sample(p, *, tau, decoding, rng):
    """Samples from p^τ, not p^(1/τ): a high temperature sharpens instead of flattening."""
    q = p**tau
    return int(rng.choice(len(q), p=q / q.sum()))


def sample_whatever_decoding(p, *, tau, decoding, rng):
    """Samples even under decoding=greedy, from a generator seeded 0 (a greedy run is given no seed)."""
    return draw(p, tau=tau, decoding="sample", rng=np.random.default_rng(0))


def zero_indexed_table(d_e, ell_max):
    """A sinusoidal table of base ℓ_max with 0-indexed t and i: the paper's formula read 0-indexed, or
    Vaswani et al.'s with ℓ_max for 10000."""
    return sinusoids(d_e, ell_max, base=ell_max, one_indexed=False)


def sin_cos_swapped(table):
    """A sinusoidal table builder with the cosines in the even rows and the sines in the odd ones."""
    return lambda d_e, ell_max: table(d_e, ell_max)[np.arange(d_e) ^ 1]


def spread_eps_outside(E, eps):
    """``√v + ε`` for ``√(v + ε)``."""
    return np.sqrt((E**2).mean(axis=0)) + eps


def spread_unbiased(E, eps):
    """``√(Σ_i E[i]²/(d_e − 1) + ε)``: the unbiased variance."""
    return np.sqrt((E**2).sum(axis=0) / (len(E) - 1) + eps)
