"""Convolutions: the 1-D convolution over a sequence and the graph convolution over a graph's nodes — the
layers the lecture notes set beside self-attention ("Need to stack many conv layers for outputs to 'see'
the whole sequence"), written in the paper's style so that their costs, depth and receptive field are
derived from objects, not asserted.

Conventions (one column per position, as in Phuong & Hutter): the input X is d_in×ℓ, the output Y is
d_out×ℓ_out.  A 1-D convolution has a weight matrix **per offset**, ``W ∈ ℝ^{k×d_out×d_in}``,

.. math::

    Y[:, t] = σ\\Big(\\sum_{j=0}^{k-1} W_{j+1}\\, \\bar X[:, s t + δ j] + b\\Big),
    \\qquad ℓ_{out} = \\Big\\lfloor \\frac{ℓ + 2p - δ(k-1) - 1}{s} \\Big\\rfloor + 1,

with X̄ the input padded by p zero columns at both ends (stride s, dilation δ) — the seed's single θ shared
by all k offsets, ``Σ_j θᵀ x̄(j) = θᵀ Σ_j x̄(j)``, is a moving sum followed by one linear map, and its output
length T − k − 1 is two short: stride 1 without padding gives T − k + 1 windows.  A graph convolution must
share its weights across neighbours (a node's neighbours have no order): ``Y = σ(W X Â + b 1ᵀ)``.

References
----------
- Y. LeCun et al., "Backpropagation applied to handwritten zip code recognition", Neural Computation 1,
  1989 (weights shared across positions); ``torch.nn.Conv1d`` (the output length, ``padding="same"``).
- T. N. Kipf, M. Welling, "Semi-supervised classification with graph convolutional networks", ICLR 2017,
  eq. (2): ``Z = D̃^{−1/2} Ã D̃^{−1/2} X Θ`` with ``Ã = A + I``.
- A. Vaswani et al., "Attention is all you need", NeurIPS 2017, Table 1 (a convolution's cost per layer
  ``O(k·n·d²)`` and its maximum path length ``O(n/k)``, ``O(log_k n)`` dilated).

Examples
--------
>>> from formal.core.symbols import d_in, d_out, ell, k
>>> conv1d.param_count()
d_in*d_out*k + d_out
>>> conv1d.output_shape
(d_out, ell - k + 1)
>>> conv1d.cost("matmul").flops
2*d_in*d_out*ell*k - 2*d_in*d_out*k**2 + 2*d_in*d_out*k
>>> receptive_field(3, 5)
13
>>> layers_to_cover(1024, 3)
512
"""

from __future__ import annotations

import sympy as sp

from ..core.shapes import TensorSpec
from ..core.symbols import d_in, d_out, ell, k
from ..engine.algorithm import Algorithm, Assign
from ..engine.declarations import Option, Options
from ..engine.domains import BOOL, Choice
from ..errors import ConfigError
from ..ops import ACTIVATIONS, activation, add_bias, matmul
from ..ops.convolution import GEOMETRY, NORMS, Aggregate, Offsets, Unfold, window_span

__all__ = ["ALGORITHMS", "NORMS", "CONV_ACTIVATIONS", "CONV_BIAS", "CONV_ACTIVATION", "build_conv1d",
           "build_graph_conv", "receptive_field", "layers_to_cover", "conv1d", "graph_conv"]

#: The nonlinearity σ after the sum: none (a linear layer, ``torch.nn.Conv1d``'s) or one of the MLP's.
CONV_ACTIVATIONS = ("none",) + tuple(name for name in ("relu", "tanh", "sigmoid", "gelu") if name in ACTIVATIONS)

CONV_BIAS = Option("bias", True, BOOL, "whether b is added (torch's bias=True)")
CONV_ACTIVATION = Option("activation", "none", Choice(*CONV_ACTIVATIONS),
                         "σ after the sum: none (torch.nn.Conv1d is linear), relu, tanh, sigmoid or gelu")
_CONV1D_OPTIONS = Options(*GEOMETRY.values(), CONV_BIAS, CONV_ACTIVATION, rules=GEOMETRY.rules)
_GRAPH_CONV_OPTIONS = Options(
    Option("norm", "gcn", Choice(*NORMS),
           "how the adjacency is normalised: sum (Â = A), mean (each column over the in-degree; an isolated node "
           "gets 0) or gcn (Kipf & Welling's D^(−1/2)(A + I)D^(−1/2), self-loops added)"),
    CONV_BIAS, CONV_ACTIVATION)


def _output_lines(product, bias: bool, act: str) -> list:
    """``Y ← product (+ b 1ᵀ)``, then ``Y ← σ(Y)`` unless the activation is none; the last line returns."""
    value = add_bias(product, "b") if bias else product
    if act == "none":
        return [Assign("Y", value, returns=True)]
    return [Assign("Y", value), Assign("Y", activation(act, "Y"), returns=True)]


@_CONV1D_OPTIONS.builds
def build_conv1d(*, stride, padding, dilation, bias, activation) -> Algorithm:
    """A 1-D convolution over the columns of X (``torch.nn.Conv1d`` with ``groups=1``,
    ``padding_mode="zeros"``), written as one matrix product over the unfolded input:
    ``Y = σ([W_1, …, W_k] unfold(X) + b 1ᵀ)``.

    Parameters
    ----------
    stride, padding, dilation : int (padding also ``"same"``)
        s, p and δ of the module docstring; ``padding="same"`` (stride 1 only) pads δ(k − 1) zeros, the odd
        one on the right (an even kernel), as torch does.
    bias : bool
        Whether ``b ∈ ℝ^{d_out}`` is added.
    activation : {"none", "relu", "tanh", "sigmoid", "gelu"}
        σ, after the sum (the seed writes σ(Σ …); torch's module is linear).

    Returns
    -------
    Algorithm
        Input X (d_in×ℓ), parameters W (k×d_out×d_in) and b (d_out), output Y (d_out×ℓ_out), ℓ_out as
        :func:`formal.ops.convolution.output_length` gives it (a ``floor`` for stride > 1).
    """
    act = activation
    unfold = Unfold(k, stride=stride, padding=padding, dilation=dilation)
    ell_out = unfold.shape([(d_in, ell)])[1]
    params = [TensorSpec("W", (k, d_out, d_in), doc="one d_out×d_in weight matrix per offset of the window")]
    if bias:
        params.append(TensorSpec("b", (d_out,), doc="the bias of every output position"))
    lines = [Assign("U", unfold("X"), note="The k·d_in inputs each output position reads"),
             *_output_lines(matmul(Offsets()("W"), "U"), bias, act)]
    return Algorithm(
        number=None, source="LeCun et al. 1989; torch.nn.Conv1d", name="conv1d", display="Conv1d",
        summary="A 1-D convolution: a weight matrix per offset of a window slid along the sequence.",
        inputs=[TensorSpec("X", (d_in, ell), doc="the input sequence, one column per position", role="tokens")],
        params=params, output=TensorSpec("Y", (d_out, ell_out), doc="one column per window"),
        lines=lines, params_label="W, b" if bias else "W",
        notes=("W[j] (0-indexed; W_(j+1) in the lines) is torch's weight[:, :, j]: torch stores d_out×d_in×k",),
    )


@_GRAPH_CONV_OPTIONS.builds
def build_graph_conv(*, norm, bias, activation) -> Algorithm:
    """A graph convolution: every node's features transformed by one shared W, then summed over its
    in-neighbours with the normalised adjacency, ``Y = σ(W X Â + b 1ᵀ)`` (Kipf & Welling 2017, eq. 2, in the
    column layout; ``torch_geometric.nn.GCNConv`` for ``norm="gcn"``).

    The transform comes first, always — ``(W X) Â`` — as PyG's ``GCNConv`` computes it; ``W (X Â)`` is the
    same matrix and is cheaper when d_in < d_out (2·d_in·ℓ² + 2·d_out·d_in·ℓ against 2·d_out·ℓ² + …), a choice
    this object does not make for you.

    Parameters
    ----------
    norm : {"sum", "mean", "gcn"}
        Â from the adjacency A (:class:`formal.ops.convolution.Aggregate`): A itself, A over each node's
        in-degree (0 for an isolated node), or ``D^{−1/2}(A + I)D^{−1/2}`` with the self-loops added here.
    bias, activation
        As :func:`build_conv1d`'s.

    Returns
    -------
    Algorithm
        Inputs X (d_in×ℓ) and the adjacency A (a mask input, ℓ×ℓ: ``A[j, i] = 1`` for an edge j → i, rows the
        sources as the spec's mask rows are keys; omitted, every node is every node's neighbour), parameters
        W (d_out×d_in) and b (d_out), output Y (d_out×ℓ).
    """
    act = activation
    params = [TensorSpec("W", (d_out, d_in), doc="the weights every node shares")]
    if bias:
        params.append(TensorSpec("b", (d_out,), doc="the bias of every node"))
    lines = [Assign("X_tilde", matmul("W", "X"), note="Transform every node"),
             *_output_lines(Aggregate(norm)("X_tilde", "A"), bias, act)]
    return Algorithm(
        number=None, source="Kipf & Welling 2017", name="graph_conv", display="GraphConv",
        summary="A graph convolution: shared weights, then every node sums its in-neighbours' features.",
        inputs=[TensorSpec("X", (d_in, ell), doc="the node features, one column per node"),
                TensorSpec("A", (ell, ell), kind="mask", doc="the adjacency: A[j, i] = 1 for an edge j → i")],
        params=params, output=TensorSpec("Y", (d_out, ell), doc="the new node features"),
        lines=lines, params_label="W, b" if bias else "W",
        permutation={"X": "equivariant"},   # renumbering the nodes (and A alike) renumbers the outputs
    )


# ------------------------------------------------------------------------------------ receptive field
def _one_layer_reach(kernel, dilation):
    """How many more input positions one stride-1 layer's output position sees than its input position,
    δ(k − 1), read from the conv1d object: ℓ − ℓ_out without padding."""
    if isinstance(dilation, int) and not isinstance(dilation, bool):
        shrink = ell - conv1d.variant(dilation=dilation, padding=0, stride=1).output_shape[1]
        return sp.expand(shrink.xreplace({k: sp.sympify(kernel)}))
    return sp.expand(window_span(sp.sympify(kernel), sp.sympify(dilation)) - 1)


def receptive_field(layers, kernel, dilation=1):
    """The input positions one output position of ``layers`` stacked stride-1 convolutions sees,
    ``1 + L·δ(k − 1)``; with ``dilation="exponential"`` (layer l dilated by k^(l−1), WaveNet's) ``k^L``.

    ``layers``, ``kernel`` and ``dilation`` may be ints or sympy expressions; the result is an int for ints.

    >>> from formal.core.symbols import L, k
    >>> receptive_field(L, k)
    L*k - L + 1
    >>> receptive_field(L, k, "exponential")
    k**L
    """
    if dilation == "exponential":  # Σ over the layers of each one's reach, summed in closed form
        l = sp.Dummy("l", integer=True, positive=True)
        kernel = sp.sympify(kernel)
        total = sp.expand(1 + sp.summation(_one_layer_reach(kernel, kernel ** (l - 1)), (l, 1, sp.sympify(layers))))
        return int(total) if total.is_number else sp.powsimp(total)
    total = sp.expand(1 + sp.sympify(layers) * _one_layer_reach(kernel, dilation))
    return int(total) if total.is_number else total


def layers_to_cover(n, kernel, dilation=1):
    """The fewest stacked stride-1 convolutions whose receptive field holds ``n`` positions:
    ``⌈(n − 1)/(δ(k − 1))⌉``, or ``⌈log_k n⌉`` with ``dilation="exponential"`` (Vaswani et al.'s Table 1:
    O(n/k) layers, O(log_k n) dilated).  A kernel of width 1 covers one position only.

    >>> layers_to_cover(1024, 3), layers_to_cover(1024, 2, "exponential")
    (512, 10)
    """
    n, kernel = sp.sympify(n), sp.sympify(kernel)
    if n.is_number and n <= 1:                                           # one position: no layer needed
        return 0
    if kernel.is_number and kernel < 2 and not (n.is_number and n <= 1):
        raise ConfigError(f"kernel = {kernel} never widens the receptive field: no number of layers covers n = {n}")
    if dilation == "exponential":
        if n.is_number and kernel.is_number:  # exact integer search, no floating-point logarithm
            layers = 0
            while kernel ** layers < n:
                layers += 1
            return layers
        return sp.ceiling(sp.log(n, kernel))
    total = sp.ceiling((n - 1) / _one_layer_reach(kernel, dilation))
    return int(total) if total.is_number else total


conv1d = build_conv1d()
graph_conv = build_graph_conv()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (conv1d, graph_conv)
