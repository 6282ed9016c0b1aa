"""Algorithms as data: a signature and numbered lines.

A line is an :class:`Assign` (``target ← expression``, where the expression may be a :func:`call` of
another algorithm) or a :class:`Loop` over a symbolic range.  Lines are numbered in order, loop headers
included, as the paper numbers them.  Derivation (:mod:`formal.engine.derivation`) runs the lines over symbolic
shapes; execution (:mod:`formal.engine.execution`) runs them over numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import sympy as sp

from ..core.constraints import Constraint, at_most, divides, even
from ..core.shapes import TensorSpec
from ..costs.cost import Cost, check_convention
from ..errors import ConfigError, shown
from ..ops import Apply, Node, Ref
from .calls import CallOp, ColumnCallOp, Several, call, call_columns
from .declarations import Options

__all__ = ["Assign", "Loop", "Step", "numbered", "Constraint", "Algorithm", "CallOp", "ColumnCallOp", "Several", "call",
           "call_columns", "targets", "even", "divides", "at_most", "CAUSAL", "PERMUTATION"]

#: The sides of its tokens an output column may read (:attr:`Algorithm.causal`).
CAUSAL = ("forward", "backward")
#: How an output answers a permutation of an input's columns (:attr:`Algorithm.permutation`).
PERMUTATION = ("equivariant", "invariant")


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
    shown: str = ""   # the name the line shows for its target (``e`` of ``∀t: e_t ← …``, a column of X)


@dataclass(frozen=True)
class Step:
    """A numbered line of the paper that computes nothing: ``ℓ ← length(x)`` (the length is a size already
    bound), ``X ← [e_1, …, e_ℓ]`` (the columns were written in place), ``end for``, ``return θ``.  It renders
    (``text``, ``latex``) and counts in the numbering, with zero cost; its shape is that of the value it
    names (``value``), or ``shape`` when it states one (the scalar ℓ), else none."""

    text: str
    latex: str
    value: str = ""
    shape: tuple | None = None


@dataclass(frozen=True)
class Loop:
    """``for var ∈ [count]:`` the body.  Each name in ``stack`` is a body result collected over the loop on
    a new leading axis; a pair ``(name, as)`` collects ``name`` under another name (a recurrence's state
    ``h``, carried from step to step, collected as the sequence ``H_s``).  A ``sequential`` loop multiplies
    depth by its count; a parallel one does not.

    A loop whose values change size from one iteration to the next (a sequence growing by one token)
    names its iteration by a size symbol ``index`` (1, …, count) and states, in ``carry``, the shape of
    each such value at the start of iteration ``index``.  Derivation checks the statement by induction
    (it holds on entry; if it holds at ``index`` the body makes it hold at ``index + 1``) and sums the
    body's cost over the iterations in closed form.  ``until`` (a function of the values) ends the loop
    early when it runs; costs are then the worst case, ``count`` iterations, and the values carried out
    of the loop have the size they reach after ``trips`` iterations, a size bound when the loop ends.

    A ``columnwise`` loop is the paper's ``for t = 1, …, ℓ`` around a line whose ops act on every t at once
    (Algorithm 12's masking): it renders as a loop, runs its body once, and its cost is the body's.
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
    columnwise: bool = False     # the body's ops act on every t at once: run once, its cost not multiplied
    end: bool | None = None      # an ``end for`` line after the body (None: when the body has several lines)

    @property
    def closes(self) -> bool:
        """Whether an ``end for`` (``end while`` for a loop with ``until``) line closes the body."""
        return len(self.body) > 1 if self.end is None else self.end

    @property
    def end_line(self) -> Step:
        """The line that closes the body (:attr:`closes`)."""
        word = "end while" if self.until_text else "end for"
        return Step(word, rf"\textbf{{{word}}}")

    @property
    def collected(self) -> tuple:
        """``(name, as)`` for every entry of ``stack``."""
        return tuple((entry, entry) if isinstance(entry, str) else tuple(entry) for entry in self.stack)


#: Variants built so far, by builder and options (see :meth:`Algorithm.variant`).
_VARIANTS: dict = {}


def _typed(value):
    """``value`` with its type, so that options equal in Python but not to a builder — ``True`` and ``1``,
    ``1`` and ``1.0`` — name different variants."""
    if isinstance(value, tuple):
        return tuple, tuple(_typed(v) for v in value)
    return type(value), value


class Algorithm:
    """One of the paper's algorithms (or a variant of one), written once as data.

    Parameters
    ----------
    number : int or None
        The paper's algorithm number; None for an algorithm the paper does not have (a recurrent cell, a
        convolution), which names its ``source`` instead.
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
        The conditions on sizes this algorithm states itself; :attr:`size_constraints` adds those of the
        algorithms it calls.
    defaults : dict
        Inputs that may be omitted, mapped to the input they default to (``{"Z": "X"}``).
    options : dict
        The builder options this object was made with (name → value); :meth:`variant` makes another.  A builder
        decorated by :meth:`formal.engine.declarations.Options.builds` gives neither this nor ``builder``: the
        decorator records both (:meth:`built_by`).
    builder : callable
        The function that built it, which :meth:`variant` calls; its decorator declares the options
        (:attr:`option_specs`).
    random : bool
        Whether it draws random numbers; execution then takes ``seed`` (an int or a numpy Generator).
    notes : sequence of str
        What a reader must know beyond the lines (an assumption of the cost formulas, a convention).
    source : str
        Where the definition comes from (``"Hochreiter & Schmidhuber 1997; Gers et al. 2000"``); the
        paper's algorithms leave it empty.
    model : bool
        Whether an algorithm outside the paper is a whole model (a recurrent stack) whose parameters an
        implementation under test takes as one dict, as Algorithms 8–15 do.
    causal : {None, "forward", "backward"}
        Whether output column t depends only on the tokens (the input of role ``"tokens"``) at positions
        ≤ t (``"forward"``: a decoder, a forward recurrence) or ≥ t (``"backward"``: a backward recurrence);
        None claims neither.
    permutation : dict
        How the output answers a permutation of an input's columns, every mask admitting all (input name →
        :data:`PERMUTATION`): ``"equivariant"`` — its columns are permuted alike (the tokens of attention);
        ``"invariant"`` — it stays as it was (a context attended over without positions).  The inputs
        aligned with the one permuted (as long along their last axis: token types beside their tokens) are
        permuted with it.
    """

    def __init__(self, *, number, name, display, summary, inputs, params, output, lines,
                 params_label="", constraints=(), defaults=None, options=None, builder=None,
                 random=False, notes=(), source="", model=False, causal=None, permutation=None):
        self.number, self.name, self.display, self.summary = number, name, display, summary
        self.inputs, self.params = tuple(inputs), tuple(params)
        self.outputs = tuple(output) if isinstance(output, (tuple, list)) else (output,)
        self.output, self.lines = self.outputs[0], tuple(lines)
        self.random, self.notes, self.source, self._model = random, tuple(notes), source, model
        if number is None and not source:
            raise ConfigError(f"{name}: an algorithm that is not the paper's names its source")
        self.params_label = params_label
        self.constraints = tuple(constraints)
        self.defaults = dict(defaults or {})
        self.options = dict(options or {})
        self.causal, self.permutation = causal, dict(permutation or {})
        self._builder = builder
        self.option_specs = getattr(builder, "declared", None) or Options()
        self._check_options()
        self._check_names()
        self._check_properties()

    def _check_options(self):
        if list(self.options) != list(self.option_specs):
            raise ConfigError(f"{self.label}: its options {list(self.options)} are not the ones its builder "
                              f"declares, {list(self.option_specs)}")

    def built_by(self, builder, options: dict) -> "Algorithm":
        """Record the builder that made this object and the options it was built with, every one resolved —
        :meth:`formal.engine.declarations.Options.builds` does, so that a builder states its options once, in
        its decorator.  An object that names its builder already keeps it."""
        if self._builder is None:
            self._builder, self.option_specs = builder, builder.declared
            self.options = {name: options[name] for name in self.option_specs}
            self._check_options()
        return self

    # ---------------------------------------------------------------------------------------- identity
    @property
    def label(self) -> str:
        """``"Algorithm 4 (attention)"`` (``"lstm_cell (Gers et al. 2000)"`` outside the paper), as errors
        name it."""
        if self.number is None:
            return f"{self.name} ({self.source})"
        return f"Algorithm {self.number} ({self.name})"

    @property
    def heading(self) -> str:
        """``"Algorithm 4"``, or the source of an algorithm the paper does not have."""
        return self.source if self.number is None else f"Algorithm {self.number}"

    @property
    def is_model(self) -> bool:
        """Whether it is a whole model or one of its uses (Algorithms 8–15, a recurrent layer or stack), which
        take their parameters as one dict."""
        return self._model or (self.number is not None and self.number >= 8)

    @property
    def option_docs(self) -> dict:
        """Option name → its meaning, from the declarations (:attr:`option_specs`)."""
        return {name: option.doc for name, option in self.option_specs.items()}

    def __repr__(self):
        extra = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"<{self.label}{extra}>"

    def variant(self, **options) -> "Algorithm":
        """The same algorithm built with other options (``attention.variant(empty="nan")``).  Algorithm objects
        do not change once built, so each set of options is built once and the same object returned after
        (its shapes and costs derived once): a verify or conform run asks for the same variants again and
        again."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            known = ", ".join(self.options) or "none"
            raise ConfigError(f"{self.name} has no option {shown(unknown[0])}; its options: {known}")
        options = {**self.options, **options}
        if self.option_specs:    # checked and in normal form: eps=0 is the variant eps=0.0
            options = self.option_specs.resolve(options, self.name)
        try:
            key = tuple(sorted((name, _typed(value)) for name, value in options.items()))
            hash(key)
        except TypeError:                                                 # an unhashable value: built afresh
            return self._builder(**options)
        built = _VARIANTS.get((self._builder, key))
        if built is None:                                                 # built once, derived once
            built = _VARIANTS[(self._builder, key)] = self._builder(**options)
        return built

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
        for c in self.size_constraints:  # its own and its callees'
            found |= set(c.symbols)
        indices = set()
        for record in self.derivation.records:  # sizes only the lines use (a truncation's ℓ_max)
            if isinstance(record.line, Loop):  # a loop: its trip count is a size (N_epochs), its index is not
                indices.add(record.line.index)
                found |= sp.sympify(record.line.count).free_symbols
                continue
            if record.shape is None:  # a line that computes nothing (end for)
                continue
            for shape in (record.shape if isinstance(record.shape, Several) else (record.shape,)):
                for d in shape:
                    found |= d.free_symbols
        return tuple(sorted(found - indices, key=str))

    # ------------------------------------------------------------------------------------------ roles
    def with_role(self, role: str) -> tuple:
        """The inputs that play ``role`` (:data:`formal.core.shapes.ROLES`), in the signature's order."""
        return tuple(s for s in self.inputs if s.role == role)

    @property
    def tokens(self) -> TensorSpec | None:
        """The input whose columns are the tokens a property permutes or perturbs, or None."""
        found = self.with_role("tokens")
        return found[0] if found else None

    @property
    def hidden(self) -> dict:
        """Mask input → the context it hides: a mask whose rows run over a context's columns (Algorithm 4's
        ``Mask[t_z, t_x]``: a hidden key t_z of Z has no influence on query t_x)."""
        return {m.name: c.name for m in self.inputs if m.kind == "mask" for c in self.with_role("context")
                if m.shape and c.shape and m.shape[0] == c.shape[-1]}

    # -------------------------------------------------------------------------------------- derivation
    @cached_property
    def derivation(self):
        """Shapes and work of every line, by abstract interpretation over symbolic shapes."""
        from .derivation import derive
        return derive(self)

    @cached_property
    def size_constraints(self) -> tuple:
        """Every :class:`Constraint` on this algorithm's sizes: its own, and those of every algorithm it calls
        (recursively), renamed to its symbols by each call; deduplicated, and without those that hold
        whatever the sizes (``2 ≤ d_f`` of Algorithm 9's final layer norm over d_f)."""
        return self.derivation.constraints

    @property
    def output_shape(self) -> tuple:
        return self.derivation.output_shape

    def param_count(self) -> sp.Expr:
        """Scalars in the parameters, as an expanded polynomial."""
        return sp.expand(sp.Add(*(p.size() for p in self.params)))

    def cost(self, convention: str = "matmul") -> Cost:
        """:class:`~formal.costs.cost.Cost` of one execution under a FLOP convention (``matmul`` or ``full``)."""
        work = self.derivation.work
        return Cost(params=self.param_count(), flops=work.flops[check_convention(convention)],
                    memory=work.memory, depth=work.depth, convention=convention)

    # --------------------------------------------------------------------------------------- execution
    def run(self, **arguments):
        """Execute on numpy float64 arrays; returns a :class:`~formal.engine.execution.Run` (output, binding,
        every intermediate value, the parameters read)."""
        from .execution import execute
        return execute(self, arguments)

    def __call__(self, **arguments):
        """Execute and return the output array."""
        return self.run(**arguments).output

    # ------------------------------------------------------------------------------------------- checks
    def _check_properties(self):
        if self.causal is not None and (self.causal not in CAUSAL or self.tokens is None):
            raise ConfigError(f"{self.label}: causal = {shown(self.causal)} must be one of {', '.join(CAUSAL)}, "
                              "with an input of role 'tokens'")
        names = {s.name for s in self.inputs}
        for name, answer in self.permutation.items():
            if name not in names or answer not in PERMUTATION:
                raise ConfigError(f"{self.label}: permutation of {shown(name)} = {shown(answer)} must name an input "
                                  f"and one of {', '.join(PERMUTATION)}")

    def _check_names(self):
        defined = {s.name for s in self.signature}
        used = set()

        def visit(node):
            if isinstance(node, Ref):
                if node.name not in defined:
                    raise ConfigError(f"{self.label}: {shown(node.name)} is used before it is defined")
                used.add(node.name)
            elif isinstance(node, Apply):
                for a in node.args:
                    visit(a)

        def walk(lines):
            for line in lines:
                if isinstance(line, Loop):
                    walk(line.body)
                    defined.update(name for _, name in line.collected)
                elif isinstance(line, Step):
                    continue
                else:
                    visit(line.expr)
                    defined.update(targets(line))

        walk(self.lines)
        for output in self.outputs:
            if output.name not in defined:
                raise ConfigError(f"{self.label}: the output {shown(output.name)} is never assigned")
        unused = [p.name for p in self.params if p.name not in used]
        if unused:
            raise ConfigError(f"{self.label}: parameter {shown(unused[0])} is never used")


def targets(line) -> tuple:
    """The names an assignment writes."""
    return line.target if isinstance(line.target, tuple) else (line.target,)


def numbered(lines) -> int:
    """How many numbered lines ``lines`` hold: loop headers, bodies and their ``end for`` lines included."""
    return sum(1 + numbered(line.body) + line.closes if isinstance(line, Loop) else 1 for line in lines)
