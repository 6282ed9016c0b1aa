"""Hypothesis strategies for the convolutions (formal.algorithms.convolution), built constructively: the
weights per offset (k×d_out×d_in), the shortest input with one output position δ(k − 1) + 1 − 2p, and
adjacencies with isolated nodes — written by hand, never read from the objects."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from formal.algorithms import convolution
from formal.algorithms.convolution import conv1d, graph_conv
from tests.strategies.cases import SEED, Case, normal

SMALL = st.integers(1, 4)
ACTIVATION = st.sampled_from(convolution.CONV_ACTIVATIONS)


# ------------------------------------------------------------------------------------------- strategies
@st.composite
def geometries(draw):
    """(stride, padding, dilation) as torch.nn.Conv1d takes them: padding 'same' only at stride 1."""
    stride, dilation = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    choices = [0, 1, 2, 3] + (["same"] if stride == 1 else [])
    return stride, draw(st.sampled_from(choices)), dilation


def shortest(kernel, padding, dilation) -> int:
    """The shortest input with one output position: δ(k − 1) + 1 − 2p, at least 1 (by hand)."""
    return 1 if padding == "same" else max(1, dilation * (kernel - 1) + 1 - 2 * padding)


@st.composite
def conv1d_cases(draw, *, bias=None, activation=None, geometry=None, slack=(0, 6)):
    stride, padding, dilation = draw(geometries()) if geometry is None else geometry
    bias = draw(st.booleans()) if bias is None else bias
    activation = draw(ACTIVATION) if activation is None else activation
    s = {"d_in": draw(SMALL), "d_out": draw(SMALL), "k": draw(SMALL)}
    s["ell"] = shortest(s["k"], padding, dilation) + draw(st.integers(*slack))  # ℓ − the shortest input
    rng = np.random.default_rng(draw(SEED))
    params = {"W": normal(rng, s["k"], s["d_out"], s["d_in"])}     # one d_out×d_in matrix per offset
    if bias:
        params["b"] = normal(rng, s["d_out"])
    algorithm = conv1d.variant(stride=stride, padding=padding, dilation=dilation, bias=bias, activation=activation)
    return Case(algorithm, {"X": normal(rng, s["d_in"], s["ell"]), **params}, s, tuple(params))


@st.composite
def adjacencies(draw, n, rng):
    """None (the complete graph), or a random 0/1 ℓ×ℓ matrix, sometimes with an isolated node."""
    kind = draw(st.sampled_from(["none", "random", "isolated"]))
    if kind == "none":
        return None
    A = rng.random((n, n)) < draw(st.sampled_from([0.3, 0.6]))
    if kind == "isolated":
        A[:, rng.integers(n)] = False
    return A


@st.composite
def graph_conv_cases(draw, *, norm=None, bias=None, activation=None):
    norm = draw(st.sampled_from(convolution.NORMS)) if norm is None else norm
    bias = draw(st.booleans()) if bias is None else bias
    activation = draw(ACTIVATION) if activation is None else activation
    s = {"d_in": draw(SMALL), "d_out": draw(SMALL), "ell": draw(st.integers(1, 6))}
    rng = np.random.default_rng(draw(SEED))
    params = {"W": normal(rng, s["d_out"], s["d_in"])}
    if bias:
        params["b"] = normal(rng, s["d_out"])
    inputs = {"X": normal(rng, s["d_in"], s["ell"])}
    A = draw(adjacencies(s["ell"], rng))
    if A is not None:
        inputs["A"] = A
    algorithm = graph_conv.variant(norm=norm, bias=bias, activation=activation)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


CONVOLUTION_STRATEGIES = {"conv1d": conv1d_cases(), "graph_conv": graph_conv_cases()}
