"""What a recurrence needs beyond arithmetic: a zero start state, the column of step t (forwards or
backwards), ``1 − z`` for a gate, the states collected as a sequence, two values stacked one above the
other (a bidirectional layer's ``[H⃗; H⃖]``), and a layer's final state (an encoder's summary)."""

from __future__ import annotations

import numpy as np

from ..core.shapes import Mismatch, numel, same_dim
from ..core.symbols import latex as sym_latex, text as sym_text
from .base import ATOM, POSTFIX, SUM, Op, rank

__all__ = ["Zeros", "OneMinus", "Column", "Sequence", "StackVertical", "Final", "ColumnMean", "Dot"]


class Zeros(Op):
    """``0``: a value of ``shape`` filled with zeros (a recurrence's start state ``h_0 = 0``).  No FLOPs; the
    value is materialised."""

    name = "zeros"
    free = True

    def __init__(self, shape):
        self.dims = tuple(shape)

    def shape(self, shapes):
        return self.dims

    def numpy(self, ctx, *values):
        return np.zeros(tuple(ctx.evaluate(d) for d in self.dims))

    def text(self, args):
        return "0"

    latex = text


class OneMinus(Op):
    """``1 − z`` elementwise (a gate's complement): one FLOP per element (full)."""

    name = "one_minus"
    prec = ATOM  # rendered with its own parentheses

    def shape(self, shapes):
        return shapes[0]

    def numpy(self, ctx, a):
        return np.subtract(1.0, a)

    def text(self, args):
        return f"(1 − {args[0].at(SUM + 1)})"

    def latex(self, args):
        return rf"\left(1 - {args[0].at(SUM + 1, True)}\right)"


class Column(Op):
    """``X[:, t]``, the column a loop's step ``t`` reads (``index``, a :class:`~formal.ops.LoopIndex`); with
    ``reverse``, ``X[:, ℓ + 1 − t]``: a backward recurrence reads the last column first.  A view, free."""

    name = "column"
    view = True
    prec = POSTFIX

    def __init__(self, index, count, reverse: bool = False):
        self.index, self.count, self.reverse = index, count, reverse

    def shape(self, shapes):
        rank(shapes[0], (2,), "a sequence of columns")
        if not same_dim(shapes[0][1], self.count):
            raise Mismatch(str(self.count), self.count, shapes[0][1], "columns of the sequence a loop steps through")
        return (shapes[0][0],)

    def numpy(self, ctx, a):
        t = self.index.value(ctx)
        return a[:, a.shape[1] - 1 - t] if self.reverse else a[:, t]

    def _where(self, latex):
        t = self.index.latex() if latex else self.index.text()
        if not self.reverse:
            return t
        n = sym_latex(self.count) if latex else sym_text(self.count)
        return f"{n} + 1 - {t}" if latex else f"{n} + 1 − {t}"

    def text(self, args):
        return f"{args[0].at(POSTFIX)}[:, {self._where(False)}]"

    def latex(self, args):
        return f"{args[0].at(POSTFIX, True)}[:, {self._where(True)}]"


class Sequence(Op):
    """``[h_1, h_2, …, h_ℓ]``: the states a loop collected (stacked on a leading axis, one per step) as the
    columns of a matrix; with ``reverse`` the steps' order is turned round (a backward recurrence's step 1
    is the last position).  A view, free."""

    name = "sequence"
    view = True

    def __init__(self, count, glyph: str = "h", tex: str = "h", reverse: bool = False):
        self.count, self.glyph, self.tex, self.reverse = count, glyph, tex, reverse

    def shape(self, shapes):
        rank(shapes[0], (2,), "states collected by a loop")
        n, d = shapes[0]
        return (d, n)

    def numpy(self, ctx, a):
        return (a[::-1] if self.reverse else a).T

    def text(self, args):
        n = sym_text(self.count)
        ends = (f"{self.glyph}_{n}", f"{self.glyph}_1") if self.reverse else (f"{self.glyph}_1", f"{self.glyph}_{n}")
        return f"[{ends[0]}, …, {ends[1]}]"

    def latex(self, args):
        n = sym_latex(self.count)
        first, last = f"{self.tex}_{{1}}", f"{self.tex}_{{{n}}}"
        ends = (last, first) if self.reverse else (first, last)
        return rf"[{ends[0]}, \dots, {ends[1]}]"


class StackVertical(Op):
    """``[A; B; …]``: each value's rows below the one before's (vectors or matrices with the same columns).  No
    FLOPs; the result is materialised."""

    name = "stack_vertical"
    free = True

    def shape(self, shapes):
        a = shapes[0]
        for b in shapes[1:]:
            if len(a) != len(b) or not a:
                raise Mismatch("rank of stacked values", len(a), len(b))
            for x, y in zip(a[1:], b[1:]):
                if not same_dim(x, y):
                    raise Mismatch(str(x), x, y, "columns of values stacked one above the other")
        return (sum((b[0] for b in shapes[1:]), a[0]),) + tuple(a[1:])

    def memory(self, out):
        return numel(out)

    def numpy(self, ctx, *parts):
        return np.concatenate(parts, axis=0)

    def text(self, args):
        return "[" + "; ".join(a.text for a in args) + "]"

    def latex(self, args):
        return r"\begin{bmatrix} " + r" \\ ".join(a.text for a in args) + r" \end{bmatrix}"


class Final(Op):
    """The final state of a recurrent layer read from its states H (one column per position): ``h_ℓ``
    forwards, ``h_1`` backwards, ``[h⃗_ℓ; h⃖_1]`` both ways (torch's ``h_n``), or ``h⃖_1`` alone
    (``which="backward"``, Bahdanau et al.'s decoder start).  ``width`` is one direction's d_h.  No FLOPs;
    a vector made of two halves is materialised."""

    name = "final"
    free = True

    def __init__(self, width, direction: str, which: str = "final"):
        self.width, self.direction, self.which = width, direction, which

    def shape(self, shapes):
        rank(shapes[0], (2,), "a layer's states")
        if self.direction == "bidirectional" and self.which == "backward":
            return (self.width,)
        return (shapes[0][0],)

    def memory(self, out):
        return numel(out) if self.direction == "bidirectional" and self.which == "final" else 0

    def numpy(self, ctx, H):
        d = ctx.evaluate(self.width)
        if self.direction == "forward":
            return H[:, -1]
        if self.direction == "backward":
            return H[:, 0]
        return H[d:, 0] if self.which == "backward" else np.concatenate([H[:d, -1], H[d:, 0]])

    def _text(self, name, n, latex):
        if latex:
            fwd, bwd = rf"{name}^{{\rightarrow}}_{{{n}}}", rf"{name}^{{\leftarrow}}_{{1}}"
        else:
            fwd, bwd = f"{name}→_{n}", f"{name}←_1"
        if self.direction == "forward":
            return f"{name}_{{{n}}}" if latex else f"{name}_{n}"
        if self.direction == "backward":
            return f"{name}_{{1}}" if latex else f"{name}_1"
        if self.which == "backward":
            return bwd
        return rf"[{fwd}; {bwd}]"

    def text(self, args):
        return self._text(args[0].text.lower(), "ℓ", False)

    def latex(self, args):
        return self._text(args[0].text.lower(), r"\ell", True)


class ColumnMean(Op):
    """``(1/n) Σ_i a_i``: the mean of a matrix's n columns (Show-Attend-Tell's ā, the start of its LSTM).
    FLOPs (full): (n − 1) additions per row and one division per row, n per row in all."""

    name = "column_mean"

    def __init__(self, count):
        self.count = count

    def shape(self, shapes):
        rank(shapes[0], (2,), "a matrix of columns")
        return (shapes[0][0],)

    def flops(self, shapes, out):
        return {"full": numel(shapes[0])}

    def numpy(self, ctx, a):
        return np.sum(a, axis=1) / a.shape[1]

    def text(self, args):
        n = sym_text(self.count)
        n = n if getattr(self.count, "is_Atom", True) else f"({n})"
        return f"(1/{n}) Σ_i {args[0].text.lower()}_i"

    def latex(self, args):
        return rf"\frac{{1}}{{{sym_latex(self.count)}}} \sum_{{i}} {args[0].text.lower()}_{{i}}"


class Dot(Op):
    """``wᵀ h``: the inner product of two vectors, a scalar (Show-Attend-Tell's gate β).  FLOPs: 2·d under
    every convention but ``kaplan`` (a product with a weight vector)."""

    name = "dot"

    def shape(self, shapes):
        a, b = shapes
        rank(a, (1,), "the left factor of an inner product")
        rank(b, (1,), "the right factor of an inner product")
        if not same_dim(a[0], b[0]):
            raise Mismatch(str(a[0]), a[0], b[0], "lengths of an inner product's vectors")
        return ()

    def flops(self, shapes, out):
        count = 2 * shapes[0][0]
        return {"matmul": count, "chinchilla": count, "full": count, "kaplan": count}

    def numpy(self, ctx, a, b):
        return np.matmul(a, b)

    def text(self, args):
        return f"{args[0].at(POSTFIX)}ᵀ {args[1].at(POSTFIX)}"

    def latex(self, args):
        return rf"{args[0].at(POSTFIX, True)}^{{\top}} {args[1].at(POSTFIX, True)}"
