"""The 1-D convolution and the graph convolution in torch, batch-first: a sequence is (B, ℓ, d).

Parameters keep the formal objects' canonical names and orientation (:mod:`formal.algorithms.convolution`):
the convolution's ``W`` is k×d_out×d_in, one d_out×d_in matrix per offset, and is handed to
``torch.nn.functional.conv1d`` as torch's (d_out, d_in, k); the graph convolution's ``W`` is d_out×d_in and
acts on rows as ``X Wᵀ``.  The adjacency keeps the spec's mask layout, ℓ×ℓ with ``A[j, i] = 1`` for an edge
j → i.  :func:`from_conv1d` reads a built ``torch.nn.Conv1d`` into those names.
"""

from __future__ import annotations

import numpy as np

from formal.errors import ConfigError, shown

from .. import require_torch
from .convert import rows_to_columns, to_numpy
from .runners import runs

__all__ = ["conv1d", "graph_conv", "normalised_adjacency", "from_conv1d", "run_conv1d", "run_graph_conv"]

torch = require_torch()

_ACTIVATIONS = {"none": lambda y: y, "relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
                "gelu": torch.nn.functional.gelu}


def conv1d(X, W, b=None, *, stride=1, padding=0, dilation=1, activation="none", **_):
    """``conv1d`` of the spec on rows: X (B, ℓ, d_in), W (k, d_out, d_in), b (d_out) ↦ Y (B, ℓ_out, d_out).
    Takes the algorithm's options as keywords (``bias`` is read from whether b is given).  The zeros are padded
    here, before an unpadded convolution: ``padding="same"`` pads δ(k − 1), the odd one on the right (torch's
    rule for "same", without the copy torch warns it may make for an even kernel), and an integer p pads p on
    each side — torch 2.13's CPU kernel for bfloat16, padding itself, crashes the process on one thread of a
    CPU with AMX when every output position reads only padding (stride 2, padding 1, dilation 2 over one token
    with one tap, say), contiguous operands or not; unpadded, it runs every configuration."""
    weight = W.permute(1, 2, 0)                                          # (d_out, d_in, k), torch's layout
    X = X.transpose(1, 2)                                                # (B, d_in, ℓ)
    total = dilation * (W.shape[0] - 1) if padding == "same" else 2 * padding
    left = total // 2 if padding == "same" else padding
    X = torch.nn.functional.pad(X, (left, total - left))                 # (B, d_in, ℓ + total)
    Y = torch.nn.functional.conv1d(X, weight, b, stride=stride, dilation=dilation)
    return _ACTIVATIONS[activation](Y.transpose(1, 2))                   # (B, ℓ_out, d_out)


def normalised_adjacency(A, norm: str):
    """Â from the boolean adjacency A (ℓ_z, ℓ_x), rows the sources: A, A over each column's in-degree (0 for an
    isolated node), or D^(−1/2)(A ∨ I)D^(−1/2) with D the in-degrees of A ∨ I (Kipf & Welling's, PyG's)."""
    A = A.to(torch.bool)
    if norm == "gcn":
        A = A | torch.eye(A.shape[0], dtype=torch.bool, device=A.device)
    weights = A.to(torch.float64)
    degree = weights.sum(dim=0)                                          # in-degree of every target node
    if norm == "sum":
        return weights
    if norm == "mean":
        return weights / degree.clamp(min=1)
    root = degree.rsqrt()
    return root[:, None] * weights * root[None, :]


def graph_conv(X, A, W, b=None, *, norm="gcn", activation="none", **_):
    """``graph_conv`` of the spec on rows: X (B, ℓ, d_in), A (ℓ, ℓ) in the spec's layout, W (d_out, d_in),
    b (d_out) ↦ Y (B, ℓ, d_out), ``Y[:, i] = Σ_j Â[j, i] (W x_j) + b``."""
    transformed = X @ W.transpose(0, 1)                                  # (B, ℓ, d_out)
    adjacency = normalised_adjacency(A, norm).to(dtype=X.dtype)          # (ℓ_z, ℓ_x)
    Y = adjacency.transpose(0, 1) @ transformed                         # (B, ℓ_x, d_out)
    return _ACTIVATIONS[activation](Y if b is None else Y + b)


@runs("conv1d")
def run_conv1d(c):
    """The reference's ``conv1d`` on a :class:`reference.model.execute.Call`, in the spec's layout (d_out×ℓ_out)."""
    return rows_to_columns(conv1d(c.rows("X"), c.params["W"], c.params.get("b"), **c.options))


@runs("graph_conv")
def run_graph_conv(c):
    """The reference's ``graph_conv`` on a :class:`reference.model.execute.Call`, in the spec's layout (d_out×ℓ); an
    omitted adjacency is the complete graph, as the spec's omitted mask is."""
    X = c.rows("X")                                                      # (1, ℓ, d_in)
    A = c.adjacency("A", X.shape[1])
    return rows_to_columns(graph_conv(X, A, c.params["W"], c.params.get("b"), **c.options))


def from_conv1d(module) -> tuple[dict, dict]:
    """A built ``torch.nn.Conv1d`` ↦ (``conv1d``'s parameters, options): ``W`` is torch's weight (d_out, d_in, k)
    as the spec's (k, d_out, d_in), ``b`` its bias; the options its stride, padding (``"same"`` kept, torch's
    ``"valid"`` is 0), dilation and whether it has a bias.  Grouped convolutions and padding other than zeros
    have no counterpart in the spec."""
    if not isinstance(module, torch.nn.Conv1d):
        raise ConfigError(f"{type(module).__name__} is not a torch.nn.Conv1d")
    if module.groups != 1:
        raise ConfigError(f"Conv1d(groups={shown(module.groups)}) has no counterpart in the spec's conv1d "
                          "(one weight matrix per offset over all input channels: groups = 1)")
    if module.padding_mode != "zeros":
        raise ConfigError(f"Conv1d(padding_mode={shown(module.padding_mode)}) has no counterpart in the spec's "
                          "conv1d, which pads with zeros")
    padding = module.padding
    if isinstance(padding, str):
        padding = "same" if padding == "same" else 0
    else:
        padding = int(padding[0])
    params = {"W": np.ascontiguousarray(to_numpy(module.weight).transpose(2, 0, 1))}
    if module.bias is not None:
        params["b"] = to_numpy(module.bias)
    options = {"stride": int(module.stride[0]), "padding": padding, "dilation": int(module.dilation[0]),
               "bias": module.bias is not None}
    return params, options
