"""What an image's feature grid needs before attention can read it: the grid's locations as a set of
column vectors (Show-Attend-Tell's "stretch the H×W×D grid into L = H·W annotation vectors")."""

from __future__ import annotations

from ..symbols import latex as sym_latex, text as sym_text
from .base import ATOM, POSTFIX, Op, _rank

__all__ = ["GridColumns"]


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
        _rank(shapes[0], (3,), "a grid of feature vectors (rows × columns × width)")
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
