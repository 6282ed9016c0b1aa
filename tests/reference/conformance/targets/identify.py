"""Implementations written as real code writes them, whose variant ``conform --identify`` must find: a GRU cell
as ``torch.nn.GRUCell`` computes it, a layer norm as ``torch.nn.LayerNorm`` does (eps = 1e-5), and GPT-2's decoder
(``examples/gpt2.py``) with a planted bug."""

import numpy as np


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def gru_cell(x, h, W_xr, W_hr, b_xr, b_hr, W_xz, W_hz, b_xz, b_hz, W_xn, W_hn, b_xn, b_hn):
    """torch.nn.GRUCell: two biases per gate, the reset gate applied after the recurrent product,
    h' = (1 − z) ⊙ n + z ⊙ h."""
    r = _sigmoid(W_xr @ x + b_xr + W_hr @ h + b_hr)
    z = _sigmoid(W_xz @ x + b_xz + W_hz @ h + b_hz)
    n = np.tanh(W_xn @ x + b_xn + r * (W_hn @ h + b_hn))
    return (1.0 - z) * n + z * h


def layer_norm(e, gamma, beta):
    """torch.nn.LayerNorm over the features of a token, eps = 1e-5 (its default)."""
    return (e - e.mean(axis=-1)) / np.sqrt(e.var(axis=-1) + 1e-5) * gamma + beta


def _softmax(S):
    E = np.exp(S - S.max(axis=0))
    return E / E.sum(axis=0)


def _norm(X, gamma, beta):
    return (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0) + 1e-5) * gamma[:, None] + beta[:, None]


def _gelu_new(A):
    return 0.5 * A * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (A + 0.044715 * A**3)))


def gpt2_unscaled(x, params):
    """GPT-2 (``examples/gpt2.py``) whose attention forgets the 1/√d_attn of its scores: a planted bug, so
    that no variant conforms."""
    p, ell = params, len(x)
    X = p["W_e"][:, x] + p["W_p"][:, :ell]
    t = np.arange(ell)
    causal = t[:, None] <= t[None, :]
    for l in range(p["W_q"].shape[0]):
        X_ = _norm(X, p["gamma1"][l], p["beta1"][l])
        heads = []
        for h in range(p["W_q"].shape[1]):
            Q = p["W_q"][l, h] @ X_ + p["b_q"][l, h][:, None]
            K = p["W_k"][l, h] @ X_ + p["b_k"][l, h][:, None]
            V = p["W_v"][l, h] @ X_ + p["b_v"][l, h][:, None]
            heads.append(V @ _softmax(np.where(causal, K.T @ Q, -np.inf)))     # the bug: no / √d_attn
        X = X + p["W_o"][l] @ np.concatenate(heads) + p["b_o"][l][:, None]
        X_ = _norm(X, p["gamma2"][l], p["beta2"][l])
        X = X + p["W_mlp2"][l] @ _gelu_new(p["W_mlp1"][l] @ X_ + p["b_mlp1"][l][:, None]) + p["b_mlp2"][l][:, None]
    return _softmax(p["W_e"].T @ _norm(X, p["gamma"], p["beta"]))
