"""Attention over a graph pattern in torch: Algorithms 4 and 5 as message passing with index/scatter.

The torch counterpart of :mod:`formal.graphs.message_passing`, batch-first like the rest of the reference:
``X`` is (B, ℓ_x, d_x).  Paths:

- ``"scatter"`` — per-edge scores ``(Q[q] · K[k]) / √d_attn``, a segmented softmax with
  ``scatter_reduce(amax)`` and ``index_add_``, and the weighted values summed into their queries with
  ``index_add_``: work and memory O(``|E|``·d), on any device;
- ``"flex"`` — FlexAttention (CUDA) with the pattern's mask as a mask function, which it turns into
  block-sparse work (:func:`reference.layers.attend`);
- ``"explicit"`` / ``"sdpa"`` — the dense paths on the pattern's mask, for comparison.
"""

from __future__ import annotations

import math

from formal.errors import ConfigError
from formal.ops import check_empty_policy, empty_neighbourhood
from formal.graphs.pattern import as_pattern

from . import require_torch
from . import layers
from .layers import _attend_heads, _heads, attend

__all__ = ["attend_edges", "attention", "mhattention", "GRAPH_PATHS"]

torch = require_torch()

GRAPH_PATHS = ("scatter", "flex", "explicit", "sdpa")


def attend_edges(Q, K, V, keys, queries, *, empty="zero"):
    """Lines 4–6 of Algorithm 4 along the edges ``keys[e] → queries[e]`` (1-D long tensors).

    Q (B, H, ℓ_x, d_attn), K (B, H, ℓ_z, d_attn), V (B, H, ℓ_z, d_v) → (B, H, ℓ_x, d_v).  A query with no
    edge gets zeros, NaN or a DomainError by ``empty`` (design decision 7).
    """
    check_empty_policy(empty)
    B, H, ell_x, _ = Q.shape
    degree = torch.bincount(queries, minlength=ell_x)
    lonely = degree == 0
    if empty == "error" and bool(lonely.any()):
        raise empty_neighbourhood(torch.nonzero(lonely).flatten().tolist())
    s = (Q[:, :, queries] * K[:, :, keys]).sum(-1) / math.sqrt(Q.shape[-1])  # (B, H, |E|) the scores
    top = torch.full((B, H, ell_x), -math.inf, dtype=s.dtype, device=s.device)
    top = top.scatter_reduce(2, queries.expand(B, H, -1), s, "amax")         # per query, for stability
    w = torch.exp(s - top[:, :, queries])
    total = torch.zeros_like(top).index_add_(2, queries, w)
    alpha = w / total[:, :, queries]                                         # the softmax over N(q)
    Y = torch.zeros(B, H, ell_x, V.shape[-1], dtype=V.dtype, device=V.device)
    Y.index_add_(2, queries, alpha[..., None] * V[:, :, keys])               # Σ_k α_kq v_k
    if empty == "nan":
        Y[:, :, lonely] = math.nan
    return Y


def _pattern(pattern, X, Z):
    return as_pattern(pattern, ell_z=Z.shape[1], ell_x=X.shape[1], inputs=("Z", "X"))


def _attend_fn(pattern, path, device):
    """An ``attend(Q, K, V, mask, empty, path)`` stand-in that runs ``path`` over ``pattern``."""
    if path not in GRAPH_PATHS:
        raise ConfigError(f"unknown graph attention path {path!r}; known: {', '.join(GRAPH_PATHS)}")
    if path == "scatter":
        keys = torch.from_numpy(pattern.keys.copy()).to(device)                # the pattern's arrays are read-only
        queries = torch.from_numpy(pattern.queries.copy()).to(device)
        return lambda Q, K, V, mask, *, empty, path: attend_edges(Q, K, V, keys, queries, empty=empty), None
    mask = torch.as_tensor(pattern.mask().T, device=device)                  # (ℓ_x, ℓ_z), rows are queries
    return attend, mask


def attention(pattern, X, Z=None, *, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None, empty="zero", path="scatter"):
    """Algorithm 4 over ``pattern``: X (B, ℓ_x, d_x), Z (B, ℓ_z, d_z) → (B, ℓ_x, d_out)."""
    Z = X if Z is None else Z
    pattern = _pattern(pattern, X, Z)
    fn, mask = _attend_fn(pattern, path, X.device)
    return layers.attention(X, Z, mask, W_q=W_q, W_k=W_k, W_v=W_v, b_q=b_q, b_k=b_k, b_v=b_v, empty=empty,
                            path=path, attend_fn=fn)


def mhattention(pattern, X, Z=None, *, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None, empty="zero",
                path="scatter"):
    """Algorithm 5 (grouped-query when W_k has fewer heads) over ``pattern``: (B, ℓ_x, d_x) → (B, ℓ_x, d_out)."""
    Z = X if Z is None else Z
    pattern = _pattern(pattern, X, Z)
    fn, mask = _attend_fn(pattern, path, X.device)
    K, V = _heads(Z, W_k, b_k), _heads(Z, W_v, b_v)
    return _attend_heads(X, K, V, mask, W_q, b_q, W_o, b_o, empty, path, attend_fn=fn)
