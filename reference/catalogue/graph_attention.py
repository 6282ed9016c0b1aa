"""The graph attention layer (GAT, Veličković et al. 2018; GATv2, Brody et al. 2022), as a user would write it
from the spec's docstrings, and its planted bugs.

numpy only, the paper's column layout: X is d_in×ℓ (one column per node), ``A[j, i] = 1`` for an edge j → i
(column i: node i's in-neighbours), self-loops added by option.  Per head h:

- version 1: ``Z = W^h X``, ``S[j, i] = LeakyReLU(a_l^hᵀ z_i + a_r^hᵀ z_j)``, values Z;
- version 2: ``Z_s = W_s^h X + b_s^h``, ``Z_t = W_t^h X + b_t^h``, ``S[j, i] = a^hᵀ LeakyReLU(z_t,i + z_s,j)``,
  values Z_s;

``Y^h = values · softmax(S)`` with the softmax of column i over i's neighbours only (a node with none gets 0),
the heads stacked ``[Y^1; …; Y^H]`` or averaged, then ``+ b 1ᵀ``.  Two correct implementations: :func:`gat`
(dense: every pair scored, then masked) and :func:`gat_messages` (PyG's message passing: an edge list, a
score per edge, a softmax grouped by target, a scatter-sum of the messages).

Each factory takes the variant's options and returns the function conform calls; the keyword-only
``_``-arguments are the seams the catalogue plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .entry import Entry, Implementation, makers
from .numerics import affine

__all__ = ["leaky_relu", "neighbourhood", "neighbour_softmax", "scores", "combine", "gat", "gat_messages",
           "IMPLEMENTATIONS", "MUTANTS", "CONTROLS", "EQUIVALENT"]


def leaky_relu(a, slope):
    """``x`` where positive, ``s·x`` elsewhere."""
    return np.where(a > 0, a, slope * a)


def neighbourhood(A, n: int, self_loops: bool) -> np.ndarray:
    """The boolean n×n neighbourhoods: A (every pair when omitted), with ``A ∨ I`` under self-loops."""
    N = np.ones((n, n), dtype=bool) if A is None else np.asarray(A).astype(bool)
    return N | np.eye(n, dtype=bool) if self_loops else N


def neighbour_softmax(S, N):
    """Each column of S normalised over the rows N admits; a column N admits none of is 0."""
    S = np.where(N, S, -np.inf)
    top = np.max(S, axis=0, keepdims=True)
    E = np.where(N, np.exp(S - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = E.sum(axis=0, keepdims=True)
    return E / np.where(total > 0, total, 1.0)


def scores(version, X, p, h, slope, *, _leaky=leaky_relu, _swap=False, _values="source", _inside=True):
    """Head h's scores S (ℓ×ℓ, ``S[j, i]`` for the edge j → i) and its values (d_out×ℓ); ``p`` the parameters."""
    if version == 1:
        Z = p["W"][h] @ X
        a_l, a_r = (p["a_r"][h], p["a_l"][h]) if _swap else (p["a_l"][h], p["a_r"][h])
        return _leaky(np.add.outer(a_r @ Z, a_l @ Z), slope), Z
    b_s, b_t = (None, None) if p.get("b_s") is None else (p["b_s"][h], p["b_t"][h])
    Z_s, Z_t = affine(p["W_s"][h], X, b_s), affine(p["W_t"][h], X, b_t)
    sums = Z_s[:, :, None] + Z_t[:, None, :]                                  # d_out×ℓ_z×ℓ_x
    S = (np.einsum("d,dzx->zx", p["a"][h], _leaky(sums, slope)) if _inside
         else _leaky(np.einsum("d,dzx->zx", p["a"][h], sums), slope))       # GAT's form on GATv2's weights
    return S, (Z_s if _values == "source" else Z_t)


def combine(outputs, heads):
    """``[Y^1; …; Y^H]`` (head 1 on top) or their mean."""
    return np.concatenate(outputs, axis=0) if heads == "concat" else np.mean(outputs, axis=0)


def gat(*, version=1, heads="concat", self_loops=True, bias=True, slope=0.2, _scores=scores,
        _softmax=neighbour_softmax, _neighbourhood=neighbourhood, _combine=combine, _score_seams=None):
    """The graph attention layer, dense: every pair scored, masked to the neighbourhoods, softmax per column."""
    seams = dict(_score_seams or {})

    def gat(X, A=None, W=None, a_l=None, a_r=None, W_s=None, W_t=None, b_s=None, b_t=None, a=None, b=None):
        p = {"W": W, "a_l": a_l, "a_r": a_r, "W_s": W_s, "W_t": W_t, "b_s": b_s if bias else None,
             "b_t": b_t if bias else None, "a": a}
        N = _neighbourhood(A, X.shape[1], self_loops)
        H = len(W if version == 1 else W_s)
        outputs = []
        for h in range(H):
            S, values = _scores(version, X, p, h, slope, **seams)
            outputs.append(values @ _softmax(S, N))
        Y = _combine(outputs, heads)
        return Y + b[:, None] if bias and b is not None else Y
    return gat


def _edges(A, n, self_loops, *, _keep_given_loops=False):
    """PyG's edge list (sources, targets) of the adjacency: with self-loops, the given ones removed and one per
    node appended (``remove_self_loops`` then ``add_self_loops``)."""
    sources, targets = np.nonzero(np.ones((n, n), dtype=bool) if A is None else np.asarray(A).astype(bool))
    if self_loops:
        if not _keep_given_loops:
            kept = sources != targets
            sources, targets = sources[kept], targets[kept]
        sources, targets = np.concatenate([sources, np.arange(n)]), np.concatenate([targets, np.arange(n)])
    return sources, targets


def gat_messages(*, version=1, heads="concat", self_loops=True, bias=True, slope=0.2, _keep_given_loops=False):
    """The graph attention layer as PyG computes it: one score per edge, a softmax grouped by target node (its
    maximum and sum by scatter), every target's messages ``α_e z_source`` scatter-summed."""
    def gat_messages(X, A=None, W=None, a_l=None, a_r=None, W_s=None, W_t=None, b_s=None, b_t=None, a=None,
                     b=None):
        n = X.shape[1]
        sources, targets = _edges(A, n, self_loops, _keep_given_loops=_keep_given_loops)
        outputs = []
        for h in range(len(W if version == 1 else W_s)):
            if version == 1:
                Z = W[h] @ X
                e = leaky_relu(a_r[h] @ Z[:, sources] + a_l[h] @ Z[:, targets], slope)
                values = Z
            else:
                values = affine(W_s[h], X, b_s[h] if bias else None)
                Z_t = affine(W_t[h], X, b_t[h] if bias else None)
                e = a[h] @ leaky_relu(values[:, sources] + Z_t[:, targets], slope)
            top = np.full(n, -np.inf)
            np.maximum.at(top, targets, e)
            weight = np.exp(e - top[targets])
            total = np.zeros(n)
            np.add.at(total, targets, weight)
            alpha = weight / total[targets]
            out = np.zeros((len(values), n))
            np.add.at(out.T, targets, (alpha * values[:, sources]).T)
            outputs.append(out)
        Y = combine(outputs, heads)
        return Y + b[:, None] if bias and b is not None else Y
    return gat_messages


# ------------------------------------------------------------------------------------- planted pieces
def _rows_softmax(S, N):
    """Each row (source) normalised over its out-neighbours: the softmax over the wrong axis."""
    return neighbour_softmax(S.T, N.T).T


def _softmax_then_mask(S, N):
    """A softmax over every node, then the non-neighbours' weights zeroed: columns no longer sum to 1."""
    E = np.exp(S - S.max(axis=0, keepdims=True))
    return np.where(N, E / E.sum(axis=0, keepdims=True), 0.0)


def _unguarded_softmax(S, N):
    """The neighbour softmax without the guard for a node with no neighbour: 0/0 = NaN there."""
    S = np.where(N, S, -np.inf)
    with np.errstate(invalid="ignore"):
        E = np.exp(S - S.max(axis=0, keepdims=True))
        return E / E.sum(axis=0, keepdims=True)


def _node_major(outputs, heads):
    """The heads interleaved, row ``o·H + h`` instead of ``h·d_out + o``: a (ℓ, d_out, H) reshape."""
    return np.stack(outputs, axis=-1).reshape(-1, outputs[0].shape[1]) if heads == "concat" \
        else np.mean(outputs, axis=0)


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("gat", gat,
                   seconds={"quick": (0.4, 0.06), "thorough": (1.1, 0.33)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_V2 = {"version": 2}
_BARE = {"self_loops": False}

MUTANTS = (
    _seam("gat_softmax_over_sources", "gat", {},
          "normalises each source's scores over its out-neighbours (the softmax over the wrong axis)", "review",
          _softmax=_rows_softmax),
    _seam("gat_softmax_before_mask", "gat", {},
          "takes the softmax over every node and then zeroes the non-neighbours: a column sums to less than 1",
          "review", _softmax=_softmax_then_mask),
    _seam("gat_nan_for_a_node_without_neighbours", "gat", _BARE,
          "divides by the neighbours' sum unguarded: NaN (0/0) for a node with no in-edge", "review",
          _softmax=_unguarded_softmax),
    _seam("gat_scores_without_leaky_relu", "gat", {},
          "scores a_lᵀ z_i + a_rᵀ z_j without the LeakyReLU", "review",
          _score_seams={"_leaky": lambda a, slope: a}),
    _seam("gat_v2_scores_without_leaky_relu", "gat", _V2,
          "scores aᵀ(W_t x_i + W_s x_j) without the LeakyReLU", "review",
          _score_seams={"_leaky": lambda a, slope: a}),
    _seam("gat_v2_leaky_relu_outside", "gat", _V2,
          "applies the LeakyReLU after the contraction with a (version 1's form, which GATv2 exists to change)",
          "variant option version", _score_seams={"_inside": False}),
    _variant("gat_slope_torch_default", "gat", {}, {"slope": 0.01},
             "uses torch's default negative slope 0.01 under the default slope=0.2"),
    _variant("gat_slope_ignored", "gat", {"slope": 0.01}, {"slope": 0.2}, "keeps the slope 0.2 under slope=0.01"),
    _seam("gat_relu_for_leaky_relu", "gat", {},
          "applies a ReLU (negative slope 0) where the LeakyReLU is", "review",
          _score_seams={"_leaky": lambda a, slope: np.maximum(a, 0.0)}),
    _seam("gat_attention_vector_halves_swapped", "gat", {},
          "swaps a head's a_l and a_r: a_r scores the target, a_l the source", "review",
          _score_seams={"_swap": True}),
    _seam("gat_v2_values_from_target_transform", "gat", _V2,
          "weights the target transform W_t x_j instead of the source transform W_s x_j", "review",
          _score_seams={"_values": "target"}),
    _variant("gat_self_loops_missing", "gat", {}, {"self_loops": False},
             "leaves out the self-loops under the default self_loops=true"),
    _variant("gat_self_loops_added_anyway", "gat", _BARE, {"self_loops": True},
             "adds self-loops under self_loops=false"),
    _seam("gat_in_edges_read_as_out_edges", "gat", _BARE,
          "attends over out-neighbours: reads A[i, j] as the edge j → i", "review",
          _neighbourhood=lambda A, n, self_loops: neighbourhood(A, n, self_loops).T),
    _seam("gat_heads_interleaved", "gat", {},
          "concatenates the heads node-major, row o·H + h instead of h·d_out + o", "review", _combine=_node_major),
    _variant("gat_mean_under_concat", "gat", {}, {"heads": "mean"}, "averages the heads under heads=concat"),
    _variant("gat_concat_under_mean", "gat", {"heads": "mean"}, {"heads": "concat"},
             "concatenates the heads under heads=mean"),
    _variant("gat_ignores_bias", "gat", {}, {"bias": False}, "drops b under the default bias=true"),
    _variant("gat_v2_ignores_biases", "gat", _V2, {"bias": False},
             "drops b, b_s and b_t under the default bias=true"),
    Entry("gat_messages_self_loop_twice", "gat", {}, gat_messages(_keep_given_loops=True),
          "adds a self-loop per node without removing the given ones: a node with a self-loop scores it twice",
          "review"),
)

#: Correct implementations beyond the factory's: PyG's message passing over an edge list.
CONTROLS = tuple(
    Entry("gat_correct_messages" + "".join(f"_{k}_{v}" for k, v in options.items()), "gat", options,
          gat_messages(**options), "", "correct")
    for options in ({}, _V2, {**_V2, "heads": "mean", "self_loops": False}, {"heads": "mean", "bias": False},
                    {"slope": 0.01, "self_loops": False}))

#: Bugs left out because no input can detect them, and why.
EQUIVALENT = {
    "averaged heads with the bias added to every head before the mean": "(1/H) Σ_h (Y^h + b) = (1/H) Σ_h Y^h + b",
    "GAT's score as aᵀ[W h_i ‖ W h_j] on the concatenation": "aᵀ[z_i ‖ z_j] = a_lᵀ z_i + a_rᵀ z_j with "
                                                               "a = [a_l; a_r]: the same number",
}
