"""The paged-attention kernel in torch (vLLM's contract): a sequence's queries over the blocks its table names."""

from __future__ import annotations

from .. import require_torch
from .attention import attend
from .convert import to_numpy
from .paged import gather
from .runners import SDPA_PATHS, runs

__all__ = ["paged_attention", "run_paged_attention"]

torch = require_torch()

def paged_attention(Q, K_pool, V_pool, table, ell_c: int, *, path="explicit"):
    """The paged-attention kernel for one sequence, batch-first: queries Q (1, H, ℓ_x, d_attn) of the cache's
    last ℓ_x tokens over the ℓ_c tokens of the pools (N_pool, H_kv, d, B) the table names, each new token
    seeing the cached tokens up to its own; consecutive query heads share a key/value head.  → (1, H, ℓ_x, d_mid)."""
    K, V = gather(K_pool, table, ell_c), gather(V_pool, table, ell_c)
    group = Q.shape[1] // K.shape[1]
    K, V = K.repeat_interleave(group, dim=1), V.repeat_interleave(group, dim=1)
    ell_x = Q.shape[2]
    mask = torch.ones(ell_x, ell_c, dtype=torch.bool, device=Q.device).tril(diagonal=ell_c - ell_x)
    return attend(Q, K, V, mask, path=path)


@runs("paged_attention", paths=SDPA_PATHS)
def run_paged_attention(c):
    Q = c.tensor("Q").transpose(-1, -2)[None]                              # (1, H, ℓ_x, d_attn)
    Y = paged_attention(Q, c.tensor("K_pool"), c.tensor("V_pool"), c["table"], c["ell_c"], path=c.path)
    return to_numpy(Y[0].transpose(-1, -2))                                 # (H, d_mid, ℓ_x)
