"""Execution: running an algorithm's lines over numpy float64 arrays.

Arguments are keyword arguments named as the spec names them.  Each size symbol is bound to the integer
met first (``{d_e: 8, ell: 5}``) and every later use is checked against that binding: a parameter is
checked on the line that first reads it, so a mismatch names that line.  Every line's result must have
the derived shape evaluated at the binding — an oracle that holds for free.

Before a line runs, the memory its derivation says it allocates is checked against
:func:`formal.guards.limits.max_memory` (a :class:`~formal.errors.ResourceError` instead of a ``MemoryError``
half-way).  After the last line, a NaN or ∞ in the output that began on a line whose values were all finite
— float64 overflowed — is a :class:`~formal.errors.DomainError` naming that line, unless an op makes it by
design (the mask's −∞, ``empty="nan"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count

import numpy as np

from ..core.numeric import approximate, free
from ..core.shapes import Binding, Mismatch
from ..errors import ConfigError, DomainError, ShapeError
from ..guards import limits
from ..ops import Ref
from . import tape
from .algorithm import numbered, targets
from .binding import ArgumentBinding
from .lines import (
    assignments,
    finite,
    flat_lines,
    layout,
    ops_of,
    random_generator,
    refs_of,
    returns_nonfinite,
    split_arguments,
    stacked_trips,
)
from .precision import rounded
from .steps import Checkpoint, LineRan, LoopBegan, LoopEnded, TripDone, TripsRanAtOnce

__all__ = ["Run", "execute", "returns_nonfinite", "flat_lines", "finite", "ops_of"]


@dataclass
class Run:
    """What an execution produced."""

    output: np.ndarray                  # a tuple of arrays for an algorithm with several outputs
    binding: dict                       # symbol → int
    values: dict = field(repr=False)    # name → array, every input, parameter and result
    consumed: tuple = ()                # the parameters the lines read, in order of first use


class _Context:
    """What an op's numpy semantics may ask: sizes, loop indices, and where it runs (for messages)."""

    def __init__(self, algorithm, binding: Binding, rng=None):
        self.algorithm, self.binding = algorithm, binding
        self.loop: dict = {}
        self.line = "signature"
        self._rng = rng
        #: What an op drew for a later line of the same execution to read (the tokens a masking line chose).
        self.drawn: dict = {}

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            raise ConfigError(f"{self.where()} draws random numbers, but {self.algorithm.label} is not random")
        return self._rng

    require = None  # the executor's: binds a size by checking the parameters that carry it
    lead = 0        # the batch axes of the values an op's Op.leading gets (formal.engine.batches)

    def evaluate(self, expr) -> int:
        if self.require is not None and not self.binding.is_bound(expr):
            self.require(expr, self.line)
        unbound = () if self.binding.is_bound(expr) else free(expr) - self.binding.values.keys()
        missing = sorted(map(str, unbound))
        if missing:
            raise ConfigError(f"{self.where()} needs the size {missing[0]}, which no argument determines: "
                              f"pass {missing[0]}=<int>")
        return self.binding.evaluate(expr)

    def where(self) -> str:
        return f"{self.algorithm.label}, line {self.line}"


def _sizes(values) -> str:
    return ", ".join(f"{k} = {v:,}" for k, v in sorted(values.items(), key=lambda kv: str(kv[0])))


class _Executor(ArgumentBinding):
    """One execution.  ``track``: follow which line first made a NaN or ∞ (a check of every line's values);
    an untracked run that ends non-finite is run again tracked, from the same random state (:func:`execute`)."""

    def __init__(self, algorithm, arguments, observe=None, *, track=True, rng=None, record=False):
        self.algorithm, self.observe, arguments = algorithm, observe, dict(arguments)
        self.layout, self.track = layout(algorithm), track
        self.steps = [] if record else None   # the lines in the order they ran, for a Tape
        self.indices: dict = {}                # the loop index sizes bound now
        self.from_data = False                 # whether a line bound a size (a length the data decides)
        rng = random_generator(algorithm, arguments) if rng is None else rng
        given, raw = split_arguments(algorithm, arguments)
        self.binding = Binding(given)
        self.ctx = _Context(algorithm, self.binding, rng)
        self.ctx.require = self._require
        self.values: dict = {}
        self.unchecked: dict = {}
        self.consumed: list = []
        self.first_nonfinite = None   # (line, name): the first value that became NaN or ∞ not by design
        self.pending = list(self.layout.constraints)   # the size constraints not yet checked
        self._bind_inputs(raw)
        self.unchecked = {name: raw[name] for name in self.layout.params}
        self._check_constraints()

    def evaluate(self, node, line):
        if isinstance(node, Ref):
            return self._read(node.name, line)
        args = [self.evaluate(a, line) for a in node.args]
        value = rounded(node.op.numpy(self.ctx, *args))
        if self.observe is not None:   # every op application inspected (what its numpy semantics perform)
            self.observe(node.op, self.ctx, args, value)
        return value

    def walk(self, lines, numbers, records):
        for number, line in assignments(lines, numbers, self.ctx, lambda loop, n: self._loop(loop, n, records)):
            if not self.layout.line_calls[id(line)]:   # a call's lines are estimated when the callee runs
                self._estimate(line, records[number - 1])
            if self.steps is not None:
                self.steps.append(LineRan(number, line, dict(self.ctx.loop), dict(self.indices)))
            value = self.evaluate(line.expr, number)
            self.ctx.line = number
            names = self.layout.line_targets[id(line)]
            # where a NaN or ∞ began is judged on the values the line read, before it writes (X ← X + Y)
            if self.track and self.first_nonfinite is None and not finite(value) and self._created_nonfinite(line):
                self.first_nonfinite = (number, ", ".join(names))
            values = value if len(names) > 1 else (value,)
            shapes = records[number - 1].shape
            for name, v, shape in zip(names, values, shapes if len(names) > 1 else (shapes,)):
                self._check_result(number, name, shape, v)
                self.values[name] = v

    def _bytes(self, record):
        """The bytes a line's new arrays take (its derived memory, 8 bytes a scalar), or None where a size is
        known only after the line runs (a data-dependent length)."""
        try:
            return 8 * int(approximate(record.work.memory, self.binding.values))
        except KeyError:
            return None

    def _estimate(self, line, record):
        """Refuse a line whose new arrays exceed the memory limit (:mod:`formal.guards.limits`) before it runs."""
        nbytes = self._bytes(record)
        if nbytes is not None and nbytes > limits.max_memory():
            limits.require(nbytes, f"{self.algorithm.label}, line {record.number} "
                                   f"({', '.join(targets(line))} at {_sizes(self.binding.values)})")

    def _loop(self, line, numbers, records):
        self._require(line.count, self.ctx.line)
        trips = 1 if line.columnwise else self.binding.evaluate(line.count)  # columnwise: once, for every t
        start = next(numbers)  # the body's numbers are reused on every trip
        for _ in range(numbered(line.body) - 1 + line.closes):  # and its end for
            next(numbers)
        if self.observe is None and self._all_trips(line, start):
            return
        collected = {pair: [] for pair in line.collected}
        done = 0
        self.from_data |= line.until is not None
        self._step(LoopBegan(line))
        for i in range(trips):
            self.ctx.loop[line.var] = i
            if line.index is not None:
                self.binding.values[line.index] = self.indices[line.index] = i + 1  # the body's shapes are at it
            self.walk(line.body, count(start), records)
            for name, as_name in collected:
                collected[name, as_name].append(self.values[name])
            self._step(TripDone(line))
            done = i + 1
            if line.until is not None and line.until(self.values, self.ctx):
                break
        self._step(LoopEnded(line))
        self.ctx.loop.pop(line.var, None)
        if line.index is not None:
            self.binding.values.pop(line.index, None)
            self.indices.pop(line.index, None)
        if line.trips is not None:
            self.binding.set(line.trips, done, f"the loop of line {self.ctx.line}") if done else None
        self.values.update(stacked_trips(collected, self.values))

    def _all_trips(self, line, start) -> bool:
        """Every trip of ``line`` at once, where :mod:`.batches` can: the same values to rounding, after the same
        checks.  Where it cannot, what its attempt changed (parameters read, sizes bound) is put back."""
        from .batches import all_trips
        saved = Checkpoint.of(self)
        made = all_trips(self.algorithm, line, start, self.ctx, self._read, track=self.track)
        if made is None:
            saved.restore(self)
            return False
        self.values.update(made[0])
        self._step(TripsRanAtOnce(made[1], dict(self.ctx.loop), dict(self.indices), line))
        return True

    def _step(self, step):
        if self.steps is not None:
            self.steps.append(step)

    def _check_result(self, number, name, shape, value):
        bound = len(self.binding.values)
        try:  # a size known only now (a data-dependent length) is bound here; the others are checked
            self.binding.bind(shape, np.shape(value), f"{name} (line {number})", allow_empty=True)
            self.from_data |= len(self.binding.values) != bound
        except Mismatch as m:
            raise ShapeError(algorithm=self.algorithm.label, line=number, symbol=f"shape of {name}",
                             expected=m.expected, got=np.shape(value),
                             detail="the executed shape differs from the derived one") from None

    def _created_nonfinite(self, line) -> bool:
        """Whether a line whose value is not finite made it from finite values, and not by design (the mask's
        −∞, a NaN a callee returns under ``empty="nan"``): then float64 overflowed there."""
        if any(op.nonfinite for op in ops_of(line.expr)):
            return False
        return all(finite(self.values[name]) for name in refs_of(line.expr) if name in self.values)

    def _check_finite(self, output):
        """Never a wrong number silently: a NaN or ∞ in the output that began on a line whose values were all
        finite, not by design, is a float64 overflow (or an ∞ − ∞ after one); name the line it began on.
        A NaN passed in (an input or parameter holding one) passes through as numpy would."""
        if self.first_nonfinite is None or finite(output):
            return
        line, name = self.first_nonfinite
        largest = max((float(np.max(np.abs(v))) for k, v in self.values.items()
                       if k in self._input_names and np.asarray(v).dtype.kind == "f" and np.size(v)), default=0.0)
        raise DomainError(f"{self.algorithm.label}, line {line}: {name} is not finite (float64 overflowed: the "
                          f"inputs and parameters reach {largest:.3g} in magnitude), so the result would be wrong")

    @property
    def _input_names(self):
        return {s.name for s in self.algorithm.signature}

    def run(self):
        records = self.algorithm.derivation.records
        self.walk(self.algorithm.lines, count(1), records)
        for name in list(self.unchecked):  # a parameter no line read (a loop that ran no trip): checked all the same
            self._read(name, "signature")
        output = self.values[self.algorithm.output.name]
        if len(self.algorithm.outputs) > 1:
            output = tuple(self.values[o.name] for o in self.algorithm.outputs)
        self._check_finite(output)
        return Run(output=output, binding=dict(self.binding.values), values=self.values,
                   consumed=tuple(self.consumed))


def execute(algorithm, arguments: dict, *, observe=None) -> Run:
    """Run ``algorithm`` on keyword ``arguments`` (inputs, ``mask``, parameters, and optionally sizes).

    numpy's floating-point warnings are silenced: a NaN or ∞ that reaches the output from finite inputs, not
    by design, is a :class:`~formal.errors.DomainError` naming the line it began on instead.  ``observe(op, ctx,
    args, value)`` is called after each op of the lines (a callee's run as its own algorithm) runs, in its context.

    Which line began a NaN is followed from the start only where the output may hold one by design
    (``empty="nan"``); elsewhere a run that ends non-finite — an overflow about to be reported, or a NaN passed
    in — is run again, from the same random state, checking every line's values, and most runs, ending finite,
    skip that check.  A run on the shapes of an earlier checked one replays it (:mod:`.tape`) where its output
    is finite (or, by design, where no line overflowed); one that is not is checked in full.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if observe is not None:   # one run, every op seen
            return _Executor(algorithm, arguments, observe).run()
        by_design = returns_nonfinite(algorithm)   # NaN by design: every line's values checked from the start
        arguments = dict(arguments)
        rng = random_generator(algorithm, arguments)
        state = None if rng is None else rng.bit_generator.state
        signature, tapes = tape.key(arguments), layout(algorithm).tapes
        taped = tape.recall(tapes, signature)
        if taped is not None:
            given, raw = split_arguments(algorithm, arguments)
            replayed = tape.replay(algorithm, raw, taped, _Context(algorithm, Binding(given), rng), track=by_design)
            if replayed is not None:
                return Run(output=replayed[0], binding=dict(taped.binding), values=replayed[1],
                           consumed=taped.consumed)
            if rng is not None:
                rng.bit_generator.state = state
        executor = _Executor(algorithm, arguments, track=by_design, rng=rng, record=signature is not None)
        run = executor.run()   # tracked (by design), an overflow is reported here
        if finite(run.output) or by_design:
            if signature is not None and not executor.from_data:
                tape.remember(tapes, signature, tape.Tape(tuple(executor.steps), run.binding, run.consumed))
            return run
        if rng is not None:
            rng.bit_generator.state = state
        return _Executor(algorithm, arguments, rng=rng).run()
