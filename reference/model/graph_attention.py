"""Graph attention networks (GAT and GATv2) in torch, batch-first: node features are (B, ℓ, d_in).

Parameters keep the formal object's names and orientation (:mod:`formal.algorithms.graph_attention`): per-head
weights stacked on a leading head axis, ``W`` (H, d_out, d_in) acting on rows as ``X Wᵀ``, score vectors
``a_l``, ``a_r`` (version 1) or ``a`` (version 2) of shape (H, d_out).  The adjacency keeps the spec's mask
layout, ℓ×ℓ with ``A[j, i] = 1`` for an edge j → i.  :func:`from_pyg` reads a built
``torch_geometric.nn.GATConv`` or ``GATv2Conv`` into those names and options.
"""

from __future__ import annotations

from formal.errors import ConfigError

from .. import require_torch
from .convert import rows_to_columns
from .runners import runs

__all__ = ["gat", "scores", "from_pyg", "run_gat"]

torch = require_torch()


def _transform(X, W, b=None):
    """``W^h x + b^h`` for every head and node: X (B, ℓ, d_in), W (H, d_out, d_in) ↦ (B, H, ℓ, d_out); a
    product FlopCounterMode counts at every size (an einsum over an axis of length 1 becomes a product it
    does not count)."""
    Z = X[:, None] @ W.transpose(-1, -2)
    return Z if b is None else Z + b[None, :, None, :]


def _contract(Z, a):
    """``a^hᵀ z`` for every head: Z (..., H, n, d_out) or (B, H, ℓ_z, ℓ_x, d_out) against a (H, d_out)."""
    shape = (a.shape[0],) + (1,) * (Z.dim() - 4) + (a.shape[1], 1)
    return (Z @ a.reshape(shape))[..., 0]


def scores(X, params, *, version=1, slope=0.2):
    """Every head's score of every pair, (B, H, ℓ_z, ℓ_x) with ``[..., j, i]`` the edge j → i, and the values
    (B, H, ℓ, d_out): version 1 ``LeakyReLU(a_lᵀ z_i + a_rᵀ z_j)`` with the values Z = W X; version 2
    ``aᵀ LeakyReLU(W_t x_i + b_t + W_s x_j + b_s)`` with the values W_s X + b_s."""
    leaky = torch.nn.functional.leaky_relu
    if version == 1:
        Z = _transform(X, params["W"])
        target, source = _contract(Z, params["a_l"]), _contract(Z, params["a_r"])     # (B, H, ℓ)
        return leaky(source[..., :, None] + target[..., None, :], slope), Z
    sources = _transform(X, params["W_s"], params.get("b_s"))
    targets = _transform(X, params["W_t"], params.get("b_t"))
    sums = sources[:, :, :, None, :] + targets[:, :, None, :, :]                    # (B, H, ℓ_z, ℓ_x, d_out)
    return _contract(leaky(sums, slope), params["a"]), sources


def gat(X, A, params, *, version=1, heads="concat", self_loops=True, slope=0.2, **_):
    """``gat`` of the spec on rows: X (B, ℓ, d_in), A (ℓ, ℓ) boolean in the spec's layout ↦ Y (B, ℓ, width),
    width H·d_out (concat, head 1 first) or d_out (mean).  A node without neighbours gets the zero vector
    plus b, as PyG's sum over no edges does."""
    A = A.to(torch.bool)
    if self_loops:
        A = A | torch.eye(A.shape[0], dtype=torch.bool, device=A.device)
    S, values = scores(X, params, version=version, slope=slope)
    S = S.masked_fill(~A, float("-inf"))
    alpha = torch.where(A.any(dim=0), torch.softmax(S, dim=-2), torch.zeros((), dtype=S.dtype, device=S.device))
    Y = (alpha.transpose(-1, -2) @ values).transpose(1, 2)                          # (B, ℓ, H, d_out)
    Y = Y.reshape(*Y.shape[:2], -1) if heads == "concat" else Y.mean(dim=2)
    b = params.get("b")
    return Y if b is None else Y + b


@runs("gat")
def run_gat(c):
    """The reference's ``gat`` on a :class:`reference.model.execute.Call`, in the spec's layout (width×ℓ); an
    omitted adjacency is the complete graph, as the spec's omitted mask is."""
    X = c.rows("X")                                                         # (1, ℓ, d_in)
    A = c.adjacency("A", X.shape[1])
    return rows_to_columns(gat(X, A, c.params, **c.options))


def _heads(tensor, H):
    """A PyG (H·d_out,)-shaped weight's rows, or (1, H, d_out) attention vector, split by heads."""
    return tensor.detach().reshape(H, -1, *tensor.shape[1:]) if tensor.dim() == 2 else tensor.detach().reshape(H, -1)


def from_pyg(module) -> tuple[dict, dict]:
    """A built ``torch_geometric.nn.GATConv`` or ``GATv2Conv`` ↦ (``gat``'s parameters,
    options).  GATConv: ``W`` is ``lin.weight`` split by heads, ``a_l`` is ``att_dst``, ``a_r`` is ``att_src``;
    GATv2Conv: ``W_s``/``b_s`` are ``lin_l``'s, ``W_t``/``b_t`` ``lin_r``'s (the same under
    ``share_weights=True``), ``a`` is ``att``.  Edge features, residual connections and bipartite inputs have no
    counterpart here; dropout is
    left to the caller (the spec is the layer in evaluation mode)."""
    kind = type(module).__name__
    if kind not in ("GATConv", "GATv2Conv"):
        raise ConfigError(f"{kind} is not a torch_geometric GATConv or GATv2Conv")
    for feature, unsupported in (("edge_dim", module.edge_dim is not None), ("residual", module.residual),
                                 ("bipartite in_channels", not isinstance(module.in_channels, int))):
        if unsupported:
            raise ConfigError(f"{kind} with {feature} has no counterpart in the spec's gat")
    H = module.heads
    options = {"version": 1 if kind == "GATConv" else 2, "heads": "concat" if module.concat else "mean",
               "self_loops": bool(module.add_self_loops), "bias": module.bias is not None,
               "slope": float(module.negative_slope)}
    if kind == "GATConv":
        params = {"W": _heads(module.lin.weight, H), "a_l": _heads(module.att_dst, H),
                  "a_r": _heads(module.att_src, H)}
    else:
        params = {"W_s": _heads(module.lin_l.weight, H), "W_t": _heads(module.lin_r.weight, H),
                  "a": _heads(module.att, H)}
        if module.lin_l.bias is not None:
            params.update(b_s=_heads(module.lin_l.bias, H), b_t=_heads(module.lin_r.bias, H))
    if module.bias is not None:
        params["b"] = module.bias.detach()
    return params, options
