"""Expression nodes and the :class:`Op` base class: shape rule, cost rule, numpy semantics, rendering."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..core.shapes import Mismatch, numel
from ..costs.cost import CONVENTIONS, Work

SUM, PRODUCT, POSTFIX, ATOM = 50, 60, 80, 100  # rendering precedence: how tightly each binds


# ----------------------------------------------------------------------------------------- expression nodes
class Node:
    """An expression in an algorithm line."""


@dataclass(frozen=True)
class Ref(Node):
    """A reference to a named value of the algorithm (input, parameter or earlier result)."""

    name: str


@dataclass(frozen=True)
class Apply(Node):
    """An op applied to argument expressions."""

    op: "Op"
    args: tuple


def as_node(value) -> Node:
    return Ref(value) if isinstance(value, str) else value


@dataclass(frozen=True)
class Rendered:
    """A rendered sub-expression and how tightly it binds."""

    text: str
    prec: int = ATOM

    def at(self, prec: int, latex: bool = False) -> str:
        if self.prec >= prec:
            return self.text
        return rf"\left({self.text}\right)" if latex else f"({self.text})"


class NotColumnar(Exception):
    """An op cannot compute every column of a column call at once: they run one by one."""


class NotBatched(Exception):
    """An op (or a loop, or a call) cannot compute every trip of a loop at once: they run one by one."""


def widened(values, batched) -> list:
    """``values`` ready for an elementwise numpy function over columns: each array *not* batched gets a last
    axis of length 1, so that it broadcasts over the batched ones' column axis as it did over one column."""
    return [v if b or np.ndim(v) == 0 else np.asarray(v)[..., None] for v, b in zip(values, batched)]


def ranked(values, lead, depth) -> list:
    """``values`` ready for a broadcasting numpy function over ``depth`` leading (batch) axes: a value flagged in
    ``lead`` whose own rank is below the largest gets axes of length 1 after its batch axes, so that it
    broadcasts as it did on one trip (a scalar against a matrix); the others broadcast as they are."""
    own = [np.ndim(v) - depth if b else np.ndim(v) for v, b in zip(values, lead)]
    top = max(own)
    return [np.reshape(v, np.shape(v)[:depth] + (1,) * (top - r) + np.shape(v)[depth:]) if b and r < top else v
            for v, b, r in zip(values, lead, own)]


class Op:
    """A primitive operation (see the module docstring)."""

    name = "op"
    prec = ATOM
    free = False  # no floating-point work (a lookup, a selection, a view)
    view = False  # no new scalars either (a transpose, a slice, a reshape)
    #: Non-finite values this op makes by design: None (any NaN or ∞ it makes from finite inputs is an
    #: overflow), "local" (−∞ scores that the next softmax consumes), "output" (NaN the caller receives).
    nonfinite = None

    def __call__(self, *args) -> Apply:
        return Apply(self, tuple(as_node(a) for a in args))

    # -- the four faces
    def shape(self, shapes):
        raise NotImplementedError

    def flops(self, shapes, out) -> dict:
        """FLOPs per convention (a convention left out counts 0): by default one per result element under
        ``full`` and nothing under the others."""
        return {} if self.free or self.view else {"full": numel(out)}

    def memory(self, out):
        return 0 if self.view else numel(out)

    def numpy(self, ctx, *values):
        raise NotImplementedError

    def columns(self, ctx, values, batched):
        """Every column of a column call at once (:mod:`formal.engine.columns`): ``values`` as :meth:`numpy`
        takes them, those flagged in ``batched`` with one more, last, axis (the columns).  Returns what
        :meth:`numpy` would return for each column, stacked on a last axis; raises :class:`NotColumnar`
        where it cannot (an op that does not override it never can: the columns then run one by one)."""
        raise NotColumnar(self.name)

    def leading(self, ctx, values, lead):
        """Every trip of one or more loops at once (:mod:`formal.engine.batches`): ``values`` as :meth:`numpy`
        takes them, those flagged in ``lead`` with ``ctx.lead`` more, leading, axes (one per loop; of length 1
        where a value does not vary over that loop).  Returns what :meth:`numpy` would return on each trip,
        on the same leading axes; raises :class:`NotBatched` where it cannot (an op that does not override it
        never can: the trips then run one by one)."""
        raise NotBatched(self.name)

    meaning = None  # the symbolic face, meaning(ctx, *values) (formal.engine.meaning); None where there is none

    def constraints(self, shapes) -> tuple:
        """Conditions on the sizes of its arguments without which the op is undefined for every input
        (:class:`~formal.core.constraints.Constraint`; a call's are its callee's); none by default."""
        return ()

    def text(self, args) -> str:
        return f"{self.name}({', '.join(a.text for a in args)})"

    def latex(self, args) -> str:
        return rf"\operatorname{{{self.name}}}\left({', '.join(a.text for a in args)}\right)"

    # -- derived
    def work(self, shapes, out) -> Work:
        counts = self.flops(shapes, out)
        return Work({c: sp.sympify(counts.get(c, 0)) for c in CONVENTIONS},
                    sp.sympify(self.memory(out)), sp.Integer(0))

    def line_text(self, target: str, args) -> str | None:
        """A rendering of the whole line ``target ← op(args)``, where the paper writes it differently."""
        return None

    line_latex = line_text

    def __repr__(self):
        return f"{type(self).__name__}()"


def rank(shape, ranks, what):
    """Check that an argument's ``shape`` has one of the ``ranks`` (a tuple of ints) an op takes; ``what`` names
    the argument in the :class:`~formal.core.shapes.Mismatch` raised otherwise (``"a lookup table"``)."""
    if len(shape) not in ranks:
        raise Mismatch(f"rank of {what}", " or ".join(map(str, ranks)), len(shape))
