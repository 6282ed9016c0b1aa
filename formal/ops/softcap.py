"""Soft-capping (Gemma 2; Team Gemma 2024, §2): a score or logit x becomes ``c·tanh(x/c)``, so that it stays in
(−c, c) and is close to x where |x| ≪ c.  Gemma 2 caps its attention scores at c = 50 (after the 1/√d scaling) and
its final logits at c = 30.  −∞ (a masked score) stays −∞: tanh(−∞) = −1 would turn a hidden key into a visible one
scored −c, so the cap is applied before the mask, as Gemma 2's code does.

FLOPs (full): 3 per entry — the division, tanh and the product; none under the conventions that count matrix
products only.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.shapes import numel
from .base import Op, ranked, widened

__all__ = ["SoftCap", "soft_cap"]


class SoftCap(Op):
    """``c·tanh(x/c)`` of every entry, for a cap ``c > 0`` (the module docstring)."""

    name = "softcap"

    def __init__(self, cap: float):
        if not (isinstance(cap, (int, float)) and math.isfinite(cap) and cap > 0):
            raise ValueError(f"a soft cap is a finite number > 0, got {cap!r}")
        self.cap = float(cap)

    def shape(self, shapes):
        return shapes[0]

    def flops(self, shapes, out):
        return {"full": 3 * numel(out)}

    def numpy(self, ctx, a):
        return self.cap * np.tanh(a / self.cap)

    def columns(self, ctx, values, batched):
        return self.numpy(ctx, *widened(values, batched))

    def leading(self, ctx, values, lead):
        return self.numpy(ctx, *ranked(values, lead, ctx.lead))

    def text(self, args):
        return f"{self.cap:g}·tanh({args[0].text}/{self.cap:g})"

    def latex(self, args):
        return rf"{self.cap:g}\tanh\left({args[0].text}/{self.cap:g}\right)"


def soft_cap(x, cap):
    """``cap·tanh(x/cap)`` (an expression node), or ``x`` itself when ``cap`` is None."""
    return x if cap is None else SoftCap(cap)(x)
