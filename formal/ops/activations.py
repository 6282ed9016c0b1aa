"""Elementwise nonlinearities: the MLP's (ReLU, GELU exact and tanh, SiLU for SwiGLU's gate) and the
recurrent cells' gates (tanh, the logistic sigmoid σ)."""

from __future__ import annotations

import math

import numpy as np

from ..core.shapes import numel
from .base import Op

_erf = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf; one call per element

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class Activation(Op):
    """A nonlinearity applied to every entry.  ``per_element`` is its ``full`` count, one per numpy
    operation the semantics below perform on each entry."""

    per_element = 1
    glyph = "?"
    tex = "?"

    def shape(self, shapes):
        return shapes[0]

    def flops(self, shapes, out):
        return {"full": self.per_element * numel(out)}

    def text(self, args):
        return f"{self.glyph}({args[0].text})"

    def latex(self, args):
        return rf"\mathrm{{{self.tex}}}\left({args[0].text}\right)"


class ReLU(Activation):
    """``max(x, 0)``: 1 FLOP per entry (full)."""

    name, glyph, tex, per_element = "relu", "ReLU", "ReLU", 1

    def numpy(self, ctx, a):
        return np.maximum(a, 0.0)


class GELU(Activation):
    """The exact GELU ``x·Φ(x) = x·(1 + erf(x/√2))/2``: 5 FLOPs per entry (full): a division,
    erf, an addition and two multiplications."""

    name, glyph, tex, per_element = "gelu", "GELU", "GELU", 5

    def numpy(self, ctx, a):
        return 0.5 * (a * (1.0 + _erf(a / math.sqrt(2.0)).astype(np.float64)))


class GELUTanh(Activation):
    """GPT-2's approximation ``x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))/2`` (Hendrycks & Gimpel 2016):
    8 FLOPs per entry (full): a cube, three multiplications, two additions, tanh, and the halving."""

    name, glyph, tex, per_element = "gelu_tanh", "GELU_tanh", "GELU_{tanh}", 8

    def numpy(self, ctx, a):
        inner = _SQRT_2_OVER_PI * (a + 0.044715 * np.power(a, 3))
        return 0.5 * (a * (1.0 + np.tanh(inner)))


class SiLU(Activation):
    """``x·σ(x) = x / (1 + e^{−x})`` (Elfwing et al. 2018), SwiGLU's gate: 4 FLOPs per entry (full):
    a negation, an exponential, an addition and a division."""

    name, glyph, tex, per_element = "silu", "SiLU", "SiLU", 4

    def numpy(self, ctx, a):
        return a / (1.0 + np.exp(np.negative(a)))


class Tanh(Activation):
    """``tanh(x)``: 1 FLOP per entry (full), numpy's one call."""

    name, glyph, tex, per_element = "tanh", "tanh", "tanh", 1

    def numpy(self, ctx, a):
        return np.tanh(a)

    def latex(self, args):
        return rf"\tanh\left({args[0].text}\right)"


class Sigmoid(Activation):
    """The logistic function ``σ(x) = 1 / (1 + e^{−x})``, a recurrent cell's gate: 4 FLOPs per entry (full):
    a negation, an exponential, an addition and a division.  For x below −709, e^{−x} overflows to ∞ and
    σ(x) is 0, its float64 value."""

    name, glyph, tex, per_element = "sigmoid", "σ", r"\sigma", 4

    def numpy(self, ctx, a):
        return np.divide(1.0, 1.0 + np.exp(np.negative(a)))

    def text(self, args):
        return f"σ({args[0].text})"

    def latex(self, args):
        return rf"\sigma\left({args[0].text}\right)"


#: The activations by option name: the MLP's and the recurrent cells'.
ACTIVATIONS = {"relu": ReLU, "gelu": GELU, "gelu-tanh": GELUTanh, "silu": SiLU, "tanh": Tanh, "sigmoid": Sigmoid}

__all__ = ["Activation", "ReLU", "GELU", "GELUTanh", "SiLU", "Tanh", "Sigmoid", "ACTIVATIONS"]
