"""Algorithms 1 and 2: token and positional embeddings, and the two fixed sinusoidal tables; their planted
bugs."""

from __future__ import annotations

from functools import partial

import numpy as np

from .entry import Implementation, makers

__all__ = ["token_embedding", "positional_embedding", "sinusoids", "position_table", "TABLES", "tables_with",
           "zero_indexed_table", "sin_cos_swapped", "IMPLEMENTATIONS", "MUTANTS"]


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


#: The fixed encodings by option name (:ref:`decision-sinusoids`: they differ; neither replaces the other).
TABLES = {"sinusoidal-paper": _paper, "sinusoidal-vaswani": _vaswani}


def position_table(encoding: str, *, W_p=None, d_e=None, ell_max=None, tables=TABLES) -> np.ndarray:
    """W_p (d_e×ℓ_max) of an encoding: the learned parameter, or a fixed table built at (d_e, ℓ_max)."""
    return W_p if encoding == "learned" else tables[encoding](d_e, ell_max)


def positional_embedding(*, encoding="learned", _tables=TABLES, _index=lambda t: t):
    """Algorithm 2 as conform calls it: ``e_p = W_p[:, t]``, W_p learned or a fixed sinusoidal table."""
    def positional_embedding(t, W_p=None, d_e=None, ell_max=None):
        return position_table(encoding, W_p=W_p, d_e=d_e, ell_max=ell_max, tables=_tables)[:, _index(t)]
    return positional_embedding


# ------------------------------------------------------------------------------------- planted pieces
def zero_indexed_table(d_e, ell_max):
    """A sinusoidal table of base ℓ_max with 0-indexed t and i: the paper's formula read 0-indexed, or
    Vaswani et al.'s with ℓ_max for 10000."""
    return sinusoids(d_e, ell_max, base=ell_max, one_indexed=False)


def sin_cos_swapped(table):
    """A sinusoidal table builder with the cosines in the even rows and the sines in the odd ones."""
    return lambda d_e, ell_max: table(d_e, ell_max)[np.arange(d_e) ^ 1]


def tables_with(**replaced):
    """A stack's ``_table`` seam: the fixed position tables with ``replaced`` ones (by encoding, ``_`` for ``-``)."""
    return partial(position_table, tables={**TABLES, **{k.replace("_", "-"): v for k, v in replaced.items()}})


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("token_embedding", token_embedding,
                   seconds={"quick": (0.05, 0.01), "thorough": (0.3, 0.05)}),
    Implementation("positional_embedding", positional_embedding,
                   seconds={"quick": (0.05, 0.02), "thorough": (0.3, 0.07)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_VASWANI = TABLES["sinusoidal-vaswani"]

MUTANTS = (
    _seam("token_embedding_one_indexed", "token_embedding", {},
          "reads the paper's 1-indexed id: column v − 1 (token 0 gets the last column)", "review",
          _index=lambda v: v - 1),
    _seam("positional_embedding_one_indexed", "positional_embedding", {},
          "reads column t + 1 of the learned W_p (1-indexed positions)", "variant option encoding",
          _index=lambda t: t + 1),
    _seam("positional_embedding_paper_is_vaswani", "positional_embedding", {"encoding": "sinusoidal-paper"},
          "gives Vaswani et al.'s table (base 10000, 0-indexed) for the paper's", "variant option encoding",
          _tables={**TABLES, "sinusoidal-paper": _VASWANI}),
    _seam("positional_embedding_paper_zero_indexed", "positional_embedding", {"encoding": "sinusoidal-paper"},
          "reads the paper's formula (base ℓ_max) with 0-indexed t and i", "review",
          _tables={**TABLES, "sinusoidal-paper": zero_indexed_table}),
    _seam("positional_embedding_vaswani_base_ell_max", "positional_embedding", {"encoding": "sinusoidal-vaswani"},
          "uses base ℓ_max instead of 10000 in Vaswani et al.'s table", "variant option encoding",
          _tables={**TABLES, "sinusoidal-vaswani": zero_indexed_table}),
    _seam("positional_embedding_sin_cos_swapped", "positional_embedding", {"encoding": "sinusoidal-vaswani"},
          "puts the cosines in the even rows and the sines in the odd ones", "review",
          _tables={**TABLES, "sinusoidal-vaswani": sin_cos_swapped(_VASWANI)}),
)
