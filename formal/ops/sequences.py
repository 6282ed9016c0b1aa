"""Ops on whole sequences: positions, constant masks, concatenation, truncation and sampling.

Token sequences are integer vectors (0-based ids); the special tokens are the last three ids of the
vocabulary: ``mask_token = N_V − 3``, ``bos_token = N_V − 2``, ``eos_token = N_V − 1``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..core import masks
from ..core.shapes import Mismatch, same_dim
from ..core.symbols import latex as sym_latex, text as sym_text
from ..errors import ConfigError
from .base import ATOM, POSTFIX, Op, rank

__all__ = ["tempered", "capped", "Positions", "ConstMask", "Concat", "Truncate", "LastColumn", "FirstColumn",
           "Sample", "Greedy", "Strip", "Drop", "SpecialToken", "special_token"]


def special_token(kind: str, n_vocab: int) -> int:
    """The 0-based id of ``mask``, ``bos`` or ``eos`` in a vocabulary of ``n_vocab`` tokens."""
    offset = {"mask": 3, "bos": 2, "eos": 1}[kind]
    if n_vocab < 3:
        raise ConfigError(f"N_V = {n_vocab} leaves no room for the special tokens mask, bos and eos")
    return n_vocab - offset


class capped(sp.Function):
    """``min(n, cap)`` kept unevaluated while symbolic: a context truncated to ℓ_max.  Derivation of a
    summed loop replaces it by ``n`` and records the assumption ``n ≤ cap``."""

    @classmethod
    def eval(cls, n, cap):
        if n.is_number and cap.is_number:
            return sp.Min(n, cap)
        return None

    is_integer = True
    is_positive = True

    def _sympystr(self, printer):
        return f"min({printer._print(self.args[0])}, {printer._print(self.args[1])})"

    def _latex(self, printer, exp=None):
        tex = rf"\min\left({printer._print(self.args[0])}, {printer._print(self.args[1])}\right)"
        return tex if exp is None else f"{tex}^{{{exp}}}"        # min(ℓ, ℓ_max)² in a line's cost


class Positions(Op):
    """The positions ``start, …, start + count − 1`` (0-based), as a vector of ids.  Free, a view."""

    name = "positions"
    free = view = True

    def __init__(self, count, start=sp.Integer(0)):
        self.count, self.start = count, sp.sympify(start)

    def shape(self, shapes):
        return (self.count,)

    def numpy(self, ctx, *values):
        start = ctx.evaluate(self.start) if self.start != 0 else 0
        return np.arange(start, start + ctx.evaluate(self.count))

    def text(self, args):
        return "t" if self.start == 0 else f"{sym_text(self.start)} + t"

    def latex(self, args):
        return "t" if self.start == 0 else f"{sym_latex(self.start)} + t"


class ConstMask(Op):
    """A mask fixed by the architecture: ``"ones"`` (Mask ≡ 1), ``"causal"`` (t_z ≤ t_x) or
    ``"causal-bottom-right"`` (t_z ≤ t_x + ℓ_z − ℓ_x, for a query block after a cached context).  Free."""

    name = "mask"
    free = view = True
    KINDS = ("ones", "causal", "causal-bottom-right")

    def __init__(self, kind, ell_z, ell_x):
        if kind not in self.KINDS:
            raise ConfigError(f"unknown mask {kind!r}; known: {', '.join(self.KINDS)}")
        self.kind, self.ell_z, self.ell_x = kind, ell_z, ell_x

    def shape(self, shapes):
        return (self.ell_z, self.ell_x)

    def numpy(self, ctx, *values):
        ell_z, ell_x = ctx.evaluate(self.ell_z), ctx.evaluate(self.ell_x)
        if self.kind == "ones":
            return masks.bidirectional(ell_z, ell_x)
        return masks.causal(ell_z, ell_x, align="top-left" if self.kind == "causal" else "bottom-right")

    def text(self, args):
        return {"ones": "Mask ≡ 1", "causal": "Mask[t_z, t_x] = [[t_z ≤ t_x]]",
                "causal-bottom-right": "Mask[t_z, t_x] = [[t_z ≤ t_x + ℓ_z − ℓ_x]]"}[self.kind]

    def latex(self, args):
        return {"ones": r"\mathrm{Mask} \equiv 1",
                "causal": r"\mathrm{Mask}[t_z, t_x] = [\![t_z \le t_x]\!]",
                "causal-bottom-right": r"\mathrm{Mask}[t_z, t_x] = [\![t_z \le t_x + \ell_z - \ell_x]\!]"}[self.kind]


class Concat(Op):
    """``[A, B]``: B's columns after A's (on the last axis; token sequences are vectors).  No FLOPs; the
    result is materialised."""

    name = "concat"
    free = True

    def shape(self, shapes):
        a, b = shapes
        if len(a) != len(b) or not a:
            raise Mismatch("rank of concatenated values", len(a), len(b))
        for x, y in zip(a[:-1], b[:-1]):
            if not same_dim(x, y):
                raise Mismatch(str(x), x, y, "leading sizes of concatenated values")
        return tuple(a[:-1]) + (a[-1] + b[-1],)

    def numpy(self, ctx, a, b):
        return np.concatenate([a, b], axis=-1)

    def leading(self, ctx, values, lead):
        k = ctx.lead   # both to the same batch axes (one may vary over a loop the other does not)
        batch = np.broadcast_shapes(*(np.shape(v)[:k] for v, b in zip(values, lead) if b))
        return np.concatenate([np.broadcast_to(v, batch + np.shape(v)[k if b else 0:])
                               for v, b in zip(values, lead)], axis=-1)

    def text(self, args):
        return f"[{args[0].text}, {args[1].text}]"

    latex = text


class Drop(Op):
    """``x[n+1:]``: the tokens after the first ``n`` (the generated part of a sequence).  A view."""

    name = "drop"
    free = view = True

    def __init__(self, count):
        self.count = count

    def shape(self, shapes):
        rank(shapes[0], (1,), "a token sequence")
        return (shapes[0][0] - self.count,)

    def numpy(self, ctx, x):
        return x[ctx.evaluate(self.count):]

    def text(self, args):
        return f"{args[0].at(POSTFIX)}[{sym_text(self.count)}+1:]"

    def latex(self, args):
        return f"{args[0].at(POSTFIX, True)}[{sym_latex(self.count)}+1:]"


class SpecialToken(Op):
    """``[bos_token]`` (or another special token) as a one-token sequence.  Free."""

    name = "special_token"
    free = view = True

    def __init__(self, kind, n_vocab):
        self.kind, self.n_vocab = kind, n_vocab

    def shape(self, shapes):
        return (sp.Integer(1),)

    def numpy(self, ctx, *values):
        return np.array([special_token(self.kind, ctx.evaluate(self.n_vocab))])

    def text(self, args):
        return f"[{self.kind}_token]"

    def latex(self, args):
        return rf"[\mathrm{{{self.kind}\_token}}]"


class Truncate(Op):
    """``x[−ℓ_max:]``: at most the last ``cap`` tokens (:ref:`decision-inference-context`).  A view."""

    name = "truncate"
    free = view = True

    def __init__(self, cap):
        self.cap = cap

    def shape(self, shapes):
        rank(shapes[0], (1,), "a token sequence")
        return (capped(shapes[0][0], self.cap),)

    def numpy(self, ctx, x):
        return x[-ctx.evaluate(self.cap):]

    def text(self, args):
        return f"{args[0].at(POSTFIX)}[−{sym_text(self.cap)}:]"

    def latex(self, args):
        return f"{args[0].at(POSTFIX, True)}[-{sym_latex(self.cap)}:]"


class LastColumn(Op):
    r"""``P[:, n]``, the last column of P (the distribution of the next token).  A view; ``label`` is how the
    index is written: one text, or (text, LaTeX) where they differ (``("ℓ+i−1", r"\ell+i-1")``)."""

    name = "last_column"
    free = view = True

    def __init__(self, label="end"):
        self.label, self.label_latex = label if isinstance(label, tuple) else (label, label)

    def shape(self, shapes):
        rank(shapes[0], (2,), "a matrix of distributions")
        return (shapes[0][0],)

    def numpy(self, ctx, p):
        return p[:, -1]

    def text(self, args):
        return f"{args[0].at(POSTFIX)}[:, {self.label}]"

    def latex(self, args):
        return f"{args[0].at(POSTFIX, True)}[:, {self.label_latex}]"


class FirstColumn(LastColumn):
    """``X[:, 1]``, the first column (ViT's class token).  A view."""

    name = "first_column"

    def __init__(self, label: str = "1"):
        super().__init__(label)

    def numpy(self, ctx, p):
        return p[:, 0]


def tempered(p, tau: float) -> np.ndarray:
    """``p^{1/τ}`` normalised to sum to 1, computed in log space so that no temperature over- or underflows:
    ``q = exp((log p − max log p)/τ)``, then ``q / Σq``.  Entries with ``p = 0`` stay 0; as τ → 0 the mass
    goes to the largest entries (shared equally on ties), as τ → ∞ it spreads evenly over the entries with
    ``p > 0``.  FLOPs for n entries: n logarithms, n − 1 comparisons, n subtractions, n divisions by τ,
    n exponentials, n − 1 additions and n divisions: 7n − 2."""
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        logp = np.log(np.asanyarray(p, dtype=np.float64))
        q = np.exp((logp - np.max(logp)) / tau)   # every exponent ≤ 0: never overflows; log 0 = −∞ gives 0
        return q / np.sum(q)


class Sample(Op):
    """``y ∼ p^{1/τ}`` (normalised): one token drawn with the execution's seeded generator, as a
    one-token sequence.  The distribution is formed in log space (:func:`tempered`), so any τ > 0 works.
    FLOPs (full) for n entries: those of :func:`tempered`, 7n − 2; the draw itself is not counted."""

    name = "sample"
    prec = ATOM

    def __init__(self, tau: float):
        self.tau = tau

    def shape(self, shapes):
        rank(shapes[0], (1,), "a distribution")
        return (sp.Integer(1),)

    def flops(self, shapes, out):
        n = shapes[0][0]
        return {"full": 7 * n - 2}

    def memory(self, out):
        return 0

    def numpy(self, ctx, p):
        q = tempered(p, self.tau)
        return np.array([ctx.rng.choice(q.shape[0], p=np.asarray(q))])

    def text(self, args):
        return f"sample from {args[0].at(POSTFIX)}^(1/τ), τ = {self.tau:g}"

    def latex(self, args):
        return rf"\text{{sample from }} {args[0].at(POSTFIX, True)}^{{1/\tau}},\ \tau = {self.tau:g}"


class Greedy(Op):
    """``y = argmax p`` (τ → 0, :ref:`decision-temperature`), as a one-token sequence; the first maximum on ties.
    FLOPs (full): n − 1 comparisons."""

    name = "greedy"

    def shape(self, shapes):
        rank(shapes[0], (1,), "a distribution")
        return (sp.Integer(1),)

    def flops(self, shapes, out):
        return {"full": shapes[0][0] - 1}

    def memory(self, out):
        return 0

    def numpy(self, ctx, p):
        top = np.max(p)  # n − 1 comparisons
        return np.array([int(np.flatnonzero(np.asarray(p) == np.asarray(top))[0])])

    def text(self, args):
        return f"argmax {args[0].at(POSTFIX)}"

    def latex(self, args):
        return rf"\operatorname{{argmax}} {args[0].at(POSTFIX, True)}"


class Strip(Op):
    """``x̂`` without its leading bos and a trailing eos (:ref:`decision-inference-context`).  Its length ``size``
    is known only when it runs; execution binds it.  A view."""

    name = "strip"
    free = view = True

    def __init__(self, size, n_vocab):
        self.size, self.n_vocab = size, n_vocab

    def shape(self, shapes):
        rank(shapes[0], (1,), "a token sequence")
        return (self.size,)

    def numpy(self, ctx, x):
        eos = special_token("eos", ctx.evaluate(self.n_vocab))
        return x[1:-1] if x.shape[0] > 1 and x[-1] == eos else x[1:]

    def text(self, args):
        return f"{args[0].at(POSTFIX)} without bos_token and eos_token"

    def latex(self, args):
        return rf"{args[0].at(POSTFIX, True)} \setminus \{{\mathrm{{bos}}, \mathrm{{eos}}\}}"
