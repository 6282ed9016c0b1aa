"""What a convolution needs beyond a matrix product: the windows each output position reads
(:class:`Unfold`), the per-offset weights side by side (:class:`Offsets`), and a graph's neighbourhood sum
(:class:`Aggregate`).

A 1-D convolution in the paper's layout (one column per position) is one matrix product:
``Y = [W_1, …, W_k] · unfold(X) + b 1ᵀ``, where column t of ``unfold(X)`` stacks the k columns of the
(zero-padded) input that output t reads, ``X̄[:, s·t + δ·j]`` for j = 0, …, k − 1.  So the convolution's
cost is :class:`~formal.ops.linalg.MatMul`'s, 2·d_out·k·d_in·ℓ_out, exactly what
``torch.utils.flop_counter.FlopCounterMode`` counts for ``torch.nn.functional.conv1d``.

A graph convolution sums each node's neighbours' features, ``Y = X Â`` with Â the (normalised) adjacency:
:class:`Aggregate`.

Examples
--------
>>> from formal.core.symbols import ell, k
>>> output_length(ell, k)
ell - k + 1
>>> output_length(ell, k, stride=2, padding=1)
floor(ell/2 - k/2) + 2
>>> output_length(10, 3)
8
>>> window_span(3, 2)
5
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core.constraints import at_most
from ..core.shapes import Mismatch, numel, same_dim
from ..core.symbols import latex as sym_latex, text as sym_text
from ..engine.declarations import Option, Options, Requires
from ..engine.domains import AnyOf, Choice, Integer
from ..errors import ConfigError, shown
from .base import POSTFIX, PRODUCT, Op, rank

__all__ = ["NORMS", "GEOMETRY", "window_span", "output_length", "same_padding", "check_geometry", "Unfold", "Offsets",
           "Aggregate"]

#: How :class:`Aggregate` normalises the adjacency.
NORMS = ("sum", "mean", "gcn")


def window_span(kernel, dilation=1):
    """The positions one window covers, first to last: ``δ(k − 1) + 1`` (the receptive field of one layer)."""
    return dilation * (kernel - 1) + 1


def same_padding(kernel: int, dilation: int = 1) -> tuple:
    """``(left, right)`` zeros of ``padding="same"``: ``δ(k − 1)`` in all, ``⌊δ(k − 1)/2⌋`` on the left and
    the rest on the right — one more on the right when δ(k − 1) is odd (an even kernel), as
    ``torch.nn.Conv1d(padding="same")`` pads."""
    total = dilation * (kernel - 1)
    return total // 2, total - total // 2


def output_length(ell, kernel, *, stride: int = 1, padding=0, dilation: int = 1):
    """The number of output positions, ``⌊(ℓ + 2p − δ(k − 1) − 1)/s⌋ + 1`` (``torch.nn.Conv1d``'s ``L_out``);
    ``ℓ`` under ``padding="same"``.  For stride 1 a polynomial, ``ℓ + 2p − δ(k − 1)``; for a larger stride a
    sympy ``floor`` (an int for int arguments)."""
    if padding == "same":
        return ell
    reach = sp.sympify(ell) + 2 * padding - window_span(kernel, dilation)
    if stride == 1:
        return sp.expand(reach + 1)
    return sp.floor(reach / stride) + 1


#: A convolution's geometry, declared once: the options of ``conv1d`` and the arguments of :class:`Unfold`.
GEOMETRY = Options(
    Option("stride", 1, Integer(1), "s, the distance between the first positions of consecutive windows",
           examples=(1, 2, 3)),
    Option("padding", 0, AnyOf(Integer(0), Choice("same")),
           "p zero columns at both ends, or same: δ(k − 1) zeros in all, the extra one on the right when "
           "δ(k − 1) is odd, as torch pads, so that ℓ_out = ℓ", examples=(0, 1, 2, "same")),
    Option("dilation", 1, Integer(1), "δ, the distance between the positions one window reads", examples=(1, 2)),
    rules=(Requires("padding", ("same",), "stride", (1,), "as torch.nn.Conv1d: a strided 'same' output has no "
                                                          "single definition", move="option"),))


def check_geometry(*, stride=1, padding=0, dilation=1) -> tuple:
    """``(stride, padding, dilation)`` if they make a convolution (:data:`GEOMETRY`), else a ConfigError naming
    the option and its value: stride and dilation positive integers, padding a non-negative integer or
    ``"same"`` (stride 1 only, as torch has it: a strided "same" output has no single definition)."""
    values = GEOMETRY.resolve({"stride": stride, "padding": padding, "dilation": dilation}, "a convolution")
    return values["stride"], values["padding"], values["dilation"]


class Unfold(Op):
    """``unfold(X)``: the d_in×ℓ sequence X ↦ the (k·d_in)×ℓ_out matrix whose column t stacks the k input
    columns output t reads, ``[X̄[:, s·t]; X̄[:, s·t + δ]; …; X̄[:, s·t + δ(k − 1)]]`` (positions 0-indexed
    here; offset-major: row ``j·d_in + c`` is channel c at offset j), where X̄ is X with p zero columns at
    both ends (stride s, padding p, dilation δ).  ``padding="same"`` pads δ(k − 1) zeros in all, one more on
    the right than on the left when that is odd (an even kernel), as ``torch.nn.Conv1d(padding="same")``
    does, so ℓ_out = ℓ.

    ℓ_out = ⌊(ℓ + 2p − δ(k − 1) − 1)/s⌋ + 1 (:func:`output_length`); it is positive only when the padded
    input holds one window, ``δ(k − 1) + 1 ≤ ℓ + 2p``, a size constraint the op states (as a bound on k).
    No FLOPs (a selection); its result is materialised (memory k·d_in·ℓ_out).
    """

    name = "unfold"
    free = True
    prec = POSTFIX

    def __init__(self, kernel, *, stride: int = 1, padding=0, dilation: int = 1):
        self.kernel = sp.sympify(kernel)
        self.stride, self.padding, self.dilation = check_geometry(stride=stride, padding=padding, dilation=dilation)

    def shape(self, shapes):
        rank(shapes[0], (2,), "a sequence to unfold")
        d, ell = shapes[0]
        return (self.kernel * d, output_length(ell, self.kernel, stride=self.stride, padding=self.padding,
                                               dilation=self.dilation))

    def constraints(self, shapes) -> tuple:
        """One window fits the padded input, ``δ(k − 1) + 1 ≤ ℓ + 2p``, stated as a bound on k,
        ``k ≤ (ℓ + 2p − 1)/δ + 1`` (k is an integer, so the bound's fraction never matters), so that an
        example generator mends it by lowering k; none under ``padding="same"``."""
        if self.padding == "same":
            return ()
        bound = sp.expand((shapes[0][1] + 2 * self.padding - 1) / sp.Integer(self.dilation) + 1)
        return (at_most(self.kernel, bound, "one window of the kernel must fit the padded input"),)

    def numpy(self, ctx, X):
        k = ctx.evaluate(self.kernel)
        left, right = same_padding(k, self.dilation) if self.padding == "same" else (self.padding,) * 2
        padded = np.pad(X, ((0, 0), (left, right)))
        n = (padded.shape[1] - window_span(k, self.dilation)) // self.stride + 1
        at = self.stride * np.arange(n)[None, :] + self.dilation * np.arange(k)[:, None]  # (k, ℓ_out)
        return padded[:, at].transpose(1, 0, 2).reshape(k * X.shape[0], n)               # (k·d_in, ℓ_out)

    def _options(self, latex):
        delta = r"\delta" if latex else "δ"
        given = [("s", self.stride, 1), ("p", self.padding, 0), (delta, self.dilation, 1)]
        return [f"{name}={value}" if not latex or value != "same" else rf"{name}=\mathrm{{same}}"
                for name, value, default in given if value != default]

    def text(self, args):
        options = self._options(False)
        rest = f" | {', '.join(options)}" if options else ""
        return f"unfold_{sym_text(self.kernel)}({args[0].text}{rest})"

    def latex(self, args):
        options = self._options(True)
        rest = rf" \mid {', '.join(options)}" if options else ""
        return rf"\operatorname{{unfold}}_{{{sym_latex(self.kernel)}}}\left({args[0].text}{rest}\right)"


class Offsets(Op):
    """``[W_1, …, W_k]``: the k×d_out×d_in weights of a convolution, one d_out×d_in matrix per offset, side by
    side as one d_out×(k·d_in) matrix, whose column ``j·d_in + c`` meets row ``j·d_in + c`` of
    :class:`Unfold`'s result.  No FLOPs; the result is materialised (numpy copies a transposed reshape).
    """

    name = "offsets"
    free = True

    def shape(self, shapes):
        rank(shapes[0], (3,), "the per-offset weights of a convolution")
        k, rows, cols = shapes[0]
        return (rows, k * cols)

    def numpy(self, ctx, W):
        k, rows, cols = W.shape
        return W.transpose(1, 0, 2).reshape(rows, k * cols)

    def text(self, args):
        w = args[0].at(POSTFIX)
        return f"[{w}_1, …, {w}_k]"

    def latex(self, args):
        w = args[0].at(POSTFIX, True)
        return rf"\left[{w}_{{1}}, \dots, {w}_{{k}}\right]"


class Aggregate(Op):
    """``X Â``: every node's new features are a weighted sum of its neighbours', ``Y[:, i] = Σ_j Â[j, i] X[:, j]``,
    for a d×ℓ_z feature matrix X and the ℓ_z×ℓ_x adjacency A (the spec's mask layout: rows are source
    nodes, columns target nodes, ``A[j, i] = 1`` for an edge j → i, so column i lists the in-neighbours of
    node i).  ``norm`` makes Â:

    - ``"sum"``: Â = A, the neighbours' sum (the lecture notes' ``Σ_{j∈N(i)} θᵀx_j``; PyG ``SimpleConv``);
    - ``"mean"``: each column divided by its in-degree, ``Â[:, i] = A[:, i]/deg(i)``; a node with no
      in-neighbour gets 0, never NaN;
    - ``"gcn"``: Kipf & Welling's ``Â = D^{−1/2}(A + I)D^{−1/2}`` with ``D`` the degrees of ``A + I``.  The op
      adds the self-loops, as ``torch_geometric.nn.GCNConv`` (``add_self_loops=True``) does: ``A + I`` is
      ``A ∨ I``, which is ``A + I`` for a graph without self-loops (Kipf & Welling's) and leaves an existing
      self-loop at weight 1 (PyG's ``add_remaining_self_loops``).  A directed graph's degree is its in-degree,
      the column sum of ``A ∨ I`` (PyG's, which counts edges at their targets), so
      ``Â[j, i] = (A ∨ I)[j, i]/√(deg(j)·deg(i))``.  It needs ℓ_z = ℓ_x (one node set).

    FLOPs: the dense product, 2·d·ℓ_z·ℓ_x, under ``matmul``, ``chinchilla`` and ``full`` (the convention counts
    the full matrix, as attention's scores are counted over the full ℓ_z×ℓ_x); none under ``kaplan`` (like
    attention's value weighting, no weight matrix).  ``full`` adds the normalisation of the features:
    ``"mean"`` divides each of the d·ℓ_x sums by its degree (d·ℓ_x), ``"gcn"`` divides the features by
    √deg before the product and the sums after it (2·d·ℓ).  The degrees themselves are integer counts of the
    {0,1} adjacency and their ℓ square roots are the graph's alone — like the mask, structure computed once
    per graph (PyG's ``GCNConv(cached=True)``) — so they are free, and numpy computes them on the adjacency,
    never on the features.
    """

    name = "aggregate"
    prec = PRODUCT

    def __init__(self, norm: str = "sum"):
        if not isinstance(norm, str) or norm not in NORMS:
            raise ConfigError(f"unknown norm {shown(norm)}; known: {', '.join(NORMS)}")
        self.norm = norm

    def shape(self, shapes):
        x, a = shapes
        rank(x, (2,), "the features to aggregate")
        rank(a, (2,), "an adjacency matrix")
        if not same_dim(x[1], a[0]):
            raise Mismatch(str(x[1]), x[1], a[0], "nodes of the features against the adjacency's rows")
        if self.norm == "gcn" and not same_dim(a[0], a[1]):
            raise Mismatch(str(a[0]), a[0], a[1], "a gcn adjacency is square: one node set, with self-loops")
        return (x[0], a[1])

    def flops(self, shapes, out):
        product = 2 * shapes[0][1] * numel(out)
        extra = {"sum": 0, "mean": numel(out), "gcn": numel(shapes[0]) + numel(out)}[self.norm]
        return {"matmul": product, "chinchilla": product, "full": product + extra}

    def numpy(self, ctx, X, mask):
        A = np.asarray(mask, dtype=bool)
        if self.norm == "gcn":
            A = A | np.eye(A.shape[0], dtype=bool)
        weights = A.astype(np.float64)
        if self.norm == "sum":
            return X @ weights
        degree = np.count_nonzero(A, axis=0)                                 # in-degrees, integers
        if self.norm == "mean":
            return (X @ weights) / np.maximum(degree, 1)                     # an isolated node: 0/1 = 0
        root = np.sqrt(degree)                                               # ≥ 1 with the self-loops
        return ((X / root) @ weights) / root

    def _adjacency(self, mask, latex):
        a = mask.at(POSTFIX, latex)
        if self.norm == "sum":
            return a
        if latex:
            return {"mean": rf"{a} D^{{-1}}", "gcn": rf"D^{{-1/2}}({a} + I) D^{{-1/2}}"}[self.norm]
        return {"mean": f"{a} D⁻¹", "gcn": f"D^(−1/2) ({a} + I) D^(−1/2)"}[self.norm]

    def text(self, args):
        adjacency = self._adjacency(args[1], False)
        return f"{args[0].at(PRODUCT)} {adjacency if self.norm == 'sum' else f'({adjacency})'}"

    def latex(self, args):
        adjacency = self._adjacency(args[1], True)
        return rf"{args[0].at(PRODUCT, True)} " + (adjacency if self.norm == "sum" else rf"\left({adjacency}\right)")
