"""Every column of a column call in one execution.

``∀t: X̃[:, t] ← layer_norm(X[:, t] | γ, β)`` *means* one run of the callee per column
(:class:`~formal.engine.calls.ColumnCallOp` runs them so, and that stays the definition).  A stack of L layers
over ℓ tokens runs its layer norms 2Lℓ times, each a few microseconds of numpy under far more of bookkeeping;
so where every op of the callee says how it computes all columns at once (:meth:`formal.ops.Op.columns`: the
column axis rides last, through reductions over axis 0, products ``W x`` and lookups ``W[:, v]``), the callee
runs once over all columns instead, with the same shape checks per column, the same memory guard (for all
columns), and the same parameters read.

The two paths agree to rounding (a sum over axis 0 of a matrix adds in another order than a sum of one
column); ``tests/formal/test_columns.py`` checks that they do, for every algorithm that makes column calls.
Where anything is not as expected — an error, a NaN or ∞ in the result, an op that cannot take these
columns — the columns run one by one, so that every error and every value outside the finite case is the
definition's.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from ..errors import FormalError, ShapeError
from ..guards import limits
from ..ops import NotColumnar, Ref
from . import tape
from .algorithm import Loop, Step
from .execution import _Executor
from .lines import AS_DEFINED, declares, finite, flat_lines, layout, ops_of
from .precision import rounded
from .program import Program

__all__ = ["columnar", "all_columns", "one_by_one"]



@contextlib.contextmanager
def one_by_one():
    """Within the block, every column call runs its columns one by one, and every loop its trips one by one
    (:mod:`.batches`), as defined, and no run replays a tape (whose programs run what its checked run batched):
    tests and benchmarks compare the paths."""
    token = AS_DEFINED.set(True)
    try:
        yield
    finally:
        AS_DEFINED.reset(token)


def as_defined() -> bool:
    """Whether :func:`one_by_one` is in force: column calls, and loops (:mod:`.batches`), run as defined."""
    return AS_DEFINED.get()


@functools.lru_cache(maxsize=None)
def columnar(algorithm) -> bool:
    """Whether ``algorithm`` can run every column at once: straight-line lines (no loop, no call, no random
    draw), one output, and every op declaring :meth:`~formal.ops.Op.columns`."""
    if algorithm.random or len(algorithm.outputs) != 1:
        return False
    if any(isinstance(line, Loop) for line in algorithm.lines):
        return False
    return all(declares(op, "columns") for line in flat_lines(algorithm.lines) for op in ops_of(line.expr))


def all_columns(callee, arguments: dict, columns: set, n: int):
    """The callee's output for every column at once (its last axis), or None where the columns must run one by
    one: ``arguments`` as the callee takes them, those named in ``columns`` with a last axis of ``n`` columns."""
    if AS_DEFINED.get() or n < 1 or not columnar(callee):
        return None
    signature = tape.key(arguments)   # the shapes and kinds of the arguments (n among them), the memory limit
    programs = layout(callee).programs
    program = programs.get((signature, frozenset(columns))) if signature is not None else None
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if program is not None:   # a checked run on these shapes: its program, without the checks
            made = program.run(None, lambda name, _: arguments[name if name in arguments else callee.defaults[name]])
            output = None if made is None else made["output"]
        else:
            try:
                run = _Columns(callee, arguments, columns, n)
                output = run.run()
            except (FormalError, NotColumnar):   # the definition's error, raised where it is raised
                return None
            if signature is not None and finite(output):
                tape.remember(programs, (signature, frozenset(columns)), run.program)
    return output if output is not None and finite(output) else None


class _Columns(_Executor):
    """One execution of a columnar algorithm over ``n`` columns: values named in ``batched`` carry them last."""

    def __init__(self, algorithm, arguments, columns: set, n: int):
        self.n, self.batched = n, set(columns)
        self.program, self.slots = Program(), {}   # what it does, for a run on the same shapes (name → slot)
        super().__init__(algorithm, arguments, track=False)

    def _bind(self, spec, array, line):
        super()._bind(spec, self._column(spec.name, array), line)

    def _column(self, name, array):
        """What one column of ``array`` looks like (its shape is what is checked)."""
        if name not in self.batched:
            return array
        if np.ndim(array) == 0 or np.shape(array)[-1] != self.n:
            raise NotColumnar(name)
        return array[..., 0]

    def _bind_inputs(self, raw):
        for spec in self.algorithm.inputs:
            if spec.kind == "mask":
                raise NotColumnar(spec.name)
        shown = {name: self._column(name, value) if name in raw and name in self.batched else value
                 for name, value in raw.items()}
        super()._bind_inputs(shown)
        for name in self.batched:
            self.values[name] = np.asanyarray(raw[name])   # a subclass (a counting array) stays one

    def _slot(self, name):
        if name not in self.slots:   # an argument (a value a line made has its slot already)
            self.slots[name] = self.program.emit("read", name)
        return self.slots[name]

    def _apply(self, node, line):
        """``(value, batched, slot)`` of an expression."""
        if isinstance(node, Ref):
            return self._read(node.name, line), node.name in self.batched, self._slot(node.name)
        triples = [self._apply(a, line) for a in node.args]
        values, batched, slots = [t[0] for t in triples], [t[1] for t in triples], [t[2] for t in triples]
        if not any(batched):
            value = rounded(node.op.numpy(self.ctx, *values))
            return value, False, self.program.emit("numpy", node.op, self.ctx, slots)
        return (rounded(node.op.columns(self.ctx, values, batched)), True,
                self.program.emit("columns", node.op, self.ctx, slots, batched))

    def run(self):
        records = self.algorithm.derivation.records
        for number, line in enumerate(self.algorithm.lines, start=1):
            self.ctx.line = number
            if isinstance(line, Step):
                continue
            record = records[number - 1]
            self._estimate_all(record)
            value, batched, slot = self._apply(line.expr, number)
            (name,) = self.layout.line_targets[id(line)]
            if batched:
                if np.ndim(value) == 0 or np.shape(value)[-1] != self.n:
                    raise ShapeError(algorithm=self.algorithm.label, line=number, symbol=f"columns of {name}",
                                     expected=self.n, got=np.shape(value),
                                     detail="an op's columns lost the column axis")
                self.batched.add(name)
            self._check_result(number, name, record.shape, value[..., 0] if batched else value)
            self.values[name], self.slots[name] = value, slot
        for name in list(self.unchecked):
            self._read(name, "signature")
        name = self.algorithm.output.name
        output, slot = self.values[name], self.slots[name]
        if name not in self.batched:   # the same for every column
            output = np.repeat(np.asanyarray(output)[..., None], self.n, axis=-1)
            slot = self.program.emit("repeat", slot, self.n)
        self.program.outputs = {"output": slot}
        self.ctx.require = None   # every size is bound: the program keeps the context, not this executor
        return output

    def _estimate_all(self, record):
        """The memory guard, for the line's arrays over all columns."""
        nbytes = self._bytes(record)
        if nbytes is not None and self.n * nbytes > limits.max_memory():
            raise NotColumnar("memory")   # one column at a time may fit: the definition decides
