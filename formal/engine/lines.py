"""What the executor reads off an algorithm's lines, computed once per algorithm object: every assignment
(loop bodies included), the ops and names of an expression, whether NaN is returned by design, and
:class:`Layout` (argument names, sizes, constraints, what each line writes and whether it calls another
algorithm) — a window loop runs the same callee thousands of times, each execution looking these up; and how
a call's keyword arguments split into sizes, arrays and a random generator."""

from __future__ import annotations

import contextvars
import functools

import numpy as np

from ..errors import ConfigError
from ..ops import Apply, Op, Ref
from .algorithm import Loop, Step, targets
from .calls import CallOp

#: Set within :func:`formal.engine.columns.one_by_one`: columns, trips and runs as defined, none batched or replayed.
AS_DEFINED = contextvars.ContextVar("formal_as_defined", default=False)

__all__ = ["AS_DEFINED", "assignments", "declares", "stacked_trips", "flat_lines", "ops_of", "applications_of",
           "refs_of", "returns_nonfinite", "finite", "Layout", "layout", "random_generator", "split_arguments",
           "shape_str"]


def ops_of(node):
    """Every op of an expression tree."""
    if isinstance(node, Apply):
        yield node.op
        for arg in node.args:
            yield from ops_of(arg)


def applications_of(node):
    """Every application (an op with its arguments) of an expression tree, outermost first."""
    if isinstance(node, Apply):
        yield node
        for arg in node.args:
            yield from applications_of(arg)


def refs_of(node):
    """The names an expression reads."""
    if isinstance(node, Ref):
        yield node.name
    elif isinstance(node, Apply):
        for arg in node.args:
            yield from refs_of(arg)


def declares(op, method: str) -> bool:
    """Whether ``op`` says how it computes a batch (``method``: ``"columns"``, ``"leading"``) in the same class
    that defines its numpy semantics (a subclass that changes :meth:`~formal.ops.Op.numpy` must say so again)."""
    def owner(name):
        return next(c for c in type(op).__mro__ if name in vars(c))
    return owner(method) is not Op and owner(method) is owner("numpy")


def assignments(lines, numbers, ctx, loop):
    """``(number, line)`` of each assignment of ``lines`` in order, numbered from ``numbers`` (``ctx.line`` set to
    each number); a loop is handed to ``loop(line, numbers)``, which numbers its body, and a step is skipped."""
    for line in lines:
        number = next(numbers)
        ctx.line = number
        if isinstance(line, Step):
            continue
        if isinstance(line, Loop):
            loop(line, numbers)
            continue
        yield number, line


def stacked_trips(collected: dict, values: dict) -> dict:
    """A loop's collections as the values it leaves: ``{(name, as_name): [one value per trip]}`` stacked on a new
    leading axis under ``as_name`` (no trip: an empty stack of the shape ``name`` has, if any)."""
    return {as_name: np.stack(parts) if parts else np.zeros((0,) + np.shape(values.get(name, ())))
            for (name, as_name), parts in collected.items()}


def flat_lines(lines):
    """Every assignment of ``lines``, loop bodies included, in order."""
    for line in lines:
        if isinstance(line, Loop):
            yield from flat_lines(line.body)
        elif not isinstance(line, Step):
            yield line


@functools.lru_cache(maxsize=None)
def returns_nonfinite(algorithm) -> bool:
    """Whether ``algorithm`` may return NaN by design (a softmax under ``empty="nan"``, in it or a callee)."""
    return any(op.nonfinite == "output" for line in flat_lines(algorithm.lines) for op in ops_of(line.expr))


def finite(value) -> bool:
    """Whether a line's value (an array or a tuple of them) holds no NaN or ∞ (integers always do)."""
    if isinstance(value, tuple):
        return all(finite(v) for v in value)
    array = np.asarray(value)
    return array.dtype.kind != "f" or bool(np.isfinite(array).all())


class Layout:
    """What every execution of one algorithm object looks up, computed once: its argument names, its size
    symbols by name, its parameters, its constraints, and per line the names it writes and whether it calls
    another algorithm (a window loop runs the same callee thousands of times)."""

    def __init__(self, algorithm):
        self.names = {s.name for s in algorithm.signature}
        self.sizes = {str(s): s for s in algorithm.symbols}
        self.params = tuple(p.name for p in algorithm.params)
        self.constraints = tuple((c, frozenset(c.symbols)) for c in algorithm.size_constraints)
        self.inputs = frozenset(s.name for s in algorithm.signature)
        self.line_targets: dict = {}
        self.line_calls: dict = {}
        self.tapes: dict = {}   # shape signature → the Tape of a checked run (formal.engine.tape)
        self.programs: dict = {}   # shape signature → the Program of a column call on every column at once
        self._lines = algorithm.lines
        for line in flat_lines(algorithm.lines):
            self.line_targets[id(line)] = targets(line)
            self.line_calls[id(line)] = any(isinstance(op, CallOp) for op in ops_of(line.expr))

    @functools.cached_property
    def compiled(self) -> dict:
        """Per line, its expression as nested functions for a replay (None for a line that makes a call)."""
        from .tape import compiled
        return {id(line): compiled(line) for line in flat_lines(self._lines)}


@functools.lru_cache(maxsize=None)
def layout(algorithm) -> Layout:
    """The :class:`Layout` of ``algorithm``, made once."""
    return Layout(algorithm)


def random_generator(algorithm, arguments: dict):
    """The generator of a random algorithm, from its ``seed`` argument (an int, a Generator, or None for
    fresh entropy)."""
    if not algorithm.random:
        return None
    seed = arguments.pop("seed", None)
    if seed is not None and not isinstance(seed, np.random.Generator) and (
            isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ConfigError(f"seed = {seed!r} must be a non-negative integer or a numpy Generator")
    return np.random.default_rng(seed)


def split_arguments(algorithm, arguments: dict):
    names, sizes = layout(algorithm).names, layout(algorithm).sizes
    unknown = [k for k in arguments if k not in names and k not in sizes]
    if unknown:
        accepted = ", ".join([s.name for s in algorithm.signature] + list(sizes))
        raise ConfigError(f"{algorithm.label} got an unexpected argument {unknown[0]!r}; it takes {accepted}")
    given = {sizes[k]: v for k, v in arguments.items() if k in sizes}
    values = {k: v for k, v in arguments.items() if k in names}
    for spec in algorithm.signature:
        if values.get(spec.name) is None and spec.name in algorithm.defaults:
            values.pop(spec.name, None)  # Z=None means "the default", Z = X
        if spec.name not in values:
            if spec.name in algorithm.defaults:
                values[spec.name] = values.get(algorithm.defaults[spec.name])
            elif spec.kind == "mask":
                values[spec.name] = None  # bidirectional, Mask ≡ 1
            else:
                raise ConfigError(f"{algorithm.label} is missing argument {spec.name!r} "
                                  f"({shape_str(spec.shape)})")
    return given, values


def shape_str(shape):
    return "×".join(map(str, shape)) if shape else "scalar"
