"""Every trip of a loop at once.

``for h ∈ [H]: Y^h ← Attention(X, Z | W^h_qkv, Mask)`` *means* one run of the body per trip, and the
executor runs it so (:class:`~formal.engine.execution._Executor`, the definition).  Swin's window attention runs
Algorithm 5 in every window and Algorithm 4 in every head of it: hundreds of runs of a dozen small numpy
products, each under far more of bookkeeping.  Where the trips are independent — no value carried from one
trip to the next, the loop variable used only to pick entry ``h`` of a stacked value — and every op met says
how it computes a batch (:meth:`formal.ops.Op.leading`: the trips ride on leading axes, one per loop, through
products, biases, softmaxes and masks), the body runs once over all trips instead: a call inside it runs its
callee once, batched the same way, nested loops adding axes (windows × heads).  Every line's shape is checked
on one trip, the memory guard on all of them, and the parameters are read as the definition reads them.

The two paths agree to rounding (a batched product may add in another order); ``tests/formal/test_batches.py``
checks that they do, for every algorithm with such a loop.  Where anything is not as expected — an error, a
NaN or ∞, an op or a callee that cannot take the batch, a batch over the memory limit — the trips run one by
one, so every error and every value outside the finite case is the definition's.  Within
:func:`formal.engine.columns.one_by_one` every loop runs as defined.
"""

from __future__ import annotations

import functools
from itertools import count

import numpy as np

from ..core.numeric import approximate
from ..core.shapes import Mismatch
from ..errors import ShapeError
from ..guards import limits
from ..guards.arrays import index_array, real_array
from ..ops import Apply, NotBatched, Pick, Ref
from .algorithm import Loop, Step, numbered, targets
from .calls import CallOp, ColumnCallOp
from .columns import as_defined
from .execution import _Executor
from .lines import assignments, declares, finite, refs_of
from .precision import rounded
from .program import Leading, Program, align as _align, stacked as _stacked, take as _take

__all__ = ["batchable", "leadable", "all_trips"]

_LOOPS: dict = {}   # id(loop) → (loop, whether its trips are independent)


def _applies(node):
    if isinstance(node, Apply):
        yield node
        for arg in node.args:
            yield from _applies(arg)


def batchable(loop) -> bool:
    """Whether ``loop``'s trips are independent and of one shape: a fixed count (no ``until``, no sizes that
    change per trip), a body of assignments that reads no value an earlier trip wrote, and the loop variable
    used only to pick an entry of a value made outside the loop (``W_q^h``, ``X_w^w``)."""
    known = _LOOPS.get(id(loop))
    if known is None:
        known = _LOOPS[id(loop)] = (loop, _independent(loop))
    return known[1]


def _independent(loop) -> bool:
    if loop.until is not None or loop.index is not None or loop.trips is not None or loop.columnwise:
        return False
    body = [line for line in loop.body if not isinstance(line, Step)]
    if not body or any(isinstance(line, Loop) for line in body):
        return False
    written = {name for line in body for name in targets(line)}
    assigned: set = set()
    for line in body:
        if any(name in written and name not in assigned for name in refs_of(line.expr)):
            return False   # carried from one trip to the next
        for node in _applies(line.expr):
            uses = any(getattr(attribute, "var", None) == loop.var for attribute in vars(node.op).values())
            if uses and not (isinstance(node.op, Pick) and not written & set(refs_of(node.args[0]))):
                return False   # the loop variable read otherwise than to pick an entry of an outer value
        assigned.update(targets(line))
    return True


def _takes_batch(node) -> bool:
    """Whether every op of ``node`` that may meet a batched value (one whose arguments read a value at all)
    says how it computes a batch, or is a call of a callee that can run on one."""
    if not isinstance(node, Apply) or not any(True for _ in refs_of(node)):
        return True   # a name, or a value made from sizes alone (Swin's shift mask): the same on every trip
    op = node.op
    if isinstance(op, CallOp):
        return not isinstance(op, ColumnCallOp) and leadable(op.callee)
    return (isinstance(op, Pick) or declares(op, "leading")) and all(_takes_batch(a) for a in node.args)


def _lines_lead(lines) -> bool:
    for line in lines:
        if isinstance(line, Step):
            continue
        if isinstance(line, Loop):
            if not (batchable(line) and _lines_lead(line.body)):
                return False
        elif not _takes_batch(line.expr):
            return False
    return True


@functools.lru_cache(maxsize=None)
def leadable(algorithm) -> bool:
    """Whether ``algorithm`` can run on a batch: it draws no random numbers (a draw per trip is not a draw per
    batch), every op that may meet a batched value declares :meth:`~formal.ops.Op.leading`, and its loops
    and its callees' are batchable.  (An op meets a batch only where an argument varies over it; one that
    cannot take it after all raises :class:`~formal.ops.NotBatched`, and the trips run one by one.)"""
    return not algorithm.random and _lines_lead(algorithm.lines)


def _one(value, depth: int):
    """One trip of ``value`` (the first): what a line's shape is checked on."""
    return value[(0,) * depth] if depth else value


def _nbytes(record, binding) -> int | None:
    try:
        return 8 * int(approximate(record.work.memory, binding.values))
    except KeyError:
        return None


class _Batch:
    """Lines evaluated over a batch: each value is ``(array, depth, slot)``, its first ``depth`` axes the trips
    of the loops batched so far (outermost first; of length 1 where the value does not vary over that loop),
    ``slot`` where the :class:`Program` recording the run holds it."""

    own = None   # the context the program's instructions run in (None: the replayed run's own)

    def _setup(self, depth: int, size: int, program: Program):
        self.depth, self.size = depth, size   # size: the trips of all batch axes together (the memory guard)
        self.program = program
        self.trips: dict = {}                  # loop variable → (its axis, its count)
        self.local: dict = {}                  # name → (array, depth, slot)

    def _outer(self, name, line):
        """``(value, depth, slot)`` of a value made outside the batch."""
        raise NotImplementedError

    def _lookup(self, name, line):
        found = self.local.get(name)
        if found is None:
            found = self.local[name] = self._outer(name, line)
        return found

    def _apply(self, node, line):
        if isinstance(node, Ref):
            return self._lookup(node.name, line)
        op, emit = node.op, self.program.emit
        if isinstance(op, Pick) and getattr(op.index, "var", None) in self.trips:
            value, depth, slot = self._apply(node.args[0], line)
            axis, trips = self.trips[op.index.var]
            index = self._entries(op, axis, trips, np.shape(_align(value, depth, axis))[axis])
            return _take(value, depth, axis, index), axis + 1, emit("pick", slot, depth, axis, index)
        triples = [self._apply(a, line) for a in node.args]
        values, depths, slots = [t[0] for t in triples], [t[1] for t in triples], [t[2] for t in triples]
        depth = max(depths, default=0)
        if depth == 0:
            return rounded(op.numpy(self.ctx, *values)), 0, emit("numpy", op, self.own, slots)
        if isinstance(op, CallOp):
            if isinstance(op, ColumnCallOp) or not leadable(op.callee):
                raise NotBatched(op.callee.name)   # a column call on a batch: the trips run one by one
            callee = _Callee(op.callee, dict(zip(op.names, triples)), op._sizes(self.ctx), depth, self.size,
                             self.program)
            return callee.output()
        if not declares(op, "leading"):   # a subclass that changed the numpy semantics: not this method's
            raise NotBatched(op.name)
        aligns = [(d, depth) if 0 < d < depth else None for d in depths]
        flags = [d > 0 for d in depths]
        self.ctx.lead = depth
        value = rounded(op.leading(self.ctx, [v if a is None else _align(v, *a) for v, a in zip(values, aligns)],
                                   flags))
        own = None if self.own is None else Leading(self.own, depth)
        return value, depth, emit("lead", op, own, slots, aligns, flags, depth)

    def _entries(self, op, axis, trips, available):
        """The entry each trip picks (a slice where trip i picks entry i)."""
        entries = []
        for i in range(trips):
            self.ctx.loop[op.index.var] = i
            entries.append(op.index.value(self.ctx))
        if min(entries) < 0 or max(entries) >= available:
            raise NotBatched("an entry out of range")   # the definition says which
        return slice(0, trips) if entries == list(range(trips)) else entries

    def _walk(self, lines, numbers, records):
        for number, line in assignments(lines, numbers, self.ctx, lambda loop, n: self._loop(loop, n, records)):
            record = records[number - 1]
            for name in refs_of(line.expr):   # what the line reads, as the definition reads it (a parameter
                self._lookup(name, number)    # tells its sizes): then the memory guard knows every size
            nbytes = _nbytes(record, self.ctx.binding)
            if nbytes is None or self.size * nbytes > limits.max_memory():
                raise NotBatched("memory")   # one trip at a time may fit: the definition decides
            value, depth, slot = self._apply(line.expr, number)
            names = targets(line)
            if len(names) == 1:
                parts, shapes = [(value, slot)], [record.shape]
            else:
                parts = [(v, self.program.emit("item", slot, i)) for i, v in enumerate(value)]
                shapes = record.shape
            for name, (v, s), shape in zip(names, parts, shapes):
                self._check(number, name, shape, _one(v, depth))
                self.local[name] = (v, depth, s)

    def _check(self, number, name, shape, value):
        binding = self.ctx.binding
        bound = len(binding.values)
        try:
            binding.bind(shape, np.shape(value), f"{name} (line {number})", allow_empty=True)
        except Mismatch as m:
            raise ShapeError(algorithm=self.algorithm.label, line=number, symbol=f"shape of {name}",
                             expected=m.expected, got=np.shape(value),
                             detail="the executed shape differs from the derived one") from None
        if len(binding.values) != bound:
            raise NotBatched("a size the data decides")

    def _loop(self, loop, numbers, records):
        """A loop inside the batch: batched too, on one more axis (its trips must be independent)."""
        if not batchable(loop):
            raise NotBatched(f"the loop over {loop.var}")
        start = next(numbers)
        for _ in range(numbered(loop.body) - 1 + loop.closes):
            next(numbers)
        self._trips(loop, start, records)

    def _trips(self, loop, start, records):
        trips = self.ctx.evaluate(loop.count)
        if trips < 1:
            raise NotBatched("no trip")   # what an empty stack holds is the definition's
        axis, size = self.depth, self.size
        self.trips[loop.var], self.depth, self.size = (axis, trips), axis + 1, size * trips
        try:
            self._walk(loop.body, count(start), records)
        finally:
            del self.trips[loop.var]
            self.depth, self.size = axis, size
            self.ctx.loop.pop(loop.var, None)
        collected, emit = dict(loop.collected), self.program.emit
        for name in {n for line in loop.body if not isinstance(line, Step) for n in targets(line)}:
            value, depth, slot = self.local[name]
            if depth < axis + 1:
                value, slot = _align(value, depth, axis + 1), emit("align", slot, depth, axis + 1)
            if name in collected:   # stacked on a new leading axis of the value: the batch axis becomes it
                self.local[collected[name]] = (_stacked(value, axis, trips), axis, emit("stack", slot, axis, trips))
            if collected.get(name) != name:   # after the loop the name holds its last trip's value
                self.local[name] = (np.take(value, -1, axis=axis), axis, emit("last", slot, axis))


class _Trips(_Batch):
    """One loop of an execution, every trip at once: ``read(name, line)`` gives a value made outside it."""

    def __init__(self, algorithm, ctx, read):
        self.algorithm, self.ctx, self._read = algorithm, ctx, read
        self._setup(0, 1, Program())

    def _outer(self, name, line):
        return self._read(name, line), 0, self.program.emit("read", name)


class _Callee(_Batch, _Executor):
    """A call met inside a batch: the callee run once, its arguments ``(value, depth, slot)`` by name."""

    def __init__(self, algorithm, arguments: dict, sizes: dict, depth: int, size: int, program: Program):
        self.lead = {name: d for name, (_, d, _) in arguments.items() if d}
        self.given = {name: slot for name, (_, _, slot) in arguments.items()}
        for name, source in algorithm.defaults.items():   # Z omitted (or None) is X, with X's batch axes
            if arguments.get(name, (None,))[0] is None and source in self.given:
                self.given[name] = self.given[source]
                if source in self.lead:
                    self.lead[name] = self.lead[source]
        self._setup(depth, size, program)
        _Executor.__init__(self, algorithm, {**{n: v for n, (v, _, _) in arguments.items()}, **sizes}, track=False)
        self.own = self.ctx

    def _bind(self, spec, array, line):
        super()._bind(spec, _one(array, self.lead.get(spec.name, 0)), line)

    def _bind_inputs(self, raw):
        shown = {name: _one(v, self.lead[name]) if name in self.lead else v for name, v in raw.items()}
        super()._bind_inputs(shown)
        for spec in self.algorithm.inputs:
            if spec.name not in self.lead:
                continue
            value = raw[spec.name]
            if spec.kind == "mask":
                value = np.asarray(value)
                if value.dtype != bool:
                    if np.any((value != 0) & (value != 1)):
                        raise NotBatched("a mask entry other than 0 and 1")
                    value = value != 0
            else:
                value = (index_array if spec.kind == "index" else real_array)(spec.name, value)
            self.values[spec.name] = value

    def _outer(self, name, line):
        value = self._read(name, line)   # an input, or a parameter checked on first use
        slot = self.given.get(name)
        if slot is None:   # made by the callee from shapes alone (a default mask)
            slot = self.program.emit("const", value)
        return value, self.lead.get(name, 0), slot

    def output(self):
        """``(value, depth, slot)`` of the callee's output (a tuple of several)."""
        records = self.algorithm.derivation.records
        self._walk(self.algorithm.lines, count(1), records)
        for name in list(self.unchecked):
            self._read(name, "signature")
        self.ctx.require = None   # every size is bound: the program keeps the context, not this executor
        outs = []
        for o in self.algorithm.outputs:
            value, depth, slot = self._lookup(o.name, "signature")
            if not finite(value):   # an overflow the callee's own run reports at once, or a NaN by design
                raise NotBatched("a callee's output is not finite")
            if depth < self.depth:
                value, slot = _align(value, depth, self.depth), self.program.emit("align", slot, depth, self.depth)
            outs.append((value, slot))
        if len(outs) == 1:
            return outs[0][0], self.depth, outs[0][1]
        return tuple(v for v, _ in outs), self.depth, self.program.emit("tuple", [s for _, s in outs])


def all_trips(algorithm, loop, start: int, ctx, read, *, track=False):
    """``(values, program)``: the values ``loop`` leaves (its stacked results, and each body result's last
    trip), every trip run at once, and the :class:`Program` that replays it; or None where the trips must run
    one by one.  ``start``: the number of the body's first line; ``read(name, line)``: a value made outside
    the loop (the executor's reader, which checks a parameter on first use).  ``track``: the run follows
    where a NaN or ∞ began, line by line (``empty="nan"``; the rerun of a run whose output was not finite),
    so its trips run one by one, each line's values checked."""
    if track or as_defined() or algorithm.random or not batchable(loop) or not _lines_lead(loop.body):
        return None
    trips = _Trips(algorithm, ctx, read)
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            trips._trips(loop, start, algorithm.derivation.records)
    except Exception:   # noqa: BLE001 — any error is the definition's to raise (or not), where it raises it
        return None
    body = {n for line in loop.body if not isinstance(line, Step) for n in targets(line)}
    body |= set(dict(loop.collected).values())
    trips.program.outputs = {name: trips.local[name][2] for name in body}
    values = {name: np.asanyarray(trips.local[name][0]) for name in body}
    return values, trips.program
