"""Windows of keys: Longformer's sliding, dilated and global windows [Beltagy2020]_, and Swin's M×M windows on
a grid of tokens [Liu2021]_.

Every builder makes its edges with array operations (no Python loop per edge) and returns a
:class:`~formal.graphs.pattern.Pattern`; a window counts the query itself (:mod:`formal.graphs.patterns`).
Each checks its options as the pattern's schema declares them (:mod:`formal.graphs.schema`).

References
----------
.. [Beltagy2020] Beltagy, Peters, Cohan. "Longformer: The Long-Document Transformer", 2020.
.. [Liu2021] Liu et al. "Swin Transformer: Hierarchical Vision Transformer using Shifted Windows", ICCV 2021.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from . import memory
from .building import afford, builtin, self_pattern
from .edges import integer, offsets, ranges, window_span
from .pattern import Pattern
from .schema import option

__all__ = ["sliding_window", "dilated", "global_local", "swin", "global_edges", "checked_n_global"]


# ---------------------------------------------------------------------------------------- sliding window
def _sliding_window_args(ell, window, *, causal=True) -> dict:
    return {"ell": integer("ell", ell, 0), "window": option("sliding_window", "window", window),
            "causal": option("sliding_window", "causal", causal)}


@builtin("sliding_window", _sliding_window_args)
def sliding_window(ell, window, *, causal=True) -> Pattern:
    """Each query sees the ``window`` nearest keys on its side, itself included (Longformer's local
    attention, Mistral's sliding window): ``q − w < k ≤ q`` causal, ``|q − k| < w`` bidirectional.

    ``|E| = ℓ + Σ_{q<ℓ} min(q, w − 1)`` causal, twice that less ℓ bidirectional.
    """
    ell, window, causal = _sliding_window_args(ell, window, causal=causal).values()
    afford("sliding_window", ell, ell=ell, window=window, causal=causal)
    return self_pattern(*ranges(*window_span(ell, min(window, max(ell, 1)), causal)), ell, "sliding_window",
                        {"window": window, "causal": causal})


# ---------------------------------------------------------------------------------------------- dilated
def _dilated_args(ell, window, dilation, *, causal=True) -> dict:
    return {"ell": integer("ell", ell, 0), "window": option("dilated", "window", window),
            "dilation": option("dilated", "dilation", dilation), "causal": option("dilated", "causal", causal)}


@builtin("dilated", _dilated_args)
def dilated(ell, window, dilation, *, causal=True) -> Pattern:
    """A window of ``window`` keys spaced ``dilation`` apart (Longformer's dilated sliding window): keys
    ``q − jδ`` for ``0 ≤ j < w``, and ``q + jδ`` as well when bidirectional.  With δ > 1 the positions fall
    into δ classes that never exchange information, however many layers are stacked.

    ``|E| = δ·Σ_{i<b} min(w, i + 1) + (ℓ − δb)·min(w, b + 1)``, ``b = ⌊ℓ/δ⌋`` (causal).
    """
    ell, window, dilation, causal = _dilated_args(ell, window, dilation, causal=causal).values()
    afford("dilated", ell, ell=ell, window=window, dilation=dilation, causal=causal)
    reach = (ell - 1) // dilation + 1 if ell else 1                         # keys q − jδ ≥ 0 need j < reach
    steps = -min(dilation, max(ell, 1)) * np.arange(min(window, reach) - 1, -1, -1)
    distances = steps if causal else np.concatenate((steps, -steps[-2::-1]))
    return self_pattern(*offsets(ell, distances), ell, "dilated",
                        {"window": window, "dilation": dilation, "causal": causal})


# ----------------------------------------------------------------------------------------- global + local
def checked_n_global(builder, n_global, ell) -> int:
    """``n_global`` of the pattern ``builder``, checked: at most the ``ell`` positions."""
    n_global = option(builder, "n_global", n_global)
    if n_global > ell:
        raise ConfigError(f"n_global = {n_global} is more than the ell = {ell} positions")
    return n_global


def _global_local_args(ell, window, n_global, *, causal=False) -> dict:
    ell = integer("ell", ell, 0)
    window, causal = option("global_local", "window", window), option("global_local", "causal", causal)
    return {"ell": ell, "window": window, "n_global": checked_n_global("global_local", n_global, ell),
            "causal": causal}


@builtin("global_local", _global_local_args)
def global_local(ell, window, n_global, *, causal=False) -> Pattern:
    """Longformer: a sliding window plus ``n_global`` global positions (the first ones, e.g. ``[CLS]``) that
    see every key and are seen by every query (causally: every key at or before them, every later query).

    ``|E| = ℓ² − (ℓ − g)² + |window on ℓ − g positions|`` bidirectional.
    """
    ell, window, n_global, causal = _global_local_args(ell, window, n_global, causal=causal).values()
    afford("global_local", ell, ell=ell, window=window, n_global=n_global, causal=causal)
    parts = [ranges(*window_span(ell, min(window, max(ell, 1)), causal)), *global_edges(ell, n_global, causal)]
    return self_pattern(np.concatenate([k for k, _ in parts]), np.concatenate([q for _, q in parts]), ell,
                        "global_local", {"window": window, "n_global": n_global, "causal": causal},
                        duplicates="merge")


def global_edges(ell, n_global, causal):
    """The edges of the first ``n_global`` positions: every query sees them, and they see every key
    (causally, only those at or before the query).  O(g·ℓ) edges, built without the ℓ² others."""
    q = np.arange(ell, dtype=np.int64)
    upto = q + 1 if causal else np.full(ell, ell)
    seen = ranges(np.zeros(ell, np.int64), np.minimum(upto, n_global))          # global keys
    seeing = ranges(np.zeros(ell, np.int64), np.where(q < n_global, upto, 0))  # global queries
    return seen, seeing


# --------------------------------------------------------------------------------------------- Swin
def _swin_args(height, width, window, *, shifted=False, shift=None) -> dict:
    """The arguments checked; ``shift`` is the offset of shifted windows (default ``⌊M/2⌋``), None unshifted."""
    height, width = integer("height", height), integer("width", width)
    window = option("swin", "window", window)
    for name, side in (("height", height), ("width", width)):
        if side % window:
            raise ConfigError(f"the grid's {name} {side} is not divisible by the Swin window {window}")
    shifted = option("swin", "shifted", shifted)
    if shift is not None and not shifted:
        raise ConfigError(f"shift = {shift!r} is given but shifted = False: pass shifted=True for shifted windows")
    shift = (window // 2 if shift is None else option("swin", "shift", shift)) if shifted else None
    if shifted and not 0 < shift < window:
        raise ConfigError(f"shift = {shift} must be between 1 and window − 1 = {window - 1}")
    return {"height": height, "width": width, "window": window, "shifted": shifted, "shift": shift}


@builtin("swin", _swin_args)
def swin(height, width, window, *, shifted=False, shift=None) -> Pattern:
    """Swin Transformer's window attention on a ``height × width`` grid of tokens (position ``i·width + j``):
    tokens attend to the tokens of their ``window × window`` window.  ``shifted=True`` moves the window
    boundaries by ``shift`` (default ``⌊M/2⌋``) — Swin's cyclic shift with its attention mask, which splits
    the windows at the image border instead of wrapping around.

    ``|E| = n_h·n_w·M²`` unshifted; shifted,
    ``(σ² + (M−σ)² + (n_h/M − 1)M²)·(σ² + (M−σ)² + (n_w/M − 1)M²)``.
    """
    height, width, window, shifted, shift = _swin_args(height, width, window, shifted=shifted, shift=shift).values()
    shift = shift or 0
    ell = height * width
    grid = f"on a {memory.number(height)}×{memory.number(width)} grid, ℓ = {memory.number(ell)}"
    afford("swin", ell, where=grid, ell=ell, height=height, width=width, window=window,
           **({"shift": shift} if shifted else {}))
    # Rows (columns) fall into groups split at shift + a·M: the windows after Swin's masked cyclic shift.
    rows = (np.arange(height) + (window - shift) % window) // window
    cols = (np.arange(width) + (window - shift) % window) // window
    group = (rows[:, None] * (width // window + 1) + cols[None, :]).ravel()  # per token, row-major
    members = np.argsort(group, kind="stable")                             # tokens grouped, in order
    sizes = np.bincount(group)
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    index, queries = ranges(first[group], first[group] + sizes[group])
    params = {"height": height, "width": width, "window": window}
    if shifted:
        params["shift"] = shift
    return self_pattern(members[index], queries, ell, "swin", params)
