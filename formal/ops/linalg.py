"""Matrix products and transposes, and a bias added to every column."""

from __future__ import annotations

import numpy as np

from ..core.shapes import Mismatch, numel, same_dim
from .base import POSTFIX, PRODUCT, SUM, NotColumnar, Op, rank

#: What a product computes, which decides how the kaplan and chinchilla conventions count it.
ROLES = {
    "weight": "a non-embedding weight matrix times activations",
    "embed": "an embedding projection (ViT's patch embedding)",
    "score": "attention scores KᵀQ",
    "mix": "attention-weighted values V·A",
    "unembed": "the unembedding W_u X",
}
_KAPLAN = {"weight", "score"}  # Kaplan et al. 2020, Table 1


class MatMul(Op):
    """Matrix product ``A B`` (or ``Aᵀ B``); B may be a vector.

    FLOPs: 2mkn for (m×k)·(k×n), 2mk for a matrix times a vector, under ``matmul``, ``chinchilla`` and
    ``full``; under ``kaplan`` only for the roles ``weight`` and ``score`` (see :data:`ROLES`).
    """

    name = "matmul"
    prec = PRODUCT

    def __init__(self, transpose_a: bool = False, role: str = "weight"):
        if role not in ROLES:
            raise ValueError(f"unknown product role {role!r}; known: {', '.join(ROLES)}")
        self.transpose_a, self.role = transpose_a, role

    def shape(self, shapes):
        a, b = shapes
        rank(a, (2,), "the left factor of a product")
        rank(b, (1, 2), "the right factor of a product")
        m, k = (a[1], a[0]) if self.transpose_a else (a[0], a[1])
        if not same_dim(k, b[0]):
            raise Mismatch(str(k), k, b[0], "inner sizes of a matrix product")
        return (m,) + tuple(b[1:])

    def flops(self, shapes, out):
        k = shapes[0][0] if self.transpose_a else shapes[0][1]
        count = 2 * k * numel(out)
        return {"matmul": count, "chinchilla": count, "full": count,
                "kaplan": count if self.role in _KAPLAN else 0}

    def numpy(self, ctx, a, b):
        return (a.T if self.transpose_a else a) @ b

    def columns(self, ctx, values, batched):
        if batched[0] or np.ndim(values[1]) != 2:   # a batched vector b is a matrix of columns; nothing else
            raise NotColumnar(self.name)
        return self.numpy(ctx, *values)

    def leading(self, ctx, values, lead):
        a, b = values
        if self.transpose_a:
            a = np.swapaxes(a, -1, -2) if lead[0] else a.T
        if lead[1] and np.ndim(b) - ctx.lead == 1:   # a batch of vectors: each a column of its own
            return (a @ b[..., None])[..., 0]
        return a @ b

    def meaning(self, ctx, a, b):
        """``Σ_k A[i, k] B[k, j]`` (``A[k, i]`` under ``transpose_a``) over the inner size."""
        from ..core.symbolic import AXES, Value, fresh, total
        k = fresh()
        row = AXES[0]
        left = a.at(k, row) if self.transpose_a else a.at(row, k)
        inner = a.shape[0] if self.transpose_a else a.shape[1]
        shape = (a.shape[1] if self.transpose_a else a.shape[0],) + tuple(b.shape[1:])
        return Value(shape, total(left * b.at(k, *AXES[1:b.rank]), k, inner))

    def _left(self, arg, latex):
        if not self.transpose_a:
            return arg.at(PRODUCT, latex)
        return arg.at(POSTFIX, latex) + (r"^{\top}" if latex else "ᵀ")

    def text(self, args):
        return f"{self._left(args[0], False)} {args[1].at(PRODUCT + 1)}"

    def latex(self, args):
        return rf"{self._left(args[0], True)} {args[1].at(PRODUCT + 1, True)}"


class WeightedSum(MatMul):
    """``Σ_t α_t v_t``: the columns of V weighted by α (a matrix–vector product, 2·d·T FLOPs)."""

    name = "weighted_sum"

    def __init__(self):
        super().__init__(role="mix")

    def text(self, args):
        return f"Σ_t {args[1].text}_t {args[0].text.lower()}_t"

    def latex(self, args):
        return rf"\sum_{{t}} {args[1].text}_{{t}} {args[0].text.lower()}_{{t}}"


class Transposed(Op):
    """``Aᵀ``: a view, free."""

    name = "transpose"
    view = True
    prec = POSTFIX

    def shape(self, shapes):
        rank(shapes[0], (2,), "a transposed matrix")
        return shapes[0][::-1]

    def numpy(self, ctx, a):
        return a.T

    def meaning(self, ctx, a):
        from ..core.symbolic import AXES
        return a.map(lambda _: a.at(AXES[1], AXES[0]), a.shape[::-1])

    def text(self, args):
        return args[0].at(POSTFIX) + "ᵀ"

    def latex(self, args):
        return args[0].at(POSTFIX, True) + r"^{\top}"


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
        rank(a, (2,), "a matrix with a bias")
        rank(b, (1,), "a bias")
        if not same_dim(a[0], b[0]):
            raise Mismatch(str(a[0]), a[0], b[0], "bias length against the rows")
        return a

    def numpy(self, ctx, a, b):
        return a + b[:, None]

    def leading(self, ctx, values, lead):
        a, b = values
        return a + b[..., None]

    def meaning(self, ctx, a, b):
        from ..core.symbolic import AXES
        return a.map(lambda x: x + b.at(AXES[0]))

    def text(self, args):
        bias = args[1].at(POSTFIX - 1)
        ones = (" 1ᵀ" if "^" in bias else "1ᵀ") if self.ones else ""
        return f"{args[0].at(SUM)} + {bias}{ones}"

    def latex(self, args):
        ones = r" \mathbf{1}^{\top}" if self.ones else ""
        return rf"{args[0].at(SUM, True)} + {args[1].at(POSTFIX - 1, True)}{ones}"
