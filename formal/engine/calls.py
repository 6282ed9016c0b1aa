"""Calls of one algorithm inside a line of another: :func:`call` (``Y^h ← Attention(X, Z | W^h_qkv, Mask)``)
and :func:`call_columns` (``∀t: X̃[:, t] ← layer_norm(X[:, t] | γ, β)``).  A call's shape, work and size
constraints are its callee's, renamed to the caller's symbols by unifying the signatures."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from ..core.shapes import Mismatch, same_dim, unify_all
from ..errors import ConfigError
from ..ops import Apply, Op, as_node

if TYPE_CHECKING:
    from .algorithm import Algorithm

__all__ = ["Several", "CallOp", "ColumnCallOp", "call", "call_columns", "call_node", "calls_in"]


class Several(tuple):
    """The shapes of a call that returns several values."""


class CallOp(Op):
    """A call of another algorithm inside a line (``Y^h ← Attention(X, Z | W^h_qkv, Mask)``).

    Its shape comes from unifying the callee's signature with the argument shapes, which renames the
    callee's symbols to the caller's; its work and its size constraints are the callee's, renamed the same
    way.
    """

    name = "call"

    def __init__(self, callee: Algorithm, names: tuple, label: tuple = ()):
        self.callee, self.names, self.label = callee, names, label

    @property
    def nonfinite(self):
        """``"output"`` when the callee returns NaN by design (a softmax under ``empty="nan"``)."""
        from .lines import returns_nonfinite
        return "output" if returns_nonfinite(self.callee) else None

    def _substitution(self, shapes) -> dict:
        substitution: dict = {}
        given = dict(zip(self.names, shapes))
        for name, source in self.callee.defaults.items():  # Z omitted means Z = X
            if name not in given and source in given:
                given[name] = given[source]
        pending = []
        for name, shape in given.items():
            declared, what = self.callee.spec(name).shape, f"{self.callee.display}'s {name}"
            if len(declared) != len(shape):
                raise Mismatch(f"rank of {what}", len(declared), len(shape))
            pending += [(want, have, what) for want, have in zip(declared, shape)]
        unify_all(pending, substitution)
        return substitution

    def shape(self, shapes):
        substitution = self._substitution(shapes)
        outs = [tuple(d.xreplace(substitution) for d in shape) for shape in self.callee.derivation.output_shapes]
        return outs[0] if len(outs) == 1 else Several(outs)

    def work(self, shapes, out):
        return self.callee.derivation.work.xreplace(self._substitution(shapes))

    def constraints(self, shapes) -> tuple:
        """The callee's size constraints (its own and its callees'), renamed to the caller's symbols."""
        substitution = self._substitution(shapes)
        return tuple(c.renamed(substitution) for c in self.callee.size_constraints)

    def numpy(self, ctx, *values):
        arguments = dict(zip(self.names, values))
        arguments.update(self._sizes(ctx))
        if self.callee.random:
            arguments["seed"] = ctx.rng  # one stream of random numbers through every call
        run = self.callee.run(**arguments)
        outs = tuple(run.values[o.name] for o in self.callee.outputs)
        return outs[0] if len(outs) == 1 else outs

    def _parts(self, args, latex=False):
        kinds = {s.name: s.kind for s in self.callee.signature}
        ins = [a.text for n, a in zip(self.names, args) if n in {s.name for s in self.callee.inputs}
               and kinds[n] != "mask"]
        mask = [a.text for n, a in zip(self.names, args) if kinds[n] == "mask"]
        params = [a.text for n, a in zip(self.names, args) if n not in {s.name for s in self.callee.inputs}]
        return ins, ([_label(self.label, latex)] if self.label else params) + mask

    def text(self, args):
        ins, rest = self._parts(args)
        return f"{self.callee.display}({', '.join(ins)} | {', '.join(rest)})"

    def latex(self, args):
        ins, rest = self._parts(args, latex=True)
        name = self.callee.display.replace("_", r"\_")  # layer_norm: an underscore, not a subscript
        return rf"\mathrm{{{name}}}\left({', '.join(ins)} \mid {', '.join(rest)}\right)"

    @functools.cached_property
    def _untold(self) -> tuple:
        """``(name, symbol)`` of each size no input or parameter of the callee carries."""
        carried = set()
        for spec in self.callee.signature:
            for d in spec.shape:
                carried |= d.free_symbols
        return tuple((str(s), s) for s in self.callee.symbols if s not in carried)

    def _sizes(self, ctx) -> dict:
        """Sizes the callee's arrays cannot tell it (a sinusoidal table's ℓ_max), passed on from the caller
        under the same name: only symbols that no input or parameter of the callee carries."""
        values = ctx.binding.values
        return {name: values[s] for name, s in self._untold if s in values}


class ColumnCallOp(CallOp):
    """A call applied to every column: ``∀t: X̃[:, t] ← layer_norm(X[:, t] | γ, β)``.

    The callee's inputs get one more, last, axis of length n (the columns; an index input becomes a vector
    of ids), parameters are shared by all columns, and the result gets the same last axis.  Its work is
    the callee's times n; the columns are independent, so depth is the callee's.
    """

    name = "columns"

    def _split(self, shapes):
        inputs = {s.name for s in self.callee.inputs}
        mapped = [(n, s) for n, s in zip(self.names, shapes) if n in inputs]
        if not mapped or not all(s for _, s in mapped):
            raise Mismatch("columns", "an input with a column axis", [s for _, s in mapped])
        n = mapped[0][1][-1]
        for name, shape in mapped:
            if not same_dim(shape[-1], n):
                raise Mismatch(str(n), n, shape[-1], f"column count of {name}")
        return n, [s[:-1] if name in inputs else s for name, s in zip(self.names, shapes)]

    def shape(self, shapes):
        n, inner = self._split(shapes)
        return super().shape(inner) + (n,)

    def work(self, shapes, out):
        n, inner = self._split(shapes)
        return super().work(inner, out).times(n, sequential=False)

    def constraints(self, shapes) -> tuple:
        return super().constraints(self._split(shapes)[1])

    def numpy(self, ctx, *values):
        """The callee on every column, one by one — the definition; where the callee can take every column at
        once (:mod:`.columns`), it runs once, to the same values."""
        from .columns import all_columns
        inputs = {s.name for s in self.callee.inputs}
        n = next(np.shape(v)[-1] for name, v in zip(self.names, values) if name in inputs)
        arguments = dict(zip(self.names, values))
        arguments.update(self._sizes(ctx))
        together = all_columns(self.callee, arguments, inputs & set(self.names), n)
        if together is not None:
            return together
        columns = [super(ColumnCallOp, self).numpy(ctx, *(v[..., j] if name in inputs else v
                                                          for name, v in zip(self.names, values)))
                   for j in range(n)]
        return np.stack(columns, axis=-1)

    def _parts(self, args, latex=False):
        kinds = {s.name: s.kind for s in self.callee.inputs}
        def column(name, text):
            if kinds[name] != "index":
                return f"{text}[:, t]"
            return text if text == "t" or text.endswith("+ t") else f"{text}[t]"  # positions are t already
        ins = [column(n, a.text) for n, a in zip(self.names, args) if n in kinds]
        params = [a.text for n, a in zip(self.names, args) if n not in kinds]
        return ins, [_label(self.label, latex)] if self.label else params


def _label(label: tuple, latex: bool) -> str:
    """A call's label as written: each part that is a parameter's ASCII name (``W_head``) as its symbol
    (:func:`formal.engine.names.symbol`), the others (``θ``, ``W^{h}_{qkv}``) as given."""
    import re

    from .names import symbol
    return ", ".join(symbol(part, latex=latex) if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+", part)
                     else part for part in label[latex].split(", "))


def calls_in(lines):
    """Every call of another algorithm in ``lines`` (loops' bodies included), in order: each an ``Apply`` of a
    :class:`CallOp`."""
    from .lines import flat_lines

    def visit(node):
        if isinstance(node, Apply):
            if isinstance(node.op, CallOp):
                yield node
            for arg in node.args:
                yield from visit(arg)

    for line in flat_lines(lines):
        yield from visit(line.expr)


def call_node(op_class, callee, label, arguments):
    missing = [s.name for s in callee.signature if s.name not in arguments and s.name not in callee.defaults]
    if missing:
        raise ConfigError(f"call of {callee.label} misses {', '.join(missing)}")
    names = tuple(arguments)
    return Apply(op_class(callee, names, label), tuple(as_node(arguments[n]) for n in names))


def call(callee: Algorithm, *, label: tuple = (), **arguments) -> Apply:
    """A call node: ``arguments`` maps the callee's input and parameter names to the caller's expressions;
    ``label`` is how the parameters are written, as (text, LaTeX) (``("W_qkv^h", r"W^{h}_{qkv}")``)."""
    return call_node(CallOp, callee, label, arguments)


def call_columns(callee: Algorithm, *, label: tuple = (), **arguments) -> Apply:
    """A call of ``callee`` on every column of its inputs (:class:`ColumnCallOp`)."""
    return call_node(ColumnCallOp, callee, label, arguments)
