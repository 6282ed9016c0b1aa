"""The 1-D convolution and the graph convolution, as a user would write them from the spec's docstrings, and
their planted bugs.

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

from .entry import Entry, Implementation, makers
from .numerics import gelu, gelu_tanh, relu

__all__ = ["CONV_ACTIVATIONS", "pads", "windows", "output", "adjacency", "normalised", "conv1d", "graph_conv",
           "IMPLEMENTATIONS", "MUTANTS", "CONTROLS", "EQUIVALENT"]


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


# ------------------------------------------------------------------------------------- planted pieces
def _same_extra_left(k, padding, dilation):
    """'same' with the odd zero of an even kernel on the left."""
    left, right = pads(k, padding, dilation)
    return right, left


def _same_half_kernel(k, padding, dilation):
    """'same' as ⌊k/2⌋ zeros at both ends: one too many for an even kernel, δ ignored."""
    return (k // 2, k // 2) if padding == "same" else (padding, padding)


def _same_without_dilation(k, padding, dilation):
    """'same' padding of k − 1 zeros in all, as if δ = 1."""
    return pads(k, padding, 1)


def _causal_padding(k, padding, dilation):
    """All 2p zeros on the left (a causal convolution's padding) instead of p at each end."""
    left, right = pads(k, padding, dilation)
    return left + right, 0


def _torch_layout(W, j):
    """W read as torch's d_out×d_in×k weight (reshaped, not transposed), offset j its last index."""
    k, d_out, d_in = W.shape
    return W.reshape(d_out, d_in, k)[:, :, j]


def _bias_before_aggregation(XW, A_hat, b):
    """``(W X + b 1ᵀ) Â``: the bias aggregated with the features."""
    return (XW + b[:, None]) @ A_hat


def _gcn_without_self_loops(A, norm):
    """``D^{−1/2} A D^{−1/2}`` with D the in-degrees of A (at least 1): the self-loops never added."""
    root = np.sqrt(np.maximum(A.sum(axis=0), 1.0))
    return A / root[:, None] / root[None, :]


def _gcn_out_degrees(A, norm):
    """``D^{−1/2}(A ∨ I)D^{−1/2}`` with D the out-degrees (row sums) of A ∨ I."""
    looped = np.maximum(A, np.eye(len(A)))
    root = np.sqrt(looped.sum(axis=1))
    return looped / root[:, None] / root[None, :]


def _gcn_plus_identity(A, norm):
    """``A + I``: a self-loop already in A gets weight 2 (and its node one more degree)."""
    looped = A + np.eye(len(A))
    root = np.sqrt(looped.sum(axis=0))
    return looped / root[:, None] / root[None, :]


def _mean_nan_when_isolated(A, norm):
    """Each column over its in-degree, unguarded: a node without in-neighbours gets 0/0 = NaN."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return A / A.sum(axis=0)


def _mean_rows(A, norm):
    """``D⁻¹A`` read in the row layout: each row over its out-degree."""
    return A / np.maximum(A.sum(axis=1, keepdims=True), 1.0)


def _loop_conv1d(*, stride=1, padding=0, dilation=1, bias=True, activation="none"):
    """A second, independent conv1d: every output entry as an explicit sum over offsets and channels."""
    def conv1d_loops(X, W, b=None):
        k, d_out, d_in = W.shape
        left, _ = pads(k, padding, dilation)
        ell = X.shape[1]
        span = dilation * (k - 1) + 1
        total = ell + 2 * padding if padding != "same" else ell + dilation * (k - 1)
        n = (total - span) // stride + 1
        Y = np.zeros((d_out, n))
        for t in range(n):
            for j in range(k):
                at = stride * t + dilation * j - left          # the input column, or padding outside [0, ℓ)
                if 0 <= at < ell:
                    Y[:, t] += W[j] @ X[:, at]
        if bias:
            Y += b[:, None]
        return CONV_ACTIVATIONS[activation](Y)
    return conv1d_loops


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("conv1d", conv1d,
                   seconds={"quick": (0.4, 0.04), "thorough": (0.9, 0.18)}),
    Implementation("graph_conv", graph_conv,
                   seconds={"quick": (0.3, 0.03), "thorough": (0.5, 0.16)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_SAME = {"padding": "same"}

MUTANTS = (
    _seam("conv1d_one_shared_weight", "conv1d", {},
          "applies W[0] at every offset: the lecture notes' single θ shared by all k offsets", "review",
          _weight=lambda W, j: W[0]),
    _seam("conv1d_output_two_short", "conv1d", {},
          "gives T − k − 1 windows (the lecture notes' length) instead of T − k + 1", "review",
          _windows=lambda length, k, stride, dilation: length - dilation * (k - 1) - 2),
    _seam("conv1d_flipped_kernel", "conv1d", {},
          "flips the kernel (W[k − 1 − j] at offset j): a true convolution, not torch's cross-correlation",
          "review", _weight=lambda W, j: W[len(W) - 1 - j]),
    _seam("conv1d_torch_layout", "conv1d", {},
          "reads W as torch's d_out×d_in×k weight, reshaped: wrong for k > 1", "review", _weight=_torch_layout),
    _variant("conv1d_ignores_bias", "conv1d", {}, {"bias": False}, "drops b under the default bias=true"),
    _variant("conv1d_ignores_stride", "conv1d", {"stride": 3}, {"stride": 1}, "slides by 1 under stride=3"),
    _seam("conv1d_stride_drops_last_window", "conv1d", {"stride": 2},
          "counts ⌊(ℓ + 2p − δ(k − 1))/s⌋ windows, not ⌊(ℓ + 2p − δ(k − 1) − 1)/s⌋ + 1: the last one is lost "
          "when the stride-1 count is odd", "variant option stride",
          _windows=lambda length, k, stride, dilation: (length - dilation * (k - 1)) // stride),
    _variant("conv1d_ignores_padding", "conv1d", {"padding": 1}, {"padding": 0}, "pads nothing under padding=1"),
    _seam("conv1d_causal_padding", "conv1d", {"padding": 2},
          "puts all 2p zeros on the left (a causal convolution's padding) instead of p at each end",
          "variant option padding", _pads=_causal_padding),
    _seam("conv1d_same_extra_zero_left", "conv1d", _SAME,
          "puts the odd zero of 'same' padding on the left for an even kernel (torch pads it on the right)",
          "variant option padding", _pads=_same_extra_left),
    _seam("conv1d_same_half_kernel", "conv1d", _SAME,
          "pads ⌊k/2⌋ zeros at both ends for 'same': ℓ + 1 outputs for an even kernel", "review",
          _pads=_same_half_kernel),
    _seam("conv1d_same_ignores_dilation", "conv1d", {**_SAME, "dilation": 2},
          "pads k − 1 zeros for 'same' under dilation=2 instead of δ(k − 1)", "review",
          _pads=_same_without_dilation),
    Entry("conv1d_dilation_as_stride", "conv1d", {"dilation": 2}, conv1d(stride=2, dilation=1),
          "applies dilation=2 as a stride of 2 (contiguous windows, every second one)", "variant option dilation"),
    _variant("conv1d_ignores_dilation", "conv1d", {"dilation": 2, "padding": 2}, {"dilation": 1},
             "reads contiguous windows under dilation=2"),
    _variant("conv1d_linear_under_relu", "conv1d", {"activation": "relu"}, {"activation": "none"},
             "leaves out σ under activation=relu"),
    _variant("conv1d_tanh_under_sigmoid", "conv1d", {"activation": "sigmoid"}, {"activation": "tanh"},
             "applies tanh under activation=sigmoid"),
    _seam("conv1d_gelu_tanh_under_gelu", "conv1d", {"activation": "gelu"},
          "applies GPT-2's tanh approximation of GELU where the spec's is the exact one", "review",
          _phi=gelu_tanh),
    _seam("conv1d_activation_before_bias", "conv1d", {"activation": "tanh"},
          "adds b after σ: σ(Σ_j W_j x̄) + b", "review", _output=lambda Y, b, phi: phi(Y) + b[:, None]),
    _seam("graph_conv_gcn_without_self_loops", "graph_conv", {},
          "normalises A, not A + I: D^(−1/2) A D^(−1/2) without Kipf & Welling's self-loops", "variant option norm",
          _normalised=_gcn_without_self_loops),
    _seam("graph_conv_gcn_out_degrees", "graph_conv", {},
          "takes the degrees of A + I as row sums (out-degrees) instead of column sums (in-degrees)", "review",
          _normalised=_gcn_out_degrees),
    _seam("graph_conv_gcn_plus_identity", "graph_conv", {},
          "adds I to an adjacency that has self-loops already: weight 2 on them", "review",
          _normalised=_gcn_plus_identity),
    _variant("graph_conv_mean_under_gcn", "graph_conv", {}, {"norm": "mean"},
             "averages over the in-neighbours (no self-loops, no symmetric normalisation) under the default "
             "norm=gcn"),
    _variant("graph_conv_sum_under_mean", "graph_conv", {"norm": "mean"}, {"norm": "sum"},
             "sums the in-neighbours under norm=mean"),
    _variant("graph_conv_gcn_under_sum", "graph_conv", {"norm": "sum"}, {"norm": "gcn"},
             "normalises as gcn under norm=sum"),
    _seam("graph_conv_mean_nan_when_isolated", "graph_conv", {"norm": "mean"},
          "divides by the in-degree unguarded: NaN (0/0) for a node without in-neighbours", "review",
          _normalised=_mean_nan_when_isolated),
    _seam("graph_conv_mean_over_out_degree", "graph_conv", {"norm": "mean"},
          "divides each row of A by its out-degree (the row layout's D⁻¹A) instead of each column by its "
          "in-degree", "review", _normalised=_mean_rows),
    _seam("graph_conv_adjacency_transposed", "graph_conv", {"norm": "sum"},
          "aggregates over out-neighbours: reads A[i, j] as the edge j → i", "review",
          _normalised=lambda A, norm: A.T),
    _seam("graph_conv_bias_before_aggregation", "graph_conv", {},
          "adds b before the aggregation, (W X + b1ᵀ)Â, so the bias is normalised with the features", "review",
          _aggregate=_bias_before_aggregation, _output=lambda Y, b, phi: phi(Y)),
    _variant("graph_conv_ignores_bias", "graph_conv", {}, {"bias": False}, "drops b under the default bias=true"),
    _variant("graph_conv_relu_under_none", "graph_conv", {}, {"activation": "relu"},
             "applies ReLU under the default activation=none"),
    _variant("graph_conv_sigmoid_under_tanh", "graph_conv", {"activation": "tanh"}, {"activation": "sigmoid"},
             "applies the logistic sigmoid under activation=tanh"),
)

#: Correct implementations beyond the factories': conv1d written again, as explicit loops.
CONTROLS = (
    Entry("conv1d_correct_loops", "conv1d", {}, _loop_conv1d(), "", "correct"),
    Entry("conv1d_correct_loops_padding_same_dilation_2", "conv1d", {**_SAME, "dilation": 2},
          _loop_conv1d(padding="same", dilation=2), "", "correct"),
    Entry("conv1d_correct_loops_stride_3_padding_1", "conv1d", {"stride": 3, "padding": 1},
          _loop_conv1d(stride=3, padding=1), "", "correct"),
)

#: Bugs left out because no input can detect them, and why.
EQUIVALENT = {
    "graph convolution aggregating before the transform, W (X Â)": "(W X) Â = W (X Â): the same matrix",
    "conv1d's ℓ_out as ⌈(ℓ + 2p − δ(k − 1))/s⌉": "⌊(n − 1)/s⌋ + 1 = ⌈n/s⌉ for every n ≥ 1",
}
