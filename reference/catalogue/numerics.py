"""The numerical pieces every implementation here shares: softmax per column, the MLP activations, masks.

numpy only, the paper's column layout (one column per token), 0-based indices.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["affine", "softmax", "relu", "gelu", "gelu_tanh", "silu", "ACTIVATIONS", "causal", "special_tokens"]


def affine(W, X, b=None):
    """``W X + b 1ᵀ`` (``W X`` without a bias); X a matrix of columns or one column."""
    Y = W @ X
    return Y if b is None else Y + (b[:, None] if Y.ndim == 2 else b)


def softmax(S: np.ndarray, axis: int = 0) -> np.ndarray:
    """Softmax of each column (the paper's convention: column t_x normalised over t_z)."""
    E = np.exp(S - np.max(S, axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)


def relu(a):
    return np.maximum(a, 0.0)


_erf = np.vectorize(math.erf, otypes=[float])


def gelu(a):
    """The exact GELU, x·Φ(x) (the spec's; Hendrycks & Gimpel 2016)."""
    return 0.5 * a * (1.0 + _erf(a / math.sqrt(2.0)))


def gelu_tanh(a):
    """GPT-2's tanh approximation of GELU."""
    return 0.5 * a * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (a + 0.044715 * a**3)))


def silu(a):
    """x·σ(x), SwiGLU's gate (Shazeer 2020)."""
    return a / (1.0 + np.exp(-a))


#: The MLP activations by the spec's option names (SwiGLU is a gate, not one of these: see the stacks).
ACTIVATIONS = {"relu": relu, "gelu": gelu, "gelu-tanh": gelu_tanh}


def causal(ell_z: int, ell_x: int, shift: int = 0) -> np.ndarray:
    """``Mask[t_z, t_x] = [[t_z ≤ t_x + shift]]`` (ℓ_z×ℓ_x): shift 0 is the paper's top-left alignment,
    ``ℓ_z − ℓ_x`` the bottom-right one a key/value cache needs."""
    t_z, t_x = np.arange(ell_z)[:, None], np.arange(ell_x)[None, :]
    return (t_z <= t_x + shift).astype(float)


def special_tokens(n_vocab: int) -> dict:
    """The last three ids of the vocabulary, 0-based: the paper's mask_token = N_V − 2, bos_token = N_V − 1,
    eos_token = N_V are 1-indexed."""
    return {"mask": n_vocab - 3, "bos": n_vocab - 2, "eos": n_vocab - 1}
