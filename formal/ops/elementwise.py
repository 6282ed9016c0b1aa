"""Elementwise arithmetic; a scalar broadcasts against any shape."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ..core.shapes import Mismatch, numel, same_dim
from ..core.symbols import latex as sym_latex, text as sym_text
from ..costs.cost import CONVENTIONS, Work
from ..errors import DomainError
from .base import ATOM, POSTFIX, PRODUCT, SUM, Op, ranked, widened


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

    def columns(self, ctx, values, batched):
        return self.numpy(ctx, *widened(values, batched))

    def leading(self, ctx, values, lead):
        return self.numpy(ctx, *ranked(values, lead, ctx.lead))

    def meaning(self, ctx, a, b):
        from ..core.symbolic import ELEMENTWISE, broadcast
        return broadcast(a, b, ELEMENTWISE[self.ufunc.__name__])

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

    def meaning(self, ctx, a):
        value = ctx.constant(self.value, self.glyph)
        return a.map(lambda x: x + value)

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

    def columns(self, ctx, values, batched):
        return self.numpy(ctx, *values)

    def meaning(self, ctx, a):
        return a.map(lambda x: x**2)

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

    def meaning(self, ctx, a):
        return a.map(sp.sqrt)

    def text(self, args):
        return "√" + args[0].at(ATOM)

    def latex(self, args):
        return rf"\sqrt{{{args[0].text}}}"


_TINY = np.finfo(np.float64).tiny


class Standardize(Op):
    """``c / √(v + ε)`` for centred values ``c`` (``e − m``; ``e`` in RMSNorm) and their mean square ``v``
    (per column), as layer norm's last line writes it, computed without squaring ``c``: the columns are
    scaled by a power of two (exactly) before the mean square is taken and ``√(v + ε)`` is formed with
    ``hypot``, so a column of entries near 10²⁰⁰ or 10⁻¹⁷⁰ normalises correctly where ``v`` itself over- or
    underflows float64.  Where ``v`` is a normal float64 number the rendered expression is evaluated as
    written (``c/√(v + ε)``); only a column whose ``v`` overflowed or underflowed takes the scaled route,
    which gives the same real number.  A zero denominator (a constant column under ε = 0) is a
    :class:`DomainError` carrying ``nonzero``.  FLOPs and memory are those of the rendered expression: one
    division per element, one square root (and one addition of ε) per column.
    """

    name = "standardize"
    prec = PRODUCT

    def __init__(self, eps: float, nonzero: str, glyph: str = "ε", tex: str = r"\epsilon"):
        self.eps, self.nonzero, self.glyph, self.tex = eps, nonzero, glyph, tex

    def shape(self, shapes):
        return Div().shape(shapes)

    def work(self, shapes, out):
        """The rendered expression's: ``numel(c)`` divisions, and per column of ``v`` a square root (and an
        addition of ε), each a new array (memory) and one FLOP per element under ``full``."""
        count = numel(out) + numel(shapes[1]) * (2 if self.eps else 1)
        return Work({c: sp.sympify(count if c == "full" else 0) for c in CONVENTIONS}, sp.sympify(count),
                    sp.Integer(0))

    def numpy(self, ctx, c, v):
        v = np.asanyarray(v)
        fine = np.isfinite(v) & (v >= _TINY)
        if not np.all(fine):   # a column whose v is 0 exactly (constant, not by underflow) is fine as well
            fine = fine | (np.isfinite(v) & np.all(np.asanyarray(c) == 0, axis=0))
        if np.all(fine):                                              # the rendered expression, as written
            root = np.sqrt(v + self.eps if self.eps else v)
            if np.any(root == 0):
                raise DomainError(f"{ctx.where()}: {self.nonzero}")
            return c / root
        safe, zero = self._scaled(np.asarray(c, dtype=np.float64))
        if np.any(zero):
            raise DomainError(f"{ctx.where()}: {self.nonzero}")
        if not np.any(fine):
            return safe
        with np.errstate(divide="ignore", invalid="ignore"):
            quick = c / np.sqrt(np.where(fine, v, 1.0) + self.eps)
        return np.where(fine, quick, safe)

    def columns(self, ctx, values, batched):
        """Every step reduces or broadcasts over axis 0 of ``c`` and per entry of ``v`` (one per column)."""
        return self.numpy(ctx, *widened(values, batched))

    def meaning(self, ctx, c, v):
        """``c / √(v + ε)``, v broadcast against c as numpy does (one value per column)."""
        from ..core.symbolic import broadcast
        eps = ctx.constant(self.eps, self.glyph)
        return broadcast(c, v, lambda x, y: x / sp.sqrt(y + eps))

    def _scaled(self, c):
        """``(c/√(mean(c²) + ε), zero)`` per column without squaring ``c``: scaled by a power of two ≥ max |c|
        (exactly), the root formed with ``hypot``; ``zero`` marks the columns whose denominator is 0 (a NaN
        or ∞ passed in propagates as NaN)."""
        top = np.max(np.abs(c), axis=0)
        _, exponent = np.frexp(np.where(np.isfinite(top) & (top > 0), top, 1.0))
        scale = np.ldexp(1.0, exponent)
        scaled = c / scale                                                # exact; every entry in [−1, 1]
        spread = np.hypot(np.sqrt(np.sum(np.square(scaled), axis=0) / c.shape[0]), math.sqrt(self.eps) / scale)
        zero = spread == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            return scaled / np.where(zero, 1.0, spread), zero

    def _root(self, v, latex):
        inner = f"{v.at(SUM, latex)} + {self.tex if latex else self.glyph}" if self.eps else v.text
        if latex:
            return rf"\sqrt{{{inner}}}"
        return "√" + (f"({inner})" if self.eps else v.at(ATOM))

    def text(self, args):
        return f"{args[0].at(PRODUCT)} / {self._root(args[1], False)}"

    def latex(self, args):
        return rf"\frac{{{args[0].text}}}{{{self._root(args[1], True)}}}"


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

    def leading(self, ctx, values, lead):
        return self.numpy(ctx, *values)

    def meaning(self, ctx, a):
        return a.map(lambda x: x / sp.sqrt(self.size))

    def text(self, args):
        return f"{args[0].at(PRODUCT)}/√{sym_text(self.size)}"

    def latex(self, args):
        return rf"\frac{{{args[0].text}}}{{\sqrt{{{sym_latex(self.size)}}}}}"
