"""Derivation: abstract interpretation of an algorithm's lines over symbolic shapes.

Each line's result shape comes from its ops' shape rules, and its work from their cost rules.  A loop
multiplies the work of its body by its symbolic trip count; it is never unrolled.  A loop over a growing
value (:class:`~formal.engine.algorithm.Loop` with ``index`` and ``carry``) has its stated shapes checked by
induction and its work summed over the iterations in closed form.

An op may state size constraints on its arguments (the next-token loss needs 2 tokens); a call brings its
callee's, renamed to the caller's symbols by the call's substitution.  Inside a growing loop they are taken
at its last iteration, where the values are largest.  With the algorithm's own, deduplicated and without
those that hold whatever the sizes, they are the derivation's ``constraints``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count

import sympy as sp

from ..core.shapes import Mismatch, same_dim
from ..core.symbols import text
from ..costs.cost import Work
from ..errors import ShapeError
from ..ops import Ref
from ..ops.sequences import capped
from .algorithm import Loop, Several, Step, targets

__all__ = ["LineRecord", "Derivation", "derive"]


@dataclass(frozen=True)
class LineRecord:
    """One numbered line: its nesting level, the line object, its result shape (None for a loop header and a
    line without one;
    a tuple of shapes for a line with several targets) and its work (for a loop header, the whole loop's)."""

    number: int
    level: int
    line: object
    shape: tuple | None
    work: Work


@dataclass(frozen=True)
class Derivation:
    records: tuple
    shapes: dict        # name → shape of every value after the last line
    work: Work          # the whole algorithm, canonical (expanded)
    output_shapes: tuple
    assumptions: tuple = ()  # conditions the cost formulas assume (a context that is never truncated)
    constraints: tuple = ()  # Constraints on the sizes: the algorithm's own and its callees', renamed

    @property
    def output_shape(self) -> tuple:
        return self.output_shapes[0]

    def record(self, number: int) -> LineRecord:
        return self.records[number - 1]


def _same_shape(a, b) -> bool:
    return len(a) == len(b) and all(map(same_dim, a, b))


def _symbols(shape) -> set:
    found = set()
    for d in (shape if not isinstance(shape, Several) else [x for s in shape for x in s]):
        found |= d.free_symbols
    return found


def _uncap(expr, assumptions: list, index, count):
    """``min(n, cap)`` → ``n``, noting ``n ≤ cap`` at the last iteration: the regime in which a summed cost
    is a polynomial."""
    found = expr.atoms(capped)
    for c in found:
        note = f"{text(c.args[0].xreplace({index: count}))} ≤ {text(c.args[1])}"
        if note not in assumptions:
            assumptions.append(note)
    return expr.xreplace({c: c.args[0] for c in found}) if found else expr


def _always_holds(constraint) -> bool:
    """Whether a constraint holds whatever the sizes; ``min(n, cap) ≤ b`` does when ``cap ≤ b`` does (a
    truncated context fits the table it was truncated to)."""
    a, b = constraint.args
    if constraint.relation == "<=" and isinstance(a, capped):
        return constraint.renamed({a: a.args[1]}).always_holds
    return constraint.always_holds


def _settle(constraints) -> tuple:
    """Constraints deduplicated (equal relation and sides), in order, less those that always hold."""
    return tuple(dict.fromkeys(c for c in constraints if not _always_holds(c)))


def derive(algorithm, *, op_work=None) -> Derivation:
    """Run ``algorithm``'s lines over symbolic shapes: every line's shape and work, and the whole.

    ``op_work(op, shapes, out)``, if given, replaces each op's own :meth:`~formal.ops.Op.work` (the work of a
    node, its arguments' added): a derivation that counts only some ops (the matrix products), summed over loops
    and calls exactly as the costs are."""
    return _Deriver(algorithm, op_work).run()


class _Deriver:
    """The state of one derivation: the shapes of the values defined so far (``env``), the numbered line
    records, and the assumptions the cost formulas make."""

    def __init__(self, algorithm, op_work=None):
        self.algorithm = algorithm
        self.op_work = op_work or (lambda op, shapes, out: op.work(shapes, out))
        self.env = {s.name: s.shape for s in algorithm.signature}
        self.numbers = count(1)
        self.records: list = []
        self.assumptions: list = []
        self.constraints: list = list(algorithm.constraints)
        self.growing: list = []  # (index, count) of the growing loops around the current line

    def run(self) -> Derivation:
        work = self.walk(self.algorithm.lines, 0).canonical()
        outputs = []
        for spec in self.algorithm.outputs:
            got = self.env[spec.name]
            if not _same_shape(got, spec.shape):
                raise ShapeError(algorithm=self.algorithm.label, line=len(self.records),
                                 symbol=f"shape of {spec.name}", expected=spec.shape, got=got,
                                 detail="the lines do not produce the stated output")
            outputs.append(got)
        return Derivation(tuple(self.records), dict(self.env), work, tuple(outputs), tuple(self.assumptions),
                          _settle(self.constraints))

    def fail(self, number, m: Mismatch) -> ShapeError:
        return ShapeError(algorithm=self.algorithm.label, line=number, symbol=m.symbol, expected=m.expected,
                          got=m.got, detail=m.detail)

    def walk(self, lines, level) -> Work:
        total = Work()
        for line in lines:
            number = next(self.numbers)
            if isinstance(line, Step):
                shape = self.env[line.value] if line.value else line.shape
                self.records.append(LineRecord(number, level, line, shape, Work().canonical()))
                continue
            if isinstance(line, Loop):
                slot = len(self.records)
                self.records.append(None)  # the header is numbered before its body
                work = self.loop(line, number, level)
                self.records[slot] = LineRecord(number, level, line, None, work.canonical())
                if line.closes:
                    self.records.append(LineRecord(next(self.numbers), level, line.end_line, None,
                                                   Work().canonical()))
            else:
                shape, work = self.evaluate(line.expr, number)
                work = Work(work.flops, work.memory, work.depth if work.depth != 0 else sp.Integer(1))
                self.assign(line, number, shape)
                self.records.append(LineRecord(number, level, line, shape, work.canonical()))
            total = total + work
        return total

    def evaluate(self, node, number):
        """The shape and work of an expression."""
        if isinstance(node, Ref):
            return self.env[node.name], Work()
        shapes, work = [], Work()
        for arg in node.args:
            shape, w = self.evaluate(arg, number)
            shapes.append(shape)
            work = work + w
        try:
            out = node.op.shape(shapes)
            self.stated(node.op.constraints(shapes))
            return out, work + self.op_work(node.op, shapes, out)
        except Mismatch as m:
            raise self.fail(number, m) from None

    def stated(self, constraints):
        """An op's constraints (a call's: its callee's, renamed already), in the algorithm's symbols;
        inside growing loops, at their last iterations."""
        for c in constraints:
            for index, last in reversed(self.growing):
                c = c.renamed({index: last})
            self.constraints.append(c)

    def assign(self, line, number, shape):
        names = targets(line)
        shapes = tuple(shape) if isinstance(shape, Several) else (shape,)
        if len(names) != len(shapes):
            raise self.fail(number, Mismatch("results", len(names), len(shapes),
                                             "targets against the call's outputs"))
        self.env.update(zip(names, shapes))

    def check_carry(self, line, number, at, stage):
        """The shapes a loop states for its carried values hold at iteration ``at``."""
        for name, stated in line.carry:
            want = tuple(d.xreplace({line.index: at}) for d in stated)
            if not _same_shape(self.env[name], want):
                raise self.fail(number, Mismatch(f"shape of {name}", want, self.env[name],
                                                 f"the loop's stated shape does not hold {stage}"))

    def loop(self, line, number, level) -> Work:
        env = self.env
        if line.carry:
            self.check_carry(line, number, sp.Integer(1), "on entry")
            env.update(line.carry)
        before = dict(env)
        if line.index is not None:
            self.growing.append((line.index, line.count))
        body = self.walk(line.body, level + 1)
        if line.index is not None:
            self.growing.pop()
        if line.carry:
            self.check_carry(line, number, line.index + 1, "after an iteration (induction step)")
        stacked = {as_name: (line.count,) + env[name] for name, as_name in line.collected}
        kept = {name: shape for name, shape in env.items()  # a value a sequential loop leaves: its last
                if name not in before and line.index not in _symbols(shape)}
        env.clear()
        env.update(before)
        env.update(kept)
        env.update(stacked)
        if line.carry:
            last = (line.trips if line.trips is not None else line.count) + 1
            env.update({name: tuple(d.xreplace({line.index: last}) for d in shape) for name, shape in line.carry})
        return self.loop_work(line, body)

    def loop_work(self, line, body: Work) -> Work:
        """A loop's work: the body's times the count, or, over a growing index, summed in closed form."""
        if line.columnwise:  # the body's ops already act on every t
            return body
        if line.index is None:
            return body.times(line.count, sequential=line.sequential)
        args = (self.assumptions, line.index, line.count)
        uncapped = Work({c: _uncap(f, *args) for c, f in body.flops.items()},
                        _uncap(body.memory, *args), _uncap(body.depth, *args))
        total = uncapped.summed(line.index, line.count)
        return total if line.sequential else Work(total.flops, total.memory, body.depth)
