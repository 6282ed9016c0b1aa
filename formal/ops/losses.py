"""The training losses of Algorithms 11–13, and the random masking of Algorithm 12."""

from __future__ import annotations

import numpy as np

from ..core.constraints import at_most
from ..core.shapes import Mismatch, same_dim
from ..errors import DomainError
from .base import POSTFIX, Op, rank
from .sequences import special_token

__all__ = ["NextTokenNLL", "MaskedNLL", "DoublyStochastic", "MaskTokens", "MaskedPositions"]


class NextTokenNLL(Op):
    """``−Σ_{t=1}^{ℓ−1} log P[x[t+1], t]`` (Algorithms 11 and 13): column t predicts token t + 1.
    FLOPs (full): ℓ − 1 logarithms, ℓ − 2 additions and a negation, 2ℓ − 2 in all."""

    name = "nll"

    def shape(self, shapes):
        p, x = shapes
        rank(p, (2,), "distributions")
        if not same_dim(p[1], x[0]):
            raise Mismatch(str(p[1]), p[1], x[0], "one distribution per token")
        return ()

    def flops(self, shapes, out):
        return {"full": 2 * shapes[1][0] - 2}

    def constraints(self, shapes):
        return (at_most(2, shapes[1][0], "the next-token loss needs a next token: column t predicts token t + 1"),)

    def numpy(self, ctx, p, x):
        if x.shape[0] < 2:
            raise DomainError(f"{ctx.where()}: the next-token loss needs at least 2 tokens, got {x.shape[0]}")
        picked = p[x[1:], np.arange(x.shape[0] - 1)]
        return np.negative(np.sum(np.log(picked)))

    def text(self, args):
        return f"−Σ_(t=1)^(ℓ−1) log {args[0].at(POSTFIX)}[{args[1].text}[t+1], t]"

    def latex(self, args):
        return rf"-\sum_{{t=1}}^{{\ell-1}} \log {args[0].at(POSTFIX, True)}[{args[1].text}[t+1], t]"


class DoublyStochastic(Op):
    """``λ Σ_i (1 − Σ_t α_ti)²`` (Xu et al. 2015, eq. 14): the penalty that asks every location i of the
    attention map α (locations × steps) to receive a total weight of 1 over the caption.  FLOPs (full): the
    row sums (T − 1 additions per row), then per row a subtraction and a square, L − 1 additions and the
    product with λ: L·T + 2L in all."""

    name = "doubly_stochastic"

    def __init__(self, weight: float):
        self.weight = weight

    def shape(self, shapes):
        rank(shapes[0], (2,), "an attention map (locations × steps)")
        return ()

    def flops(self, shapes, out):
        rows, cols = shapes[0]
        return {"full": rows * cols + 2 * rows}

    def numpy(self, ctx, a):
        return np.multiply(self.weight, np.sum(np.square(np.subtract(1.0, np.sum(a, axis=1)))))

    def text(self, args):
        return f"{self.weight:g}·Σ_i (1 − Σ_t {args[0].at(POSTFIX)}[i, t])²"

    def latex(self, args):
        return rf"{self.weight:g} \sum_{{i}} \left(1 - \sum_{{t}} {args[0].at(POSTFIX, True)}[i, t]\right)^{{2}}"


class MaskedNLL(Op):
    """``−Σ_{t∈T̃} log P[x[t], t]`` (Algorithm 12), computed ``−Σ_t m[t]·log P[x[t], t]`` with m the indicator
    of T̃.
    FLOPs (full): ℓ logarithms, ℓ multiplications, ℓ − 1 additions and a negation, 3ℓ in all."""

    name = "masked_nll"

    def shape(self, shapes):
        p, x, m = shapes
        if not (same_dim(p[1], x[0]) and same_dim(x[0], m[0])):
            raise Mismatch(str(p[1]), p[1], x[0], "one distribution and one mask entry per token")
        return ()

    def flops(self, shapes, out):
        return {"full": 3 * shapes[1][0]}

    def numpy(self, ctx, p, x, m):
        picked = p[x, np.arange(x.shape[0])]
        return np.negative(np.sum(np.multiply(m, np.log(picked))))

    def text(self, args):
        return f"−Σ_(t∈{args[2].text}) log {args[0].at(POSTFIX)}[{args[1].text}[t], t]"

    def latex(self, args):
        return rf"-\sum_{{t \in {args[2].text}}} \log {args[0].at(POSTFIX, True)}[{args[1].text}[t], t]"


class MaskTokens(Op):
    """``x̃[t] ← mask_token or x[t] randomly with probability p_mask or 1 − p_mask`` (Algorithm 12, line 5), for
    every token at once with the execution's seeded generator (one uniform draw per token, in order).  Free."""

    name = "mask_tokens"
    free = True

    def __init__(self, p_mask: float, n_vocab):
        self.p_mask, self.n_vocab = p_mask, n_vocab

    def shape(self, shapes):
        return shapes[0]

    def numpy(self, ctx, x):
        drawn = ctx.rng.random(np.shape(x)) < self.p_mask
        if hasattr(ctx, "drawn"):          # the positions drawn: T̃ (MaskedPositions) of the same execution
            ctx.drawn["mask"] = drawn
        return np.where(drawn, special_token("mask", ctx.evaluate(self.n_vocab)), x)

    def text(self, args):
        return (f"mask_token or {args[0].text}[t] randomly with probability p_mask or 1 − p_mask, "
                f"p_mask = {self.p_mask:g}")

    def latex(self, args):
        p = r"p_{\mathrm{mask}}"
        return (rf"\mathrm{{mask\_token}} \text{{ or }} {args[0].text}[t] \text{{ randomly with probability }} {p}"
                rf" \text{{ or }} 1 - {p},\ {p} = {self.p_mask:g}")

    def line_text(self, target, args):
        return f"x̃[t] ← {self.text(args)}"

    def line_latex(self, target, args):
        return rf"\tilde{{x}}[t] \gets {self.latex(args)}"


class MaskedPositions(Op):
    """``T̃ ← {t ∈ [ℓ] : x̃[t] = mask_token}`` (Algorithm 12, line 7), held as its 0/1 indicator over the
    tokens: the positions the masking line drew (:class:`MaskTokens`).  The paper's set is the same when the
    data holds no mask_token; a token that is mask_token already, and was not drawn, is not counted (the
    positions *masked*, as BERT's loss and the reference count them).  Free."""

    name = "masked_positions"
    free = True

    def __init__(self, n_vocab):
        self.n_vocab = n_vocab

    def shape(self, shapes):
        return shapes[0]

    def numpy(self, ctx, x):
        drawn = getattr(ctx, "drawn", {}).get("mask")
        if drawn is not None and np.shape(drawn) == np.shape(x):
            return drawn.astype(np.float64)
        return (x == special_token("mask", ctx.evaluate(self.n_vocab))).astype(np.float64)

    def text(self, args):
        return f"{{t ∈ [ℓ] : {args[0].text}[t] = mask_token}}"

    def latex(self, args):
        return rf"\{{t \in [\ell] : {args[0].text}[t] = \mathrm{{mask\_token}}\}}"


