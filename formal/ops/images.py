"""What an image needs before attention can read it: a feature grid's locations as a set of column vectors
(Show-Attend-Tell's "stretch the H×W×D grid into L = H·W annotation vectors"), and an image cut into
flattened patches (ViT's x_p ∈ ℝ^{N×(P²·C)}, here one column per patch)."""

from __future__ import annotations

from ..core.symbols import latex as sym_latex, text as sym_text
from .base import ATOM, POSTFIX, Op, rank

__all__ = ["GridColumns", "Patchify", "PATCH_ORDERS"]

#: How a patch's P·P·C values are laid out in its column: ``channel-first`` — index c·P² + i·P + j, the order
#: of a Conv2d kernel's weight (HF transformers' and timm's ViT patch embedding); ``channel-last`` — index
#: (i·P + j)·C + c, a channel-last image's pixels read row by row (``(p1 p2 c)`` in einops' notation).
PATCH_ORDERS = ("channel-first", "channel-last")


class GridColumns(Op):
    """``A = [f_{1,1}, f_{1,2}, …, f_{n_h,n_w}]``: an n_h×n_w×D grid of feature vectors as the D×(n_h·n_w)
    matrix of its locations, read row-major — location (r, c) (1-based) is column ``(r − 1)·n_w + c``, the
    order of numpy's and torch's ``reshape`` of a channel-last grid.  A reshape and a transpose: a view,
    free."""

    name = "grid_columns"
    view = True
    prec = ATOM

    def __init__(self, rows, columns):
        self.rows, self.columns = rows, columns

    def shape(self, shapes):
        rank(shapes[0], (3,), "a grid of feature vectors (rows × columns × width)")
        n_h, n_w, d = shapes[0]
        return (d, n_h * n_w)

    def numpy(self, ctx, grid):
        n_h, n_w, d = grid.shape
        return grid.reshape(n_h * n_w, d).T

    def text(self, args):
        f = args[0].at(POSTFIX)
        return f"[{f}[1, 1], {f}[1, 2], …, {f}[{sym_text(self.rows)}, {sym_text(self.columns)}]]"

    def latex(self, args):
        f = args[0].at(POSTFIX, True)
        return rf"[{f}_{{1,1}}, {f}_{{1,2}}, \dots, {f}_{{{sym_latex(self.rows)},{sym_latex(self.columns)}}}]"


class Patchify(Op):
    """``X_p = patches(X_img)``: a channel-last image of (P·n_h)×(P·n_w) pixels and C channels cut into its
    N = n_h·n_w non-overlapping P×P patches, each flattened into a column of P²·C values in ``order`` (see
    :data:`PATCH_ORDERS`); the patches are read row-major, patch (r, c) (0-based) is column r·n_w + c.  The
    image's sides are multiples of P by construction: an image of another size does not bind.  No FLOPs;
    the result is materialised (the reordering copies)."""

    name = "patchify"
    free = True
    prec = ATOM

    def __init__(self, patch, rows, columns, order: str):
        self.patch, self.rows, self.columns, self.order = patch, rows, columns, order

    def shape(self, shapes):
        rank(shapes[0], (3,), "an image (height × width × channels)")
        return (self.patch ** 2 * shapes[0][2], self.rows * self.columns)

    def numpy(self, ctx, image):
        P = ctx.evaluate(self.patch)
        height, width, C = image.shape
        n_h, n_w = height // P, width // P
        blocks = image.reshape(n_h, P, n_w, P, C)          # [r, i, c', j, ch]
        axes = (0, 2, 4, 1, 3) if self.order == "channel-first" else (0, 2, 1, 3, 4)
        return blocks.transpose(axes).reshape(n_h * n_w, P * P * C).T

    def text(self, args):
        return f"patches_{sym_text(self.patch)}({args[0].text})"

    def latex(self, args):
        return rf"\operatorname{{patches}}_{{{sym_latex(self.patch)}}}\left({args[0].text}\right)"
