"""Reductions over axis 0 (per column): mean, softmax, and the mask that precedes a softmax."""

from __future__ import annotations

import numpy as np

from ..core.shapes import Mismatch, numel, same_dim
from ..core.symbols import latex as sym_latex, text as sym_text
from ..errors import ConfigError, DomainError, shown
from .base import POSTFIX, PRODUCT, Op, rank


class Mean(Op):
    """``Σ_i x[i] / n`` over axis 0 (per column), rendered with the size n it divides by
    (``Σ_i e[i]/d_e``).  FLOPs (full): (n−1) additions and one division per column, n per column in all."""

    name = "mean"
    prec = PRODUCT

    def __init__(self, size):
        self.size = size

    def shape(self, shapes):
        rank(shapes[0], (1, 2), "a mean")
        return tuple(shapes[0][1:])

    def flops(self, shapes, out):
        return {"full": numel(shapes[0])}

    def numpy(self, ctx, a):
        return np.sum(a, axis=0) / a.shape[0]

    def columns(self, ctx, values, batched):
        return self.numpy(ctx, *values)     # over axis 0, which a batched value's column axis is not

    def meaning(self, ctx, a):
        """``Σ_k a[k, …] / size``, the sum over axis 0's (symbolic) length."""
        from ..core.symbolic import AXES, Value, fresh, total
        k = fresh()
        return Value(a.shape[1:], total(a.at(k, *AXES[:a.rank - 1]), k, a.shape[0]) / self.size)

    def text(self, args):
        return f"Σ_i {args[0].at(POSTFIX)}[i]/{sym_text(self.size)}"

    def latex(self, args):
        n = sym_latex(self.size)
        return rf"\sum_{{i=1}}^{{{n}}} {args[0].at(POSTFIX, True)}[i] / {n}"


#: What a query with no admitted key gets (:ref:`decision-empty-neighbourhood`): a zero column, NaN, a DomainError,
#: or the uniform average of every value — what masking with a large negative fill (−10⁹ for −∞) gives, every
#: score of such a query then being the same number.
EMPTY_POLICIES = ("zero", "nan", "error", "uniform")
#: The policies an executor along a graph's edges has: no dense row of scores to fill, so no ``uniform``.
EDGE_EMPTY_POLICIES = ("zero", "nan", "error")


def check_empty_policy(empty: str, *, edges: bool = False) -> str:
    """``empty`` if it names a policy for a query with no admitted key (:ref:`decision-empty-neighbourhood`), else
    a ConfigError; ``edges``: for an executor along a graph's edges, which refuses ``uniform``."""
    if empty not in EMPTY_POLICIES:
        raise ConfigError(f"unknown empty-neighbourhood policy {shown(empty)}; known: {', '.join(EMPTY_POLICIES)}")
    if edges and empty not in EDGE_EMPTY_POLICIES:
        raise ConfigError(f"empty = {shown(empty)} (a large negative fill of a dense row of scores) has no meaning "
                          f"along a graph's edges; known there: {', '.join(EDGE_EMPTY_POLICIES)}")
    return empty


def empty_neighbourhood(columns, where: str = "") -> DomainError:
    """The error ``empty="error"`` raises for the query ``columns`` that admit no key."""
    return DomainError(f"{where}query column {list(columns)} has no admitted key (an empty neighbourhood) and "
                       "empty='error'")

#: What a softmax normalises: attention scores or output logits (the chinchilla convention counts only the first).
SOFTMAX_INPUTS = ("scores", "logits")


class Softmax(Op):
    """Softmax of each column (over axis 0).

    A column whose entries are all −∞ (an empty neighbourhood: no admitted key) follows ``empty``:
    ``"zero"`` returns a zero column, ``"nan"`` a NaN column, ``"error"`` raises :class:`DomainError`,
    ``"uniform"`` the column 1/n everywhere (what a fill of −10⁹ instead of −∞ gives: n equal scores).

    FLOPs (full) for an n×m input: per column n−1 comparisons for the maximum, n subtractions of it,
    n exponentials, n−1 additions and n divisions: 5nm − 2m.  Under ``chinchilla``: 3 per entry of a
    softmax over attention scores, none over output logits (Hoffmann et al. 2022, Appendix F, counts only
    the former); none under ``matmul`` and ``kaplan``.
    """

    name = "softmax"

    def __init__(self, empty: str = "zero", over: str = "scores"):
        if over not in SOFTMAX_INPUTS:
            raise ValueError(f"softmax over {over!r}; known: {', '.join(SOFTMAX_INPUTS)}")
        self.empty, self.over = empty, over
        self.nonfinite = "output" if empty == "nan" else None

    def shape(self, shapes):
        rank(shapes[0], (1, 2), "a softmax")
        return shapes[0]

    def flops(self, shapes, out):
        n = out[0]
        counts = {"full": 5 * numel(out) - 2 * numel(out) / n}
        if self.over == "scores":
            counts["chinchilla"] = 3 * numel(out)
        return counts

    def numpy(self, ctx, s, axis=0):
        top = np.max(s, axis=axis, keepdims=True)
        empty = np.isneginf(top)  # a column of −∞ only (a score of +∞ or NaN is an overflow, not this)
        if np.any(empty) and self.empty == "error":
            columns = np.flatnonzero(np.reshape(empty, -1))
            raise empty_neighbourhood(columns.tolist(), f"{ctx.where()}: ")
        e = np.exp(s - np.where(empty, 0.0, top))
        total = np.sum(e, axis=axis, keepdims=True)
        p = e / np.where(empty, 1.0, total)  # an empty column is exp(−∞) = 0 everywhere
        if self.empty == "uniform":
            return np.where(empty, 1.0 / s.shape[axis], p)
        return np.where(empty, np.nan, p) if self.empty == "nan" else p

    def columns(self, ctx, values, batched):
        return self.numpy(ctx, *values)     # every step is over axis 0, kept per column

    def leading(self, ctx, values, lead):
        (s,) = values   # an error (empty="error") is the one-by-one run's to raise: formal.engine.batches
        return self.numpy(ctx, s, axis=ctx.lead)   # axis 0 of each trip's scores

    def meaning(self, ctx, s):
        """``exp(s[i, j]) / Σ_k exp(s[k, j])``: each column normalised over axis 0 (finite scores; the maximum
        numpy subtracts cancels)."""
        import sympy as sp

        from ..core.symbolic import Value, fresh, total
        k = fresh()
        column = s.index[1:]
        return Value(s.shape, sp.exp(s.expr) / total(sp.exp(s.at(k, *column)), k, s.shape[0]))


class MaskFill(Op):
    """Algorithm 4, line 5: every score whose mask entry is 0 becomes −∞.  Free (a selection)."""

    name = "mask"
    free = True
    nonfinite = "local"

    def shape(self, shapes):
        s, m = shapes
        for x, y in zip(s, m):
            if not same_dim(x, y):
                raise Mismatch(str(x), x, y, "mask against the scores")
        return s

    def numpy(self, ctx, s, mask):
        return np.where(mask, s, -np.inf)

    def leading(self, ctx, values, lead):
        return self.numpy(ctx, *values)   # both of one rank: they broadcast over the batch axes

    def meaning(self, ctx, s, mask):
        """The identity under an all-ones mask; a mask of symbolic entries has no meaning here."""
        if mask.expr != 1:
            raise ConfigError(f"{ctx.where()}: a mask with entries other than 1 has no symbolic meaning "
                              f"(got {mask.expr})")
        return s

    def line_text(self, target, args):
        s, m = args[0].text, args[1].text
        return f"∀t_z, t_x: if ¬{m}[t_z, t_x] then {s}[t_z, t_x] ← −∞"

    def line_latex(self, target, args):
        s, m = args[0].text, args[1].text
        return (rf"\forall t_z, t_x:\ \textbf{{if}}\ \neg {m}[t_z, t_x]\ \textbf{{then}}\ "
                rf"{s}[t_z, t_x] \gets -\infty")
