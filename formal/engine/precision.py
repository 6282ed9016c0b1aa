"""Emulated lower precision: the spec run with every op's result rounded to float32 or bfloat16.

Inside :func:`emulated`, each op an execution applies (:mod:`.execution`, and the batched paths of
:mod:`.columns`, :mod:`.batches` and :mod:`.program`) has its floating-point result rounded to the precision
named, to nearest, ties to even — what a correct low-precision kernel produces when it computes one op in
higher precision internally (a matrix product accumulated in float32, a softmax or a layer norm's statistics
upcast) and stores its result in the lower one.  The spec's algorithm, its order of ops and its float64 inside
each op are unchanged, so the deviation of an emulated run from the float64 one is the error a known-good
computation in that precision makes on those arguments: the baseline a lower-precision implementation is
judged against (:mod:`reference.tolerances`).

>>> import numpy as np
>>> round_to(np.array([1.0 + 2.0 ** -9, 1.0 + 3 * 2.0 ** -9, 1e39]), "bfloat16").tolist()
[1.0, 1.0078125, inf]
>>> import formal
>>> W_e = np.array([[0.1, 0.2], [0.3, 0.4]])
>>> with emulated("bfloat16"):
...     formal.token_embedding(v=1, W_e=round_to(W_e, "bfloat16")).tolist()
[0.2001953125, 0.400390625]
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from ..errors import ConfigError, shown

__all__ = ["PRECISIONS", "UNIT_ROUNDOFF", "round_to", "rounded", "emulated", "active"]

#: The precisions an execution can be emulated in, with their significand bits (the stored ones, after the
#: implicit leading 1).
PRECISIONS = {"float32": 23, "bfloat16": 7}

#: Unit roundoff u = 2^-(p+1) of every precision the reference runs in: the largest relative error of one
#: rounding to nearest.
UNIT_ROUNDOFF = {"float64": 2.0 ** -53, "float32": 2.0 ** -24, "bfloat16": 2.0 ** -8}

#: The largest finite bfloat16 (float32's exponent range, 8 significant bits).
_BFLOAT16_MAX = (2 - 2 ** -7) * 2.0 ** 127

_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("formal_emulated_precision", default=None)


def _check(precision) -> str:
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise ConfigError(f"cannot emulate precision {shown(precision)}; known: {', '.join(PRECISIONS)}")
    return precision


def _round_bits(values, precision: str, rng=None) -> np.ndarray:
    """float64 → ``precision`` (as float64) by dropping the significand bits it does not keep: to nearest,
    ties to even, or with ``rng`` stochastically (up with the probability of the distance to the lower
    neighbour, so that the rounding is right on average); past the precision's range ±∞, below its normal range
    through float32 (bfloat16 shares float32's exponent range)."""
    x = np.ascontiguousarray(values, dtype=np.float64)
    bits = x.view(np.uint64)
    drop = np.uint64(52 - PRECISIONS[precision])
    low = bits & np.uint64((1 << int(drop)) - 1)
    with np.errstate(over="ignore"):
        if rng is None:
            half = np.uint64((1 << int(drop - np.uint64(1))) - 1)
            kept = ((bits + half + ((bits >> drop) & np.uint64(1))) >> drop) << drop
        else:
            draw = rng.integers(0, 1 << int(drop), size=x.shape, dtype=np.uint64)
            kept = ((bits >> drop) + (draw < low).astype(np.uint64)) << drop
    out = kept.view(np.float64)
    out = np.where(np.isfinite(x), out, x)                      # NaN and ±∞ as they were
    largest = float(np.finfo(np.float32).max) if precision == "float32" else _BFLOAT16_MAX
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.where(np.abs(out) > largest, np.copysign(np.inf, x), out)
        tiny = np.abs(out) < np.finfo(np.float32).tiny
        return np.where(tiny, out.astype(np.float32).astype(np.float64), out)


def round_to(value, precision: str, rng=None):
    """``value`` rounded to ``precision`` (``"float32"`` or ``"bfloat16"``) and returned as float64: an array of
    floats, a float, or a tuple of them (an op with several results); integer and boolean values unchanged.
    To nearest (ties to even), or stochastically with ``rng`` (a numpy Generator)."""
    precision = _check(precision)
    if isinstance(value, tuple):
        return tuple(round_to(v, precision, rng) for v in value)
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return value
    array = np.asarray(value)
    if array.dtype.kind != "f":
        return value
    with np.errstate(over="ignore"):
        nearest32 = precision == "float32" and rng is None
        out = array.astype(np.float32).astype(np.float64) if nearest32 else _round_bits(array, precision, rng)
    out = np.reshape(out, array.shape)   # ascontiguousarray makes a 0-d array 1-d
    return float(out) if np.ndim(value) == 0 and not isinstance(value, np.ndarray) else out


def rounded(value):
    """An op's result as the execution keeps it: rounded where a precision is emulated, else itself."""
    state = _ACTIVE.get()
    return value if state is None else round_to(value, *state)


def active() -> str | None:
    """The precision emulated now, or None."""
    state = _ACTIVE.get()
    return None if state is None else state[0]


@contextlib.contextmanager
def emulated(precision: str, rng=None):
    """Every op an execution applies inside this block has its result rounded to ``precision``: to nearest, or
    stochastically with ``rng`` (a numpy Generator: another correct computation, whose rounding errors fall
    otherwise)."""
    token = _ACTIVE.set((_check(precision), rng))
    try:
        yield
    finally:
        _ACTIVE.reset(token)
