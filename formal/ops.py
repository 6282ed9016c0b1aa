"""Primitive operations.

Each op knows four things about itself: the shape of its result from the shapes of its arguments (with
unification: a product of ``d_attn×d_x`` by ``d_z×ℓ_z`` is an error unless ``d_x`` and ``d_z`` are one
symbol), its cost under every FLOP convention, its numpy semantics, and its rendering.  An algorithm line
is a tree of :class:`Apply` nodes over :class:`Ref` leaves, so adding an op never touches the algorithms.

Arrays follow the paper's layout: one column per token.  Reductions and softmax run over axis 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from .cost import Work
from .errors import DomainError
from .shapes import Mismatch, numel, same_dim
from .symbols import latex as sym_latex, text as sym_text

__all__ = [
    "Node", "Ref", "Apply", "Op", "Rendered", "LoopIndex", "KVGroup",
    "matmul", "matmul_t", "weighted_sum", "add", "add_bias", "add_constant", "sub", "mul", "div", "square", "sqrt",
    "div_sqrt", "mean", "softmax", "mask_fill", "gather", "pick", "stack_rows", "sinusoid",
]

TOP, SUM, PRODUCT, POSTFIX, ATOM = 0, 50, 60, 80, 100  # rendering precedence


# ----------------------------------------------------------------------------------------- expression nodes
class Node:
    """An expression in an algorithm line."""


@dataclass(frozen=True)
class Ref(Node):
    """A reference to a named value of the algorithm (input, parameter or earlier result)."""

    name: str


@dataclass(frozen=True)
class Apply(Node):
    """An op applied to argument expressions."""

    op: "Op"
    args: tuple


def as_node(value) -> Node:
    return Ref(value) if isinstance(value, str) else value


@dataclass(frozen=True)
class Rendered:
    """A rendered sub-expression and how tightly it binds."""

    text: str
    prec: int = ATOM

    def at(self, prec: int, latex: bool = False) -> str:
        if self.prec >= prec:
            return self.text
        return rf"\left({self.text}\right)" if latex else f"({self.text})"


class Op:
    """A primitive operation (see the module docstring)."""

    name = "op"
    prec = ATOM

    def __call__(self, *args) -> Apply:
        return Apply(self, tuple(as_node(a) for a in args))

    # -- the four faces
    def shape(self, shapes):
        raise NotImplementedError

    def flops(self, shapes, out):
        """(matmul convention, full convention)."""
        return 0, numel(out)

    def memory(self, out):
        return numel(out)

    def numpy(self, ctx, *values):
        raise NotImplementedError

    def text(self, args) -> str:
        return f"{self.name}({', '.join(a.text for a in args)})"

    def latex(self, args) -> str:
        return rf"\operatorname{{{self.name}}}\left({', '.join(a.text for a in args)}\right)"

    # -- derived
    def work(self, shapes, out) -> Work:
        matmul_flops, full_flops = self.flops(shapes, out)
        return Work({"matmul": sp.sympify(matmul_flops), "full": sp.sympify(full_flops)},
                    sp.sympify(self.memory(out)), sp.Integer(0))

    def line_text(self, target: str, args) -> str | None:
        """A rendering of the whole line ``target ← op(args)``, where the paper writes it differently."""
        return None

    line_latex = line_text

    def __repr__(self):
        return f"{type(self).__name__}()"


def _rank(shape, ranks, what):
    if len(shape) not in ranks:
        raise Mismatch(f"rank of {what}", " or ".join(map(str, ranks)), len(shape))


# ------------------------------------------------------------------------------------------- linear algebra
class MatMul(Op):
    """Matrix product ``A B`` (or ``Aᵀ B``); B may be a vector.

    FLOPs, both conventions: 2mkn for (m×k)·(k×n), 2mk for a matrix times a vector.
    """

    name = "matmul"
    prec = PRODUCT

    def __init__(self, transpose_a: bool = False):
        self.transpose_a = transpose_a

    def shape(self, shapes):
        a, b = shapes
        _rank(a, (2,), "the left factor of a product")
        _rank(b, (1, 2), "the right factor of a product")
        m, k = (a[1], a[0]) if self.transpose_a else (a[0], a[1])
        if not same_dim(k, b[0]):
            raise Mismatch(str(k), k, b[0], "inner sizes of a matrix product")
        return (m,) + tuple(b[1:])

    def flops(self, shapes, out):
        k = shapes[0][0] if self.transpose_a else shapes[0][1]
        count = 2 * k * numel(out)
        return count, count

    def numpy(self, ctx, a, b):
        return (a.T if self.transpose_a else a) @ b

    def _left(self, arg, latex):
        return arg.at(POSTFIX, latex) + ((r"^{\top}" if latex else "ᵀ") if self.transpose_a else "")

    def text(self, args):
        return f"{self._left(args[0], False)} {args[1].at(PRODUCT + 1)}"

    def latex(self, args):
        return rf"{self._left(args[0], True)} {args[1].at(PRODUCT + 1, True)}"


class WeightedSum(MatMul):
    """``Σ_t α_t v_t``: the columns of V weighted by α (a matrix–vector product, 2·d·T FLOPs)."""

    name = "weighted_sum"

    def text(self, args):
        return f"Σ_t {args[1].text}_t {args[0].text.lower()}_t"

    def latex(self, args):
        return rf"\sum_{{t}} {args[1].text}_{{t}} {args[0].text.lower()}_{{t}}"


class Transposed(Op):
    """``Aᵀ``: a view, free."""

    name = "transpose"
    prec = POSTFIX

    def shape(self, shapes):
        _rank(shapes[0], (2,), "a transposed matrix")
        return shapes[0][::-1]

    def flops(self, shapes, out):
        return 0, 0

    def memory(self, out):
        return 0

    def numpy(self, ctx, a):
        return a.T

    def text(self, args):
        return args[0].at(POSTFIX) + "ᵀ"

    def latex(self, args):
        return args[0].at(POSTFIX, True) + r"^{\top}"


# --------------------------------------------------------------------------------------------- elementwise
class Elementwise(Op):
    """A binary elementwise op; a scalar broadcasts against any shape.  FLOPs (full): one per element."""

    symbol = "?"
    tex = "?"
    ufunc = None
    left_prec = right_prec = ATOM

    def shape(self, shapes):
        a, b = shapes
        if not a:
            return b
        if not b:
            return a
        if len(a) != len(b):
            raise Mismatch("rank", len(a), len(b), f"operands of {self.symbol}")
        for x, y in zip(a, b):
            if not same_dim(x, y):
                raise Mismatch(str(x), x, y, f"operands of {self.symbol}")
        return a

    def numpy(self, ctx, a, b):
        return self.ufunc(a, b)

    def text(self, args):
        return f"{args[0].at(self.left_prec)} {self.symbol} {args[1].at(self.right_prec)}"

    def latex(self, args):
        return f"{args[0].at(self.left_prec, True)} {self.tex} {args[1].at(self.right_prec, True)}"


class Add(Elementwise):
    name, symbol, tex, ufunc, prec = "add", "+", "+", np.add, SUM
    left_prec, right_prec = SUM, SUM + 1


class Sub(Elementwise):
    name, symbol, tex, ufunc, prec = "sub", "−", "-", np.subtract, SUM
    left_prec, right_prec = SUM, SUM + 1


class Mul(Elementwise):
    """Hadamard product ``a ⊙ b``."""

    name, symbol, tex, ufunc, prec = "mul", "⊙", r"\odot", np.multiply, PRODUCT
    left_prec, right_prec = PRODUCT, PRODUCT + 1


class Div(Elementwise):
    """``a / b``.  With ``nonzero``, a zero divisor is a :class:`DomainError` carrying that message."""

    name, symbol, ufunc, prec = "div", "/", np.divide, PRODUCT
    left_prec, right_prec = PRODUCT, PRODUCT + 1

    def __init__(self, nonzero: str | None = None):
        self.nonzero = nonzero

    def numpy(self, ctx, a, b):
        if self.nonzero is not None and np.any(np.asarray(b) == 0):
            raise DomainError(f"{ctx.where()}: {self.nonzero}")
        return np.divide(a, b)

    def latex(self, args):
        return rf"\frac{{{args[0].text}}}{{{args[1].text}}}"


class AddBias(Op):
    """``A + b 1ᵀ``: a bias vector added to every column.  FLOPs (full): one per element of A.

    ``ones=False`` renders it as the paper does inside a columnwise line (``∀t: k_t ← W_k e_t + b_k``).
    """

    name = "add_bias"
    prec = SUM

    def __init__(self, ones: bool = True):
        self.ones = ones

    def shape(self, shapes):
        a, b = shapes
        _rank(a, (2,), "a matrix with a bias")
        _rank(b, (1,), "a bias")
        if not same_dim(a[0], b[0]):
            raise Mismatch(str(a[0]), a[0], b[0], "bias length against the rows")
        return a

    def numpy(self, ctx, a, b):
        return a + b[:, None]

    def text(self, args):
        return f"{args[0].at(SUM)} + {args[1].at(POSTFIX)}" + ("1ᵀ" if self.ones else "")

    def latex(self, args):
        ones = r" \mathbf{1}^{\top}" if self.ones else ""
        return rf"{args[0].at(SUM, True)} + {args[1].at(POSTFIX, True)}{ones}"


class AddConstant(Op):
    """``a + c`` for a constant c (a layer norm's ε); one FLOP per element (full)."""

    name = "add_constant"
    prec = SUM

    def __init__(self, value: float, glyph: str, tex: str):
        self.value, self.glyph, self.tex = value, glyph, tex

    def shape(self, shapes):
        return shapes[0]

    def numpy(self, ctx, a):
        return a + self.value

    def text(self, args):
        return f"{args[0].at(SUM)} + {self.glyph}"

    def latex(self, args):
        return f"{args[0].at(SUM, True)} + {self.tex}"


class Square(Op):
    """``x²`` elementwise; one FLOP per element (full)."""

    name = "square"
    prec = POSTFIX

    def shape(self, shapes):
        return shapes[0]

    def numpy(self, ctx, a):
        return np.square(a)

    def text(self, args):
        return args[0].at(ATOM) + "²"

    def latex(self, args):
        return args[0].at(ATOM, True) + "^{2}"


class Sqrt(Op):
    """``√x`` elementwise; one FLOP per element (full)."""

    name = "sqrt"

    def shape(self, shapes):
        return shapes[0]

    def numpy(self, ctx, a):
        return np.sqrt(a)

    def text(self, args):
        return "√" + args[0].at(ATOM)

    def latex(self, args):
        return rf"\sqrt{{{args[0].text}}}"


class DivSqrt(Op):
    """``S / √d`` for a size symbol d; one FLOP per element (full), the constant √d is free."""

    name = "div_sqrt"
    prec = PRODUCT

    def __init__(self, size):
        self.size = size

    def shape(self, shapes):
        return shapes[0]

    def numpy(self, ctx, a):
        return a / math.sqrt(ctx.evaluate(self.size))

    def text(self, args):
        return f"{args[0].at(PRODUCT)}/√{sym_text(self.size)}"

    def latex(self, args):
        return rf"\frac{{{args[0].text}}}{{\sqrt{{{sym_latex(self.size)}}}}}"


# ------------------------------------------------------------------------------------------- reductions
class Mean(Op):
    """``Σ_i x[i] / n`` over axis 0 (per column).  FLOPs (full): (n−1) additions and one division per
    column, n per column in all."""

    name = "mean"
    prec = PRODUCT

    def shape(self, shapes):
        _rank(shapes[0], (1, 2), "a mean")
        return tuple(shapes[0][1:])

    def flops(self, shapes, out):
        return 0, numel(shapes[0])

    def numpy(self, ctx, a):
        return np.sum(a, axis=0) / a.shape[0]

    def text(self, args, n="n"):
        return f"Σ_i {args[0].at(POSTFIX)}[i]/{n}"

    def latex(self, args):
        return rf"\frac{{1}}{{n}}\sum_{{i}} {args[0].at(POSTFIX, True)}[i]"


class MeanOver(Mean):
    """:class:`Mean` rendered with the size it divides by (``Σ_i e[i]/d_e``)."""

    def __init__(self, size):
        self.size = size

    def text(self, args):
        return f"Σ_i {args[0].at(POSTFIX)}[i]/{sym_text(self.size)}"

    def latex(self, args):
        n = sym_latex(self.size)
        return rf"\sum_{{i=1}}^{{{n}}} {args[0].at(POSTFIX, True)}[i] / {n}"


EMPTY_POLICIES = ("zero", "nan", "error")


class Softmax(Op):
    """Softmax of each column (over axis 0).

    A column whose entries are all −∞ (an empty neighbourhood: no admitted key) follows ``empty``:
    ``"zero"`` returns a zero column, ``"nan"`` a NaN column, ``"error"`` raises :class:`DomainError`.

    FLOPs (full) for an n×m input: per column n−1 comparisons for the maximum, n subtractions of it,
    n exponentials, n−1 additions and n divisions: 5nm − 2m.
    """

    name = "softmax"

    def __init__(self, empty: str = "zero"):
        self.empty = empty

    def shape(self, shapes):
        _rank(shapes[0], (1, 2), "a softmax")
        return shapes[0]

    def flops(self, shapes, out):
        n = out[0]
        return 0, 5 * numel(out) - 2 * numel(out) / n

    def numpy(self, ctx, s):
        top = np.max(s, axis=0, keepdims=True)
        empty = ~np.isfinite(top)  # a column of −∞ only
        if np.any(empty) and self.empty == "error":
            columns = np.flatnonzero(np.reshape(empty, -1))
            raise DomainError(f"{ctx.where()}: query column {columns.tolist()} has no admitted key "
                              "(an empty neighbourhood) and empty='error'")
        e = np.exp(s - np.where(empty, 0.0, top))
        total = np.sum(e, axis=0, keepdims=True)
        p = e / np.where(empty, 1.0, total)  # an empty column is exp(−∞) = 0 everywhere
        return np.where(empty, np.nan, p) if self.empty == "nan" else p


class MaskFill(Op):
    """Algorithm 4, line 5: every score whose mask entry is 0 becomes −∞.  Free (a selection)."""

    name = "mask"

    def shape(self, shapes):
        s, m = shapes
        for x, y in zip(s, m):
            if not same_dim(x, y):
                raise Mismatch(str(x), x, y, "mask against the scores")
        return s

    def flops(self, shapes, out):
        return 0, 0

    def numpy(self, ctx, s, mask):
        return np.where(mask, s, -np.inf)

    def line_text(self, target, args):
        s, m = args[0].text, args[1].text
        return f"∀t_z, t_x: if ¬{m}[t_z, t_x] then {s}[t_z, t_x] ← −∞"

    def line_latex(self, target, args):
        s, m = args[0].text, args[1].text
        return (rf"\forall t_z, t_x:\ \textbf{{if}}\ \neg {m}[t_z, t_x]\ \textbf{{then}}\ "
                rf"{s}[t_z, t_x] \gets -\infty")


# ------------------------------------------------------------------------------------ indexing and layout
class Gather(Op):
    """``W[:, v]``: the column(s) of W at index v (an integer or an integer vector).  Free; the result is
    materialised."""

    name = "gather"

    def __init__(self, what: str = "index"):
        self.what = what

    def shape(self, shapes):
        w, v = shapes
        _rank(w, (2,), "a lookup table")
        return (w[0],) + tuple(v)

    def flops(self, shapes, out):
        return 0, 0

    def numpy(self, ctx, w, v):
        v = np.asarray(v)
        bad = (v < 0) | (v >= w.shape[1])
        if np.any(bad):
            found = v.item() if v.ndim == 0 else v[bad].tolist()
            raise DomainError(f"{ctx.where()}: {self.what} = {found} is outside [0, {w.shape[1]})")
        return w[:, v]

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

    def text(self) -> str:
        if self.n_kv == 1:  # multi-query attention: one key/value head for all
            return "1"
        return f"⌈{self.var}·{sym_text(self.n_kv)}/{sym_text(self.heads)}⌉"

    def latex(self) -> str:
        if self.n_kv == 1:
            return "1"
        return rf"\lceil {self.var} {sym_latex(self.n_kv)} / {sym_latex(self.heads)} \rceil"


class Pick(Op):
    """Entry ``index`` of a value stacked on a leading axis (``W_q^h``).  A view, free."""

    name = "pick"
    prec = POSTFIX - 1  # (K^g)ᵀ needs its parentheses

    def __init__(self, index):
        self.index = index

    def shape(self, shapes):
        if not shapes[0]:
            raise Mismatch("rank of a stacked value", "at least 1", 0)
        return tuple(shapes[0][1:])

    def flops(self, shapes, out):
        return 0, 0

    def memory(self, out):
        return 0

    def numpy(self, ctx, a):
        return a[self.index.value(ctx)]

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

    def __init__(self, count):
        self.count = count

    def shape(self, shapes):
        _rank(shapes[0], (3,), "stacked blocks")
        h, m, n = shapes[0]
        return (h * m, n)

    def flops(self, shapes, out):
        return 0, 0

    def memory(self, out):
        return 0

    def numpy(self, ctx, a):
        return a.reshape(a.shape[0] * a.shape[1], a.shape[2])

    def text(self, args):
        y = _stem(args[0].text)
        return f"[{y}^1; {y}^2; …; {y}^{sym_text(self.count)}]"

    def latex(self, args):
        y = _stem(args[0].text)
        return rf"[{y}^{{1}}; {y}^{{2}}; \dots; {y}^{{{sym_latex(self.count)}}}]"


SINUSOIDS = {
    # name: (base, 1-indexed?) — SPEC.md decision 10.
    "sinusoidal-paper": ("ell_max", True),
    "sinusoidal-vaswani": (10000, False),
}


class Sinusoid(Op):
    """Column ``t`` of a fixed sinusoidal table W_p ∈ ℝ^{d_e×ℓ_max} (SPEC.md decision 10).

    ``"sinusoidal-paper"`` (Phuong & Hutter, Alg. 2): with 1-indexed t and i,
    W_p[2i−1, t] = sin(t / ℓ_max^{2i/d_e}), W_p[2i, t] = cos(t / ℓ_max^{2i/d_e}), 0 < i ≤ d_e/2.
    ``"sinusoidal-vaswani"`` (Vaswani et al. 2017, §3.5): with 0-indexed pos and i,
    PE[2i, pos] = sin(pos / 10000^{2i/d_e}), PE[2i+1, pos] = cos(pos / 10000^{2i/d_e}).
    The table is a constant of the model: the lookup is free.
    """

    name = "sinusoid"

    def __init__(self, kind: str, d_e, ell_max):
        self.kind, self.d_e, self.ell_max = kind, d_e, ell_max

    def shape(self, shapes):
        return (self.d_e,) + tuple(shapes[0])

    def flops(self, shapes, out):
        return 0, 0

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

    def text(self, args):
        base = "ℓ_max" if SINUSOIDS[self.kind][0] == "ell_max" else "10000"
        return f"W_p[:, {args[0].text}] with W_p[2i−1, t] = sin(t/{base}^(2i/d_e)), W_p[2i, t] = cos(…)"

    def latex(self, args):
        base = r"\ell_{\max}" if SINUSOIDS[self.kind][0] == "ell_max" else "10000"
        return (rf"W_p[:, {args[0].text}],\ W_p[2i-1, t] = \sin(t / {base}^{{2i/d_e}}),\ "
                rf"W_p[2i, t] = \cos(t / {base}^{{2i/d_e}})")


# ---------------------------------------------------------------------------------------- constructors
def matmul(a, b):
    """``a b``."""
    return MatMul()(a, b)


def matmul_t(a, b):
    """``aᵀ b``."""
    return MatMul(transpose_a=True)(a, b)


def weighted_sum(v, alpha):
    return WeightedSum()(v, alpha)


def add(a, b):
    return Add()(a, b)


def add_bias(a, b, *, ones: bool = True):
    return AddBias(ones)(a, b)


def add_constant(a, value: float, glyph: str = "ε", tex: str = r"\epsilon"):
    return AddConstant(value, glyph, tex)(a)


def sub(a, b):
    return Sub()(a, b)


def mul(a, b):
    return Mul()(a, b)


def div(a, b, *, nonzero: str | None = None):
    return Div(nonzero)(a, b)


def square(a):
    return Square()(a)


def sqrt(a):
    return Sqrt()(a)


def div_sqrt(a, size):
    return DivSqrt(size)(a)


def mean(a, size):
    return MeanOver(size)(a)


def softmax(a, *, empty: str = "zero"):
    return Softmax(empty)(a)


def mask_fill(s, mask):
    return MaskFill()(s, mask)


def gather(table, index, *, what: str = "index"):
    return Gather(what)(table, index)


def pick(value, index):
    return Pick(index)(value)


def stack_rows(value, count):
    return StackRows(count)(value)


def sinusoid(t, kind, d_e, ell_max):
    return Sinusoid(kind, d_e, ell_max)(t)
