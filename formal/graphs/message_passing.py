"""Attention as message passing on a graph: Algorithms 4 and 5 with the mask given as a pattern.

Every query node ``q`` receives one message per in-edge ``k → q``: the value ``v_k = W_v z_k + b_v`` weighted
by the softmax, over ``q``'s in-neighbours ``N(q)``, of the scores ``q_qᵀ k_k / √d_attn``:

.. math:: \\tilde v_q = \\sum_{k \\in N(q)} \\frac{\\exp(s_{kq})}{\\sum_{k' \\in N(q)} \\exp(s_{k'q})}\\, v_k,
    \\qquad s_{kq} = \\frac{(W_q x_q + b_q)^\\top (W_k z_k + b_k)}{\\sqrt{d_\\mathrm{attn}}}

which is Algorithm 4 with ``Mask[k, q] = [[k → q ∈ E]]``.  A query with no in-edge (an empty
neighbourhood) gets zeros, NaN, or a DomainError by ``empty`` (:ref:`decision-empty-neighbourhood`), as in the core.

Two executors compute it:

- ``"loop"`` — the specification, read off the formula above: a Python loop over the query nodes of the
  networkx graph and over each one's predecessors;
- ``"edges"`` — vectorised, a chunk of queries at a time.  A chunk whose keys lie in a narrow range (a
  window, a block, a causal band) is a small dense block: one matrix product for its scores, the pattern as
  its mask, one for the weighted values.  Any other chunk gathers its edges: scores per edge, a segmented
  softmax (``reduceat`` over each query's run of edges), a segmented sum of the weighted values.  Time is
  O(``|E|``·d) — at most ``BLOCK_RATIO`` times it in blocks — and memory O(ℓ·d) plus a fixed chunk, never
  O(ℓ²); the chunk's work arrays are made once per call.

Arrays follow the paper's layout: one column per token (``X`` is d_x×ℓ_x).

Examples
--------
>>> import numpy as np
>>> from formal import attention as alg4
>>> from formal.graphs import patterns
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(4, 6))
>>> W = {name: rng.normal(size=(3, 4)) for name in ("W_q", "W_k", "W_v")}
>>> p = patterns.sliding_window(6, 2)
>>> np.allclose(attention(p, X, **W), alg4(X=X, mask=p.mask(), **W, b_q=np.zeros(3), b_k=np.zeros(3),
...                                         b_v=np.zeros(3)), rtol=0, atol=1e-12)
True
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

from ..errors import ConfigError, one_of
from ..guards.arrays import real_array
from ..ops import check_empty_policy, empty_neighbourhood
from . import memory
from .pattern import as_pattern

__all__ = ["attention", "mhattention", "propagate_loop", "propagate_edges", "EXECUTORS"]

EXECUTORS = ("edges", "loop")
MAX_EDGES = 1 << 12  # edges per chunk: bounds the working memory and keeps a chunk's gathers in cache


def _columns(name, A):
    A = real_array(name, A)
    if A.ndim != 2:
        raise ConfigError(f"{name} must be a matrix with one column per token, got shape {A.shape}")
    return A


def _bias(name):
    """The bias beside a weight: ``b_q`` for ``W_q``."""
    return "b" + name[1:]


def _project(W, A, b, name):
    W = real_array(name, W)
    if W.ndim != 2 or W.shape[1] != A.shape[0]:
        raise ConfigError(f"{name} has shape {W.shape} but the tokens have {A.shape[0]} rows")
    out = W @ A
    return out if b is None else out + real_array(_bias(name), b)[:, None]


def _empty_check(pattern, empty):
    check_empty_policy(empty, edges=True)
    lonely = np.flatnonzero(pattern.in_degree == 0)
    if lonely.size and empty == "error":
        raise empty_neighbourhood(lonely.tolist())
    return lonely


def propagate_loop(G, Q, K, V, *, empty="zero") -> np.ndarray:
    """The readable executor: for each query node, softmax over its predecessors' scores, sum their values.

    ``G`` is a pattern's networkx graph (:meth:`~formal.graphs.pattern.Pattern.to_networkx`); ``Q`` is
    d_attn×ℓ_x, ``K`` d_attn×ℓ_z, ``V`` d_v×ℓ_z.  Returns d_v×ℓ_x.
    """
    Q, K, V = _columns("Q", Q), _columns("K", K), _columns("V", V)
    pattern = as_pattern(G, ell_z=K.shape[1], ell_x=Q.shape[1])
    _empty_check(pattern, empty)
    if not isinstance(G, nx.DiGraph):
        G = pattern.to_networkx()                                         # an undirected graph or a mask
    Y = np.zeros((V.shape[0], Q.shape[1]))
    for q in range(Q.shape[1]):
        senders = sorted(node if pattern.self_attention else node[1]
                         for node in G.predecessors(pattern.node(q, "x")))
        if not senders:
            Y[:, q] = np.nan if empty == "nan" else 0.0
            continue
        scores = np.array([Q[:, q] @ K[:, k] / math.sqrt(Q.shape[0]) for k in senders])
        weights = np.exp(scores - scores.max())
        weights /= weights.sum()
        Y[:, q] = sum(w * V[:, k] for w, k in zip(weights, senders))
    return Y


def propagate_edges(pattern, Q, K, V, *, empty="zero", max_edges: int = MAX_EDGES) -> np.ndarray:
    """The vectorised executor over the edge arrays (same arguments and result as :func:`propagate_loop`).

    Queries go in chunks of at most ``max_edges`` edges.  A chunk whose keys lie in a narrow range — a
    window, a block, a causal band: at most ``BLOCK_RATIO`` times as many (query, key) pairs in the range as
    edges — is computed as a small dense block: one matrix product for its scores, its pattern as a mask,
    one for its values.  Any other chunk gathers its edges' rows.  Both work in buffers made once.
    """
    Q, K, V = _columns("Q", Q), _columns("K", K), _columns("V", V)
    pattern = as_pattern(pattern, ell_z=K.shape[1], ell_x=Q.shape[1])
    if isinstance(max_edges, bool) or not isinstance(max_edges, (int, np.integer)) or max_edges < 1:
        raise ConfigError(f"max_edges = {max_edges!r} must be a positive integer")
    lonely = _empty_check(pattern, empty)
    _afford(pattern, Q.shape[0], V.shape[0], max_edges)
    Qt, Kt, Vt = (np.ascontiguousarray(A.T) for A in (Q, K, V))          # one row per token
    Y = np.zeros((Q.shape[1], V.shape[0]))                                # (ℓ_x, d_v)
    scale = 1.0 / math.sqrt(Q.shape[0])
    # A block multiplies every value in its key range, by 0 where there is no edge: an infinite or NaN value
    # there would make 0·∞ = NaN, where the definition never reads it.  Then every chunk gathers.
    finite = bool(np.isfinite(Vt).all() and np.isfinite(Kt).all())
    plan = [(span, finite and blockwise(*span)) for span in pattern.spans(max_edges)]
    work = _Buffers(max([(q1 - q0) * (k1 - k0) for (q0, q1, _, _, k0, k1), block in plan if block], default=0),
                    max([e1 - e0 for (_, _, e0, e1, _, _), block in plan if not block], default=0),
                    Q.shape[0], V.shape[0])
    for (q0, q1, e0, e1, k0, k1), block in plan:
        keys, queries = pattern.keys[e0:e1], pattern.queries[e0:e1]
        if block:
            _block(Qt, Kt, Vt, Y, keys, queries, q0, q1, k0, k1, scale, work)
        else:
            _gather(pattern, Qt, Kt, Vt, Y, keys, queries, q0, q1, e0, scale, work)
    if empty == "nan":
        Y[lonely] = np.nan
    return Y.T


#: A chunk is computed as a dense block when its key range holds at most this many times its edges.
BLOCK_RATIO = 2


def blockwise(q0, q1, e0, e1, k0, k1) -> bool:
    """Whether a chunk of :meth:`~formal.graphs.pattern.Pattern.spans` runs as a dense block: its queries
    times its key range at most ``BLOCK_RATIO`` times its edges."""
    return (q1 - q0) * (k1 - k0) <= BLOCK_RATIO * (e1 - e0)


class _Buffers:
    """Work arrays for the largest block (``entries`` scores) and the largest gathered chunk (``edges`` rows),
    made once per call and viewed at each chunk's size: no allocation per chunk."""

    def __init__(self, entries, edges, d_attn, d_v):
        self.scores = np.empty(entries)
        self.admitted = np.empty(entries, dtype=bool)
        self.queries = np.empty((edges, d_attn))
        self.keys = np.empty((edges, d_attn))
        self.values = np.empty((edges, d_v))

    def view(self, name, shape):
        size = math.prod(shape)
        return getattr(self, name).reshape(-1)[:size].reshape(shape)


def _block(Qt, Kt, Vt, Y, keys, queries, q0, q1, k0, k1, scale, work):
    """Queries ``q0…q1−1`` against keys ``k0…k1−1`` as one dense block masked by the chunk's edges."""
    S = work.view("scores", (q1 - q0, k1 - k0))
    np.matmul(Qt[q0:q1], Kt[k0:k1].T, out=S)
    S *= scale
    admitted = work.view("admitted", S.shape)
    admitted.fill(False)
    admitted[queries - q0, keys - k0] = True
    np.copyto(S, -np.inf, where=~admitted)
    top = S.max(axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0                                          # a query without edges: a row of zeros
    S -= top
    np.exp(S, out=S)                                                      # exp(−inf) = 0: only the edges weigh
    total = S.sum(axis=1, keepdims=True)
    total[total == 0] = 1.0
    S /= total
    np.matmul(S, Vt[k0:k1], out=Y[q0:q1])


def _gather(pattern, Qt, Kt, Vt, Y, keys, queries, q0, q1, e0, scale, work):
    """The chunk's edges one by one: each edge's query and key rows gathered, a segmented softmax."""
    n = keys.size
    q_rows, k_rows, v_rows = (work.view(name, (n, A.shape[1])) for name, A in (("queries", Qt), ("keys", Kt),
                                                                             ("values", Vt)))
    np.take(Qt, queries, axis=0, out=q_rows)
    np.take(Kt, keys, axis=0, out=k_rows)
    np.take(Vt, keys, axis=0, out=v_rows)
    s = np.einsum("ed,ed->e", q_rows, k_rows) * scale                    # (edges,) the scores
    degree = pattern.in_degree[q0:q1]
    rows = np.flatnonzero(degree) + q0                                    # queries with a neighbour
    starts, counts = pattern.indptr[rows] - e0, degree[degree > 0]
    w = np.exp(s - np.repeat(np.maximum.reduceat(s, starts), counts))    # softmax, stable
    w /= np.repeat(np.add.reduceat(w, starts), counts)
    v_rows *= w[:, None]
    Y[rows] = np.add.reduceat(v_rows, starts, axis=0)                     # Σ_k α_kq v_k


def _afford(pattern, d_attn, d_v, max_edges):
    """Refuse what :func:`propagate_edges` would hold beyond the memory limit: chunks of at most ``max_edges``
    edges, or one query's in-degree if larger (:func:`formal.graphs.memory.attention_bytes`)."""
    widest = int(pattern.in_degree.max(initial=0))
    chunk = min(pattern.n_edges, max(max_edges, widest))
    memory.require(memory.attention_bytes(chunk, pattern.ell_z, pattern.ell_x, d_attn, d_v),
                   f"attention over {pattern!r} with d_attn = {d_attn}, d_v = {d_v} (chunks of "
                   f"{memory.number(chunk)} edges)")


def _propagate(executor):
    if one_of("executor", executor, EXECUTORS) == "edges":
        return lambda p, Q, K, V, empty: propagate_edges(p, Q, K, V, empty=empty)
    return lambda p, Q, K, V, empty: propagate_loop(p.to_networkx(), Q, K, V, empty=empty)


def _inputs(pattern, X, Z):
    X = _columns("X", X)
    Z = X if Z is None else _columns("Z", Z)
    return as_pattern(pattern, ell_z=Z.shape[1], ell_x=X.shape[1], inputs=("Z" if Z is not X else "X", "X")), X, Z


def attention(pattern, X, Z=None, *, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None, empty="zero",
              executor="edges") -> np.ndarray:
    """Algorithm 4 on a graph: ``X`` (d_x×ℓ_x) attends to ``Z`` (d_z×ℓ_z, default ``X``) along the edges
    of ``pattern`` (a :class:`~formal.graphs.pattern.Pattern`, a networkx graph or a 0/1 mask).

    Parameters are the spec's (``formal-transformers show attention --params``); biases may be omitted.
    Returns d_out×ℓ_x.
    """
    pattern, X, Z = _inputs(pattern, X, Z)
    Q, K, V = _project(W_q, X, b_q, "W_q"), _project(W_k, Z, b_k, "W_k"), _project(W_v, Z, b_v, "W_v")
    return _propagate(executor)(pattern, Q, K, V, empty)


def mhattention(pattern, X, Z=None, *, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None,
                empty="zero", executor="edges") -> np.ndarray:
    """Algorithm 5 on a graph: H heads (``W_q`` is H×d_attn×d_x) of :func:`attention`, stacked and projected
    by ``W_o``.  With fewer key/value heads (``W_k`` H_kv×d_attn×d_z) it is grouped-query attention: query
    head ``h`` uses key/value head ``h // (H/H_kv)``, as in the core."""
    pattern, X, Z = _inputs(pattern, X, Z)
    W_q, W_k, W_v = (real_array(name, W) for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)))
    b_q, b_k, b_v = (None if b is None else real_array(name, b) for name, b in (("b_q", b_q), ("b_k", b_k),
                                                                                  ("b_v", b_v)))
    H, n_kv = (W.shape[0] if W.ndim else 0 for W in (W_q, W_k))
    if W_q.ndim != 3 or W_k.ndim != 3 or W_v.ndim != 3 or W_v.shape[0] != n_kv or not n_kv or H % n_kv:
        raise ConfigError(f"W_q, W_k, W_v must be stacked per head with H = {H} divisible by the key/value heads "
                          f"H_kv = {n_kv}; got shapes {W_q.shape}, {W_k.shape}, {W_v.shape}")
    def pick(b, h):
        return (None if b is None else b[h])
    propagate = _propagate(executor)
    keys = [_project(W_k[g], Z, pick(b_k, g), "W_k") for g in range(n_kv)]
    values = [_project(W_v[g], Z, pick(b_v, g), "W_v") for g in range(n_kv)]
    heads = [propagate(pattern, _project(W_q[h], X, pick(b_q, h), "W_q"), keys[h // (H // n_kv)],
                       values[h // (H // n_kv)], empty) for h in range(H)]
    return _project(W_o, np.vstack(heads), b_o, "W_o")                   # W_o [Y¹; …; Yᴴ] + b_o 1ᵀ
