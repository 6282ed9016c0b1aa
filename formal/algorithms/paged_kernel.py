"""The paged-attention kernel's contract (Kwon et al. 2023, vLLM's ``paged_attention``): already-projected
queries attend over a key/value cache kept in a pool of blocks, read through a block table.

:func:`~formal.algorithms.paged.build_paged_mhattention` is Algorithm 5 over a paged cache: it projects the
new tokens itself and applies W_o.  A serving engine's attention kernel takes something else — the queries
after the projection, the caches as a pool of blocks, one block table and context length per sequence, a
scale — and returns each query head's weighted values, before W_o.  This module states that contract.

The spec's layout, in the paper's column convention (heads on a leading axis, as ``W_q`` is H×d_attn×d_x):

- ``Q`` (H×d_attn×ℓ_x): the queries of the ℓ_x newest tokens, head h's in ``Q[h]``, one column per token.
  vLLM's decoding kernel takes one token per sequence (ℓ_x = 1, its ``query[i]`` is ``Q[:, :, 0]``); ℓ_x > 1 is
  what a chunked prefill or a speculative step asks of a paged kernel;
- ``K_pool`` (N_pool×H_kv×d_attn×B), ``V_pool`` (N_pool×H_kv×d_mid×B): every sequence's blocks of B tokens per
  key/value head — vLLM's ``value_cache`` layout; its ``key_cache`` splits d_attn into (d_attn/x, x), a
  reshape;
- ``table`` (n_b entries, 0-based ids bounded by N_pool): the sequence's block table, ``table[j // B]`` holding
  cached token j at slot ``j % B``; entries may repeat (blocks shared by forked sequences) and come in any
  order (a table is drawn from whatever blocks were free);
- ℓ_c, a size: the context length, the tokens cached, ``n_b = ⌈ℓ_c/B⌉``.

Decisions, each as the kernel behaves:

- **The cache already holds the new tokens.**  vLLM writes the new token's key and value into its slot
  (``reshape_and_cache``) before the kernel runs, and ``context_lens`` counts it: the query attends over all
  ℓ_c cached tokens, itself included.  With ℓ_x new tokens, the last ℓ_x cached tokens are theirs, and new
  token t_x (1-based) at position ℓ_c − ℓ_x + t_x sees the cached tokens up to its own: the bottom-right
  causal mask over ℓ_c keys (:ref:`decision-causal-alignment`), which for ℓ_x = 1 admits every one.  So
  ℓ_x ≤ ℓ_c, and no query is ever left without a key.
- **The scale is fixed at 1/√d_attn**, the paper's.  A kernel's ``scale`` argument multiplies every score;
  ``softmax(s·KᵀQ)`` is ``softmax(KᵀQ'/√d_attn)`` with ``Q' = s·√d_attn·Q``, so any scale is this contract on
  rescaled queries and an option would add nothing the input cannot say; an adapter passes
  ``scale = 1/√d_attn``.
- **Grouped-query heads**: ``n_kv_heads`` (:data:`~formal.algorithms.attention.N_KV_HEADS`) key/value heads,
  head h reading group ``h // (H/H_kv)`` (vLLM's ``repeat_interleave``: consecutive query heads share one).
- **One sequence per call.**  vLLM's kernel takes a batch of queries, block tables and context lengths; the
  sequences are independent (they share only the pool, which is read, never written), so the spec's
  algorithm is per sequence, as the paper's are.  An adapter of a batched kernel passes a batch of one — or,
  as the tests' vLLM-style target does, the ℓ_x queries as ℓ_x sequences sharing one table with context
  lengths ℓ_c − ℓ_x + 1, …, ℓ_c.

:func:`reads` derives what the kernel reads from the object's shapes: ⌈ℓ_c/B⌉ whole blocks of each pool — a
kernel reads only the blocks its table names, however large the pool — and the queries.

References
----------
- W. Kwon et al., "Efficient memory management for large language model serving with PagedAttention",
  SOSP 2023, §4.1 (eq. 4, the block table, the PagedAttention kernel).
"""

from __future__ import annotations

import sympy as sp

from ..core.shapes import TensorSpec, numel
from ..core.symbols import H, block, d_attn, d_mid, ell_c, ell_x, n_blocks, n_pool
from ..engine.algorithm import Algorithm, Assign, Loop, at_most
from ..engine.declarations import Options
from ..ops import KVGroup, LoopIndex, const_mask, div_sqrt, mask_fill, matmul, matmul_t, pick, softmax
from .attention import N_KV_HEADS, grouping, kv_heads
from .paged import gather_blocks, memory

__all__ = ["ALGORITHMS", "build_paged_attention", "paged_attention", "reads"]


@Options(N_KV_HEADS).builds
def build_paged_attention(*, n_kv_heads) -> Algorithm:
    """The paged-attention kernel: ``Y ← PagedAttention(Q, K_pool, V_pool, table)``, each query head's
    ``V_c^g softmax(Mask ⊙ (K_c^g)ᵀ Q^h/√d_attn)`` over the ℓ_c tokens its table holds (g its key/value
    head), the new tokens' queries under the bottom-right causal mask.  No projections, no W_o."""
    kv = H if n_kv_heads is None else kv_heads(n_kv_heads)
    h = LoopIndex("h")
    group = h if n_kv_heads is None else KVGroup("h", H, kv)
    inputs = [TensorSpec("Q", (H, d_attn, ell_x), doc="the new tokens' queries, per head, one column each"),
              TensorSpec("K_pool", (n_pool, kv, d_attn, block), doc="the key blocks of every sequence"),
              TensorSpec("V_pool", (n_pool, kv, d_mid, block), doc="the value blocks of every sequence"),
              TensorSpec("table", (n_blocks,), "index", "this sequence's block table: physical block ids, 0-based",
                         bound=n_pool)]
    mask = const_mask("causal-bottom-right", ell_c, ell_x)
    lines = [Assign("K_c", gather_blocks("K_pool", "table", ell_c), note="Keys, block after block"),
             Assign("V_c", gather_blocks("V_pool", "table", ell_c), note="Values, block after block"),
             Assign("mask", mask, note="the new tokens are the cache's last ℓ_x"),
             Loop("h", H, (
                 Assign("S", matmul_t(pick("K_c", group), pick("Q", h)), note="Score"),
                 Assign("S", mask_fill("S", "mask")),
                 Assign("Y_h", matmul(pick("V_c", group), softmax(div_sqrt("S", d_attn)), role="mix"),
                        note="head h"),
             ), stack=(("Y_h", "Y"),))]
    constraints = [at_most(ell_x, ell_c, "the cache already holds the new tokens' keys and values"),
                   at_most(ell_c, n_blocks * block, "the block table holds the cached tokens"),
                   at_most(n_blocks * block, ell_c + block - 1,
                           "a block is taken only when the last one is full: n_b = ⌈ℓ_c/B⌉"),
                   *grouping(None if n_kv_heads is None else kv)]
    return Algorithm(
        number=None, source="Kwon et al. 2023", name="paged_attention", display="PagedAttention",
        summary="The paged-attention kernel: projected queries over a key/value cache read through a block table.",
        inputs=inputs, params=[],
        output=TensorSpec("Y", (H, d_mid, ell_x), doc="each head's weighted values, per new token (before W_o)"),
        lines=lines, constraints=constraints,
    )


def reads(algorithm=None) -> dict:
    """What the kernel ``algorithm`` (default :data:`paged_attention`) reads, in scalars, as sympy expressions
    derived from its inputs' shapes:

    - ``blocks``: ⌈ℓ_c/B⌉, the blocks its table names (of each pool), however many the pool holds;
    - ``cache``: those blocks whole, of both pools — a block is read as a unit, its slots past ℓ_c included;
    - ``used``: the ℓ_c slots of them that the scores and values use;
    - ``queries``: the queries, every head's.
    """
    spec = {s.name: s for s in (algorithm or paged_attention).inputs}
    blocks = memory()["blocks"]
    per_block = sum(numel(spec[p].shape[1:]) for p in ("K_pool", "V_pool"))      # one block of a pool
    per_slot = sp.cancel(per_block / block)
    return {"blocks": blocks, "cache": blocks * per_block, "used": ell_c * per_slot,
            "queries": numel(spec["Q"].shape)}


paged_attention = build_paged_attention()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (paged_attention,)
