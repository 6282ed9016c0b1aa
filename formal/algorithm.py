"""Algorithms as data: a signature and numbered lines.

A line is an :class:`Assign` (``target ← expression``, where the expression may be a :func:`call` of
another algorithm) or a :class:`Loop` over a symbolic range.  Lines are numbered in order, loop headers
included, as the paper numbers them.  Derivation (:mod:`formal.derivation`) runs the lines over symbolic
shapes; execution (:mod:`formal.execution`) runs them over numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np
import sympy as sp

from .cost import Cost, check_convention
from .errors import ConfigError
from .ops import Apply, Node, Op, Ref, as_node
from .symbols import text as sym_text
from .shapes import Mismatch, TensorSpec, same_dim, unify

__all__ = ["Assign", "Loop", "Constraint", "Algorithm", "CallOp", "ColumnCallOp", "Several", "call",
           "call_columns", "targets", "even", "divides", "at_most"]


@dataclass(frozen=True)
class Assign:
    """``target ← expr``.  ``forall`` renders a columnwise line as the paper does (``∀t: k_t ← …``);
    ``returns`` renders the last line as ``return target = expr``; ``note`` is the paper's bracketed
    comment (``Query``).  A tuple of targets takes the several outputs of a call, in order."""

    target: str | tuple
    expr: Node
    note: str = ""
    forall: str = ""
    returns: bool = False


@dataclass(frozen=True)
class Loop:
    """``for var ∈ [count]:`` the body.  Each name in ``stack`` is a body result collected over the loop on
    a new leading axis.  A ``sequential`` loop multiplies depth by its count; a parallel one does not.

    A loop whose values change size from one iteration to the next (a sequence growing by one token)
    names its iteration by a size symbol ``index`` (1, …, count) and states, in ``carry``, the shape of
    each such value at the start of iteration ``index``.  Derivation checks the statement by induction
    (it holds on entry; if it holds at ``index`` the body makes it hold at ``index + 1``) and sums the
    body's cost over the iterations in closed form.  ``until`` (a function of the values) ends the loop
    early when it runs; costs are then the worst case, ``count`` iterations, and the values carried out
    of the loop have the size they reach after ``trips`` iterations, a size bound when the loop ends.
    """

    var: str
    count: sp.Expr
    body: tuple
    stack: tuple = ()
    sequential: bool = False
    index: sp.Symbol | None = None
    carry: tuple = ()            # ((name, shape at iteration `index`), ...)
    until: Callable | None = None
    until_text: str = ""
    trips: sp.Symbol | None = None


@dataclass(frozen=True)
class Constraint:
    """A condition on sizes, checked once its symbols are bound (``d_e`` even, ``n_kv_heads | H``)."""

    text: str
    symbols: tuple
    holds: Callable[[dict], bool]
    explain: Callable[[dict], str]


def _size_value(expr, values: dict) -> int:
    """A size expression at bound values."""
    return int(expr.xreplace({s: values[s] for s in expr.free_symbols}))


def even(symbol, reason: str) -> Constraint:
    return Constraint(f"{sym_text(symbol)} is even", (symbol,), lambda v: v[symbol] % 2 == 0,
                      lambda v: f"{symbol} = {v[symbol]} must be even ({reason})")


def divides(divisor, multiple, reason: str) -> Constraint:
    symbols = tuple(sorted((divisor.free_symbols | multiple.free_symbols), key=str))
    value = _size_value
    return Constraint(f"{sym_text(divisor)} divides {sym_text(multiple)}", symbols,
                      lambda v: value(multiple, v) % value(divisor, v) == 0,
                      lambda v: f"{multiple} = {value(multiple, v)} is not divisible by "
                                f"{divisor} = {value(divisor, v)} ({reason})")


def at_most(small, large, reason: str) -> Constraint:
    """``small ≤ large`` (ℓ ≤ ℓ_max), checked once both are bound."""
    symbols = tuple(sorted((small.free_symbols | large.free_symbols), key=str))
    value = _size_value
    return Constraint(f"{sym_text(small)} ≤ {sym_text(large)}", symbols, lambda v: value(small, v) <= value(large, v),
                      lambda v: f"{small} = {value(small, v)} exceeds {large} = {value(large, v)} ({reason})")


class Algorithm:
    """One of the paper's algorithms (or a variant of one), written once as data.

    Parameters
    ----------
    number : int
        The paper's algorithm number.
    name : str
        The registry name (``"attention"``).
    display : str
        The name as the paper writes it in the header (``"Attention"``).
    summary : str
        One sentence: which algorithm of the paper this is.
    inputs, params : sequence of TensorSpec
        The signature, in the paper's order.  Per-head parameters are stacked on a leading head axis.
    output : TensorSpec or tuple of TensorSpec
        The result (or results), with the shape the paper states; derivation checks that the lines
        produce it.
    lines : sequence of Assign or Loop
    constraints : sequence of Constraint
    defaults : dict
        Inputs that may be omitted, mapped to the input they default to (``{"Z": "X"}``).
    options : dict
        The builder options this object was made with; :meth:`variant` makes another.
    random : bool
        Whether it draws random numbers; execution then takes ``seed`` (an int or a numpy Generator).
    notes : sequence of str
        What a reader must know beyond the lines (an assumption of the cost formulas, a convention).
    """

    def __init__(self, *, number, name, display, summary, inputs, params, output, lines,
                 params_label="", constraints=(), defaults=None, options=None, builder=None, option_docs=None,
                 random=False, notes=()):
        self.number, self.name, self.display, self.summary = number, name, display, summary
        self.inputs, self.params = tuple(inputs), tuple(params)
        self.outputs = tuple(output) if isinstance(output, (tuple, list)) else (output,)
        self.output, self.lines = self.outputs[0], tuple(lines)
        self.random, self.notes = random, tuple(notes)
        self.params_label = params_label
        self.constraints = tuple(constraints)
        self.defaults = dict(defaults or {})
        self.options = dict(options or {})
        self.option_docs = dict(option_docs or {})
        self._builder = builder
        self._check_names()

    # ---------------------------------------------------------------------------------------- identity
    @property
    def label(self) -> str:
        """``"Algorithm 4 (attention)"``, as errors name it."""
        return f"Algorithm {self.number} ({self.name})"

    def __repr__(self):
        extra = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"<{self.label}{extra}>"

    def variant(self, **options) -> "Algorithm":
        """The same algorithm built with other options (``attention.variant(empty="nan")``)."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            known = ", ".join(self.options) or "none"
            raise ConfigError(f"{self.name} has no option {unknown[0]!r}; its options: {known}")
        return self._builder(**{**self.options, **options})

    @property
    def signature(self) -> tuple:
        return self.inputs + self.params

    def spec(self, name: str) -> TensorSpec:
        for s in self.signature:
            if s.name == name:
                return s
        raise KeyError(name)

    @cached_property
    def symbols(self) -> tuple:
        """Every size symbol of the signature, sorted by name."""
        found = set()
        for s in self.signature + self.outputs:
            for d in s.shape + ((s.bound,) if s.bound is not None else ()):
                found |= d.free_symbols
        for c in self.constraints:
            found |= set(c.symbols)
        indices = set()
        for record in self.derivation.records:  # sizes only the lines use (a truncation's ℓ_max)
            if record.shape is None:  # a loop: its trip count is a size (N_epochs), its index is not
                indices.add(record.line.index)
                found |= sp.sympify(record.line.count).free_symbols
                continue
            for shape in (record.shape if isinstance(record.shape, Several) else (record.shape,)):
                for d in shape:
                    found |= d.free_symbols
        return tuple(sorted(found - indices, key=str))

    # -------------------------------------------------------------------------------------- derivation
    @cached_property
    def derivation(self):
        """Shapes and work of every line, by abstract interpretation over symbolic shapes."""
        from .derivation import derive
        return derive(self)

    @property
    def output_shape(self) -> tuple:
        return self.derivation.output_shape

    def param_count(self) -> sp.Expr:
        """Scalars in the parameters, as an expanded polynomial."""
        return sp.expand(sp.Add(*(p.size() for p in self.params)))

    def cost(self, convention: str = "matmul") -> Cost:
        """:class:`~formal.cost.Cost` of one execution under a FLOP convention (``matmul`` or ``full``)."""
        work = self.derivation.work
        return Cost(params=self.param_count(), flops=work.flops[check_convention(convention)],
                    memory=work.memory, depth=work.depth, convention=convention)

    # --------------------------------------------------------------------------------------- execution
    def run(self, **arguments):
        """Execute on numpy float64 arrays; returns a :class:`~formal.execution.Run` (output, binding,
        every intermediate value, the parameters read)."""
        from .execution import execute
        return execute(self, arguments)

    def __call__(self, **arguments):
        """Execute and return the output array."""
        return self.run(**arguments).output

    # ------------------------------------------------------------------------------------------- checks
    def _check_names(self):
        defined = {s.name for s in self.signature}
        used = set()

        def visit(node):
            if isinstance(node, Ref):
                if node.name not in defined:
                    raise ConfigError(f"{self.label}: {node.name!r} is used before it is defined")
                used.add(node.name)
            elif isinstance(node, Apply):
                for a in node.args:
                    visit(a)

        def walk(lines):
            for line in lines:
                if isinstance(line, Loop):
                    walk(line.body)
                    defined.update(line.stack)
                else:
                    visit(line.expr)
                    defined.update(targets(line))

        walk(self.lines)
        for output in self.outputs:
            if output.name not in defined:
                raise ConfigError(f"{self.label}: the output {output.name!r} is never assigned")
        unused = [p.name for p in self.params if p.name not in used]
        if unused:
            raise ConfigError(f"{self.label}: parameter {unused[0]!r} is never used")


def targets(line) -> tuple:
    """The names an assignment writes."""
    return line.target if isinstance(line.target, tuple) else (line.target,)


class Several(tuple):
    """The shapes of a call that returns several values."""


class CallOp(Op):
    """A call of another algorithm inside a line (``Y^h ← Attention(X, Z | W^h_qkv, Mask)``).

    Its shape comes from unifying the callee's signature with the argument shapes, which renames the
    callee's symbols to the caller's; its work is the callee's, renamed the same way.
    """

    name = "call"

    def __init__(self, callee: Algorithm, names: tuple, label: tuple = ()):
        self.callee, self.names, self.label = callee, names, label

    def _substitution(self, shapes) -> dict:
        substitution: dict = {}
        given = dict(zip(self.names, shapes))
        for name, source in self.callee.defaults.items():  # Z omitted means Z = X
            if name not in given and source in given:
                given[name] = given[source]
        for name, shape in given.items():
            unify(self.callee.spec(name).shape, shape, substitution, f"{self.callee.display}'s {name}")
        return substitution

    def shape(self, shapes):
        substitution = self._substitution(shapes)
        outs = [tuple(d.xreplace(substitution) for d in shape) for shape in self.callee.derivation.output_shapes]
        return outs[0] if len(outs) == 1 else Several(outs)

    def work(self, shapes, out):
        return self.callee.derivation.work.xreplace(self._substitution(shapes))

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
        return ins, ([self.label[latex]] if self.label else params) + mask

    def text(self, args):
        ins, rest = self._parts(args)
        return f"{self.callee.display}({', '.join(ins)} | {', '.join(rest)})"

    def latex(self, args):
        ins, rest = self._parts(args, latex=True)
        return rf"\mathrm{{{self.callee.display}}}\left({', '.join(ins)} \mid {', '.join(rest)}\right)"


    def _sizes(self, ctx) -> dict:
        """Sizes the callee's arrays cannot tell it (a sinusoidal table's ℓ_max), passed on from the caller
        under the same name: only symbols that no input or parameter of the callee carries."""
        carried = set()
        for spec in self.callee.signature:
            for d in spec.shape:
                carried |= d.free_symbols
        return {str(s): ctx.binding.values[s] for s in self.callee.symbols
                if s not in carried and s in ctx.binding.values}


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

    def numpy(self, ctx, *values):
        inputs = {s.name for s in self.callee.inputs}
        n = next(np.shape(v)[-1] for name, v in zip(self.names, values) if name in inputs)
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
        return ins, [self.label[latex]] if self.label else params


def _call_node(op_class, callee, label, arguments):
    missing = [s.name for s in callee.signature if s.name not in arguments and s.name not in callee.defaults]
    if missing:
        raise ConfigError(f"call of {callee.label} misses {', '.join(missing)}")
    names = tuple(arguments)
    return Apply(op_class(callee, names, label), tuple(as_node(arguments[n]) for n in names))


def call(callee: Algorithm, *, label: tuple = (), **arguments) -> Apply:
    """A call node: ``arguments`` maps the callee's input and parameter names to the caller's expressions;
    ``label`` is how the parameters are written, as (text, LaTeX) (``("W_qkv^h", r"W^{h}_{qkv}")``)."""
    return _call_node(CallOp, callee, label, arguments)


def call_columns(callee: Algorithm, *, label: tuple = (), **arguments) -> Apply:
    """A call of ``callee`` on every column of its inputs (:class:`ColumnCallOp`)."""
    return _call_node(ColumnCallOp, callee, label, arguments)
