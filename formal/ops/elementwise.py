"""Elementwise arithmetic; a scalar broadcasts against any shape."""

from __future__ import annotations

import math

import numpy as np

from ..errors import DomainError
from ..shapes import Mismatch, same_dim
from ..symbols import latex as sym_latex, text as sym_text
from .base import ATOM, POSTFIX, PRODUCT, SUM, Op


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
