"""Algorithm 10 of Phuong & Hutter (a GPT: pre-LN, GELU, causal, learned positions), for
`formal-transformers conform`.

    formal-transformers conform examples/gpt.py:dtransformer --algorithm dtransformer

The function takes the token ids x (0-based ints, length ℓ) and the parameters as one dict named as
`formal-transformers show dtransformer --params` lists them: per-layer parameters are stacked on a leading
layer axis (W_q is L×H×d_attn×d_e), and it returns P (N_V×ℓ), column t the distribution of token t + 1.
The spec's layer norm has eps = 0; `-o eps=1e-5` checks an implementation that adds it.
"""

from math import erf, sqrt

import numpy as np

_erf = np.vectorize(erf)


def softmax(S):
    E = np.exp(S - S.max(axis=0))
    return E / E.sum(axis=0)


def layer_norm(X, gamma, beta):
    m = X.mean(axis=0)
    v = ((X - m) ** 2).mean(axis=0)
    return (X - m) / np.sqrt(v) * gamma[:, None] + beta[:, None]


def gelu(A):
    return A * 0.5 * (1.0 + _erf(A / sqrt(2.0)))


def mhattention(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o):
    heads = []
    for h in range(W_q.shape[0]):
        Q, K, V = W_q[h] @ X + b_q[h][:, None], W_k[h] @ X + b_k[h][:, None], W_v[h] @ X + b_v[h][:, None]
        S = np.where(mask == 1, K.T @ Q / np.sqrt(Q.shape[0]), -np.inf)
        heads.append(V @ softmax(S))
    return W_o @ np.concatenate(heads) + b_o[:, None]


def dtransformer(x, params):
    p, ell = params, len(x)
    X = p["W_e"][:, x] + p["W_p"][:, :ell]             # d_e×ℓ
    t = np.arange(ell)
    causal = (t[:, None] <= t[None, :]).astype(float)  # Mask[t_z, t_x] = [[t_z ≤ t_x]]
    for l in range(p["W_q"].shape[0]):
        X_ = layer_norm(X, p["gamma1"][l], p["beta1"][l])
        X = X + mhattention(X_, causal, *(p[n][l] for n in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")))
        X_ = layer_norm(X, p["gamma2"][l], p["beta2"][l])
        X = X + p["W_mlp2"][l] @ gelu(p["W_mlp1"][l] @ X_ + p["b_mlp1"][l][:, None]) + p["b_mlp2"][l][:, None]
    X = layer_norm(X, p["gamma"], p["beta"])
    return softmax(p["W_u"] @ X)                       # N_V×ℓ
