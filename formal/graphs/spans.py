"""The span of a receptive field from its bit set: the last input position it holds minus the first, plus one
— the positions between its ends, reached or not (a dilated window's field reaches every δ-th of its span).
:mod:`formal.graphs.layered` records the largest per layer; the structures of :mod:`formal.graphs.shapes`
give the same in closed form."""

from __future__ import annotations

import numpy as np

__all__ = ["span"]


def _bitcount(words) -> np.ndarray:
    """Set bits of each uint64 word."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words).astype(np.int64)
    return np.unpackbits(words.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1, dtype=np.int64)


def span(bits) -> int:
    """The largest span of the fields of a state: over its rows with a bit, the last bit set minus the first,
    plus one (0 for none)."""
    nonzero = bits != 0
    rows = np.flatnonzero(nonzero.any(axis=1))
    if not rows.size:
        return 0
    first = nonzero[rows].argmax(axis=1)
    last = bits.shape[1] - 1 - nonzero[rows, ::-1].argmax(axis=1)
    low, high = bits[rows, first], bits[rows, last]
    low = _bitcount((low & (~low + np.uint64(1))) - np.uint64(1))          # trailing zeros of the first word
    for shift in (1, 2, 4, 8, 16, 32):                                     # smear the highest bit down
        high = high | (high >> np.uint64(shift))
    high = _bitcount(high) - 1                                             # its index
    return int(((last - first) * 64 + high - low).max()) + 1
