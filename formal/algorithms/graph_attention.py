"""Graph attention networks: attention over each node's neighbourhood in a graph, as real code writes it
(``torch_geometric.nn.GATConv`` and ``GATv2Conv``), in the paper's layout (one column per node).

Per head h, every node's features are transformed, every edge j → i is scored, the scores of node i's
in-neighbours are normalised by a softmax, and node i's new features are its neighbours' transformed
features weighted by them (Veličković et al. 2018, eq. 1–4):

.. math::

    z_j = W^h x_j, \\qquad
    e_{ij} = \\mathrm{LeakyReLU}\\big(a^{h\\top} [z_i \\,\\|\\, z_j]\\big), \\qquad
    α_{ij} = \\operatorname{softmax}_{j ∈ \\mathcal N(i)} e_{ij}, \\qquad
    y^h_i = \\sum_{j ∈ \\mathcal N(i)} α_{ij} z_j ;

the heads are concatenated (eq. 5, a hidden layer) or averaged (eq. 6, an output layer), and a bias is
added.  W^h makes both the scores and the values.  Splitting ``a = [a_l; a_r]`` writes the score as
``LeakyReLU(a_lᵀ z_i + a_rᵀ z_j)``: a term of the target plus a term of the source, each computed once per
node.  GATv2 (Brody et al. 2022) moves the nonlinearity inside, ``e_ij = aᵀ LeakyReLU(W_t x_i + W_s x_j)``,
the additive score of Algorithm 4's ``score="additive"`` with two matrices.

The neighbourhood N(i) is column i of the adjacency A (``A[j, i] = 1`` for an edge j → i, the layout of
``graph_conv`` and of Algorithm 4's mask), with the self-loops added by option (PyG's default).

References
----------
- P. Veličković, G. Cucurull, A. Casanova, A. Romero, P. Liò, Y. Bengio, "Graph attention networks",
  ICLR 2018, eq. (1)–(6).
- S. Brody, U. Alon, E. Yahav, "How attentive are graph attention networks?", ICLR 2022, eq. (7).
- ``torch_geometric.nn.GATConv`` and ``GATv2Conv(share_weights=False)`` (PyG 2.x): the layers this
  object reads.

Examples
--------
>>> gat.output_shape
(H*d_out, ell)
>>> gat.variant(heads="mean").output_shape
(d_out, ell)
>>> gat.param_count()
H*d_in*d_out + 3*H*d_out
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import H, d_in, d_out, ell
from ..engine.algorithm import Algorithm, Assign, Loop
from ..engine.declarations import Option, Options
from ..engine.domains import BOOL, Choice, Integer, Real, either
from ..ops import LoopIndex, add_bias, mask_fill, matmul, pick, softmax, stack_rows
from ..ops.graph_attention import SelfLoops, head_mean, sloped_additive_score, split_score

__all__ = ["ALGORITHMS", "GAT_OPTIONS", "HEADS", "Versions", "build_gat", "gat"]

#: How the heads' outputs are combined: Veličković et al.'s eq. (5) and (6).
HEADS = ("concat", "mean")



class Versions(Integer):
    """One of a few whole numbers (a version): finite, so every one is an example."""

    def __init__(self, *numbers: int):
        super().__init__(min(numbers))
        self.numbers = tuple(numbers)

    def __repr__(self):
        return f"Versions{self.numbers!r}"

    def admits(self, value) -> bool:
        return super().admits(value) and value in self.numbers

    def values(self) -> tuple:
        return self.numbers

    def text(self) -> str:
        return either([str(n) for n in self.numbers])

    def notation(self) -> str:
        return " | ".join(str(n) for n in self.numbers)

    def words(self) -> str:
        return self.text()

    def latex(self) -> str:
        return r" $\mid$ ".join(str(n) for n in self.numbers)

    def schema(self) -> dict:
        return {"enum": list(self.numbers)}


GAT_OPTIONS = Options(
    Option("version", 1, Versions(1, 2),
           "1: GAT's score LeakyReLU(a_lᵀ z_i + a_rᵀ z_j) with one W for scores and values (PyG GATConv); "
           "2: GATv2's aᵀ LeakyReLU(W_t x_i + W_s x_j), the values W_s x_j (Brody et al.; PyG "
           "GATv2Conv(share_weights=False))"),
    Option("heads", "concat", Choice(*HEADS),
           "how the H heads are combined: concat (H·d_out rows, eq. 5) or mean (d_out rows, eq. 6)"),
    Option("self_loops", True, BOOL,
           "whether every node is its own neighbour, an edge i → i added (PyG's add_self_loops=True)"),
    Option("bias", True, BOOL, "whether the output bias b is added (and, under version 2, the biases b_s, b_t of "
                               "the two transforms, as GATv2Conv's lin_l and lin_r have them)"),
    Option("slope", 0.2, Real(0, 1, open_high=True),
           "the leaky ReLU's negative slope s, max(x, s·x): 0.2 in both papers and PyG, 0.01 torch's default",
           examples=(0.2, 0.01)),
)


def _head_params(version, bias) -> list:
    """The per-head parameters, stacked on a leading head axis."""
    if version == 1:
        return [TensorSpec("W", (H, d_out, d_in), doc="head h's transform, for the scores and the values"),
                TensorSpec("a_l", (H, d_out), doc="head h's score weights on the target z_i (PyG's att_dst)"),
                TensorSpec("a_r", (H, d_out), doc="head h's score weights on the source z_j (PyG's att_src)")]
    specs = [TensorSpec("W_s", (H, d_out, d_in), doc="head h's source transform, which also makes the values "
                                                     "(PyG's lin_l)"),
             TensorSpec("W_t", (H, d_out, d_in), doc="head h's target transform (PyG's lin_r)")]
    if bias:
        specs += [TensorSpec("b_s", (H, d_out), doc="the bias of the source transform"),
                  TensorSpec("b_t", (H, d_out), doc="the bias of the target transform")]
    return specs + [TensorSpec("a", (H, d_out), doc="head h's score weights after the leaky ReLU")]


def _transform(weight, bias_name, h, bias):
    """``W^h X`` (``+ b^h 1ᵀ`` with a bias)."""
    product = matmul(pick(weight, h), "X")
    return add_bias(product, pick(bias_name, h)) if bias else product


def _head_lines(version, bias, slope, neighbours) -> list:
    """The body of the loop over the heads: transform, score every pair, mask, softmax, weight the values."""
    h = LoopIndex("h")
    if version == 1:
        transforms = [Assign("Z", matmul(pick("W", h), "X"), note="Transform every node")]
        scores, values = split_score("Z", pick("a_l", h), pick("a_r", h), slope), "Z"
    else:
        transforms = [Assign("Z_s", _transform("W_s", "b_s", h, bias), note="Sources, and the values"),
                      Assign("Z_t", _transform("W_t", "b_t", h, bias), note="Targets")]
        scores, values = sloped_additive_score("Z_t", "Z_s", pick("a", h), slope), "Z_s"
    return [*transforms,
            Assign("S", scores, note="Score every edge j → i"),
            Assign("S", mask_fill("S", neighbours), note="Only the neighbours of each node"),
            Assign("Y_h", matmul(values, softmax("S", empty="zero"), role="mix"), note="head h")]


@GAT_OPTIONS.builds
def build_gat(*, version, heads, self_loops, bias, slope) -> Algorithm:
    """A graph attention layer: per head h, ``Y^h = Z softmax(S)`` over each node's neighbourhood, the
    heads concatenated or averaged, then ``+ b 1ᵀ``.

    A node with no neighbour (no in-edge, and no self-loop: ``self_loops=false``) gets an all-−∞ score
    column; the spec's decision is PyG's: its softmax is the zero column (the sum over no edges is 0), so
    the node's output is the bias b alone (:ref:`decision-empty-neighbourhood`, the policy ``zero``).

    Parameters
    ----------
    version : {1, 2}
        1: GAT, ``S[j, i] = LeakyReLU(a_lᵀ z_i + a_rᵀ z_j)`` with ``Z = W^h X`` the values too (PyG's
        ``GATConv``: ``W`` is ``lin.weight`` split by heads, ``a_l`` is ``att_dst``, ``a_r`` is ``att_src``).
        2: GATv2, ``S[j, i] = aᵀ LeakyReLU(W_t x_i + b_t + W_s x_j + b_s)``, the values ``Z_s = W_s X + b_s``
        (PyG's ``GATv2Conv(share_weights=False)``: ``W_s`` is ``lin_l``, ``W_t`` is ``lin_r``, ``a`` is
        ``att``); the same matrix for both, ``W_s = W_t``, is ``share_weights=True``.
    heads : {"concat", "mean"}
        ``[Y^1; …; Y^H]`` (H·d_out×ℓ) or ``(1/H) Σ_h Y^h`` (d_out×ℓ); b has as many rows.
    self_loops : bool
        Whether the neighbourhood is ``A ∨ I`` (every node attends to itself) or A as given.
    bias : bool
        Whether b (and, under version 2, b_s and b_t) are added.
    slope : float
        The leaky ReLU's negative slope s, 0 ≤ s < 1: ``LeakyReLU(x) = max(x, s·x)``.

    Returns
    -------
    Algorithm
        Inputs X (d_in×ℓ, one column per node) and the adjacency A (a mask input, ℓ×ℓ: ``A[j, i] = 1`` for an
        edge j → i; omitted, every node is every node's neighbour); output Y.
    """
    neighbours = "A_hat" if self_loops else "A"
    width = H * d_out if heads == "concat" else d_out
    params = _head_params(version, bias)
    if bias:
        params.append(TensorSpec("b", (width,), doc="the output bias of every node"))
    combined = stack_rows("Y_h", H) if heads == "concat" else head_mean("Y_h", H)
    lines = [*([Assign("A_hat", SelfLoops()("A"), note="Every node is its own neighbour")] if self_loops else []),
             Loop("h", H, tuple(_head_lines(version, bias, slope, neighbours)), stack=("Y_h",)),
             *([Assign("Y", combined), Assign("Y", add_bias("Y", "b"), returns=True)] if bias
               else [Assign("Y", combined, returns=True)])]
    return Algorithm(
        number=None, source="Velickovic et al. 2018" if version == 1 else "Brody et al. 2022",
        name="gat", display="GAT" if version == 1 else "GATv2",
        summary="A graph attention layer: every node attends to its in-neighbours, in H heads.",
        inputs=[TensorSpec("X", (d_in, ell), doc="the node features, one column per node", role="tokens"),
                TensorSpec("A", (ell, ell), kind="mask", doc="the adjacency: A[j, i] = 1 for an edge j → i")],
        params=params, output=TensorSpec("Y", (width, ell), doc="the new node features"),
        lines=lines, params_label="W, a, b" if bias else "W, a",
        # Checked with every mask admitting all: a complete graph, which every permutation of the nodes keeps.
        permutation={"X": "equivariant"},
        notes=("A node's neighbourhood is column i of A (its in-neighbours); with self_loops it is A ∨ I.",),
    )


gat = build_gat()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (gat,)
