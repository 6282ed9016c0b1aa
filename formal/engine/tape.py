"""Replaying an execution whose checks are known to pass.

An execution checks, line by line, what depends only on the shapes of its arguments: every size binding,
every size constraint, every line's result shape against the derived one, the memory guard.  Run again on
arguments of the same shapes (another window, head or layer of a model; another example of the same sizes),
those checks give the same answers.  So a first, fully checked run records the order in which its lines ran —
each with its loop indices — as a :class:`Tape`, and a later run on arguments of the same shapes (and under the
same memory limit) replays it: the arguments are still read and validated, the lines' numpy semantics still
run, but the shape bookkeeping is not repeated.

What is not a function of the shapes is not taped: an algorithm whose lines bind a size from data (a length
the data decides, a loop ``until`` a token), or a run that ends in a NaN, ∞ or error — a replay that meets one
hands over to a fully checked run, from the same random state, so every error is the checked run's.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field

import numpy as np

from ..core import masks
from ..core.shapes import Binding
from ..guards import limits
from ..guards.arrays import index_array, real_array
from ..ops import Ref
from .calls import CallOp, ColumnCallOp
from .lines import AS_DEFINED, finite, layout, ops_of, refs_of, returns_nonfinite, split_arguments, stacked_trips
from .precision import active, rounded
from .steps import LineRan, LoopBegan, TripDone, TripsRanAtOnce

__all__ = ["Tape", "key", "replay", "remember", "recall", "forget", "untaped", "MAX_TAPES"]

#: Tapes kept per algorithm object (one per shape signature met): past it they are forgotten and re-recorded.
MAX_TAPES = 256
_GENERATION = [0]   # bumped by forget(): tapes recorded before no longer match


_UNTAPED = contextvars.ContextVar("formal_untaped", default=False)


def forget() -> None:
    """Forget every tape: the next run of any algorithm is checked in full (benchmarks measure both paths)."""
    _GENERATION[0] += 1


@contextlib.contextmanager
def untaped():
    """Within the block every run is checked in full, none recorded or replayed (tests and benchmarks compare)."""
    token = _UNTAPED.set(True)
    try:
        yield
    finally:
        _UNTAPED.reset(token)


@dataclass(frozen=True)
class Tape:
    """A checked run's order of lines: ``steps`` (:mod:`formal.engine.steps`: a line evaluated, a loop's trips
    begun, collected and ended, or every trip at once by :mod:`formal.engine.batches`); its final ``binding`` and
    the parameters in order of first use.  ``calls``: the callee's tape of each call a replay met, by step and call
    (a replay makes the same call on the same shapes each time: it replays that tape without looking it up)."""

    steps: tuple
    binding: dict
    consumed: tuple
    calls: dict = field(default_factory=dict, compare=False, repr=False)


def _signature(value):
    """What of ``value`` a run's checks depend on: an array's shape and kind, a scalar's type and value (a size
    given as ``ell_max=np.int64(8)`` is its value), a nested list's shape; None for anything else."""
    if isinstance(value, np.ndarray):
        return value.shape, value.dtype.kind
    if value is None or isinstance(value, (str, bool, int, float)):
        return type(value).__name__, value
    if isinstance(value, np.generic):
        return type(value).__name__, value.item()
    if isinstance(value, (list, tuple)):
        return "list", np.shape(value)
    return None


def key(arguments: dict):
    """What a run's checks depend on: every argument's shape and kind (a mask or size given as a value), and the
    memory limit; None where an argument cannot be described so (a ragged list, a mask function), or within
    :func:`untaped` or :func:`~formal.engine.columns.one_by_one`."""
    if _UNTAPED.get() or AS_DEFINED.get():   # within untaped() or one_by_one(): every run checked in full
        return None
    try:
        parts = tuple((name, _signature(arguments[name])) for name in sorted(arguments))
    except (ValueError, TypeError):   # a ragged list
        return None
    if any(part is None for _, part in parts):
        return None
    return parts, limits.max_memory(), _GENERATION[0]


def remember(tapes: dict, signature, tape: Tape) -> None:
    if len(tapes) >= MAX_TAPES:
        tapes.clear()
    tapes[signature] = tape


def recall(tapes: dict, signature):
    return None if signature is None else tapes.get(signature)


def _inputs(algorithm, raw: dict, binding, trusted=False) -> dict:
    """The arguments as a checked run reads them: arrays validated, masks resolved, parameters as float64.
    ``trusted``: the values of a caller's replay, made by its lines from its own arguments on the shapes and
    kinds of a checked run: only a mask left out (None) or named is resolved."""
    if trusted:
        values = {spec.name: raw.get(spec.name) for spec in algorithm.signature}
        for spec in algorithm.inputs:
            if spec.kind == "mask" and (values[spec.name] is None or isinstance(values[spec.name], str)):
                values[spec.name] = masks.resolve(values[spec.name], *(binding.evaluate(d) for d in spec.shape))
        return values
    values = {}
    for spec in algorithm.inputs:
        if spec.kind == "mask":
            ell_z, ell_x = (binding.evaluate(d) for d in spec.shape)
            values[spec.name] = masks.resolve(raw[spec.name], ell_z, ell_x)
        else:
            values[spec.name] = (index_array if spec.kind == "index" else real_array)(spec.name, raw[spec.name])
    for spec in algorithm.params:
        values[spec.name] = real_array(spec.name, raw[spec.name])
    return values


def _call(calls: dict, where, op, args, ctx):
    """The output of a call a replay meets — its callee's tape replayed, or for a column call the program of
    every column at once (found once, then kept in ``calls``: the call is made on the same shapes each time) —
    or None where it has none, or the replay meets what a checked run must judge (the call then runs as any
    call does)."""
    callee, known = op.callee, calls.get(where)
    if known is None:
        arguments = dict(zip(op.names, args))
        arguments.update(op._sizes(ctx))
        if isinstance(op, ColumnCallOp):
            batched = frozenset(s.name for s in callee.inputs) & set(op.names)
            found = layout(callee).programs.get((key(arguments), batched))
        else:
            found = recall(layout(callee).tapes, key(arguments))
        if found is None:
            return None
        known = calls[where] = (found, split_arguments(callee, arguments)[0], returns_nonfinite(callee))
    found, given, by_design = known
    raw = dict(zip(op.names, args))
    for name, source in callee.defaults.items():   # Z omitted (or None) is X
        if raw.get(name) is None:
            raw[name] = raw.get(source)
    if isinstance(op, ColumnCallOp):
        made = found.run(None, lambda name, _: raw[name])
        return made["output"] if made is not None and finite(made["output"]) else None
    replayed = replay(callee, raw, found, type(ctx)(callee, Binding(given)), track=by_design, trusted=True)
    return None if replayed is None else replayed[0]


def _compiled(node):
    """``f(values, ctx)``: an expression without calls as nested functions, each op's numpy semantics bound
    once (a replay evaluates the same lines again and again)."""
    if isinstance(node, Ref):
        name = node.name
        return lambda values, ctx: values[name]
    numpy, args = node.op.numpy, [_compiled(a) for a in node.args]
    if len(args) == 1:
        (a,) = args
        return lambda values, ctx: numpy(ctx, a(values, ctx))
    if len(args) == 2:
        a, b = args
        return lambda values, ctx: numpy(ctx, a(values, ctx), b(values, ctx))
    return lambda values, ctx: numpy(ctx, *[f(values, ctx) for f in args])


def compiled(line):
    """The line's expression compiled by :func:`_compiled`, or None where it makes a call."""
    if any(isinstance(op, CallOp) for op in ops_of(line.expr)):
        return None
    return _compiled(line.expr)


def _began(line, values) -> bool:
    """Whether a line whose value is not finite made it from finite values, and not by design: an overflow."""
    if any(op.nonfinite for op in ops_of(line.expr)):
        return False
    return all(finite(values[name]) for name in refs_of(line.expr) if name in values)


def replay(algorithm, raw: dict, tape: Tape, ctx, *, track=False, trusted=False):
    """``(output, values)`` of the taped run on ``raw`` (the arguments by name), or None where the replay meets
    something a checked run must judge (an error, or an output not finite).  ``track`` (an algorithm that may
    return NaN by design): an output not finite is returned too, unless a line made a NaN or ∞ from finite
    values not by design (an overflow, which the checked run reports)."""
    from ..errors import FormalError

    ctx.binding.values = dict(tape.binding)
    run = _Replay(algorithm, tape, ctx, track)
    try:
        run.values.update(_inputs(algorithm, raw, ctx.binding, trusted))   # a bad one: the checked run says which
        for i, step in enumerate(tape.steps):
            if not run.step(i, step):
                return None
    except FormalError:
        return None
    outputs = tuple(run.values[o.name] for o in algorithm.outputs)
    output = outputs if len(outputs) > 1 else outputs[0]
    return (output, run.values) if finite(output) or (track and not run.overflowed) else None


class _Replay:
    """The state of one replay: the values by name, the loops' collections, the step being replayed (a call's
    tape is known by its step and its node) and whether a line overflowed (``track``)."""

    def __init__(self, algorithm, tape: Tape, ctx, track: bool):
        self.tape, self.ctx, self.track = tape, ctx, track
        self.layout = layout(algorithm)
        self.values: dict = {}
        self.collected: dict = {}
        self.at = 0
        self.overflowed = False

    def evaluate(self, node):
        if isinstance(node, Ref):
            return self.values[node.name]
        args = [self.evaluate(a) for a in node.args]
        if type(node.op) in (CallOp, ColumnCallOp) and not node.op.callee.random:
            output = _call(self.tape.calls, (self.at, id(node)), node.op, args, self.ctx)
            if output is not None:
                return output
        return rounded(node.op.numpy(self.ctx, *args))

    def step(self, i, step) -> bool:
        """Replay one step; False where a batched loop's program met what a checked run must judge."""
        ctx, values = self.ctx, self.values
        if isinstance(step, LineRan):
            line = step.line
            ctx.line, ctx.loop, self.at = step.number, dict(step.loop), i
            if step.indices:
                ctx.binding.values.update(step.indices)
            compiled = self.layout.compiled[id(line)]
            # a compiled line applies no op one by one: where a precision is emulated, each op's result is rounded
            value = self.evaluate(line.expr) if compiled is None or active() else compiled(values, ctx)
            if self.track and not self.overflowed and not finite(value):
                self.overflowed = _began(line, values)
            names = self.layout.line_targets[id(line)]
            values.update(zip(names, value if len(names) > 1 else (value,)))
        elif isinstance(step, TripsRanAtOnce):   # a loop whose trips ran at once (formal.engine.batches)
            ctx.loop = dict(step.loop_indices)
            ctx.binding.values.update(step.indices)
            made = step.program.run(ctx, lambda name, _: values[name])
            if made is None:
                return False
            values.update(made)
        elif isinstance(step, LoopBegan):
            self.collected[id(step.loop)] = {pair: [] for pair in step.loop.collected}
        elif isinstance(step, TripDone):
            for (name, _), parts in self.collected[id(step.loop)].items():
                parts.append(values[name])
        else:   # LoopEnded
            values.update(stacked_trips(self.collected.pop(id(step.loop)), values))
        return True
