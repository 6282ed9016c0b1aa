"""What Swin (Liu et al. 2021) does to a grid of tokens around attention: a channel-last grid read as
columns and back, the cyclic shift, the partition into M×M windows and its reverse, the shifted windows'
mask, the relative-position bias gathered from a table, and patch merging's 2×2 gather.

Grids are channel-last (n_h×n_w×C, as Swin's code holds them); a grid read as columns is row-major, token
(r, c) (0-based) is column r·n_w + c.  Windows are numbered row-major over the grid of windows, and the
tokens of a window row-major inside it — the order of the official ``window_partition``.

The shift of a shifted block is σ = ⌊M/2⌋, except where the grid is a single window (min(n_h, n_w) = M),
where Swin shifts by 0: :func:`shift_of` is that rule, shared by the roll and the mask.
"""

from __future__ import annotations

import numpy as np

from ..core.constraints import divides, even
from ..core.shapes import numel
from ..core.symbols import latex as sym_latex, text as sym_text
from ..errors import ConfigError
from .base import ATOM, POSTFIX, Op, rank

__all__ = ["ColumnsGrid", "CyclicShift", "Windows", "Unwindows", "ShiftMask", "RelativeBias", "MergePatches",
           "shift_of", "relative_index", "window_regions"]


def shift_of(rows: int, columns: int, window: int, shifted: bool) -> int:
    """σ = ⌊M/2⌋ for a shifted block, 0 for a regular one or where the grid is one window (Swin's rule)."""
    return window // 2 if shifted and min(rows, columns) > window else 0


def _window_constraints(rows, columns, window):
    return (divides(window, rows, "the grid's rows fall into whole M×M windows"),
            divides(window, columns, "the grid's columns fall into whole M×M windows"))


class ColumnsGrid(Op):
    """``grid(X)``: a C×(n_h·n_w) matrix of token columns as the n_h×n_w×C channel-last grid, column
    r·n_w + c at (r, c).  A reshape and a transpose: a view, free."""

    name = "grid"
    view = True
    prec = ATOM

    def __init__(self, rows, columns):
        self.rows, self.columns = rows, columns

    def shape(self, shapes):
        rank(shapes[0], (2,), "a matrix of token columns")
        return (self.rows, self.columns, shapes[0][0])

    def numpy(self, ctx, x):
        return x.T.reshape(ctx.evaluate(self.rows), ctx.evaluate(self.columns), x.shape[0])

    def text(self, args):
        return f"grid_{sym_text(self.rows)}×{sym_text(self.columns)}({args[0].text})"

    def latex(self, args):
        return (rf"\operatorname{{grid}}_{{{sym_latex(self.rows)}\times {sym_latex(self.columns)}}}"
                rf"\left({args[0].text}\right)")


class CyclicShift(Op):
    """``roll(X, ∓σ)``: the grid rolled by σ rows and σ columns, towards the origin (``sign=-1``, before a
    shifted block's attention) or back (``sign=+1``, after it): ``roll(X, −σ)[r, c] = X[(r + σ) mod n_h,
    (c + σ) mod n_w]``.  σ by :func:`shift_of`.  No FLOPs; the rolled grid is a copy."""

    name = "roll"
    free = True
    prec = ATOM

    def __init__(self, window, sign: int):
        if sign not in (-1, 1):
            raise ConfigError(f"a cyclic shift rolls by −σ or +σ, not sign = {sign!r}")
        self.window, self.sign = window, sign

    def shape(self, shapes):
        rank(shapes[0], (3,), "a grid of tokens (rows × columns × channels)")
        return tuple(shapes[0])

    def numpy(self, ctx, x):
        shift = shift_of(x.shape[0], x.shape[1], ctx.evaluate(self.window), True)
        return np.roll(x, self.sign * shift, axis=(0, 1))

    def text(self, args):
        return f"roll({args[0].text}, {'−' if self.sign < 0 else '+'}σ)"

    def latex(self, args):
        return rf"\operatorname{{roll}}\left({args[0].text}, {'-' if self.sign < 0 else '+'}\sigma\right)"


class Windows(Op):
    """``windows_M(X)``: an n_h×n_w×C grid cut into its n_h·n_w/M² windows of M×M tokens, each as a C×M²
    matrix of columns (windows row-major over the grid, tokens row-major in a window).  M divides n_h
    and n_w.  No FLOPs; the windows are a copy."""

    name = "windows"
    free = True
    prec = ATOM

    def __init__(self, window):
        self.window = window

    def shape(self, shapes):
        rank(shapes[0], (3,), "a grid of tokens (rows × columns × channels)")
        rows, columns, width = shapes[0]
        return (rows * columns / self.window ** 2, width, self.window ** 2)

    def constraints(self, shapes):
        return _window_constraints(shapes[0][0], shapes[0][1], self.window)

    def numpy(self, ctx, x):
        M = ctx.evaluate(self.window)
        rows, columns, width = x.shape
        blocks = x.reshape(rows // M, M, columns // M, M, width)          # [a, i, b, j, ch]
        return blocks.transpose(0, 2, 4, 1, 3).reshape(rows * columns // (M * M), width, M * M)

    def text(self, args):
        return f"windows_{sym_text(self.window)}({args[0].text})"

    def latex(self, args):
        return rf"\operatorname{{windows}}_{{{sym_latex(self.window)}}}\left({args[0].text}\right)"


class Unwindows(Op):
    """``merge_M(Y)``: the reverse of :class:`Windows`, n_h·n_w/M² windows of C×M² columns put back as the
    n_h×n_w×C grid.  No FLOPs; a copy."""

    name = "unwindows"
    free = True
    prec = ATOM

    def __init__(self, rows, columns, window):
        self.rows, self.columns, self.window = rows, columns, window

    def shape(self, shapes):
        rank(shapes[0], (3,), "windows of token columns (windows × channels × M²)")
        return (self.rows, self.columns, shapes[0][1])

    def numpy(self, ctx, y):
        M, rows, columns = (ctx.evaluate(s) for s in (self.window, self.rows, self.columns))
        width = y.shape[1]
        blocks = y.reshape(rows // M, columns // M, width, M, M)          # [a, b, ch, i, j]
        return blocks.transpose(0, 3, 1, 4, 2).reshape(rows, columns, width)

    def text(self, args):
        return f"unwindows_{sym_text(self.window)}({args[0].text})"

    def latex(self, args):
        return rf"\operatorname{{windows}}^{{-1}}_{{{sym_latex(self.window)}}}\left({args[0].text}\right)"


def window_regions(rows: int, columns: int, window: int, shift: int) -> np.ndarray:
    """Per token of the rolled grid (row-major), the region of the unrolled image it comes from: Swin's
    labels, 3 per axis (rows [0, n_h − M), [n_h − M, n_h − σ), [n_h − σ, n_h), the same for columns).  Two
    tokens of one window may attend to each other only when their regions agree."""
    def axis(n):
        label = np.zeros(n, dtype=int)
        if shift:
            label[n - window:n - shift] = 1
            label[n - shift:] = 2
        return label
    return (axis(rows)[:, None] * 3 + axis(columns)[None, :]).ravel()


class ShiftMask(Op):
    """The mask of every window, n_h·n_w/M²×M²×M²: ``Mask_w[t_z, t_x] = 1`` where tokens t_z and t_x of
    window w come from the same region of the image before the roll (:func:`window_regions`), so no token
    attends across the border the roll wrapped around.  Unshifted (or where σ = 0), Mask ≡ 1.  A constant
    computed from the sizes: free.  Swin's code adds −100 to the scores it masks; here they are −∞, which
    differs by a weight below e^{−100}."""

    name = "shift_mask"
    free = view = True

    def __init__(self, rows, columns, window, shifted: bool):
        self.rows, self.columns, self.window, self.shifted = rows, columns, window, shifted

    def shape(self, shapes):
        return (self.rows * self.columns / self.window ** 2, self.window ** 2, self.window ** 2)

    def numpy(self, ctx, *values):
        rows, columns, M = (ctx.evaluate(s) for s in (self.rows, self.columns, self.window))
        labels = window_regions(rows, columns, M, shift_of(rows, columns, M, self.shifted))
        per_window = labels.reshape(rows // M, M, columns // M, M).transpose(0, 2, 1, 3).reshape(-1, M * M)
        return (per_window[:, :, None] == per_window[:, None, :]).astype(float)

    def text(self, args):
        if not self.shifted:
            return "Mask ≡ 1"
        return "Mask_w[t_z, t_x] = [[t_z, t_x in one region before the roll]]"

    def latex(self, args):
        if not self.shifted:
            return r"\mathrm{Mask} \equiv 1"
        return r"\mathrm{Mask}_w[t_z, t_x] = [\![t_z \sim_\sigma t_x]\!]"


def relative_index(sides: tuple) -> np.ndarray:
    """For N = Π sides positions of a box (row-major), the N×N index [key j, query i] into a table of
    Π(2·side − 1) entries (row-major) of the relative position of i from j: Σ_a (p_a(i) − p_a(j) + side_a − 1)
    · Π_{b>a}(2·side_b − 1)."""
    grids = np.meshgrid(*(np.arange(s) for s in sides), indexing="ij")
    coords = [g.ravel() for g in grids]
    index = np.zeros((len(coords[0]),) * 2, dtype=int)
    for axis, side in enumerate(sides):
        offset = coords[axis][None, :] - coords[axis][:, None] + side - 1       # [j, i] = p(i) − p(j) + s − 1
        index = index * (2 * side - 1) + offset
    return index


class RelativeBias(Op):
    """``B = B̂[rel]``: a bias on the scores that depends only on where a key sits relative to its query,
    gathered from a table — per head ``B[h, t_z, t_x] = B̂[h, p(t_x) − p(t_z) + s − 1]``, positions p in a box of
    ``sides`` (Swin: an M×M window, B̂ ∈ ℝ^{H×(2M−1)×(2M−1)}; a 1-D sequence of ℓ tokens: B̂ ∈ ℝ^{H×(2ℓ−1)}).
    The relative-position bias of Swin (Liu et al. 2021, eq. 4) and, in one dimension, of Shaw et al. 2018's
    and T5's scores before bucketing.  A gather: no FLOPs; the H×N×N bias is materialised."""

    name = "relative_bias"
    free = True
    prec = POSTFIX

    def __init__(self, sides: tuple):
        self.sides = tuple(sides)

    def shape(self, shapes):
        table = shapes[0]
        rank(table, (1 + len(self.sides),), f"a table of biases (heads × {len(self.sides)} relative offsets)")
        n = numel(self.sides)
        return (table[0], n, n)

    def numpy(self, ctx, table):
        sides = tuple(ctx.evaluate(s) for s in self.sides)
        index = relative_index(sides)
        return table.reshape(table.shape[0], -1)[:, index]

    def text(self, args):
        return f"{args[0].at(POSTFIX)}[rel]"

    def latex(self, args):
        return rf"{args[0].at(POSTFIX, True)}[\mathrm{{rel}}]"


class MergePatches(Op):
    """``merge(X)``: an n_h×n_w×C grid as the (n_h/2)×(n_w/2)×4C grid of its 2×2 groups, each token the
    concatenation ``[x(2r, 2c); x(2r+1, 2c); x(2r, 2c+1); x(2r+1, 2c+1)]`` (Swin's x0, x1, x2, x3: the row
    offset varies first).  n_h and n_w are even.  No FLOPs; a copy."""

    name = "merge"
    free = True
    prec = ATOM

    def shape(self, shapes):
        rank(shapes[0], (3,), "a grid of tokens (rows × columns × channels)")
        rows, columns, width = shapes[0]
        return (rows / 2, columns / 2, 4 * width)

    def constraints(self, shapes):
        return (even(shapes[0][0], "patch merging takes 2×2 groups of rows"),
                even(shapes[0][1], "patch merging takes 2×2 groups of columns"))

    def numpy(self, ctx, x):
        return np.concatenate([x[0::2, 0::2], x[1::2, 0::2], x[0::2, 1::2], x[1::2, 1::2]], axis=-1)

    def text(self, args):
        return f"merge₂ₓ₂({args[0].text})"

    def latex(self, args):
        return rf"\operatorname{{merge}}_{{2\times 2}}\left({args[0].text}\right)"

