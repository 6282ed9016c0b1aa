"""PagedAttention (Kwon et al. 2023): Algorithm 5 over a key/value cache kept in blocks, read through a
block table.  numpy only; the blocks are read one by one in the table's order and cut at ℓ_c."""

from __future__ import annotations

import numpy as np

from .attention import kv_mhattention

__all__ = ["gather", "paged_mhattention"]


def gather(pool, table, ell_c):
    """The cache of a sequence: its blocks ``pool[b]`` (heads×d×B) for b in the table, side by side, the
    first ℓ_c columns."""
    return np.concatenate([pool[b] for b in table], axis=-1)[..., :ell_c]


def paged_mhattention(*, bias=True, n_kv_heads=None, _gather=gather, **seams):
    """``(Ṽ, K, V) ← PagedMHAttention(X, K_pool, V_pool, table | W, Mask)``: the gathered cache, then
    Algorithm 5 with a cache (``step="extend"``)."""
    cached = kv_mhattention(bias=bias, n_kv_heads=n_kv_heads, step="extend", **seams)

    def paged_mhattention(X, K_pool, V_pool, table, mask, ell_c, W_q, W_k, W_v, W_o, b_q=None, b_k=None,
                          b_v=None, b_o=None):
        return cached(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o,
                      K_c=_gather(K_pool, table, ell_c), V_c=_gather(V_pool, table, ell_c))
    return paged_mhattention
