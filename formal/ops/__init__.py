"""Primitive operations.

Each op knows four things about itself: the shape of its result from the shapes of its arguments (with
unification: a product of ``d_attn×d_x`` by ``d_z×ℓ_z`` is an error unless ``d_x`` and ``d_z`` are one
symbol), its cost under every FLOP convention, its numpy semantics, and its rendering.  An algorithm line
is a tree of :class:`Apply` nodes over :class:`Ref` leaves, so adding an op never touches the algorithms.

Arrays follow the paper's layout: one column per token.  Reductions and softmax run over axis 0.  An op
that can compute every column of a column call at once says how (:meth:`Op.columns`).
"""

from .activations import ACTIVATIONS, Activation
from .base import ATOM, POSTFIX, PRODUCT, SUM, Apply, Node, NotBatched, NotColumnar, Op, Ref, Rendered, as_node
from .elementwise import Add, AddConstant, Div, DivSqrt, Elementwise, Mul, Sqrt, Square, Standardize, Sub
from .images import PATCH_ORDERS, GridColumns, Patchify
from .indexing import SINUSOIDS, Gather, KVGroup, LoopIndex, Pick, Sinusoid, StackRows
from .linalg import AddBias, MatMul, Transposed, WeightedSum
from .losses import MaskedNLL, MaskedPositions, MaskTokens, NextTokenNLL
from .recurrence import Column, ColumnMean, Dot, Final, OneMinus, Sequence, StackVertical, Zeros
from .reductions import EMPTY_POLICIES, MaskFill, Mean, Softmax, check_empty_policy, empty_neighbourhood
from .scores import SCORE_ACTIVATIONS, AdditiveScore, LeakyReLU, additive_score, check_score_activation
from .sequences import (
    Concat,
    ConstMask,
    Drop,
    FirstColumn,
    Greedy,
    LastColumn,
    Positions,
    Sample,
    SpecialToken,
    Strip,
    Truncate,
    capped,
    special_token,
)
from .windows import (
    ColumnsGrid,
    CyclicShift,
    MergePatches,
    RelativeBias,
    ShiftMask,
    Unwindows,
    Windows,
    relative_index,
    shift_of,
    window_regions,
)

__all__ = ["Node", "Ref", "Apply", "Op", "NotColumnar", "NotBatched", "Rendered", "LoopIndex", "KVGroup",
           "EMPTY_POLICIES", "check_empty_policy",
           "empty_neighbourhood", "SINUSOIDS", "matmul", "matmul_t", "weighted_sum", "add", "add_bias",
           "add_constant", "sub", "mul", "div", "square", "sqrt", "standardize", "div_sqrt", "mean", "softmax",
           "mask_fill", "gather", "pick", "stack_rows", "sinusoid", "MatMul", "WeightedSum", "Transposed", "AddBias",
           "Elementwise", "Add", "Sub", "Mul", "Div", "AddConstant", "Square", "Sqrt", "Standardize", "DivSqrt",
           "Mean", "Softmax", "MaskFill", "Gather", "Pick", "StackRows", "Sinusoid", "as_node", "ATOM", "POSTFIX",
           "PRODUCT", "SUM", "AdditiveScore", "LeakyReLU", "SCORE_ACTIVATIONS", "additive_score",
           "check_score_activation", "Zeros", "OneMinus", "Column", "Sequence", "StackVertical", "Final", "zeros",
           "one_minus", "column", "sequence", "stack_vertical", "final", "ColumnMean", "Dot", "column_mean", "dot",
           "GridColumns", "grid_columns", "Patchify", "PATCH_ORDERS", "patchify", "ColumnsGrid", "CyclicShift",
           "Windows", "Unwindows", "ShiftMask", "RelativeBias", "MergePatches", "relative_index", "shift_of",
           "window_regions", "columns_grid", "cyclic_shift", "windows", "unwindows", "shift_mask", "relative_bias",
           "merge_patches", "ACTIVATIONS", "Activation", "activation", "transpose", "positions", "const_mask",
           "concat", "truncate", "last_column", "first_column", "sample", "greedy", "strip", "next_token_nll",
           "masked_nll", "mask_tokens", "masked_positions", "drop", "start_token", "Drop", "SpecialToken", "capped",
           "special_token", "ConstMask", "Concat", "MaskTokens", "MaskedPositions", "FirstColumn", "Greedy",
           "LastColumn", "MaskedNLL", "NextTokenNLL", "Positions", "Sample", "Strip", "Truncate"]


def matmul(a, b, *, role: str = "weight"):
    """``a b``; ``role`` says what the product computes (:data:`~formal.ops.linalg.ROLES`)."""
    return MatMul(role=role)(a, b)


def matmul_t(a, b, *, role: str = "score"):
    """``aᵀ b``."""
    return MatMul(transpose_a=True, role=role)(a, b)


def weighted_sum(v, alpha):
    return WeightedSum()(v, alpha)


def add(a, b):
    return Add()(a, b)


def add_bias(a, b, *, ones: bool = True):
    return AddBias(ones)(a, b)


def add_constant(a, value: float, glyph: str = "ε", tex: str = r"\epsilon"):
    return AddConstant(value, glyph, tex)(a)


def sub(a, b):
    return Sub()(a, b)


def mul(a, b):
    return Mul()(a, b)


def div(a, b, *, nonzero: str | None = None):
    return Div(nonzero)(a, b)


def square(a):
    return Square()(a)


def standardize(c, v, eps: float, *, nonzero: str):
    return Standardize(eps, nonzero)(c, v)


def sqrt(a):
    return Sqrt()(a)


def div_sqrt(a, size):
    return DivSqrt(size)(a)


def mean(a, size):
    return Mean(size)(a)


def softmax(a, *, empty: str = "zero", over: str = "scores"):
    """Softmax of each column; ``over="logits"`` for an output distribution (see :class:`Softmax`)."""
    return Softmax(empty, over)(a)


def mask_fill(s, mask):
    return MaskFill()(s, mask)


def gather(table, index, *, what: str = "index", onehot: bool = False):
    return Gather(what, onehot)(table, index)


def pick(value, index):
    return Pick(index)(value)


def stack_rows(value, count):
    return StackRows(count)(value)


def sinusoid(t, kind, d_e, ell_max):
    return Sinusoid(kind, d_e, ell_max)(t)


def activation(name: str, a):
    """``name(a)`` for an MLP activation of :data:`ACTIVATIONS` (``relu``, ``gelu``, ``gelu-tanh``, ``silu``)."""
    return ACTIVATIONS[name]()(a)


def transpose(a):
    return Transposed()(a)


def positions(count, start=0):
    return Positions(count, start)()


def const_mask(kind: str, ell_z, ell_x):
    return ConstMask(kind, ell_z, ell_x)()


def concat(a, b):
    return Concat()(a, b)


def truncate(x, cap):
    return Truncate(cap)(x)


def last_column(p, label="end"):
    return LastColumn(label)(p)


def first_column(x):
    return FirstColumn()(x)


def sample(p, tau: float):
    return Sample(tau)(p)


def greedy(p):
    return Greedy()(p)


def strip(x, size, n_vocab):
    return Strip(size, n_vocab)(x)


def next_token_nll(p, x):
    return NextTokenNLL()(p, x)


def masked_nll(p, x, m):
    return MaskedNLL()(p, x, m)


def mask_tokens(x, p_mask: float, n_vocab):
    return MaskTokens(p_mask, n_vocab)(x)


def masked_positions(x, n_vocab):
    return MaskedPositions(n_vocab)(x)


def drop(x, count):
    return Drop(count)(x)


def start_token(kind: str, n_vocab):
    return SpecialToken(kind, n_vocab)()


def zeros(*shape):
    return Zeros(shape)()


def one_minus(a):
    return OneMinus()(a)


def column(x, index, count, *, reverse: bool = False):
    return Column(index, count, reverse)(x)


def sequence(states, count, glyph: str = "h", tex: str = "h", *, reverse: bool = False):
    return Sequence(count, glyph, tex, reverse)(states)


def stack_vertical(*parts):
    return StackVertical()(*parts)


def final(states, width, direction: str, which: str = "final"):
    return Final(width, direction, which)(states)


def column_mean(a, count):
    return ColumnMean(count)(a)


def dot(a, b):
    return Dot()(a, b)


def grid_columns(grid, rows, columns):
    return GridColumns(rows, columns)(grid)


def patchify(image, patch, rows, columns, order: str):
    return Patchify(patch, rows, columns, order)(image)


def columns_grid(x, rows, columns):
    return ColumnsGrid(rows, columns)(x)


def cyclic_shift(grid, window, sign: int):
    return CyclicShift(window, sign)(grid)


def windows(grid, window):
    return Windows(window)(grid)


def unwindows(y, rows, columns, window):
    return Unwindows(rows, columns, window)(y)


def shift_mask(rows, columns, window, shifted: bool):
    return ShiftMask(rows, columns, window, shifted)()


def relative_bias(table, sides):
    return RelativeBias(sides)(table)


def merge_patches(grid):
    return MergePatches()(grid)
