"""Edge arrays built with array operations, never a Python loop per edge: the pieces every pattern is made of.

An edge list is two int64 arrays ``keys[e] → queries[e]``.  :func:`ranges` gives each query a run of
consecutive keys, :func:`offsets` the keys at fixed distances from it; builders combine them.

Examples
--------
>>> keys, queries = ranges([0, 0, 1], [1, 2, 3])
>>> list(zip(keys.tolist(), queries.tolist()))
[(0, 0), (0, 1), (1, 1), (1, 2), (2, 2)]
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError

__all__ = ["integer", "flag", "ranges", "offsets", "window_span"]


def integer(name, value, minimum=1) -> int:
    """``value`` as an int if it is an integer ≥ ``minimum``, else a ConfigError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        kind = {0: "non-negative", 1: "positive"}.get(minimum, f"≥ {minimum}")
        raise ConfigError(f"{name} = {value!r} must be a {kind} integer")
    return int(value)


def flag(name, value) -> bool:
    """``value`` if it is a bool, else a ConfigError naming ``name``."""
    if not isinstance(value, bool):
        raise ConfigError(f"{name} = {value!r} must be True or False")
    return value


def ranges(starts, stops):
    """For each query q, the keys ``starts[q] ≤ k < stops[q]`` (empty where stop ≤ start)."""
    lens = np.maximum(np.asarray(stops) - np.asarray(starts), 0)
    queries = np.repeat(np.arange(lens.size, dtype=np.int64), lens)
    offset = np.repeat(np.asarray(starts, dtype=np.int64) - (np.cumsum(lens) - lens), lens)
    return np.arange(queries.size, dtype=np.int64) + offset, queries


def offsets(ell, distances):
    """For each query q, the keys ``q + o`` for ``o`` in ``distances`` that fall inside ``0..ℓ−1``."""
    q = np.arange(ell, dtype=np.int64)[:, None]
    k = q + np.asarray(distances, dtype=np.int64)[None, :]                # (ℓ, len(distances))
    inside = (k >= 0) & (k < ell)
    return k[inside], np.broadcast_to(q, k.shape)[inside]


def window_span(ell, window, causal):
    """Bounds ``[start, stop)`` of each query's window: ``q − w < k ≤ q``, or ``|q − k| < w`` bidirectional."""
    q = np.arange(ell, dtype=np.int64)
    start = np.maximum(q - window + 1, 0)
    stop = q + 1 if causal else np.minimum(q + window, ell)
    return start, stop
