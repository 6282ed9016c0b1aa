"""How far the reference may stray from the float64 spec in lower precision, as measured.

The allowed error of an output is ``relative(dtype, algorithm) · max(1, max |spec output|)``.  Each
algorithm's figures are declared with its correct implementation, in its family module of
:mod:`reference.catalogue` (``Implementation(..., {"float32": …, "bfloat16": …})``): the worst
errors over the seeded examples of every algorithm and variant (2-core CPU, torch 2.13), times a margin — an
error beyond them is not rounding.  They are the measured worst error of ``python
benchmarks/calibrate_tolerances.py --examples 100`` (the boundary cases and 100 random examples growing to
size 65, conform's thorough sizes) times :data:`MARGIN`, rounded up to one digit.  bfloat16 keeps 8
significant bits: through six post-LN layers of an encoder–decoder (layer norms of columns whose entries
nearly agree) the worst example loses them all, so its bfloat16 figures bound only gross failures.  The same
holds for a Swin stage of width C = H·d_attn = 2 (its worst example: eight pre-LN layer norms of 2-wide
tokens, each ±γ + β, whose sign bfloat16 may flip).
"""

from __future__ import annotations

import numpy as np

from formal.errors import ConfigError

__all__ = ["DTYPES", "MARGIN", "FLOAT64", "allowed", "relative", "scale", "differences", "deviation"]

#: Margin over the worst measured error.
MARGIN = 8

#: The precisions a tolerance exists for.
DTYPES = ("float64", "float32", "bfloat16")

#: float64 is held to 1e-10 everywhere; an algorithm without a figure for another dtype (one whose output is
#: token ids, compared exactly) gets the loosest any algorithm has there.
FLOAT64 = 1e-10


def scale(want) -> float:
    """``max(1, max |want|)`` over the finite entries (an empty output has scale 1)."""
    values = np.abs(np.asarray(want, dtype=np.float64))
    finite = values[np.isfinite(values)]
    return max(1.0, float(finite.max())) if finite.size else 1.0


def differences(want, got) -> np.ndarray:
    """``|got − want|`` entry by entry (arrays of one shape), never blind to a NaN: an entry where the two agree —
    equal numbers, the same infinity, NaN in both (the spec's NaN, ``empty='nan'``, met) — differs by 0; any other
    entry where either is NaN or infinite differs by ``inf``.  (``abs(w − g)`` alone gives NaN there, which ``max``,
    ``np.nanmax`` and every comparison would pass over as if it were no difference.)

    >>> differences(np.array([1.0, np.nan, np.inf, 2.0]), np.array([1.5, np.nan, np.inf, np.nan])).tolist()
    [0.5, 0.0, 0.0, inf]
    """
    w, g = np.asarray(want, dtype=np.float64), np.asarray(got, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(w - g)
    agree = (w == g) | (np.isnan(w) & np.isnan(g))
    return np.where(agree, 0.0, np.where(np.isnan(diff), np.inf, diff))


def deviation(want, got) -> float:
    """The largest difference of ``got`` from ``want`` relative to :func:`scale` (``max(1, max |want|)``): how
    far an output is from the spec's.  A NaN or infinity of ``got`` that ``want`` does not have at that entry
    makes it ``inf`` — non-finite, never hidden as a small number (:func:`differences`).

    >>> deviation(np.array([2.0, 4.0]), np.array([2.0, 2.0]))
    0.5
    >>> deviation(np.array([2.0, 4.0]), np.array([np.nan, np.nan]))
    inf
    """
    diff = differences(want, got)
    return float(diff.max()) / scale(want) if diff.size else 0.0


def relative(dtype: str, algorithm) -> float:
    """The allowed error of ``algorithm`` (an algorithm object or its name) in ``dtype``, relative to
    max(1, max |output|)."""
    from .records import records
    if dtype not in DTYPES:
        raise ConfigError(f"no tolerance for dtype {dtype!r}; known: {', '.join(DTYPES)}")
    if dtype == "float64":
        return FLOAT64
    figures = {r.name: r.tolerances for r in records()}
    own = figures.get(getattr(algorithm, "name", algorithm), {})
    return own[dtype] if dtype in own else max(f[dtype] for f in figures.values() if dtype in f)


def allowed(dtype: str, algorithm, want) -> float:
    """The largest absolute error the reference in ``dtype`` may show against the spec's output ``want``."""
    wants = want if isinstance(want, tuple) else (want,)
    return relative(dtype, algorithm) * max(scale(w) for w in wants)
