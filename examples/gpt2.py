"""A decoder written as GPT-2's code writes it, for `formal-transformers conform --identify`: layer norms with
eps = 1e-5 (torch.nn.LayerNorm's default), GELU in its tanh approximation (GPT-2's `gelu_new`) and the unembedding
tied to the token embedding (logits = W_eᵀ X).  Nothing here says which variant of the spec that is; the search
finds it:

    formal-transformers conform examples/gpt2.py:gpt2 --algorithm dtransformer --identify

It takes the token ids x (0-based ints, length ℓ) and the parameters as one dict named as `formal-transformers
show dtransformer --params` lists them (per-layer parameters stacked on a leading layer axis), and returns P
(N_V×ℓ), column t the distribution of token t + 1.
"""

from math import pi, sqrt

import numpy as np

EPS = 1e-5


def softmax(S):
    E = np.exp(S - S.max(axis=0))
    return E / E.sum(axis=0)


def layer_norm(X, gamma, beta):
    m = X.mean(axis=0)
    v = ((X - m) ** 2).mean(axis=0)
    return (X - m) / np.sqrt(v + EPS) * gamma[:, None] + beta[:, None]


def gelu_new(A):
    return 0.5 * A * (1.0 + np.tanh(sqrt(2.0 / pi) * (A + 0.044715 * A**3)))


def attention(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o):
    heads = []
    for h in range(W_q.shape[0]):
        Q, K, V = W_q[h] @ X + b_q[h][:, None], W_k[h] @ X + b_k[h][:, None], W_v[h] @ X + b_v[h][:, None]
        S = np.where(mask == 1, K.T @ Q / np.sqrt(Q.shape[0]), -np.inf)
        heads.append(V @ softmax(S))
    return W_o @ np.concatenate(heads) + b_o[:, None]


def gpt2(x, params):
    p, ell = params, len(x)
    X = p["W_e"][:, x] + p["W_p"][:, :ell]             # d_e×ℓ
    t = np.arange(ell)
    causal = (t[:, None] <= t[None, :]).astype(float)  # Mask[t_z, t_x] = [[t_z ≤ t_x]]
    for l in range(p["W_q"].shape[0]):
        X_ = layer_norm(X, p["gamma1"][l], p["beta1"][l])
        X = X + attention(X_, causal, *(p[n][l] for n in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o")))
        X_ = layer_norm(X, p["gamma2"][l], p["beta2"][l])
        X = X + p["W_mlp2"][l] @ gelu_new(p["W_mlp1"][l] @ X_ + p["b_mlp1"][l][:, None]) + p["b_mlp2"][l][:, None]
    X = layer_norm(X, p["gamma"], p["beta"])
    return softmax(p["W_e"].T @ X)                     # tied: the token embedding unembeds
