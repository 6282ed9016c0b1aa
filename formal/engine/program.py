"""The program of a batched loop (:mod:`formal.engine.batches`) or of a column call run on every column at
once (:mod:`formal.engine.columns`): what its checked run did, op by op, callees inlined, replayed on arguments
of the same shapes (:mod:`formal.engine.tape`) without the checks, which gave the same answers.  A value in a
batch has ``depth`` leading axes, one per loop batched (of length 1 where it does not vary over that loop)."""

from __future__ import annotations

import numpy as np

from .precision import rounded

__all__ = ["Program", "Leading", "align", "take", "stacked"]


def align(value, depth: int, to: int):
    """``value`` with ``depth`` batch axes given ``to`` of them: axes of length 1 after its own."""
    if depth >= to:
        return value
    shape = np.shape(value)
    return np.reshape(value, shape[:depth] + (1,) * (to - depth) + shape[depth:])


def take(value, depth: int, axis: int, index):
    """Entries ``index`` (a slice, or a list) of ``value`` on ``axis``: that axis becomes a batch axis."""
    value = align(value, depth, axis)
    if isinstance(index, slice):
        return value[(slice(None),) * axis + (index,)]
    return np.take(value, index, axis=axis)


def stacked(value, axis: int, trips: int):
    """A body result collected over a batched loop: its batch axis ``axis`` is the stack's (repeated where
    the result was the same on every trip); a new array, as a stack of the trips is (never a view of an
    argument's memory)."""
    shape = np.shape(value)
    if shape[axis] == trips:
        return value if getattr(value, "base", None) is None else np.array(value)
    return np.array(np.broadcast_to(value, shape[:axis] + (trips,) + shape[axis + 1:]))


class Leading:
    """A context as an op's :meth:`~formal.ops.Op.leading` sees it in a program: another's, with its batch axes
    fixed, so that replays of one program in several threads never share a changing ``lead``."""

    __slots__ = ("_ctx", "lead")

    def __init__(self, ctx, lead: int):
        self._ctx, self.lead = ctx, lead

    def __getattr__(self, name):
        return getattr(self._ctx, name)


class Program:
    """What a checked batched run did, op by op, callees inlined: replayed on arguments of the same shapes
    (:mod:`formal.engine.tape`) without the checks, which gave the same answers.  Each instruction writes one
    slot; ``outputs`` names the slots of the values the loop leaves."""

    def __init__(self):
        self.code: list = []
        self.size = 0
        self.outputs: dict = {}

    def emit(self, kind, *operands) -> int:
        self.code.append((kind, self.size) + operands)
        self.size += 1
        return self.size - 1

    def run(self, ctx, read) -> dict | None:
        """The loop's values, computed with ``ctx`` (the replayed run's) and ``read(name, line)`` for the values
        made outside the loop; None where anything is not as recorded (the checked run then decides)."""
        slots: list = [None] * self.size
        try:
            for kind, out, *rest in self.code:
                if kind == "lead":   # own: a callee's context with its batch axes (Leading), or None: the run's
                    op, own, args, aligns, flags, depth = rest
                    if own is None:
                        ctx.lead, own = depth, ctx
                    slots[out] = rounded(op.leading(own, [slots[a] if al is None else align(slots[a], *al)
                                                          for a, al in zip(args, aligns)], flags))
                elif kind == "numpy":
                    op, own, args = rest
                    slots[out] = rounded(op.numpy(own or ctx, *[slots[a] for a in args]))
                elif kind == "columns":
                    op, own, args, flags = rest
                    slots[out] = rounded(op.columns(own or ctx, [slots[a] for a in args], flags))
                elif kind == "read":
                    slots[out] = read(rest[0], None)
                elif kind == "pick":
                    slots[out] = take(slots[rest[0]], *rest[1:])
                elif kind == "align":
                    slots[out] = align(slots[rest[0]], *rest[1:])
                elif kind == "item":
                    slots[out] = slots[rest[0]][rest[1]]
                elif kind == "tuple":
                    slots[out] = tuple(slots[a] for a in rest[0])
                elif kind == "stack":
                    slots[out] = stacked(slots[rest[0]], *rest[1:])
                elif kind == "last":
                    slots[out] = np.take(slots[rest[0]], -1, axis=rest[1])
                elif kind == "repeat":   # a column call's output the same for every column
                    slots[out] = np.repeat(np.asanyarray(slots[rest[0]])[..., None], rest[1], axis=-1)
                else:   # "const": what depends on the shapes alone (a default mask)
                    slots[out] = rest[0]
        except Exception:   # noqa: BLE001 — the checked run raises what the definition raises
            return None
        return {name: np.asanyarray(slots[slot]) for name, slot in self.outputs.items()}
