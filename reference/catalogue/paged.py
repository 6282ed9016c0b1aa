"""PagedAttention (Kwon et al. 2023): Algorithm 5 over a key/value cache kept in blocks, read through a
block table, and its planted bugs.  numpy only; the blocks are read one by one in the table's order and cut
at ℓ_c."""

from __future__ import annotations

from functools import partial

import numpy as np

from .attention import qk_weights
from .entry import Implementation, makers
from .kv_cache import grow_keys, kv_mhattention

__all__ = ["gather", "gather_in_pool_order", "gather_slot_major", "paged_mhattention", "IMPLEMENTATIONS", "MUTANTS"]


def gather(pool, table, ell_c):
    """The cache of a sequence: its blocks ``pool[b]`` (heads×d×B) for b in the table, side by side, the
    first ℓ_c columns."""
    return np.concatenate([pool[b] for b in table], axis=-1)[..., :ell_c]


def gather_in_pool_order(pool, table, ell_c):
    """A planted bug: the sequence's blocks read in the pool's order (the table sorted), not the table's."""
    return gather(pool, sorted(table), ell_c)


def gather_slot_major(pool, table, ell_c):
    """A planted bug: the gathered blocks flattened slot-major (token j of block b lands at j·n_b + b)."""
    return pool[np.asarray(table)].transpose(1, 2, 3, 0).reshape(pool.shape[1], pool.shape[2], -1)[..., :ell_c]


def paged_mhattention(*, bias=True, empty="zero", n_kv_heads=None, score_cap=None, qk_norm=None, qk_eps=1e-6,
                      _gather=gather, **options):
    """``(Ṽ, K, V) ← PagedMHAttention(X, K_pool, V_pool, table | W, Mask)``: the gathered cache, then
    Algorithm 5 with a cache (``step="extend"``: :func:`~.kv_cache.kv_mhattention`, which takes the rotary options
    and the other seams in ``options``; the pool's keys were normalised and turned when they were new)."""
    cached = kv_mhattention(bias=bias, empty=empty, n_kv_heads=n_kv_heads, step="extend", score_cap=score_cap,
                            qk_norm=qk_norm, qk_eps=qk_eps, **options)

    def paged_mhattention(X, K_pool, V_pool, table, mask, ell_c, W_q, W_k, W_v, W_o, b_q=None, b_k=None,
                          b_v=None, b_o=None, gamma_q=None, gamma_k=None, beta_q=None, beta_k=None):
        return cached(X, mask, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o,
                      K_c=_gather(K_pool, table, ell_c), V_c=_gather(V_pool, table, ell_c), gamma_q=gamma_q,
                      gamma_k=gamma_k, beta_q=beta_q, beta_k=beta_k)
    return paged_mhattention


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("paged_mhattention", paged_mhattention,
                   seconds={"quick": (0.5, 0.12), "thorough": (1.5, 0.58)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)

MUTANTS = (
    _seam("paged_mhattention_blocks_in_physical_order", "paged_mhattention", {},
          "reads the sequence's blocks in the pool's order (the table sorted), not the table's", "review",
          _gather=gather_in_pool_order),
    _seam("paged_mhattention_slot_major", "paged_mhattention", {},
          "flattens the gathered blocks slot-major: token j of block b lands at j·n_b + b, not b·B + j", "review",
          _gather=gather_slot_major),
    _seam("paged_mhattention_reads_stale_slots", "paged_mhattention", {},
          "attends over every slot of the last block, the unused ones past ℓ_c too", "review",
          _gather=lambda pool, table, ell_c: gather(pool, table, len(table) * pool.shape[-1])),
    _variant("paged_mhattention_ignores_biases", "paged_mhattention", {}, {"bias": False},
             "drops every projection's bias under the default bias=true"),
    _variant("paged_mhattention_zeros_under_empty_nan", "paged_mhattention", {"empty": "nan"}, {"empty": "zero"},
             "returns zeros, not NaN, for a new token whose mask admits no key under empty=nan"),
    _variant("paged_mhattention_rope_ignored", "paged_mhattention", {"rope": "half"}, {"rope": None},
             "turns neither the new queries nor the new keys under rope=half"),
    _seam("paged_mhattention_rope_new_keys_from_zero", "paged_mhattention", {"rope": "interleaved"},
          "turns the new keys for positions 0, 1, … instead of ℓ_c, ℓ_c + 1, …: the cache's length forgotten",
          "variant option rope", _grow_keys=lambda K_c, K, r, start, append: grow_keys(K_c, K, r, 0, append)),
    _variant("paged_mhattention_score_cap_ignored", "paged_mhattention", {"score_cap": 2.0}, {"score_cap": None},
             "leaves every head's scaled scores uncapped under score_cap=2"),
    _seam("paged_mhattention_qk_norm_queries_only", "paged_mhattention", {"qk_norm": "rms"},
          "normalises the new queries but not the new keys under qk_norm=rms", "variant option qk_norm",
          _qk=partial(qk_weights, _keys=False)),
)
