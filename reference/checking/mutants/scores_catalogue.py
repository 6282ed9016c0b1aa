"""The catalogue's entries for the attention scores beyond the scaled dot product (the ``score`` and
``activation`` options of Algorithms 3 and 4), attention pooling, and the 1-D and graph convolutions.

:mod:`.catalogue` adds :data:`FACTORIES` to its own, appends :data:`MUTANTS` to its mutants (so that a control
of every variant they are checked under is derived there) and :data:`CONTROLS` to its controls.  The planted
pieces longer than a lambda are here, after the helpers.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from .attention import additive, attend, attention, fill, single_query_attention, weights
from .entry import Entry
from .convolution import conv1d, graph_conv, pads
from .numerics import gelu_tanh, softmax
from .pooling import attention_pooling, mlp_scores

__all__ = ["FACTORIES", "CONTROLS", "MUTANTS", "EQUIVALENT"]

#: The factories of the algorithms this module adds (Algorithms 3 and 4 stay :mod:`.catalogue`'s).
FACTORIES = {"conv1d": conv1d, "graph_conv": graph_conv, "attention_pooling": attention_pooling}
_ALL = {**FACTORIES, "single_query_attention": single_query_attention, "attention": attention}


def _seam(name, algorithm, options, bug, source, **seams):
    """A mutant: the correct implementation of ``options`` with ``seams`` replaced."""
    return Entry(name, algorithm, options, _ALL[algorithm](**options, **seams), bug, source)


def _variant(name, algorithm, options, implemented, bug, source=None):
    """A mutant: the correct implementation of the variant ``implemented``, checked under ``options``."""
    return Entry(name, algorithm, options, _ALL[algorithm](**{**options, **implemented}), bug,
                 source or "variant option " + ", ".join(implemented))


# ------------------------------------------------------------------------------------ planted pieces
def _phi_after_contraction(Q, K, v_a, phi):
    """``φ(v_aᵀq + v_aᵀk)``: the nonlinearity after the product with v_a (the original GAT's order), not
    ``v_aᵀ φ(q + k)``."""
    if Q.ndim == 1:
        return phi(v_a @ Q + v_a @ K)
    return phi((v_a @ K)[:, None] + (v_a @ Q)[None, :])


def _additive_scaled(Q, K, v_a, phi):
    """The additive score divided by √d_attn, as the scaled dot product is."""
    return additive(Q, K, v_a, phi) / math.sqrt(len(K))


def _additive_without_v_a(Q, K, v_a, phi):
    """``1ᵀ φ(q + k)``: the entries of φ(q + k) summed, v_a never read."""
    return additive(Q, K, np.ones(len(K)), phi)


def _additive_transposed(Q, K, V, mask, *, empty="zero", score):
    """The additive scores laid out query × key (ℓ_x×ℓ_z), the softmax still over axis 0: over the queries."""
    S = fill(score(Q, K).T, mask.T)
    return V @ weights(S, empty).T


def _ignore_mask(S, mask):
    return S


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


def _pools_hidden(Z, W, b, u_w):
    """The weights are right, but the hidden vectors u_t are pooled instead of the z_t."""
    U = np.tanh(W @ Z + b[:, None])
    return U @ softmax(U.T @ u_w)


_ADDITIVE = {"score": "additive"}
_LEAKY = {"score": "additive", "activation": "leaky_relu"}

# ------------------------------------------------------------------------ Algorithms 3 and 4: scores
_SCORES = [
    _variant("single_query_attention_dot_still_scaled", "single_query_attention", {"score": "dot"},
             {"score": "scaled_dot"}, "divides the dot score by √d_attn under score=dot"),
    _variant("single_query_attention_scaled_dot_under_additive", "single_query_attention", _ADDITIVE,
             {"score": "scaled_dot"}, "scores with KᵀQ/√d_attn and ignores v_a under score=additive"),
    _seam("single_query_attention_additive_phi_after_v_a", "single_query_attention", _ADDITIVE,
          "applies tanh after the product with v_a, tanh(v_aᵀq + v_aᵀk_t) (the original GAT's order)", "review",
          _additive=_phi_after_contraction),
    _seam("single_query_attention_additive_scaled", "single_query_attention", _ADDITIVE,
          "divides the additive score by √d_attn, as the scaled dot product is", "review",
          _additive=_additive_scaled),
    _seam("single_query_attention_additive_without_softmax", "single_query_attention", _ADDITIVE,
          "weighs the values by the raw additive scores: no softmax", "review", _softmax=lambda s: s),
    _seam("single_query_attention_leaky_relu_torch_slope", "single_query_attention", _LEAKY,
          "uses torch's default negative slope 0.01 instead of GAT's 0.2", "variant option activation",
          _slope=0.01),
    _variant("single_query_attention_tanh_under_leaky_relu", "single_query_attention", _LEAKY,
             {"activation": "tanh"}, "uses tanh under activation=leaky_relu"),
    _variant("attention_scaled_under_dot", "attention", {"score": "dot"}, {"score": "scaled_dot"},
             "divides the dot score by √d_attn under score=dot"),
    _variant("attention_dot_under_scaled_dot", "attention", {}, {"score": "dot"},
             "leaves out the 1/√d_attn of the default score=scaled_dot"),
    _seam("attention_additive_phi_after_v_a", "attention", _ADDITIVE,
          "applies tanh after the product with v_a, tanh(v_aᵀq + v_aᵀk) (the original GAT's order)", "review",
          _additive=_phi_after_contraction),
    _seam("attention_additive_scaled", "attention", _ADDITIVE,
          "divides the additive score by √d_attn, as the scaled dot product is", "review",
          _additive=_additive_scaled),
    _seam("attention_additive_without_v_a", "attention", _ADDITIVE,
          "sums the entries of tanh(q + k) instead of contracting them with v_a", "review",
          _additive=_additive_without_v_a),
    _seam("attention_additive_ignores_mask", "attention", _ADDITIVE,
          "leaves the additive scores unmasked: every query sees every key", "review",
          _attend=partial(attend, _fill=_ignore_mask)),
    _seam("attention_additive_softmax_over_queries", "attention", _ADDITIVE,
          "lays the additive scores out query × key and normalises over the queries", "review",
          _attend=_additive_transposed),
    _seam("attention_additive_nan_for_empty_rows", "attention", _ADDITIVE,
          "gives NaN (a plain softmax of −∞) for a query with no admitted key under score=additive", "review",
          _attend=partial(attend, _weights=lambda S, empty: softmax(S))),
    _seam("attention_leaky_relu_torch_slope", "attention", _LEAKY,
          "uses torch's default negative slope 0.01 instead of GAT's 0.2", "variant option activation",
          _slope=0.01),
    _variant("attention_tanh_under_leaky_relu", "attention", _LEAKY, {"activation": "tanh"},
             "uses tanh under activation=leaky_relu"),
    _seam("attention_leaky_relu_after_v_a", "attention", _LEAKY,
          "applies the leaky ReLU after the product with v_a (GAT's score, not GATv2's)", "review",
          _additive=_phi_after_contraction),
]

# ------------------------------------------------------------------------------------ attention pooling
_MLP = {"score": "mlp"}
_POOLING = [
    _seam("attention_pooling_averages", "attention_pooling", {},
          "averages the columns of Z instead of attending: every weight 1/ℓ", "review",
          _pool=lambda Z, e: Z.mean(axis=1)),
    _seam("attention_pooling_softmax_over_singleton_axis", "attention_pooling", {},
          "takes the softmax of the ℓ×1 score column over its axis of length 1: every weight is 1, s = Σ_t z_t",
          "review", _pool=lambda Z, e: Z @ softmax(e[:, None], axis=1)[:, 0]),
    _seam("attention_pooling_dot_scaled", "attention_pooling", {},
          "divides the dot scores by √d_z, as scaled dot-product attention does", "review",
          _dot=lambda Z, q: Z.T @ q / math.sqrt(len(q))),
    _seam("attention_pooling_tanh_under_dot", "attention_pooling", {},
          "scores tanh(Z)ᵀq: the mlp score's tanh under score=dot", "variant option score",
          _dot=lambda Z, q: np.tanh(Z).T @ q),
    _seam("attention_pooling_mlp_without_tanh", "attention_pooling", _MLP,
          "leaves out the tanh of the hidden layer: (W Z + b1ᵀ)ᵀu_w, a dot score with query Wᵀu_w",
          "variant option score", _mlp=partial(mlp_scores, phi=lambda a: a)),
    _seam("attention_pooling_mlp_tanh_after_u_w", "attention_pooling", _MLP,
          "applies tanh after the product with u_w: tanh(u_wᵀ(W z_t + b))", "review",
          _mlp=lambda Z, W, b, u_w: np.tanh((W @ Z + b[:, None]).T @ u_w)),
    _seam("attention_pooling_mlp_without_bias", "attention_pooling", _MLP,
          "leaves the bias b out of the hidden layer", "review",
          _mlp=lambda Z, W, b, u_w: mlp_scores(Z, W, np.zeros_like(b), u_w)),
    Entry("attention_pooling_mlp_pools_hidden", "attention_pooling", _MLP, _pools_hidden,
          "pools the hidden vectors u_t = tanh(W z_t + b) instead of the z_t", "review"),
    _seam("attention_pooling_mlp_softmax_over_hidden", "attention_pooling", _MLP,
          "normalises each column of tanh(W Z + b1ᵀ) over the hidden units, then scores the result with u_w",
          "review", _mlp=lambda Z, W, b, u_w: softmax(np.tanh(W @ Z + b[:, None]), axis=0).T @ u_w),
]

# ---------------------------------------------------------------------------------------- convolutions
_SAME = {"padding": "same"}
_CONV = [
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
]

MUTANTS = _SCORES + _POOLING + _CONV


def _loop_conv1d(*, stride=1, padding=0, dilation=1, bias=True, activation="none"):
    """A second, independent conv1d: every output entry as an explicit sum over offsets and channels."""
    from .convolution import CONV_ACTIVATIONS

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


#: Correct implementations beyond the factories' (whose controls :mod:`.catalogue` derives).
CONTROLS = [
    Entry("conv1d_correct_loops", "conv1d", {}, _loop_conv1d(), "", "correct"),
    Entry("conv1d_correct_loops_padding_same_dilation_2", "conv1d", {**_SAME, "dilation": 2},
          _loop_conv1d(padding="same", dilation=2), "", "correct"),
    Entry("conv1d_correct_loops_stride_3_padding_1", "conv1d", {"stride": 3, "padding": 1},
          _loop_conv1d(stride=3, padding=1), "", "correct"),
]

#: Bugs left out because no input can detect them, and why.
EQUIVALENT = {
    "graph convolution aggregating before the transform, W (X Â)": "(W X) Â = W (X Â): the same matrix",
    "conv1d's ℓ_out as ⌈(ℓ + 2p − δ(k − 1))/s⌉": "⌊(n − 1)/s⌋ + 1 = ⌈n/s⌉ for every n ≥ 1",
    "the additive score's v_aᵀ φ(k + q) with query and key swapped in the sum": "addition commutes",
}
