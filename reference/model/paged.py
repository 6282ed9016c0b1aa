"""PagedAttention (Kwon et al. 2023) in torch: Algorithm 5 over a key/value cache kept in blocks of a pool and
read through a block table (the spec's ``paged_mhattention``, :mod:`formal.algorithms.paged`), and the kernel's
contract, projected queries over that cache (``paged_attention``, :mod:`formal.algorithms.paged_kernel`)."""

from __future__ import annotations

import numpy as np

from .. import require_torch
from .attention import MHA, qk_of
from .convert import mask_to_rows, rows_to_columns, to_numpy
from .kv_cache import mhattention_kv
from .rotary import settings
from .runners import runs

__all__ = ["gather", "run_paged_mhattention"]

torch = require_torch()


def gather(pool, table, ell_c: int):
    """A sequence's cache as a batch of one, (1, H_kv, ℓ_c, d): the blocks of ``pool`` (N_pool, H_kv, d, B)
    the table names, in its order, side by side along the token axis (torch's ``index_select``), cut at ℓ_c."""
    blocks = pool.index_select(0, torch.as_tensor(np.asarray(table), device=pool.device))
    columns = blocks.permute(1, 0, 3, 2).reshape(pool.shape[1], -1, pool.shape[2])   # (H_kv, n_b·B, d)
    return columns[:, :ell_c][None]


@runs("paged_mhattention")
def run_paged_mhattention(c):
    X = c.rows("X")
    total = X.shape[1] + c["ell_c"]
    mask = mask_to_rows(c.get("mask"), total, X.shape[1], device=c.device)
    cache = (gather(c.tensor(name), c["table"], c["ell_c"]) for name in ("K_pool", "V_pool"))
    Y, K, V = mhattention_kv(X, *cache, mask, path=c.path, rope=settings(c.options), empty=c.options["empty"],
                             qk=qk_of(c.options["qk_norm"], c.options["qk_eps"], c.params), cap=c.options["score_cap"],
                             **c.weights(*MHA))
    return rows_to_columns(Y), to_numpy(K[0].transpose(-1, -2)), to_numpy(V[0].transpose(-1, -2))


