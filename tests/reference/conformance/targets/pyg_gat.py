"""A graph attention layer written the way PyTorch Geometric writes ``GATConv`` (numpy here, so that it runs
without torch): node features as rows (N, F), the graph as an ``edge_index`` of (source, target) pairs, one
weight ``lin_weight`` (H·C, F) shared by the scores and the messages, ``att_src``/``att_dst`` (1, H, C), self-loops
removed and added again, a softmax grouped by target node, the messages scatter-summed, heads concatenated,
then the bias.  ``gat`` adapts the spec's names to it and does nothing else; ``gat_softmax_by_source`` is the same
adapter around a copy whose softmax groups the edges by their source (a planted bug)."""

import numpy as np


def _add_self_loops(edge_index, num_nodes):
    """PyG's ``remove_self_loops`` then ``add_self_loops``."""
    kept = edge_index[:, edge_index[0] != edge_index[1]]
    loops = np.arange(num_nodes)
    return np.concatenate([kept, np.stack([loops, loops])], axis=1)


def _segment_softmax(scores, index, num_nodes):
    """``torch_geometric.utils.softmax``: the scores (E, H) normalised within each group of ``index``."""
    top = np.full((num_nodes, scores.shape[1]), -np.inf)
    np.maximum.at(top, index, scores)
    weight = np.exp(scores - top[index])
    total = np.zeros((num_nodes, scores.shape[1]))
    np.add.at(total, index, weight)
    return weight / total[index]


class GATConv:
    """``GATConv(in_channels, out_channels, heads, concat=True, negative_slope=0.2, add_self_loops=True)``."""

    def __init__(self, lin_weight, att_src, att_dst, bias, *, heads, negative_slope=0.2, group_by="target"):
        self.lin_weight, self.att_src, self.att_dst, self.bias = lin_weight, att_src, att_dst, bias
        self.heads, self.negative_slope, self.group_by = heads, negative_slope, group_by

    def __call__(self, x, edge_index):
        N, H = x.shape[0], self.heads
        x = (x @ self.lin_weight.T).reshape(N, H, -1)                       # (N, H, C)
        alpha_src = (x * self.att_src).sum(-1)                             # (N, H)
        alpha_dst = (x * self.att_dst).sum(-1)
        edge_index = _add_self_loops(edge_index, N)
        src, dst = edge_index
        alpha = alpha_src[src] + alpha_dst[dst]                            # (E, H)
        alpha = np.where(alpha > 0, alpha, self.negative_slope * alpha)
        alpha = _segment_softmax(alpha, dst if self.group_by == "target" else src, N)
        out = np.zeros_like(x)
        np.add.at(out, dst, alpha[..., None] * x[src])                     # Σ_j α_ij x_j at every target i
        return out.reshape(N, -1) + self.bias


def _adapt(X, A, W, a_l, a_r, b, **layer):
    """The spec's names as PyG's.  In the rows layout X is N×F and the adjacency arrives as a torch attention
    mask does, a row per target: A[i, j] = 1 when i attends to j, the edge j → i."""
    H, C, F = W.shape
    targets, sources = np.nonzero(A)
    edge_index = np.stack([sources, targets])
    conv = GATConv(W.reshape(H * C, F), a_r[None], a_l[None], b, heads=H, **layer)
    return conv(X, edge_index)


def gat(X, A, W, a_l, a_r, b):
    return _adapt(X, A, W, a_l, a_r, b)


def gat_softmax_by_source(X, A, W, a_l, a_r, b):
    return _adapt(X, A, W, a_l, a_r, b, group_by="source")
