"""Derivation: abstract interpretation of an algorithm's lines over symbolic shapes.

Each line's result shape comes from its ops' shape rules, and its work from their cost rules.  A loop
multiplies the work of its body by its symbolic trip count; it is never unrolled.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count

import sympy as sp

from .cost import Work
from .errors import ShapeError
from .ops import Ref
from .shapes import Mismatch, same_dim

__all__ = ["LineRecord", "Derivation", "derive"]


@dataclass(frozen=True)
class LineRecord:
    """One numbered line: its nesting level, the line object, its result shape (None for a loop header)
    and its work (for a loop header, the whole loop's)."""

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
    output_shape: tuple

    def record(self, number: int) -> LineRecord:
        return self.records[number - 1]


def derive(algorithm) -> Derivation:
    env = {s.name: s.shape for s in algorithm.signature}
    numbers = count(1)
    records: list = []

    def evaluate(node, number):
        if isinstance(node, Ref):
            return env[node.name], Work()
        shapes, work = [], Work()
        for arg in node.args:
            shape, w = evaluate(arg, number)
            shapes.append(shape)
            work = work + w
        try:
            out = node.op.shape(shapes)
            return out, work + node.op.work(shapes, out)
        except Mismatch as m:
            raise ShapeError(algorithm=algorithm.label, line=number, symbol=m.symbol, expected=m.expected,
                             got=m.got, detail=m.detail) from None

    def walk(lines, level) -> Work:
        total = Work()
        for line in lines:
            number = next(numbers)
            if hasattr(line, "body"):
                slot = len(records)
                records.append(None)
                body_env_before = dict(env)
                body = walk(line.body, level + 1)
                stacked = {name: (line.count,) + env[name] for name in line.stack}
                env.clear()
                env.update(body_env_before)
                env.update(stacked)
                work = body.times(line.count, sequential=line.sequential)
                records[slot] = LineRecord(number, level, line, None, work.canonical())
            else:
                shape, work = evaluate(line.expr, number)
                work = Work(work.flops, work.memory, work.depth if work.depth != 0 else sp.Integer(1))
                env[line.target] = shape
                records.append(LineRecord(number, level, line, shape, work.canonical()))
            total = total + work
        return total

    work = walk(algorithm.lines, 0).canonical()
    output_shape = env[algorithm.output.name]
    declared = algorithm.output.shape
    if len(output_shape) != len(declared) or not all(map(same_dim, output_shape, declared)):
        raise ShapeError(algorithm=algorithm.label, line=len(records), symbol=f"shape of {algorithm.output.name}",
                         expected=declared, got=output_shape, detail="the lines do not produce the stated output")
    return Derivation(tuple(records), dict(env), work, output_shape)
