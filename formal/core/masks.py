"""Attention masks ``Mask ∈ {0,1}^{ℓ_z×ℓ_x}``: rows are context positions, columns primary positions.

A masked score becomes −∞ before the softmax (Algorithm 4, line 5).  Causal masks between sequences of
different lengths need an explicit alignment (:ref:`decision-causal-alignment`); nothing here guesses one.

Examples
--------
>>> causal(3, 3).astype(int)
array([[1, 1, 1],
       [0, 1, 1],
       [0, 0, 1]])
>>> causal(4, 2, align="bottom-right").astype(int)
array([[1, 1],
       [1, 1],
       [1, 1],
       [0, 1]])
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError, shown
from ..guards.arrays import REAL_KINDS, checked_array

__all__ = ["ALIGNMENTS", "NAMED", "bidirectional", "causal", "causal_shift", "resolve"]

ALIGNMENTS = ("top-left", "bottom-right")

#: Mask names accepted wherever a mask is given.
NAMED = ("bidirectional", "causal", "causal-top-left", "causal-bottom-right")


def bidirectional(ell_z: int, ell_x: int) -> np.ndarray:
    """``Mask ≡ 1``: every primary token sees every context token."""
    return np.ones((ell_z, ell_x), dtype=bool)


def causal_shift(ell_z: int, ell_x: int, align: str | None = None) -> int:
    """``s`` such that the causal mask is ``t_z ≤ t_x + s``: 0 top-left, ``ℓ_z − ℓ_x`` bottom-right.
    Raises ConfigError for an unknown alignment, or none when ``ℓ_z ≠ ℓ_x`` (:ref:`decision-causal-alignment`)."""
    if align is None:
        if ell_z != ell_x:
            raise ConfigError(f"a causal mask with ell_z = {ell_z} != ell_x = {ell_x} needs an explicit "
                              "alignment: 'top-left' or 'bottom-right'")
        align = "top-left"
    if align not in ALIGNMENTS:
        raise ConfigError(f"unknown causal alignment {shown(align)}; known: {', '.join(ALIGNMENTS)}")
    return 0 if align == "top-left" else ell_z - ell_x


def causal(ell_z: int, ell_x: int, *, align: str | None = None) -> np.ndarray:
    """The unidirectional mask.

    ``align="top-left"`` (the paper's): ``Mask[t_z, t_x] = [[t_z ≤ t_x]]``.
    ``align="bottom-right"`` (what a KV cache needs): ``Mask[t_z, t_x] = [[t_z ≤ t_x + ℓ_z − ℓ_x]]``, so the
    last query sees the whole context.  When ``ℓ_z = ℓ_x`` the two agree and ``align`` may be omitted.
    """
    shift = causal_shift(ell_z, ell_x, align)
    t_z = np.arange(ell_z)[:, None]
    t_x = np.arange(ell_x)[None, :]
    return t_z <= t_x + shift


def resolve(mask, ell_z: int, ell_x: int) -> np.ndarray:
    """A boolean ``ℓ_z×ℓ_x`` matrix from a mask name, ``None`` (bidirectional), an array of 0/1, or an
    attention pattern (:class:`formal.graphs.Pattern`, anything with a ``mask()`` method).

    Raises :class:`ConfigError` for an unknown name, an array of the wrong shape, one that is not real
    (complex, strings, objects; see :func:`formal.guards.arrays.checked_array`), or an entry other than 0 and 1
    (NaN included)."""
    if callable(getattr(mask, "mask", None)):
        mask = mask.mask()
    if mask is None or (isinstance(mask, str) and mask == "bidirectional"):
        return bidirectional(ell_z, ell_x)
    if isinstance(mask, str):
        if mask == "causal":
            return causal(ell_z, ell_x)
        if mask.startswith("causal-") and mask[len("causal-"):] in ALIGNMENTS:
            return causal(ell_z, ell_x, align=mask[len("causal-"):])
        raise ConfigError(f"unknown mask {shown(mask)}; known: {', '.join(NAMED)}, or a 0/1 array")
    array = checked_array("mask", mask, REAL_KINDS, f"a 0/1 array of shape ({ell_z}, {ell_x})")
    if array.shape != (ell_z, ell_x):
        raise ConfigError(f"mask has shape {array.shape} but Mask ∈ {{0,1}}^(ell_z×ell_x) needs "
                          f"({ell_z}, {ell_x})")
    if array.dtype != bool:
        bad = (array != 0) & (array != 1)  # NaN included
        if np.any(bad):
            raise ConfigError(f"mask entries must be 0 or 1 (or booleans), got {array[bad].flat[0].item()!r}; "
                              "a mask is not additive")
        array = array != 0
    return np.asarray(array)
