"""Lookups, slices of stacked values, stacking, and the fixed sinusoidal tables."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.shapes import Mismatch, numel
from ..core.symbols import latex as sym_latex, text as sym_text
from ..errors import DomainError
from .base import POSTFIX, NotColumnar, Op, rank


class Gather(Op):
    """``W[:, v]``: the column(s) of W at index v (an integer or an integer vector).  A lookup, free, but
    the result is materialised.  With ``onehot`` (the token embedding) the ``chinchilla`` convention counts
    it as the product of W with a one-hot vector, 2·d·N per index (Hoffmann et al. 2022, Appendix F)."""

    name = "gather"
    free = True

    def __init__(self, what: str = "index", onehot: bool = False):
        self.what, self.onehot = what, onehot

    def flops(self, shapes, out):
        return {"chinchilla": 2 * numel(out) * shapes[0][1]} if self.onehot else {}

    def shape(self, shapes):
        w, v = shapes
        rank(w, (2,), "a lookup table")
        return (w[0],) + tuple(v)

    def numpy(self, ctx, w, v):
        v = np.asarray(v)
        bad = (v < 0) | (v >= w.shape[1])
        if np.any(bad):
            found = v.item() if v.ndim == 0 else v[bad].tolist()
            raise DomainError(f"{ctx.where()}: {self.what} = {found} is outside [0, {w.shape[1]})")
        return w[:, v]

    def columns(self, ctx, values, batched):
        if batched[0]:
            raise NotColumnar(self.name)
        return self.numpy(ctx, *values)     # the ids' column axis becomes the result's last

    def text(self, args):
        return f"{args[0].at(POSTFIX)}[:, {args[1].text}]"

    def latex(self, args):
        return f"{args[0].at(POSTFIX, True)}[:, {args[1].text}]"


@dataclass(frozen=True)
class LoopIndex:
    """The loop variable itself: slice ``h`` of a stacked value is its ``h``-th entry."""

    var: str

    def value(self, ctx) -> int:
        return ctx.loop[self.var]

    def text(self) -> str:
        return self.var

    def latex(self) -> str:
        return self.var


@dataclass(frozen=True)
class KVGroup:
    """The key/value head serving query head ``var`` under grouped-query attention: heads are split into
    ``n_kv`` consecutive groups of ``H / n_kv`` (0-based ``h // (H/n_kv)``; 1-based ``⌈h·n_kv/H⌉``)."""

    var: str
    heads: object
    n_kv: object

    def value(self, ctx) -> int:
        return ctx.loop[self.var] // (ctx.evaluate(self.heads) // ctx.evaluate(self.n_kv))

    def _written(self, latex: bool) -> str:
        """``1`` (multi-query), ``h`` (one key/value head per head), ``⌈2h/H⌉`` for a numeral, else
        ``⌈h·H_kv/H⌉``: never a juxtaposition that reads as a subscript (``h2``)."""
        import sympy as sp
        n_kv, heads = sp.sympify(self.n_kv), sp.sympify(self.heads)
        if n_kv == 1:
            return "1"
        if sp.simplify(n_kv - heads) == 0:
            return self.var
        if n_kv.is_Integer:
            inner = f"{n_kv}{self.var}/" + (sym_latex(heads) if latex else sym_text(heads))
        else:
            inner = (rf"{self.var} \cdot {sym_latex(n_kv)} / {sym_latex(heads)}" if latex
                     else f"{self.var}·{sym_text(n_kv)}/{sym_text(heads)}")
        return rf"\lceil {inner} \rceil" if latex else f"⌈{inner}⌉"

    def text(self) -> str:
        return self._written(False)

    def latex(self) -> str:
        return self._written(True)


class Pick(Op):
    """Entry ``index`` of a value stacked on a leading axis (``W_q^h``).  A view, free."""

    name = "pick"
    view = True
    prec = POSTFIX - 1  # (K^g)ᵀ needs its parentheses

    def __init__(self, index):
        self.index = index

    def shape(self, shapes):
        if not shapes[0]:
            raise Mismatch("rank of a stacked value", "at least 1", 0)
        return tuple(shapes[0][1:])

    def numpy(self, ctx, a):
        return a[self.index.value(ctx)]

    def leading(self, ctx, values, lead):
        (a,) = values   # the index of a loop run trip by trip, inside a batch (a loop index of the batch is
        return a[(slice(None),) * ctx.lead + (self.index.value(ctx),)]   # the batch's own: formal.engine.batches)

    def text(self, args):
        return f"{_stem(args[0].text)}^{self.index.text()}"

    def latex(self, args):
        return f"{_stem(args[0].text)}^{{{self.index.latex()}}}"


def _stem(name: str) -> str:
    """``Y`` of a per-iteration name ``Y^h``."""
    return name.split("^", 1)[0]


class StackRows(Op):
    """``[Y^1; Y^2; …; Y^H]``: H stacked m×n blocks as one (H·m)×n matrix, head 1 on top.  A view of the
    stacked heads, free."""

    name = "stack_rows"
    view = True

    def __init__(self, count):
        self.count = count

    def shape(self, shapes):
        rank(shapes[0], (3,), "stacked blocks")
        h, m, n = shapes[0]
        return (h * m, n)

    def numpy(self, ctx, a):
        return a.reshape(a.shape[0] * a.shape[1], a.shape[2])

    def leading(self, ctx, values, lead):
        (a,) = values
        k = ctx.lead
        return a.reshape(a.shape[:k] + (a.shape[k] * a.shape[k + 1], a.shape[k + 2]))

    def text(self, args):
        y = _stem(args[0].text)
        return f"[{y}^1; {y}^2; …; {y}^{sym_text(self.count)}]"

    def latex(self, args):
        y = _stem(args[0].text)
        return rf"[{y}^{{1}}; {y}^{{2}}; \dots; {y}^{{{sym_latex(self.count)}}}]"


SINUSOIDS = {
    # name: (base, 1-indexed?) — the decision-sinusoids of docs/stack.rst.
    "sinusoidal-paper": ("ell_max", True),
    "sinusoidal-vaswani": (10000, False),
}


class Sinusoid(Op):
    """Column ``t`` of a fixed sinusoidal table W_p ∈ ℝ^{d_e×ℓ_max} (:ref:`decision-sinusoids`).

    ``"sinusoidal-paper"`` (Phuong & Hutter, Alg. 2): with 1-indexed t and i,
    W_p[2i−1, t] = sin(t / ℓ_max^{2i/d_e}), W_p[2i, t] = cos(t / ℓ_max^{2i/d_e}), 0 < i ≤ d_e/2.
    ``"sinusoidal-vaswani"`` (Vaswani et al. 2017, §3.5): with 0-indexed pos and i,
    PE[2i, pos] = sin(pos / 10000^{2i/d_e}), PE[2i+1, pos] = cos(pos / 10000^{2i/d_e}).
    The table is a constant of the model: the lookup is free.
    """

    name = "sinusoid"
    free = True

    def __init__(self, kind: str, d_e, ell_max):
        self.kind, self.d_e, self.ell_max = kind, d_e, ell_max

    def shape(self, shapes):
        return (self.d_e,) + tuple(shapes[0])

    def numpy(self, ctx, t):
        d_e, ell_max = ctx.evaluate(self.d_e), ctx.evaluate(self.ell_max)
        t = np.asarray(t)
        if np.any((t < 0) | (t >= ell_max)):
            raise DomainError(f"{ctx.where()}: position {t.tolist()} is outside [0, ell_max) = [0, {ell_max})")
        base, one_indexed = SINUSOIDS[self.kind]
        base = ell_max if base == "ell_max" else base
        pairs = np.arange(d_e // 2)            # i − 1 (paper) or i (Vaswani)
        exponent = (2 * (pairs + 1) if one_indexed else 2 * pairs) / d_e
        angle = np.multiply.outer(float(base) ** -exponent, t + 1 if one_indexed else t)  # (d_e/2, ...)
        table = np.empty((d_e,) + t.shape)
        table[0::2], table[1::2] = np.sin(angle), np.cos(angle)
        return table

    def columns(self, ctx, values, batched):
        return self.numpy(ctx, *values)   # a vector of positions: their columns, on the last axis

    def text(self, args):
        base = "ℓ_max" if SINUSOIDS[self.kind][0] == "ell_max" else "10000"
        return f"W_p[:, {args[0].text}] with W_p[2i−1, t] = sin(t/{base}^(2i/d_e)), W_p[2i, t] = cos(…)"

    def latex(self, args):
        base = r"\ell_{\max}" if SINUSOIDS[self.kind][0] == "ell_max" else "10000"
        return (rf"W_p[:, {args[0].text}],\ W_p[2i-1, t] = \sin(t / {base}^{{2i/d_e}}),\ "
                rf"W_p[2i, t] = \cos(t / {base}^{{2i/d_e}})")
