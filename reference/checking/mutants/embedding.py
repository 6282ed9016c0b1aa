"""Algorithms 1 and 2: token and positional embeddings, and the two fixed sinusoidal tables."""

from __future__ import annotations

import numpy as np

__all__ = ["token_embedding", "positional_embedding", "sinusoids", "position_table"]


def token_embedding(*, _index=lambda v: v):
    """Algorithm 1 as conform calls it: ``e = W_e[:, v]`` (ids 0-based)."""
    def token_embedding(v, W_e):
        return W_e[:, _index(v)]
    return token_embedding


def sinusoids(d_e: int, ell_max: int, *, base: float, one_indexed: bool) -> np.ndarray:
    """A fixed table W_p (d_e×ℓ_max): rows 2i and 2i+1 (0-based) hold sin and cos of (t + o)/base^(2(i + o)/d_e),
    with o = 1 for the paper's 1-indexed formula (base ℓ_max) and o = 0 for Vaswani et al.'s (base 10000)."""
    o = 1 if one_indexed else 0
    i = np.arange(d_e // 2)[:, None]                            # (d_e/2, 1): the pair
    t = np.arange(ell_max)[None, :]                             # (1, ℓ_max): the position
    angle = (t + o) * float(base) ** (-2.0 * (i + o) / d_e)     # (d_e/2, ℓ_max)
    table = np.empty((d_e, ell_max))
    table[0::2], table[1::2] = np.sin(angle), np.cos(angle)
    return table


def _paper(d_e, ell_max):
    return sinusoids(d_e, ell_max, base=ell_max, one_indexed=True)


def _vaswani(d_e, ell_max):
    return sinusoids(d_e, ell_max, base=10000, one_indexed=False)


#: The fixed encodings by option name (design decision 10: they differ; neither replaces the other).
TABLES = {"sinusoidal-paper": _paper, "sinusoidal-vaswani": _vaswani}


def position_table(encoding: str, *, W_p=None, d_e=None, ell_max=None, tables=TABLES) -> np.ndarray:
    """W_p (d_e×ℓ_max) of an encoding: the learned parameter, or a fixed table built at (d_e, ℓ_max)."""
    return W_p if encoding == "learned" else tables[encoding](d_e, ell_max)


def positional_embedding(*, encoding="learned", _tables=TABLES, _index=lambda t: t):
    """Algorithm 2 as conform calls it: ``e_p = W_p[:, t]``, W_p learned or a fixed sinusoidal table."""
    def positional_embedding(t, W_p=None, d_e=None, ell_max=None):
        return position_table(encoding, W_p=W_p, d_e=d_e, ell_max=ell_max, tables=_tables)[:, _index(t)]
    return positional_embedding
