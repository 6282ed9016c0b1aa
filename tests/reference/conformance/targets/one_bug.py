"""Implementations of one variant each, with one bug planted that has nothing to do with the option that
identifies the variant — for ``conform --identify``'s nearest variants (``test_identify_ranking.py``).  Each bug
shows on some examples and not on others (a size, a head count, a cross-attention), so the true variant is the one
that agrees with the function everywhere the bug does not show; each option that identifies the variant shows on
almost every example.  Arrays arrive in the paper's layout, one column per token.

- :func:`additive_relu_attention`: Algorithm 4 with the additive score and ReLU (``score='additive',
  activation='relu'``); the bug: the values are made from X, not Z (cross-attention only);
- :func:`t5_rms_norm`: RMSNorm with T5's eps = 1e-6 (``norm='rms', eps=1e-6``); the bug: the mean square is
  taken over whole blocks of 4 features, the tail dropped (d_e not a multiple of 4);
- :func:`gqa_attention`: multi-head attention, two key/value heads (``n_kv_heads=2``); the bug: the scores are
  scaled by 1/√d_mid, the value width, not 1/√d_attn (d_mid ≠ d_attn);
- :func:`gat_torch_slope`: a GAT layer with torch's leaky-ReLU slope 0.01 (``slope=0.01``); the bug: the heads are
  concatenated feature by feature, interleaved (H > 1);
- :func:`gpt2_exact_gelu`: GPT-2 (``examples/gpt2.py``: ``eps=1e-5, tied=True``) with the exact, erf GELU
  (``activation='gelu'``, the default), as BERT's; the bug: the heads are concatenated interleaved before W_o
  (H > 1);
- :func:`torch_gru_cell`: ``torch.nn.GRUCell`` (``bias='double', reset='after'``); the bug: the update gate's
  recurrent weights are transposed, W_hzᵀ h (as torch's (out, in) weight read as (in, out)) — the same where
  d_h = 1.

And real code with a real bug: :func:`pygat_sparse`, pyGAT's sparse GAT layer (``bias=False``, slope 0.2), whose
softmax takes exp(−LeakyReLU(·)): wherever the slope shows, the sign shows too, so no example tells slope 0.2 from
0.01 — the two match as many examples and entries, and the report says so.
"""

from math import erf, sqrt

import numpy as np

EPS = 1e-5


def _softmax(S):
    E = np.exp(S - S.max(axis=0))
    return E / E.sum(axis=0)


def _masked_softmax(S, mask):
    """softmax over the admitted rows of each column; a column that admits none is 0 (the spec's default)."""
    S = np.where(mask > 0, S, -np.inf)
    top = S.max(axis=0)
    top = np.where(np.isfinite(top), top, 0.0)
    E = np.where(mask > 0, np.exp(S - top), 0.0)
    total = E.sum(axis=0)
    return np.divide(E, total, out=np.zeros_like(E), where=total > 0)


# ------------------------------------------------------------------------------------------ Algorithm 4
def additive_relu_attention(X, mask, W_q, W_k, W_v, b_q, b_k, b_v, v_a, Z=None):
    Z = X if Z is None else Z
    Q, K = W_q @ X + b_q[:, None], W_k @ Z + b_k[:, None]
    V = W_v @ X + b_v[:, None]                             # the bug: X, not Z (the same in self-attention)
    S = np.einsum("a,azx->zx", v_a, np.maximum(Q[:, None, :] + K[:, :, None], 0.0))
    return V @ _masked_softmax(S, mask)


# ------------------------------------------------------------------------------------------ Algorithm 6
def t5_rms_norm(e, gamma):
    d = (len(e) // 4) * 4                                  # the bug: blocks of 4, the tail dropped
    v = np.sum(e[:d] ** 2) / len(e)
    return e / np.sqrt(v + 1e-6) * gamma


# ------------------------------------------------------------------------------------------ Algorithm 5
def gqa_attention(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, Z=None):
    Z = X if Z is None else Z
    H, group = W_q.shape[0], W_q.shape[0] // 2             # two key/value heads, each shared by H/2 queries
    heads = []
    for h in range(H):
        g = h // group
        Q, K, V = W_q[h] @ X + b_q[h][:, None], W_k[g] @ Z + b_k[g][:, None], W_v[g] @ Z + b_v[g][:, None]
        heads.append(V @ _masked_softmax(K.T @ Q / np.sqrt(V.shape[0]), mask))   # the bug: √d_mid, not √d_attn
    return W_o @ np.concatenate(heads) + b_o[:, None]


# ------------------------------------------------------------------------------------------ GAT
def gat_torch_slope(X, A, W, a_l, a_r, b):
    n = X.shape[1]
    neighbours = np.maximum(A, np.eye(n))                  # A ∨ I: self-loops
    heads = []
    for h in range(W.shape[0]):
        Z = W[h] @ X
        s = (a_l[h] @ Z)[None, :] + (a_r[h] @ Z)[:, None]  # S[j, i] = a_lᵀ z_i + a_rᵀ z_j
        heads.append(Z @ _masked_softmax(np.where(s > 0, s, 0.01 * s), neighbours))
    Y = np.stack(heads, axis=1).reshape(-1, n)             # the bug: rows interleaved head by head
    return Y + b[:, None]


# ------------------------------------------------------------------------------------------ GPT-2, exact GELU
def _layer_norm(X, gamma, beta):
    m = X.mean(axis=0)
    v = ((X - m) ** 2).mean(axis=0)
    return (X - m) / np.sqrt(v + EPS) * gamma[:, None] + beta[:, None]


_erf = np.vectorize(erf)


def _gelu(A):
    return 0.5 * A * (1.0 + _erf(A / sqrt(2.0)))


def _gpt2_attention(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o):
    heads = []
    for h in range(W_q.shape[0]):
        Q, K, V = W_q[h] @ X + b_q[h][:, None], W_k[h] @ X + b_k[h][:, None], W_v[h] @ X + b_v[h][:, None]
        S = np.where(mask == 1, K.T @ Q / np.sqrt(Q.shape[0]), -np.inf)
        heads.append(V @ _softmax(S))
    return W_o @ np.stack(heads, axis=1).reshape(-1, X.shape[1]) + b_o[:, None]   # the bug: interleaved


def gpt2_exact_gelu(x, params):
    p, ell = params, len(x)
    X = p["W_e"][:, x] + p["W_p"][:, :ell]
    t = np.arange(ell)
    causal = (t[:, None] <= t[None, :]).astype(float)
    for l in range(p["W_q"].shape[0]):
        X_ = _layer_norm(X, p["gamma1"][l], p["beta1"][l])
        X = X + _gpt2_attention(X_, causal, *(p[n][l] for n in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v",
                                                                  "b_o")))
        X_ = _layer_norm(X, p["gamma2"][l], p["beta2"][l])
        X = X + p["W_mlp2"][l] @ _gelu(p["W_mlp1"][l] @ X_ + p["b_mlp1"][l][:, None]) + p["b_mlp2"][l][:, None]
    return _softmax(p["W_e"].T @ _layer_norm(X, p["gamma"], p["beta"]))


# ------------------------------------------------------------------------------------------ GRU cell
def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def torch_gru_cell(x, h, W_xr, W_hr, b_xr, b_hr, W_xz, W_hz, b_xz, b_hz, W_xn, W_hn, b_xn, b_hn):
    r = _sigmoid(W_xr @ x + b_xr + W_hr @ h + b_hr)
    z = _sigmoid(W_xz @ x + b_xz + W_hz.T @ h + b_hz)      # the bug: W_hzᵀ
    n = np.tanh(W_xn @ x + b_xn + r * (W_hn @ h + b_hn))
    return (1.0 - z) * n + z * h


# ------------------------------------------------------------------------------------------ pyGAT
def pygat_sparse(X, A, W, a_l, a_r):
    """pyGAT's ``SpGraphAttentionLayer`` (Diego999/pyGAT, layers.py) per head, in numpy: scores
    exp(−LeakyReLU(aᵀ[h_i ‖ h_j])) with slope 0.2 — the minus sign is the real code's — summed over the edges of
    the adjacency with self-loops (its data adds them), divided by their row sum; no bias; heads concatenated."""
    n = X.shape[1]
    adj = np.maximum(A, np.eye(n)).T > 0                 # adj[i, j]: the edge j → i
    edge = np.stack(np.nonzero(adj))                     # edge[0] = i (target), edge[1] = j (source)
    heads = []
    for h in range(W.shape[0]):
        Hh = X.T @ W[h].T                                # n × d_out
        a = np.concatenate([a_l[h], a_r[h]])
        s = a @ np.concatenate([Hh[edge[0]], Hh[edge[1]]], axis=1).T
        e = np.exp(-np.where(s > 0, s, 0.2 * s))
        total = np.zeros(n)
        np.add.at(total, edge[0], e)
        out = np.zeros_like(Hh)
        np.add.at(out, edge[0], e[:, None] * Hh[edge[1]])
        heads.append((out / total[:, None]).T)
    return np.concatenate(heads)
