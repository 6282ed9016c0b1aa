"""Attention over a graph pattern in torch: Algorithms 4 and 5 as message passing with index/scatter.

The torch counterpart of :mod:`formal.graphs.message_passing`, batch-first like the rest of the reference:
``X`` is (B, ℓ_x, d_x).  Paths:

- ``"scatter"`` — the queries in chunks of at most ``max_edges`` edges (:func:`attend_pattern`).  A chunk
  whose keys lie in a narrow range (a window, a block, a causal band) is one small dense block, masked by
  its edges; any other gathers its edges — per-edge scores ``(Q[q] · K[k]) / √d_attn``, a segmented softmax
  with ``scatter_reduce(amax)`` and ``index_add_``, the weighted values summed into their queries
  (:func:`attend_edges`).  Work O(``|E|``·d), memory O(ℓ·d) plus one chunk, on any device;
- ``"flex"`` — FlexAttention (CUDA) with the pattern's mask as a mask function, which it turns into
  block-sparse work (:func:`reference.model.attention.attend`);
- ``"explicit"`` / ``"sdpa"`` — the dense paths on the pattern's ℓ_z×ℓ_x mask;
- ``"auto"`` (the default) — :func:`choose_path`: the dense ``"sdpa"`` path where the pattern is dense enough
  for it to win and its mask fits in memory, else ``"scatter"``; ``choose_path(pattern, device)`` says which
  path a call takes.

**The crossover.**  On 2 CPU cores in float32 (``python benchmarks/bench_executors.py --crossover``), an edge the
scatter path gathers costs about thirty entries of SDPA's dense ℓ×ℓ attention (random keys at ℓ = 4,096 and
d = 64: the dense path wins from a density of about 4 %), and an entry of a dense block about one and a half;
``"auto"`` compares the two works (:func:`choose_path`).  A window of 256 at ℓ = 16,384 runs about 25× faster
than SDPA on its mask and in a hundredth of its memory (``python benchmarks/bench_executors.py``).
"""

from __future__ import annotations

import math

import numpy as np

from formal.errors import ConfigError
from formal.graphs.message_passing import blockwise
from formal.graphs.pattern import as_pattern
from formal.ops import check_empty_policy, empty_neighbourhood

from .. import require_torch
from . import attention as dense
from .attention import attend, attend_heads, heads

__all__ = ["attend_edges", "attend_pattern", "attention", "mhattention", "choose_path", "GRAPH_PATHS"]

torch = require_torch()

GRAPH_PATHS = ("auto", "scatter", "flex", "explicit", "sdpa")
#: Edges per chunk of the scatter path: bounds its working memory (B·H·chunk·d) and keeps blocks small.
MAX_EDGES = 1 << 14
#: The scatter path's cost, in entries of the dense ℓ_z×ℓ_x attention SDPA computes (measured, see above): an
#: entry of a dense block costs about as much, an edge gathered one by one some thirty times more.
BLOCK_COST = 1.5
GATHER_COST = 30.0


def attend_edges(Q, K, V, keys, queries, *, empty="zero"):
    """Lines 4–6 of Algorithm 4 along the edges ``keys[e] → queries[e]`` (1-D long tensors).

    Q (B, H, ℓ_x, d_attn), K (B, H, ℓ_z, d_attn), V (B, H, ℓ_z, d_v) → (B, H, ℓ_x, d_v).  A query with no
    edge gets zeros, NaN or a DomainError by ``empty`` (:ref:`decision-empty-neighbourhood`).
    """
    check_empty_policy(empty, edges=True)
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


def attend_pattern(Q, K, V, pattern, *, empty="zero", max_edges: int = MAX_EDGES):
    """Lines 4–6 of Algorithm 4 over ``pattern``, a chunk of queries at a time (the ``"scatter"`` path).

    Q (B, H, ℓ_x, d_attn), K (B, H, ℓ_z, d_attn), V (B, H, ℓ_z, d_v) → (B, H, ℓ_x, d_v).  A chunk whose keys
    span few more pairs than its edges is one dense block masked by its edges (when K and V are
    finite: a block multiplies the values it does not admit by 0, and 0·∞ is NaN); any other gathers its
    edges (:func:`attend_edges`), as :func:`formal.graphs.message_passing.blockwise` decides.  Memory: the
    outputs and one chunk's B·H·``max_edges``·d.
    """
    check_empty_policy(empty, edges=True)
    if isinstance(max_edges, bool) or not isinstance(max_edges, int) or max_edges < 1:
        raise ConfigError(f"max_edges = {max_edges!r} must be a positive integer")
    B, H, ell_x, d = Q.shape
    lonely = np.flatnonzero(pattern.in_degree == 0)
    if empty == "error" and lonely.size:
        raise empty_neighbourhood(lonely.tolist())
    Y = torch.zeros(B, H, ell_x, V.shape[-1], dtype=V.dtype, device=V.device)
    blocks = bool(torch.isfinite(K).all()) and bool(torch.isfinite(V).all())
    scale = 1.0 / math.sqrt(d)
    for q0, q1, e0, e1, k0, k1 in pattern.spans(max_edges):
        keys = torch.from_numpy(pattern.keys[e0:e1].copy()).to(Q.device)  # the pattern's arrays are read-only
        queries = torch.from_numpy(pattern.queries[e0:e1] - q0).to(Q.device)
        if blocks and blockwise(q0, q1, e0, e1, k0, k1):
            admitted = torch.zeros(q1 - q0, k1 - k0, dtype=torch.bool, device=Q.device)
            admitted[queries, keys - k0] = True
            S = (Q[:, :, q0:q1] @ K[:, :, k0:k1].transpose(-1, -2) * scale).masked_fill(~admitted, -math.inf)
            top = S.amax(-1, keepdim=True)
            w = torch.exp(S - torch.where(torch.isfinite(top), top, torch.zeros_like(top)))
            total = w.sum(-1, keepdim=True)
            Y[:, :, q0:q1] = (w / torch.where(total > 0, total, torch.ones_like(total))) @ V[:, :, k0:k1]
        else:
            Y[:, :, q0:q1] = attend_edges(Q[:, :, q0:q1], K, V, keys, queries)
    if empty == "nan":
        Y[:, :, torch.from_numpy(lonely).to(Y.device)] = math.nan
    return Y


def choose_path(pattern, device) -> str:
    """The path ``path="auto"`` takes for ``pattern`` on ``device``: ``"sdpa"`` (dense, on the mask) when its
    ℓ_z·ℓ_x entries cost less than the scatter path's work — ``BLOCK_COST`` per entry of its blocks,
    ``GATHER_COST`` per edge it gathers (measured, see above) — and the dense mask, scores and weights fit
    under the memory limit (:mod:`formal.guards.limits`); else ``"scatter"``.  The costs were measured on the CPU;
    on CUDA the same comparison is made (never measured there)."""
    from formal.graphs import memory
    from formal.guards.limits import max_memory
    pattern = as_pattern(pattern)
    work = 0.0
    for q0, q1, e0, e1, k0, k1 in pattern.spans(MAX_EDGES):
        block = blockwise(q0, q1, e0, e1, k0, k1)
        work += BLOCK_COST * (q1 - q0) * (k1 - k0) if block else GATHER_COST * (e1 - e0)
    dense = pattern.ell_z * pattern.ell_x
    fits = memory.mask_bytes(pattern.ell_z, pattern.ell_x) + 8 * dense <= max_memory()
    return "sdpa" if dense < work and fits else "scatter"


def _pattern(pattern, X, Z):
    return as_pattern(pattern, ell_z=Z.shape[1], ell_x=X.shape[1], inputs=("Z", "X"))


def _attend_fn(pattern, path, device):
    """``(attend, mask, path)``: an ``attend(Q, K, V, mask, empty, path)`` stand-in that runs ``path`` over
    ``pattern`` (``"auto"`` resolved by :func:`choose_path`)."""
    if path not in GRAPH_PATHS:
        raise ConfigError(f"unknown graph attention path {path!r}; known: {', '.join(GRAPH_PATHS)}")
    if path == "auto":
        path = choose_path(pattern, device)
    if path == "scatter":
        return lambda Q, K, V, mask, *, empty, path: attend_pattern(Q, K, V, pattern, empty=empty), None, path
    mask = torch.as_tensor(pattern.mask().T, device=device)                  # (ℓ_x, ℓ_z), rows are queries
    return attend, mask, path


def attention(pattern, X, Z=None, *, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None, empty="zero", path="auto"):
    """Algorithm 4 over ``pattern``: X (B, ℓ_x, d_x), Z (B, ℓ_z, d_z) → (B, ℓ_x, d_out)."""
    Z = X if Z is None else Z
    pattern = _pattern(pattern, X, Z)
    fn, mask, path = _attend_fn(pattern, path, X.device)
    return dense.attention(X, Z, mask, W_q=W_q, W_k=W_k, W_v=W_v, b_q=b_q, b_k=b_k, b_v=b_v, empty=empty,
                            path=path, attend_fn=fn)


def mhattention(pattern, X, Z=None, *, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None, empty="zero",
                path="auto"):
    """Algorithm 5 (grouped-query when W_k has fewer heads) over ``pattern``: (B, ℓ_x, d_x) → (B, ℓ_x, d_out)."""
    Z = X if Z is None else Z
    pattern = _pattern(pattern, X, Z)
    fn, mask, path = _attend_fn(pattern, path, X.device)
    K, V = heads(Z, W_k, b_k), heads(Z, W_v, b_v)
    return attend_heads(X, K, V, mask, W_q, b_q, W_o, b_o, empty, path, attend_fn=fn)
