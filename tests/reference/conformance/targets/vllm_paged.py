"""A paged-attention reference written the way vLLM's kernel test writes its oracle, and name-only adapters
that hand it the spec's ``paged_attention`` arguments — as a user checking a serving engine's kernel would.

vLLM's contract: ``query`` (num_seqs, num_heads, head_size), one token per sequence; ``key_cache``
(num_blocks, num_kv_heads, head_size/x, block_size, x), ``value_cache`` (num_blocks, num_kv_heads,
head_size, block_size); ``block_tables`` (num_seqs, max_blocks), ``context_lens`` (num_seqs,), ``scale``.
The oracle gathers each sequence's context token by token and attends with a softmax per head.

The adapters pass the spec's ℓ_x new tokens as ℓ_x sequences sharing one block table, new token t seeing
ℓ_c − ℓ_x + t + 1 cached tokens (its own the last), and ``scale = 1/√d_attn``.
"""

import math

import torch


def ref_single_query_cached_kv_attention(output, query, num_queries_per_kv, key_cache, value_cache,
                                         block_tables, context_lens, scale):
    num_query_heads, head_size = query.shape[1], value_cache.shape[2]
    num_kv_heads, block_size = value_cache.shape[1], value_cache.shape[3]
    for i in range(query.shape[0]):
        block_table, keys, values = block_tables[i], [], []
        for j in range(int(context_lens[i])):
            block_number, block_offset = int(block_table[j // block_size]), j % block_size
            keys.append(key_cache[block_number, :, :, block_offset, :].reshape(num_kv_heads, -1))
            values.append(value_cache[block_number, :, :, block_offset])
        keys, values = torch.stack(keys), torch.stack(values)                # context × kv heads × head size
        if num_queries_per_kv > 1:
            keys = torch.repeat_interleave(keys, num_queries_per_kv, dim=1)
            values = torch.repeat_interleave(values, num_queries_per_kv, dim=1)
        weights = torch.softmax(scale * torch.einsum("hd,khd->hk", query[i], keys), dim=-1)
        output[i] = torch.einsum("hk,khd->hd", weights, values).reshape(num_query_heads, head_size)


def ref_stale_slot_attention(output, query, num_queries_per_kv, key_cache, value_cache, block_tables,
                             context_lens, scale):
    """The oracle with one planted bug: the slot within a block counted from 1 (``(j + 1) % block_size``)."""
    num_query_heads, head_size = query.shape[1], value_cache.shape[2]
    num_kv_heads, block_size = value_cache.shape[1], value_cache.shape[3]
    for i in range(query.shape[0]):
        block_table, keys, values = block_tables[i], [], []
        for j in range(int(context_lens[i])):
            block_number, block_offset = int(block_table[j // block_size]), (j + 1) % block_size
            keys.append(key_cache[block_number, :, :, block_offset, :].reshape(num_kv_heads, -1))
            values.append(value_cache[block_number, :, :, block_offset])
        keys, values = torch.stack(keys), torch.stack(values)
        if num_queries_per_kv > 1:
            keys = torch.repeat_interleave(keys, num_queries_per_kv, dim=1)
            values = torch.repeat_interleave(values, num_queries_per_kv, dim=1)
        weights = torch.softmax(scale * torch.einsum("hd,khd->hk", query[i], keys), dim=-1)
        output[i] = torch.einsum("hk,khd->hd", weights, values).reshape(num_query_heads, head_size)


def _adapted(oracle):
    """The spec's ``paged_attention(Q, K_pool, V_pool, table, ell_c)`` calling ``oracle`` with vLLM's layout."""
    def paged_attention(Q, K_pool, V_pool, table, ell_c):
        Q, K_pool, V_pool = (torch.as_tensor(a) for a in (Q, K_pool, V_pool))
        H, d_attn, ell_x = Q.shape
        n_pool, n_kv, _, block = K_pool.shape
        x = 2 if d_attn % 2 == 0 else 1                                      # 16 bytes of float64
        key_cache = K_pool.reshape(n_pool, n_kv, d_attn // x, x, block).transpose(-1, -2)
        query = Q.permute(2, 0, 1).contiguous()                             # ℓ_x sequences × H × d_attn
        tables = torch.as_tensor(table).repeat(ell_x, 1)
        lengths = torch.arange(ell_c - ell_x + 1, ell_c + 1)
        output = torch.empty(ell_x, H, V_pool.shape[2], dtype=Q.dtype)
        oracle(output, query, H // n_kv, key_cache, V_pool, tables, lengths, 1 / math.sqrt(d_attn))
        return output.permute(1, 2, 0)                                       # H × d_mid × ℓ_x
    return paged_attention


paged_attention = _adapted(ref_single_query_cached_kv_attention)
stale_slot_paged_attention = _adapted(ref_stale_slot_attention)
