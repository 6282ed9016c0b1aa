"""Attention as widely copied transformer code writes it, for ``conform`` to load by path: tokens as rows,
hidden scores filled with −10⁹ (``scores.masked_fill(mask == 0, -1e9)``) and a plain softmax — written here
from that code's idiom, not from the catalogue's implementations — and copies with one bug planted."""

import numpy as np


def _softmax_rows(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z, *, fill=-1e9, rows_mask=True):
    Z = X if Z is None else Z
    query, key, value = X.T @ W_q.T + b_q, Z.T @ W_k.T + b_k, Z.T @ W_v.T + b_v   # nn.Linear on ℓ×d rows
    scores = query @ key.T / np.sqrt(query.shape[-1])                              # ℓ_x×ℓ_z
    hide = (mask.T if rows_mask else mask) == 0                                    # the spec's mask is ℓ_z×ℓ_x
    scores = np.where(hide, fill, scores)                                          # masked_fill(mask == 0, fill)
    return (_softmax_rows(scores) @ value).T


def masked_fill_attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """Correct under ``empty=uniform``: a query with no admitted key averages every value."""
    return _attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z)


def masked_fill_attention_mask_unturned(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """A planted bug: the spec's key × query mask used as the rows' query × key one, untransposed."""
    return _attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z, rows_mask=False)


def masked_fill_attention_fill_positive(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None):
    """A planted bug: hidden scores filled with +10⁹, so a query attends to exactly its hidden keys."""
    return _attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z, fill=1e9)
