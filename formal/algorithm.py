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

import sympy as sp

from .cost import Cost, check_convention
from .errors import ConfigError
from .ops import Apply, Node, Op, Ref, as_node
from .shapes import TensorSpec, unify

__all__ = ["Assign", "Loop", "Constraint", "Algorithm", "CallOp", "call", "even", "divides"]


@dataclass(frozen=True)
class Assign:
    """``target ← expr``.  ``forall`` renders a columnwise line as the paper does (``∀t: k_t ← …``);
    ``returns`` renders the last line as ``return target = expr``; ``note`` is the paper's bracketed
    comment (``Query``)."""

    target: str
    expr: Node
    note: str = ""
    forall: str = ""
    returns: bool = False


@dataclass(frozen=True)
class Loop:
    """``for var ∈ [count]:`` the body.  Each name in ``stack`` is a body result collected over the loop on
    a new leading axis.  A ``sequential`` loop multiplies depth by its count; a parallel one does not."""

    var: str
    count: sp.Expr
    body: tuple
    stack: tuple = ()
    sequential: bool = False


@dataclass(frozen=True)
class Constraint:
    """A condition on sizes, checked once its symbols are bound (``d_e`` even, ``n_kv_heads | H``)."""

    text: str
    symbols: tuple
    holds: Callable[[dict], bool]
    explain: Callable[[dict], str]


def even(symbol, reason: str) -> Constraint:
    return Constraint(f"{symbol} is even", (symbol,), lambda v: v[symbol] % 2 == 0,
                      lambda v: f"{symbol} = {v[symbol]} must be even ({reason})")


def divides(divisor, multiple, reason: str) -> Constraint:
    symbols = tuple(sorted((divisor.free_symbols | multiple.free_symbols), key=str))
    def value(expr, v):
        return int(expr.xreplace({s: v[s] for s in expr.free_symbols}))
    return Constraint(f"{divisor} divides {multiple}", symbols,
                      lambda v: value(multiple, v) % value(divisor, v) == 0,
                      lambda v: f"{multiple} = {value(multiple, v)} is not divisible by "
                                f"{divisor} = {value(divisor, v)} ({reason})")


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
    output : TensorSpec
        The result, with the shape the paper states; derivation checks that the lines produce it.
    lines : sequence of Assign or Loop
    constraints : sequence of Constraint
    defaults : dict
        Inputs that may be omitted, mapped to the input they default to (``{"Z": "X"}``).
    options : dict
        The builder options this object was made with; :meth:`variant` makes another.
    """

    def __init__(self, *, number, name, display, summary, inputs, params, output, lines,
                 params_label="", constraints=(), defaults=None, options=None, builder=None, option_docs=None):
        self.number, self.name, self.display, self.summary = number, name, display, summary
        self.inputs, self.params = tuple(inputs), tuple(params)
        self.output, self.lines = output, tuple(lines)
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
        for s in self.signature + (self.output,):
            for d in s.shape + ((s.bound,) if s.bound is not None else ()):
                found |= d.free_symbols
        return tuple(sorted(found, key=str))

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
                    defined.add(line.target)

        walk(self.lines)
        if self.output.name not in defined:
            raise ConfigError(f"{self.label}: the output {self.output.name!r} is never assigned")
        unused = [p.name for p in self.params if p.name not in used]
        if unused:
            raise ConfigError(f"{self.label}: parameter {unused[0]!r} is never used")


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
        for name, shape in zip(self.names, shapes):
            unify(self.callee.spec(name).shape, shape, substitution, f"{self.callee.display}'s {name}")
        return substitution

    def shape(self, shapes):
        substitution = self._substitution(shapes)
        return tuple(d.xreplace(substitution) for d in self.callee.output_shape)

    def work(self, shapes, out):
        return self.callee.derivation.work.xreplace(self._substitution(shapes))

    def numpy(self, ctx, *values):
        return self.callee(**dict(zip(self.names, values)))

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


def call(callee: Algorithm, *, label: tuple = (), **arguments) -> Apply:
    """A call node: ``arguments`` maps the callee's input and parameter names to the caller's expressions;
    ``label`` is how the parameters are written, as (text, LaTeX) (``("W_qkv^h", r"W^{h}_{qkv}")``)."""
    missing = [s.name for s in callee.signature if s.name not in arguments and s.name not in callee.defaults]
    if missing:
        raise ConfigError(f"call of {callee.label} misses {', '.join(missing)}")
    names = tuple(arguments)
    return Apply(CallOp(callee, names, label), tuple(as_node(arguments[n]) for n in names))
