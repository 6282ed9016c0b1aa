"""PagedAttention (Kwon et al. 2023): multi-head attention over a key/value cache stored in fixed-size
blocks, read through the sequence's block table.

vLLM keeps each layer's cache as a pool of physical blocks of B tokens; a sequence owns a list of block
ids (its block table), new blocks are taken only when the last one is full, and sequences with a common
prefix share blocks (reference counts, copy-on-write; :mod:`formal.paging` is that data structure).
Attention is unchanged: the cache read through the table, block after block, is the contiguous cache,
and Algorithm 5 with a cache (:func:`~formal.algorithms.kv_cache.build_kv_mhattention`, ``step="extend"``)
runs on it — so the FLOPs are those of contiguous attention and only the memory differs.  Kwon et al.'s
eq. (4) computes the same softmax block by block, with its normaliser over all ⌈i/B⌉ blocks.

References
----------
- W. Kwon et al., "Efficient memory management for large language model serving with PagedAttention",
  SOSP 2023, §4.1 (eq. 4, the block table), §4.3 (copy-on-write sharing).
"""

from __future__ import annotations

from ..algorithm import Algorithm, Assign, at_most, call
from ..ops import gather_blocks
from ..shapes import TensorSpec
from ..symbols import H, block, d_attn, d_mid, d_x, ell_c, ell_x, n_blocks, n_pool
from .attention import _kv_heads
from .blocks import OPTION_DOCS
from .kv_cache import build_kv_mhattention

__all__ = ["build_paged_mhattention", "paged_mhattention"]


def build_paged_mhattention(*, bias: bool = True, n_kv_heads=None) -> Algorithm:
    """Algorithm 5 with a paged key/value cache: the new tokens X attend over the ℓ_c cached tokens —
    gathered from the pools ``K_pool``, ``V_pool`` (N_pool×H_kv×d×B) through ``table`` (n_b block ids, the
    last block holding the tokens past B·(n_b − 1)) — and over themselves."""
    cached = build_kv_mhattention(bias=bias, n_kv_heads=n_kv_heads, step="extend")
    kv = H if n_kv_heads is None else _kv_heads(n_kv_heads)
    total = ell_c + ell_x
    inputs = [TensorSpec("X", (d_x, ell_x), doc="the new tokens, one column each"),
              TensorSpec("K_pool", (n_pool, kv, d_attn, block), doc="the key blocks of every sequence"),
              TensorSpec("V_pool", (n_pool, kv, d_mid, block), doc="the value blocks of every sequence"),
              TensorSpec("table", (n_blocks,), "index", "this sequence's block table: physical block ids, 0-based",
                         bound=n_pool),
              TensorSpec("mask", (total, ell_x), "mask", "Mask[t_z, t_x] = 1 where new token t_x sees t_z")]
    lines = [Assign("K_c", gather_blocks("K_pool", "table", ell_c), note="Keys, block after block"),
             Assign("V_c", gather_blocks("V_pool", "table", ell_c), note="Values, block after block"),
             Assign(("V_tilde", "K_g", "V_g"), call(cached, label=("W", "W"), X="X", K_c="K_c", V_c="V_c",
                                                     mask="mask", **{p.name: p.name for p in cached.params}),
                    returns=True)]
    constraints = [at_most(ell_c, n_blocks * block, "the block table holds the cached tokens"),
                   at_most(n_blocks * block, ell_c + block - 1,
                           "a block is taken only when the last one is full: n_b = ⌈ℓ_c/B⌉")]
    return Algorithm(
        number=None, source="Kwon et al. 2023", name="paged_mhattention", display="PagedMHAttention",
        summary="Algorithm 5 over a key/value cache in blocks, read through the sequence's block table.",
        inputs=inputs, params=cached.params, output=cached.outputs, lines=lines, params_label="W",
        constraints=constraints, options={"bias": bias, "n_kv_heads": n_kv_heads},
        builder=build_paged_mhattention,
        option_docs={"bias": "whether the projections have biases", "n_kv_heads": OPTION_DOCS["n_kv_heads"]},
    )


paged_mhattention = build_paged_mhattention()
