"""What the executor reads off an algorithm's lines, computed once per algorithm object: every assignment
(loop bodies included), the ops and names of an expression, whether NaN is returned by design, and
:class:`Layout` (argument names, sizes, constraints, what each line writes and whether it calls another
algorithm) — a window loop runs the same callee thousands of times, each execution looking these up."""

from __future__ import annotations

import functools

import numpy as np

from ..ops import Apply, Ref
from .algorithm import Loop, Step, targets
from .calls import CallOp

__all__ = ["flat_lines", "ops_of", "refs_of", "returns_nonfinite", "finite", "Layout", "layout"]


def ops_of(node):
    """Every op of an expression tree."""
    if isinstance(node, Apply):
        yield node.op
        for arg in node.args:
            yield from ops_of(arg)


def refs_of(node):
    """The names an expression reads."""
    if isinstance(node, Ref):
        yield node.name
    elif isinstance(node, Apply):
        for arg in node.args:
            yield from refs_of(arg)


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
        for line in flat_lines(algorithm.lines):
            self.line_targets[id(line)] = targets(line)
            self.line_calls[id(line)] = any(isinstance(op, CallOp) for op in ops_of(line.expr))


@functools.lru_cache(maxsize=None)
def layout(algorithm) -> Layout:
    """The :class:`Layout` of ``algorithm``, made once."""
    return Layout(algorithm)


