"""Algorithms 3–5: single-query, masked and multi-head attention; grouped-query heads; a key/value cache.

Each factory takes the variant's options and returns the function conform calls; the keyword-only
``_``-arguments are the seams the catalogue plants bugs through.  Without biases (``bias=False``) every
bias is zero, whatever is passed.

Algorithms 3 and 4 take the spec's ``score``: ``scaled_dot`` (the paper's ``KᵀQ/√d_attn``, the code path
these functions always had), ``dot`` (``KᵀQ``) or ``additive`` (``v_aᵀ φ(q + k)``, Bahdanau's, with φ tanh or
a leaky ReLU of negative slope 0.2 under ``activation="leaky_relu"``); only the scaled dot product is scaled.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from .numerics import softmax

__all__ = ["fill", "weights", "attend", "leaky_relu", "SCORE_ACTIVATIONS", "additive", "scorer", "group",
           "single_query_attention", "attention", "mhattention", "kv_mhattention"]


def fill(S, mask):
    """Algorithm 4, line 5: a score the mask hides becomes −∞."""
    return np.where(mask == 1, S, -np.inf)


def weights(S, empty="zero"):
    """Softmax of each column of scores; a column with no admitted key (all −∞) is zeros, or NaN under
    ``empty="nan"`` (design decision 7)."""
    blank = np.all(S == -np.inf, axis=0)                        # (ℓ_x,): queries with no admitted key
    A = softmax(np.where(blank, 0.0, S))
    A[:, blank] = np.nan if empty == "nan" else 0.0
    return A


def attend(Q, K, V, mask, *, empty="zero", score=None, bias=None, _scale=math.sqrt, _fill=fill, _weights=weights,
           _mix=np.matmul):
    """Algorithm 4, lines 4–6: ``Ṽ = V·softmax(mask(KᵀQ)/√d_attn)``; Q d_attn×ℓ_x, K d_attn×ℓ_z, V d×ℓ_z.
    ``score`` (Q, K ↦ ℓ_z×ℓ_x) replaces the scaled dot product by another score, which is not scaled; a score
    ``bias`` B (ℓ_z×ℓ_x) is added to the scaled scores before the mask."""
    if bias is not None:
        S = (K.T @ Q / _scale(Q.shape[0]) if score is None else score(Q, K)) + bias
        return _mix(V, _weights(_fill(S, mask), empty))
    if score is None:
        S = _fill(K.T @ Q, mask) / _scale(Q.shape[0])           # ℓ_z×ℓ_x
    else:
        S = _fill(score(Q, K), mask)
    return _mix(V, _weights(S, empty))                          # d×ℓ_x


def leaky_relu(a, slope=0.2):
    """``max(a, slope·a)``: GAT's leaky ReLU (negative slope 0.2)."""
    return np.where(a > 0, a, slope * a)


#: The additive score's nonlinearity φ by the spec's option name.
SCORE_ACTIVATIONS = {"tanh": np.tanh, "leaky_relu": leaky_relu}


def additive(Q, K, v_a, phi):
    """Bahdanau's score ``S[t_z, t_x] = v_aᵀ φ(Q[:, t_x] + K[:, t_z])`` (ℓ_z×ℓ_x); one query q (a vector):
    the ℓ_z-vector ``[v_aᵀ φ(q + K[:, t_z])]_{t_z}``."""
    if Q.ndim == 1:
        return v_a @ phi(Q[:, None] + K)                                       # ℓ_z
    return np.einsum("d,dzx->zx", v_a, phi(Q[:, None, :] + K[:, :, None]))     # ℓ_z×ℓ_x


def scorer(score, activation, *, _additive=additive, _slope=0.2):
    """``(Q, K, v_a) ↦`` the unscaled scores of ``score`` (``dot``, ``additive``); None for ``scaled_dot``,
    which the functions compute as they always did."""
    if score == "scaled_dot":
        return None
    if score == "dot":
        return lambda Q, K, v_a: K.T @ Q
    phi = partial(leaky_relu, slope=_slope) if activation == "leaky_relu" else SCORE_ACTIVATIONS[activation]
    return lambda Q, K, v_a: _additive(Q, K, v_a, phi)


def _bias(b, rows, use: bool):
    """``b``, or zeros where the variant has none."""
    return b if use and b is not None else np.zeros(rows)


def single_query_attention(*, bias=True, score="scaled_dot", activation="tanh", _scale=math.sqrt,
                           _additive=additive, _slope=0.2, _softmax=softmax):
    """Algorithm 3: one query ``e`` attends over the context columns ``e_t``."""
    scores = scorer(score, activation, _additive=_additive, _slope=_slope)

    def single_query_attention(e, e_t, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None, v_a=None):
        q = W_q @ e + _bias(b_q, len(W_q), bias)                               # d_attn
        K = W_k @ e_t + _bias(b_k, len(W_k), bias)[:, None]                    # d_attn×T
        V = W_v @ e_t + _bias(b_v, len(W_v), bias)[:, None]                    # d_out×T
        if scores is None:
            alpha = softmax(K.T @ q / _scale(len(q)))                          # T
        else:
            alpha = _softmax(scores(q, K, v_a))
        return V @ alpha
    return single_query_attention


def attention(*, bias=True, empty="zero", score="scaled_dot", activation="tanh", score_bias=False, _attend=attend,
              _additive=additive, _slope=0.2):
    """Algorithm 4: ``Attention(X, Z | W_qkv, Mask)``; Z defaults to X (design decision 3); with
    ``score_bias``, the input B (ℓ_z×ℓ_x) joins the scaled scores."""
    scores = scorer(score, activation, _additive=_additive, _slope=_slope)

    def attention(X, mask, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None, Z=None, v_a=None, B=None):
        Z = X if Z is None else Z
        Q = W_q @ X + _bias(b_q, len(W_q), bias)[:, None]                      # d_attn×ℓ_x
        K = W_k @ Z + _bias(b_k, len(W_k), bias)[:, None]                      # d_attn×ℓ_z
        V = W_v @ Z + _bias(b_v, len(W_v), bias)[:, None]                      # d_out×ℓ_z
        biased = {"bias": B} if score_bias else {}
        if scores is None:
            return _attend(Q, K, V, mask, empty=empty, **biased)
        return _attend(Q, K, V, mask, empty=empty, score=lambda Q, K: scores(Q, K, v_a), **biased)
    return attention


def group(h: int, H: int, H_kv: int) -> int:
    """The key/value head query head h reads: H/H_kv consecutive query heads share one (GQA)."""
    return h // (H // H_kv)


def _project(W, X, b, use):
    """``W[h] X + b[h] 1ᵀ`` for every head h: W is heads×d×d_in, the result heads×d×ℓ."""
    return np.einsum("hdi,it->hdt", W, X) + _bias(b, W.shape[:2], use)[:, :, None]


def _heads(X, K, V, mask, W_q, b_q, W_o, b_o, *, bias, empty, attend, group, stack, B=None,
           head_bias=lambda B, h: B[h]):
    """Algorithm 5: query head h attends with its key/value head's K and V (and, given a score bias B
    (H×ℓ_z×ℓ_x), its own B^h); ``W_o [Y¹; …; Yᴴ] + b_o 1ᵀ``."""
    H, H_kv = len(W_q), len(K)
    Q = _project(W_q, X, b_q, bias)                                            # H×d_attn×ℓ_x
    Y = [attend(Q[h], K[group(h, H, H_kv)], V[group(h, H, H_kv)], mask, empty=empty,
                **({} if B is None else {"bias": head_bias(B, h)})) for h in range(H)]
    return W_o @ stack(Y) + _bias(b_o, len(W_o), bias)[:, None]                # d_out×ℓ_x


def mhattention(*, bias=True, empty="zero", n_kv_heads=None, score_bias=False, _attend=attend, _group=group,
                _stack=np.concatenate, _context=lambda X, Z: X if Z is None else Z, _head_bias=lambda B, h: B[h]):
    """Algorithm 5 (``n_kv_heads``: grouped-query, W_k and W_v with H_kv heads; the count is read from W_k;
    ``score_bias``: head h adds B[h] to its scaled scores)."""
    heads = partial(_heads, bias=bias, empty=empty, attend=_attend, group=_group, stack=_stack,
                    head_bias=_head_bias)

    def mhattention(X, mask, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None, Z=None, B=None):
        Z = _context(X, Z)
        K, V = _project(W_k, Z, b_k, bias), _project(W_v, Z, b_v, bias)       # H_kv×d×ℓ_z
        return heads(X, K, V, mask, W_q, b_q, W_o, b_o, B=B if score_bias else None)
    return mhattention


def _append(cache, new):
    """The cache grown by the new tokens' columns (heads×d×ℓ_c, heads×d×ℓ_x → heads×d×(ℓ_c + ℓ_x))."""
    return np.concatenate([cache, new], axis=-1)


def kv_mhattention(*, bias=True, n_kv_heads=None, step="extend", _attend=attend, _group=group,
                   _append=_append, _mask=lambda mask: mask):
    """Algorithm 5 over new tokens X with a key/value cache: returns ``(Ṽ, K, V)``, K and V the grown cache.

    ``step="prefill"`` has no cache (K_c, V_c are not passed); ``"extend"`` appends to K_c, V_c.
    """
    heads = partial(_heads, bias=bias, empty="zero", attend=_attend, group=_group, stack=np.concatenate)

    def kv_mhattention(X, mask, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None, K_c=None,
                       V_c=None):
        K, V = _project(W_k, X, b_k, bias), _project(W_v, X, b_v, bias)       # H_kv×d×ℓ_x
        if K_c is not None:
            K, V = _append(K_c, K), _append(V_c, V)
        return heads(X, K, V, _mask(mask), W_q, b_q, W_o, b_o), K, V
    return kv_mhattention
