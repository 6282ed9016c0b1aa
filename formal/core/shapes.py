"""Tensor types with symbolic shapes, and the binding of size symbols to the integers met at run time.

A shape is a tuple of sympy expressions over the size symbols of :mod:`formal.core.symbols`, e.g.
``(d_attn, ell_x)`` or ``(d_out, H*d_mid)``; ``()`` is a scalar.  Two dimensions agree only when they are
the same expression: ``d_x`` and ``d_z`` are different until a configuration makes them one symbol.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..errors import ConfigError
from . import numeric
from .numeric import free, ordered, shape_at
from .symbols import latex, text

__all__ = ["Shape", "TensorSpec", "ROLES", "Mismatch", "Binding", "as_shape", "numel", "same_dim",
           "shape_text", "shape_latex", "shape_json", "unify", "unify_all"]

Shape = tuple  # of sympy expressions

#: What a tensor may be to its algorithm (:class:`TensorSpec`'s ``role``).
ROLES = ("tokens", "context")


def as_shape(dims) -> Shape:
    """A shape from sizes given as symbols, expressions or ints."""
    return tuple(sp.Integer(d) if isinstance(d, int) else d for d in dims)


def numel(shape: Shape) -> sp.Expr:
    """The number of scalars in a tensor of this shape."""
    return sp.Mul(*shape) if shape else sp.Integer(1)


def same_dim(a, b) -> bool:
    """Whether two dimension expressions are equal as polynomials."""
    return a == b or sp.expand(a - b) == 0


def shape_text(shape: Shape) -> str:
    """``d_attn×ℓ_x`` (``scalar`` for ``()``)."""
    return "×".join(f"({text(d)})" if isinstance(d, sp.Add) else text(d) for d in shape) if shape else "scalar"


def shape_latex(shape: Shape) -> str:
    return r"\times ".join(latex(d) for d in shape) if shape else "1"


def shape_json(shape: Shape) -> list:
    """A shape as the JSON view writes it: a list of sympy expression strings over the ASCII symbols."""
    return [str(d) for d in shape]


@dataclass(frozen=True)
class TensorSpec:
    """A named tensor of an algorithm's signature.

    ``kind`` is ``"real"`` (a real array), ``"index"`` (an integer, or an integer array, with values in
    ``[0, bound)``), or ``"mask"`` (a {0,1} matrix).  ``embedding`` marks a parameter that counts as an
    embedding (token, position, token type, patch projection, class token, an untied unembedding), the
    part that Kaplan et al.'s non-embedding count leaves out.  ``grid`` marks an input laid out as a grid
    of feature vectors (rows × columns × channels, an image's): it is the same in the column layout and
    the rows layout, which transposes only a matrix of feature columns.

    ``role`` says what an input is to the algorithm where a property of it needs to know (:data:`ROLES`):
    ``"tokens"`` — the sequence whose columns (entries, for token ids) are the tokens a property permutes
    or perturbs (attention's X, a stack's x, the vectors attention pooling pools); ``"context"`` — a
    sequence attended over (attention's Z, an encoder–decoder's z).  On an output, ``"tokens"`` says that
    the output is itself a sequence of tokens (generated token ids), not numbers computed from them.
    """

    name: str
    shape: Shape
    kind: str = "real"
    doc: str = ""
    bound: object = None
    embedding: bool = False
    grid: bool = False
    role: str = ""

    def __post_init__(self):
        object.__setattr__(self, "shape", as_shape(self.shape))
        if self.role and self.role not in ROLES:
            raise ConfigError(f"{self.name}: unknown role {self.role!r}; known: {', '.join(ROLES)}")

    def size(self) -> sp.Expr:
        return numel(self.shape)


class Mismatch(Exception):
    """Raised by a shape rule or a binding; the algorithm turns it into a :class:`ShapeError` that names
    itself and the line."""

    def __init__(self, symbol, expected, got, detail=""):
        super().__init__(symbol, expected, got, detail)
        self.symbol, self.expected, self.got, self.detail = symbol, expected, got, detail
        self.undetermined = False   # True: the sizes met so far cannot tell a symbol yet (nothing disagrees)


def unify(declared: Shape, actual: Shape, substitution: dict, what: str) -> None:
    """Extend ``substitution`` (callee symbol → caller expression) so that ``declared`` becomes ``actual``.

    Used for calls: a callee's symbols are renamed to the caller's expressions.  A symbol met twice must
    map to the same expression both times.  A dimension with one symbol not yet renamed, linear in it
    (``L/2`` for the pairs of L blocks, ``H·d_attn``), is solved for that symbol; one with more waits until
    the other dimensions have renamed all but one.
    """
    if len(declared) != len(actual):
        raise Mismatch(f"rank of {what}", len(declared), len(actual))
    unify_all([(want, have, what) for want, have in zip(declared, actual)], substitution)


def unify_all(pending: list, substitution: dict) -> None:
    """:func:`unify` for several tensors at once: ``(declared dim, actual dim, what)`` triples, solved in
    any order (a grid's width H·d_attn is renamed once the weights have told H and d_attn)."""
    while pending:
        waiting = []
        for want, have, what in pending:
            if isinstance(want, sp.Symbol) and want not in substitution:
                substitution[want] = have
                continue
            free = [s for s in want.free_symbols if s not in substitution]
            if len(free) > 1:
                waiting.append((want, have, what))
                continue
            if len(free) == 1:
                _solve_linear(want, free[0], have, substitution, what)
                continue
            want_here = want.xreplace(substitution)
            if not same_dim(want_here, have):
                raise Mismatch(str(want), want_here, have, f"in {what}")
        if len(waiting) == len(pending):
            want, have, what = waiting[0]
            raise Mismatch(str(want), "a dimension with at most one unknown symbol", have, f"in {what}")
        pending = waiting


def _solve_linear(want, symbol, have, substitution, what):
    """Rename ``symbol`` so that ``want`` (linear in it, its other symbols renamed) becomes ``have``."""
    expr = sp.expand(sp.sympify(want).xreplace(substitution))
    slope = sp.diff(expr, symbol)
    if slope == 0 or sp.diff(slope, symbol) != 0:
        raise Mismatch(str(want), f"a dimension linear in {symbol}", have, f"in {what}")
    substitution[symbol] = sp.simplify((have - expr.xreplace({symbol: 0})) / slope)


def _may_be_empty(dim) -> bool:
    """Whether a dimension is a size less a constant (``L − 1``: the layers above the first), which is 0 for
    positive sizes; a plain size symbol never is."""
    if isinstance(dim, sp.Symbol) or not dim.free_symbols:
        return False
    return sp.sympify(dim).as_coeff_Add()[0] < 0


class Binding:
    """Size symbols bound to the integers met in arrays, with where each came from.

    Examples
    --------
    >>> from formal.core.symbols import d_e, ell
    >>> b = Binding()
    >>> b.bind((d_e, ell), (4, 3), "X")
    >>> b.evaluate(d_e * ell)
    12
    """

    def __init__(self, values: dict | None = None):
        self.values: dict = {}
        self.sources: dict = {}
        for symbol, value in (values or {}).items():
            self.set(symbol, value, "given")

    def set(self, symbol, value: int, source: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, sp.Integer)) or int(value) <= 0:
            raise ConfigError(f"{symbol} = {value!r} must be a positive integer ({source})")
        self.values[symbol] = int(value)
        self.sources[symbol] = source

    def is_bound(self, expr) -> bool:
        return all(s in self.values for s in free(expr))

    def evaluate(self, expr) -> int:
        """The integer value of a size expression whose symbols are all bound."""
        return numeric.value(expr, self.values)

    def bind(self, declared: Shape, actual: tuple, what: str, *, allow_empty: bool = False) -> None:
        """Bind the symbols of ``declared`` to the sizes in ``actual`` (the shape of ``what``), checking
        every dimension whose symbols are already bound.  Raises :class:`Mismatch` on disagreement.
        ``allow_empty`` admits a zero size for a symbol bound here (a result that may be empty)."""
        if len(declared) != len(actual):
            raise Mismatch(f"rank of {what}", len(declared), len(actual),
                           f"{what} must have shape ({', '.join(map(str, declared))}), got {tuple(actual)}")
        if shape_at(declared, self.values) == tuple(actual):   # every size bound and equal: nothing to do
            return
        pending = []
        for axis, (dim, size) in enumerate(zip(declared, actual)):
            if size == 0 and allow_empty and isinstance(dim, sp.Symbol) and dim not in self.values:
                self.values[dim], self.sources[dim] = 0, what
                continue
            if size < 0 or (size == 0 and not _may_be_empty(dim)):
                raise ConfigError(f"{dim} = {size} must be positive ({what} has shape {tuple(actual)})")
            pending.append((axis, dim, int(size)))
        while pending:
            waiting = []
            for axis, dim, size in pending:
                if isinstance(dim, sp.Symbol):   # most dimensions: bind or compare, nothing to solve
                    if dim not in self.values:
                        self.set(dim, size, f"{what} axis {axis}")
                    elif self.values[dim] != size:
                        self._check(dim, size, what, axis)
                    continue
                unbound = [s for s in free(dim) if s not in self.values]
                if not unbound:
                    self._check(dim, size, what, axis)
                elif len(unbound) == 1:
                    self._solve(dim, unbound[0], size, what, axis)
                else:
                    waiting.append((axis, dim, size))
            if len(waiting) == len(pending):
                axis, dim, size = waiting[0]
                stuck = Mismatch(str(dim), "an expression with known symbols", size,
                                 f"cannot infer {dim} from {what} axis {axis} alone")
                stuck.undetermined = True     # another tensor's shape may tell (the patch side P of W_patch)
                raise stuck
            pending = waiting

    def _check(self, dim, size, what, axis):
        got = self.evaluate(dim)
        if got != size:
            origin = ", ".join(f"{s} from {self.sources[s]}" for s in sorted(dim.free_symbols, key=str))
            raise Mismatch(str(dim), got, size, f"{what} axis {axis}; {origin}")

    def _solve(self, dim, symbol, size, what, axis):
        rest = tuple((s, sp.Integer(self.values[s])) for s in ordered(dim) if s != symbol)
        value = _root(dim, symbol, rest, size)
        if value is None or value <= 0:
            known = ", ".join(f"{s} = {v}" for s, v in rest)
            raise Mismatch(str(dim), f"a size of the form {dim}" + (f" with {known}" if known else ""), size,
                           f"{what} axis {axis}")
        self.set(symbol, int(value), f"{what} axis {axis}")


_ROOTS: dict = {}


def _root(dim, symbol, rest: tuple, size: int):
    """The positive integer value of ``symbol`` that makes ``dim`` (its other symbols at ``rest``) equal
    ``size``, or None.  Dimensions are a·symbolᵏ + b in each symbol (H·d_mid, 2·d_e, L − 1, C·P²): solved
    exactly, and remembered — a window loop binds the same shapes thousands of times."""
    key = (dim, symbol, rest, size)
    if key not in _ROOTS:
        if len(_ROOTS) > 100_000:
            _ROOTS.clear()
        expr = sp.expand(sp.sympify(dim).xreplace(dict(rest)))
        b = expr.xreplace({symbol: sp.Integer(0)})
        term = sp.expand(expr - b)
        a, power = term.as_coeff_exponent(symbol)
        value = None
        if a.is_number and a != 0 and power.is_Integer and power > 0:
            root = (size - b) / a
            if root.is_integer and root > 0:
                value = sp.integer_nthroot(int(root), int(power))
                value = value[0] if value[1] else None
        _ROOTS[key] = value
    return _ROOTS[key]
