"""The 1-D convolution and the graph convolution, as a user would write them from the spec's docstrings.

``conv1d``: ``Y[:, t] = σ(Σ_j W[j] X̄[:, s·t + δ·j] + b)`` with a d_out×d_in weight matrix per offset j,
X̄ the input with p zero columns at both ends (``padding="same"``: δ(k − 1) zeros, the odd one on the right)
and ``ℓ_out = ⌊(ℓ + 2p − δ(k − 1) − 1)/s⌋ + 1`` windows — a loop over the k offsets, each a strided slice.

``graph_conv``: ``Y = σ(W X Â + b 1ᵀ)``, ``A[j, i] = 1`` for an edge j → i (column i: node i's
in-neighbours), Â = A (``sum``), A over the in-degrees (``mean``; 0 for a node without in-neighbours) or
``D^{−1/2}(A ∨ I)D^{−1/2}`` with D the in-degrees of ``A ∨ I`` (``gcn``).

Each factory takes the variant's options and returns the function conform calls; the keyword-only
``_``-arguments are the seams the catalogue plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .numerics import gelu, relu

__all__ = ["CONV_ACTIVATIONS", "pads", "windows", "output", "adjacency", "normalised", "conv1d", "graph_conv"]


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


#: σ by the spec's option name (GELU the exact one).
CONV_ACTIVATIONS = {"none": lambda a: a, "relu": relu, "tanh": np.tanh, "sigmoid": _sigmoid, "gelu": gelu}


def pads(k: int, padding, dilation: int) -> tuple:
    """``(left, right)`` zero columns: p at both ends, or ``"same"``'s δ(k − 1), the odd one on the right."""
    if padding == "same":
        total = dilation * (k - 1)
        return total // 2, total - total // 2
    return padding, padding


def windows(length: int, k: int, stride: int, dilation: int) -> int:
    """How many windows of span δ(k − 1) + 1 start every s columns in a padded input of ``length`` columns."""
    return (length - dilation * (k - 1) - 1) // stride + 1


def output(Y, b, phi):
    """``σ(Y + b 1ᵀ)``."""
    return phi(Y + b[:, None])


def conv1d(*, stride=1, padding=0, dilation=1, bias=True, activation="none", _pads=pads, _windows=windows,
           _weight=lambda W, j: W[j], _output=output, _phi=None):
    """The 1-D convolution: ``X`` d_in×ℓ, ``W`` k×d_out×d_in, ``b`` d_out; returns d_out×ℓ_out."""
    phi = CONV_ACTIVATIONS[activation] if _phi is None else _phi

    def conv1d(X, W, b=None):
        k, d_out, _ = W.shape
        left, right = _pads(k, padding, dilation)
        padded = np.pad(X, ((0, 0), (left, right)))
        n = _windows(padded.shape[1], k, stride, dilation)
        Y = np.zeros((d_out, n))
        for j in range(k):
            start = dilation * j                               # offset j of window t reads s·t + δ·j
            Y += _weight(W, j) @ padded[:, start:start + stride * (n - 1) + 1:stride]
        return _output(Y, b if bias and b is not None else np.zeros(d_out), phi)
    return conv1d


def adjacency(A, n: int) -> np.ndarray:
    """The adjacency conform passes (a 0/1 array, n×n) as floats."""
    A = np.asarray(A, dtype=np.float64)
    assert A.shape == (n, n), A.shape
    return A


def normalised(A, norm: str) -> np.ndarray:
    """Â: A (sum); each column over its in-degree, 0 for none (mean); ``D^{−1/2}(A ∨ I)D^{−1/2}`` (gcn)."""
    if norm == "sum":
        return A
    if norm == "mean":
        return A / np.maximum(A.sum(axis=0), 1.0)
    looped = np.maximum(A, np.eye(len(A)))                     # a self-loop already there keeps weight 1
    root = np.sqrt(looped.sum(axis=0))                         # in-degrees with the self-loops, ≥ 1
    return looped / root[:, None] / root[None, :]


def graph_conv(*, norm="gcn", bias=True, activation="none", _normalised=normalised, _output=output,
               _aggregate=lambda XW, A_hat, b: XW @ A_hat):
    """The graph convolution: ``X`` d_in×ℓ, ``A`` ℓ×ℓ, ``W`` d_out×d_in, ``b`` d_out; returns d_out×ℓ."""
    phi = CONV_ACTIVATIONS[activation]

    def graph_conv(X, A, W, b=None):
        A_hat = _normalised(adjacency(A, X.shape[1]), norm)
        b = b if bias and b is not None else np.zeros(len(W))
        return _output(_aggregate(W @ X, A_hat, b), b, phi)
    return graph_conv
