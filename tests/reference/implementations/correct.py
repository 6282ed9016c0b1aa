"""Correct implementations written as a user would write them, for `formal-transformers conform`.

numpy, the paper's column layout, the spec's default variants.  The keyword-only ``_``-arguments are the
seams where tests/reference/implementations/planted.py plants the bugs public implementations have had.
"""

import math

import numpy as np


def softmax(S, axis=0):
    S = S - np.max(S, axis=axis, keepdims=True)
    E = np.exp(S)
    return E / E.sum(axis=axis, keepdims=True)


def gelu(a):
    return 0.5 * a * (1.0 + np.vectorize(math.erf)(a / math.sqrt(2.0)))


def relu(a):
    return np.maximum(a, 0.0)


def layer_norm_columns(X, gamma, beta, *, eps=0.0, ddof=0):
    """Algorithm 6 on every column."""
    m = X.mean(axis=0, keepdims=True)
    v = ((X - m) ** 2).sum(axis=0, keepdims=True) / (X.shape[0] - ddof)
    return (X - m) / np.sqrt(v + eps) * gamma[:, None] + beta[:, None]


def mask_scores(S, mask):
    return np.where(mask == 1, S, -np.inf)


def attend(Q, K, V, mask, *, _scale=math.sqrt, _mask=mask_scores, _mix=None):
    """Algorithm 4, lines 4–6: V softmax(mask(KᵀQ)/√d_attn); a query with no admitted key gives zeros."""
    S = _mask(K.T @ Q, mask) / _scale(Q.shape[0])
    empty = ~np.isfinite(S).any(axis=0)
    A = softmax(np.where(empty, 0.0, S))
    A[:, empty] = 0.0
    return _mix(V, A) if _mix else V @ A


def attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, Z=None, *, _attend=attend):
    Z = X if Z is None else Z
    Q, K, V = W_q @ X + b_q[:, None], W_k @ Z + b_k[:, None], W_v @ Z + b_v[:, None]
    return _attend(Q, K, V, mask)


def mhattention(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, Z=None, *, _attend=attend, _stack=np.concatenate):
    heads = [attention(X, mask, W_q[h], W_k[h], W_v[h], b_q[h], b_k[h], b_v[h], Z, _attend=_attend)
             for h in range(W_q.shape[0])]
    return W_o @ _stack(heads) + b_o[:, None]


def layer_norm(e, gamma, beta):
    return layer_norm_columns(e[:, None], gamma, beta)[:, 0]


def unembedding(e, W_u):
    return softmax(W_u @ e)


def causal(ell, ell_max):
    t = np.arange(ell)
    return (t[:, None] <= t[None, :]).astype(float)                    # Mask[t_z, t_x] = [[t_z ≤ t_x]]


SHARED = ("W_e", "W_p", "W_u", "gamma", "beta")                       # no layer axis


def _layer(p, l, prefix=""):
    return {k[len(prefix):]: v[l] for k, v in p.items() if k.startswith(prefix) and k not in SHARED}


def _mha(p, X, Z, mask, _attend=attend):
    return mhattention(X, mask, p["W_q"], p["W_k"], p["W_v"], p["W_o"], p["b_q"], p["b_k"], p["b_v"], p["b_o"], Z,
                       _attend=_attend)


def _mlp(p, X, act):
    return p["W_mlp2"] @ act(p["W_mlp1"] @ X + p["b_mlp1"][:, None]) + p["b_mlp2"][:, None]


def pre_ln_block(X, f, gamma, beta, *, _norm=layer_norm_columns):
    return X + f(_norm(X, gamma, beta))                                 # the residual stream is never replaced


def dtransformer(x, params, *, _mask=causal, _norm=layer_norm_columns, _block=pre_ln_block, _softmax_axis=0,
                 _attend=attend, _positions=0):
    """Algorithm 10: pre-LN, GELU, causal, learned positions, untied unembedding, eps = 0."""
    p, ell = params, len(x)
    X = p["W_e"][:, x] + p["W_p"][:, _positions:_positions + ell]
    mask = _mask(ell, p["W_p"].shape[1])
    for l in range(p["W_q"].shape[0]):
        q = _layer(p, l)
        X = _block(X, lambda h: _mha(q, h, h, mask, _attend), q["gamma1"], q["beta1"], _norm=_norm)
        X = _block(X, lambda h: _mlp(q, h, gelu), q["gamma2"], q["beta2"], _norm=_norm)
    X = _norm(X, p["gamma"], p["beta"])
    return softmax(p["W_u"] @ X, axis=_softmax_axis)


def edtransformer(z, x, params, *, _cross="cross_"):
    """Algorithm 8: post-LN, ReLU; self- and cross-attention with their own weights."""
    p = params
    Z = p["W_e"][:, z] + p["W_p"][:, :len(z)]
    for l in range(p["enc_W_q"].shape[0]):
        e = _layer(p, l, "enc_")
        Z = layer_norm_columns(Z + _mha(e, Z, Z, np.ones((len(z), len(z)))), p["gamma1"][l], p["beta1"][l])
        Z = layer_norm_columns(Z + _mlp(e, Z, relu), p["gamma2"][l], p["beta2"][l])
    X = p["W_e"][:, x] + p["W_p"][:, :len(x)]
    mask = causal(len(x), None)
    for l in range(p["dec_W_q"].shape[0]):
        d, c = _layer(p, l, "dec_"), _layer(p, l, _cross)
        X = layer_norm_columns(X + _mha(d, X, X, mask), p["gamma3"][l], p["beta3"][l])
        X = layer_norm_columns(X + _mha(c, X, Z, np.ones((len(z), len(x)))), p["gamma4"][l], p["beta4"][l])
        X = layer_norm_columns(X + _mlp(d, X, relu), p["gamma5"][l], p["beta5"][l])
    return softmax(p["W_u"] @ X)



def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def lstm_cell(x, h, c, W_xi, W_hi, b_i, W_xf, W_hf, b_f, W_xg, W_hg, b_g, W_xo, W_ho, b_o, *, _order="ifgo"):
    """An LSTM step with the forget gate (Gers et al. 2000), one bias per gate: (h, c) ↦ (h', c')."""
    W = {"i": (W_xi, W_hi, b_i), "f": (W_xf, W_hf, b_f), "g": (W_xg, W_hg, b_g), "o": (W_xo, W_ho, b_o)}
    pre = {name: W[source][0] @ x + W[source][1] @ h + W[source][2] for name, source in zip("ifgo", _order)}
    i, f, g, o = sigmoid(pre["i"]), sigmoid(pre["f"]), np.tanh(pre["g"]), sigmoid(pre["o"])
    c = f * c + i * g
    return o * np.tanh(c), c


def lstm_layer(X, params, *, _cell=lstm_cell, _reverse=False):
    """A forward LSTM layer from a zero state; params as `show rnn_layer --params` names them."""
    d_h = params["W_hi"].shape[0]
    h, c = np.zeros(d_h), np.zeros(d_h)
    H = np.zeros((d_h, X.shape[1]))
    order = range(X.shape[1] - 1, -1, -1) if _reverse else range(X.shape[1])
    for t in order:
        h, c = _cell(X[:, t], h, c, **params)
        H[:, t] = h
    return H
