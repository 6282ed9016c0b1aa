"""The paged-attention kernel's contract (Kwon et al. 2023, vLLM's ``paged_attention``): projected queries over
a key/value cache in blocks of a pool, read through a block table — two correct implementations and their
planted bugs.  numpy only.

- :func:`paged_attention`, vectorised: the blocks gathered in the table's order and cut at ℓ_c, every head's
  scores at once, the bottom-right causal mask;
- :func:`rows_paged_attention`, written as vLLM's test oracle writes its reference: rows (token, head, width),
  one query token at a time, its context gathered token by token (``table[j // B]``, slot ``j % B``), the
  key/value heads repeated for their query heads.  With one new token its context length is ℓ_c; new token t
  of ℓ_x sees ℓ_c − ℓ_x + t + 1 tokens, its own the last.
"""

from __future__ import annotations

import math

import numpy as np

from .attention import group, modulo_group
from .entry import Entry, Implementation, makers
from .paged import gather, gather_in_pool_order, gather_slot_major

__all__ = ["paged_attention", "rows_paged_attention", "bottom_right", "IMPLEMENTATIONS", "MUTANTS", "CONTROLS",
           "EQUIVALENT"]


def bottom_right(ell_c, ell_x):
    """Mask[t_z, t_x] (ℓ_c×ℓ_x): new token t_x, the cache's (ℓ_c − ℓ_x + t_x)-th, sees the tokens up to its own."""
    return np.arange(ell_c)[:, None] <= np.arange(ell_x)[None, :] + ell_c - ell_x


def _softmax_columns(S):
    E = np.exp(S - S.max(axis=0, keepdims=True))
    return E / E.sum(axis=0, keepdims=True)


def paged_attention(*, n_kv_heads=None, _gather=gather, _mask=bottom_right, _expand=np.repeat,
                    _scale=lambda d: 1 / math.sqrt(d)):
    """``Y ← PagedAttention(Q, K_pool, V_pool, table)``: Q is H×d_attn×ℓ_x, the pools N_pool×H_kv×d×B, Y
    H×d_mid×ℓ_x (``n_kv_heads``: the key/value head count is read from the pools)."""
    def paged_attention(Q, K_pool, V_pool, table, ell_c):
        K, V = _gather(K_pool, table, ell_c), _gather(V_pool, table, ell_c)        # H_kv×d×ℓ_c
        repeats = len(Q) // len(K)
        K, V = _expand(K, repeats, axis=0), _expand(V, repeats, axis=0)           # H×d×ℓ_c
        S = np.einsum("hdz,hdx->hzx", K, Q) * _scale(Q.shape[1])
        S = np.where(_mask(ell_c, Q.shape[2])[None], S, -np.inf)
        return np.einsum("hvz,hzx->hvx", V, np.stack([_softmax_columns(s) for s in S]))
    return paged_attention


def rows_paged_attention(*, n_kv_heads=None, _slot=lambda j, B: (j // B, j % B), _context=lambda t, ell_c, ell_x,
                         n_b, B: ell_c - ell_x + t + 1, _group=group, _scale=lambda d: 1 / math.sqrt(d)):
    """The same contract in vLLM's test oracle's manner: rows, loops over the new tokens and their context,
    ``keys[j] = key_cache[table[j // B], :, :, j % B]``, then scaled dot products and a softmax per head."""
    def paged_attention(Q, K_pool, V_pool, table, ell_c):
        query = np.transpose(Q, (2, 0, 1))                                         # ℓ_x × H × d_attn
        ell_x, H, d = query.shape
        H_kv, B = K_pool.shape[1], K_pool.shape[3]
        out = np.empty((ell_x, H, V_pool.shape[2]))
        for t in range(ell_x):
            keys, values = [], []
            for j in range(_context(t, ell_c, ell_x, len(table), B)):
                index, offset = _slot(j, B)
                block = int(table[index])
                keys.append(K_pool[block, :, :, offset])
                values.append(V_pool[block, :, :, offset])
            keys, values = np.stack(keys), np.stack(values)                       # n × H_kv × d
            for h in range(H):
                g = _group(h, H, H_kv)
                scores = _scale(d) * keys[:, g] @ query[t, h]
                weights = np.exp(scores - scores.max())
                out[t, h] = (weights / weights.sum()) @ values[:, g]
        return np.transpose(out, (1, 2, 0))                                        # H × d_mid × ℓ_x
    return paged_attention


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("paged_attention", paged_attention,
                   seconds={"quick": (0.3, 0.06), "thorough": (0.9, 0.32)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_GQA = {"n_kv_heads": 2}


def _rows(name, options, bug, **seams):
    """An entry of the rows implementation: a control without ``bug``, a planted bug with one."""
    return Entry(name, "paged_attention", options, rows_paged_attention(**options, **seams), bug,
                 "review" if bug else "correct")


CONTROLS = (
    _rows("paged_attention_correct_rows", {}, ""),
    _rows("paged_attention_correct_rows_n_kv_heads_1", {"n_kv_heads": 1}, ""),
    _rows("paged_attention_correct_rows_n_kv_heads_2", _GQA, ""),
)

MUTANTS = (
    _rows("paged_attention_rows_table_off_by_one", {},
          "reads block j // B − 1 of the table (the first block wraps round to the last entry)",
          _slot=lambda j, B: (j // B - 1, j % B)),
    _rows("paged_attention_rows_slot_off_by_one", {}, "reads slot (j + 1) % B of the block, not j % B",
          _slot=lambda j, B: (j // B, (j + 1) % B)),
    _rows("paged_attention_rows_ignores_context_length", {},
          "takes the context as n_b·B tokens, every slot of the last block, ignoring ℓ_c",
          _context=lambda t, ell_c, ell_x, n_b, B: n_b * B - ell_x + t + 1),
    _rows("paged_attention_rows_every_query_sees_all", {},
          "gives every new token the whole context, its successors' keys too (no causal mask among the new)",
          _context=lambda t, ell_c, ell_x, n_b, B: ell_c),
    _rows("paged_attention_rows_modulo_group", _GQA, "query head h reads key/value head h % H_kv, not h // (H/H_kv)",
          _group=modulo_group),
    _rows("paged_attention_rows_unscaled", {}, "omits the 1/√d_attn scale", _scale=lambda d: 1.0),
    _seam("paged_attention_blocks_in_physical_order", "paged_attention", {},
          "reads the sequence's blocks in the pool's order (the table sorted), not the table's", "review",
          _gather=gather_in_pool_order),
    _seam("paged_attention_slot_major", "paged_attention", {},
          "flattens the gathered blocks slot-major: token j of block b lands at j·n_b + b, not b·B + j", "review",
          _gather=gather_slot_major),
    _seam("paged_attention_top_left_causal", "paged_attention", {},
          "aligns the new tokens' causal mask with the cache's first tokens (t_z ≤ t_x), not its last", "review",
          _mask=lambda ell_c, ell_x: np.arange(ell_c)[:, None] <= np.arange(ell_x)[None, :]),
    _seam("paged_attention_tiled_heads", "paged_attention", _GQA,
          "repeats the key/value heads by tiling (head h reads h % H_kv), not interleaving", "review",
          _expand=lambda a, r, axis: np.tile(a, (r, 1, 1))),
    _seam("paged_attention_scaled_by_width", "paged_attention", {}, "divides the scores by d_attn, not √d_attn",
          "review", _scale=lambda d: 1 / d),
)

#: Bugs left out because no input can detect them, and why.
EQUIVALENT = {
    "the key/value heads tiled, not interleaved, under n_kv_heads=1": "with one key/value head every query head "
                                                                       "reads it either way",
    "the key/value heads tiled, not interleaved, without grouping": "with H_kv = H each head is repeated once: "
                                                                     "tiling and interleaving are the identity",
}
