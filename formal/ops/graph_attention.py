"""What a graph attention network needs beyond Algorithm 4's ops: the self-loops added to an adjacency
(:class:`SelfLoops`), GAT's score with the leaky ReLU outside the contraction (:class:`SplitScore`), GATv2's
additive score with a chosen negative slope (:class:`SlopedAdditiveScore`), and the mean of stacked heads
(:class:`HeadMean`).

Layout as Algorithm 4's masks: the adjacency A is ℓ_z×ℓ_x with ``A[j, i] = 1`` for an edge j → i (rows the
sources, as the mask's rows are keys; column i lists the in-neighbours of node i), and a score matrix S is
ℓ_z×ℓ_x, ``S[t_z, t_x]`` the score of source t_z for target t_x.

References
----------
- P. Veličković et al., "Graph attention networks", ICLR 2018, eq. (1)–(6):
  ``e_ij = LeakyReLU(aᵀ[W h_i ‖ W h_j])``, heads concatenated (eq. 5) or averaged (eq. 6).
- S. Brody, U. Alon, E. Yahav, "How attentive are graph attention networks?", ICLR 2022, eq. (7):
  ``e_ij = aᵀ LeakyReLU(W [h_i ‖ h_j])``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.shapes import Mismatch, numel, same_dim
from ..core.symbols import latex as sym_latex, text as sym_text
from ..costs.cost import CONVENTIONS, Work
from ..engine.domains import written
from .base import POSTFIX, Op, rank
from .reductions import Mean
from .scores import AdditiveScore, LeakyReLU

__all__ = ["SelfLoops", "SlopedLeakyReLU", "SplitScore", "SlopedAdditiveScore", "HeadMean", "self_loops",
           "split_score", "sloped_additive_score", "head_mean"]


def _stem(name: str) -> str:
    """``Y`` of a per-iteration name ``Y^h``."""
    return name.split("^", 1)[0]


class SelfLoops(Op):
    """``A ∨ I``: the adjacency with an edge from every node to itself.  A self-loop already there keeps
    weight 1 (PyG's ``GATConv`` removes the self-loops it is given, then adds one per node: the same 0/1
    matrix).  Structure computed once per graph, like the mask: free."""

    name = "self_loops"
    free = True

    def shape(self, shapes):
        rank(shapes[0], (2,), "an adjacency matrix")
        rows, cols = shapes[0]
        if not same_dim(rows, cols):
            raise Mismatch(str(rows), rows, cols, "an adjacency with self-loops is square: one node set")
        return shapes[0]

    def numpy(self, ctx, mask):
        A = np.asarray(mask, dtype=bool)
        return A | np.eye(A.shape[0], dtype=bool)

    def text(self, args):
        return f"{args[0].at(POSTFIX)} ∨ I"

    def latex(self, args):
        return rf"{args[0].at(POSTFIX, True)} \lor I"


class SlopedLeakyReLU(LeakyReLU):
    """:class:`~formal.ops.scores.LeakyReLU` rendered with its negative slope, ``LeakyReLU_0.2``."""

    def __init__(self, slope: float = 0.2):
        super().__init__(slope)
        self.glyph = f"LeakyReLU_{written(slope)}"
        self.tex = f"LeakyReLU_{{{written(slope)}}}"


class SplitScore(Op):
    """GAT's score, ``S[t_z, t_x] = LeakyReLU(a_lᵀ Z[:, t_x] + a_rᵀ Z[:, t_z])``: Veličković et al.'s
    ``e_ij = LeakyReLU(aᵀ[z_i ‖ z_j])`` with ``a = [a_l; a_r]`` split into the half that meets the target
    z_i (a column t_x) and the half that meets the source z_j (a row t_z).

    Z is d×ℓ (one column per node), a_l and a_r d-vectors.  The numpy semantics compute the two
    projections once per node, ``a_lᵀ Z`` and ``a_rᵀ Z`` (ℓ each), and broadcast their sum over every pair;
    that is how it is counted:

    - FLOPs under every convention: the two products with a parameter vector, 2·d·ℓ each (4·d·ℓ);
    - under ``full`` additionally ℓ² additions and the leaky ReLU's 2 per entry (3·ℓ²);
    - memory: the 2·ℓ projections, the ℓ² sums and their ℓ² images.
    """

    name = "split_score"

    def __init__(self, slope: float = 0.2):
        self.activation = SlopedLeakyReLU(slope)

    def shape(self, shapes):
        z, a_l, a_r = shapes
        rank(z, (2,), "the node features of a GAT score")
        rank(a_l, (1,), "the target half a_l of a GAT score")
        rank(a_r, (1,), "the source half a_r of a GAT score")
        for name, a in (("a_l", a_l), ("a_r", a_r)):
            if not same_dim(z[0], a[0]):
                raise Mismatch(str(z[0]), z[0], a[0], f"length of {name} against the width of the features")
        return (z[1], z[1])

    def work(self, shapes, out):
        z = shapes[0]
        products = 4 * z[0] * z[1]
        counts = {c: products for c in CONVENTIONS}
        counts["full"] = products + numel(out) * (1 + self.activation.per_element)
        return Work(counts, 2 * z[1] + 2 * numel(out), sp.Integer(0))

    def numpy(self, ctx, Z, a_l, a_r):
        target, source = a_l @ Z, a_r @ Z                                  # (ℓ,) each
        return self.activation.numpy(ctx, source[:, None] + target[None, :])

    def _parts(self, args, latex=False):
        z, a_l, a_r = (a.at(POSTFIX, latex) for a in args)
        if latex:
            inner = rf"{a_l}^{{\top}} {z}[:, t_x] + {a_r}^{{\top}} {z}[:, t_z]"
            return rf"\mathrm{{{self.activation.tex}}}\left({inner}\right)"
        return f"{self.activation.glyph}({a_l}ᵀ {z}[:, t_x] + {a_r}ᵀ {z}[:, t_z])"

    def text(self, args):
        return f"[{self._parts(args)}]_(t_z, t_x)"

    def latex(self, args):
        return rf"\left[{self._parts(args, True)}\right]_{{t_z, t_x}}"

    def line_text(self, target, args):
        return f"∀t_z, t_x: {target}[t_z, t_x] ← {self._parts(args)}"

    def line_latex(self, target, args):
        return rf"\forall t_z, t_x:\ {target}[t_z, t_x] \gets {self._parts(args, True)}"


class SlopedAdditiveScore(AdditiveScore):
    """GATv2's score, ``S[t_z, t_x] = aᵀ LeakyReLU_s(Q[:, t_x] + K[:, t_z])``: the additive score of
    :class:`~formal.ops.scores.AdditiveScore` (its shapes, counts and numpy semantics) with the leaky ReLU's
    negative slope s chosen, and shown."""

    def __init__(self, slope: float = 0.2):
        super().__init__("leaky_relu")
        self.activation = SlopedLeakyReLU(slope)

    def _parts(self, args, latex=False):
        q, k, v = (a.text for a in args)
        if latex:
            return q, k, rf"{v}^{{\top}} \mathrm{{{self.activation.tex}}}"
        return q, k, f"{v}ᵀ {self.activation.glyph}"


class HeadMean(Mean):
    """``(1/H) Σ_h Y^h``: the mean of H stacked m×n blocks (Veličković et al.'s eq. 6, the averaged heads
    of an output layer) — :class:`~formal.ops.reductions.Mean` over the head axis, whose FLOPs (full) it
    keeps: H − 1 additions and one division per entry of the result, H·m·n."""

    name = "head_mean"
    prec = Op.prec   # (1/H) Σ_h … binds as an atom, as it did

    def __init__(self, count):
        super().__init__(count)
        self.count = count

    def shape(self, shapes):
        rank(shapes[0], (3,), "stacked heads")
        return tuple(shapes[0][1:])

    def text(self, args):
        return f"(1/{sym_text(self.count)}) Σ_h {_stem(args[0].text)}^h"

    def latex(self, args):
        return rf"\frac{{1}}{{{sym_latex(self.count)}}} \sum_{{h}} {_stem(args[0].text)}^{{h}}"


def self_loops(adjacency):
    """``A ∨ I`` (:class:`SelfLoops`)."""
    return SelfLoops()(adjacency)


def split_score(z, a_l, a_r, slope: float = 0.2):
    """``[LeakyReLU_s(a_lᵀ z_{t_x} + a_rᵀ z_{t_z})]_{t_z, t_x}`` (:class:`SplitScore`)."""
    return SplitScore(slope)(z, a_l, a_r)


def sloped_additive_score(q, k, a, slope: float = 0.2):
    """``[aᵀ LeakyReLU_s(q_{t_x} + k_{t_z})]_{t_z, t_x}`` (:class:`SlopedAdditiveScore`)."""
    return SlopedAdditiveScore(slope)(q, k, a)


def head_mean(stacked, count):
    """``(1/H) Σ_h Y^h`` (:class:`HeadMean`)."""
    return HeadMean(count)(stacked)
