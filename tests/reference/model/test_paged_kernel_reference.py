"""The torch reference of the paged-attention kernel (``paged_attention``) tied to the torch reference of
PagedMHAttention: with the projections applied outside and the new tokens' keys and values written into the
pool first, W_o·[Y¹; …; Yᴴ] + b_o is PagedMHAttention's output, in float64, on both attention paths."""

import numpy as np
import pytest

from formal import algorithms
from formal.algorithms.paged import PagedCache
from reference.model.execute import execute


@pytest.mark.parametrize("path", ["explicit", "sdpa"])
@pytest.mark.parametrize("n_kv", [1, 2])
def test_the_kernel_reference_with_projections_outside_is_paged_mhattention(n_kv, path):
    rng = np.random.default_rng(n_kv)
    H, d, d_x, d_out, n_c, n_x, B = 4, 3, 5, 2, 6, 2, 4
    cache = PagedCache(n_blocks=8, block=B, heads=n_kv, d_k=d, d_v=d)
    other, seq = cache.new(), cache.new()
    cache.append(other, rng.normal(size=(n_kv, d, 3)), rng.normal(size=(n_kv, d, 3)))   # the table starts at 1
    cache.append(seq, rng.normal(size=(n_kv, d, n_c)), rng.normal(size=(n_kv, d, n_c)))
    W = {"W_q": rng.normal(size=(H, d, d_x)), "W_k": rng.normal(size=(n_kv, d, d_x)),
         "W_v": rng.normal(size=(n_kv, d, d_x)), "W_o": rng.normal(size=(d_out, H * d)),
         "b_q": rng.normal(size=(H, d)), "b_k": rng.normal(size=(n_kv, d)), "b_v": rng.normal(size=(n_kv, d)),
         "b_o": rng.normal(size=d_out)}
    X = rng.normal(size=(d_x, n_x))
    mask = (np.arange(n_c + n_x)[:, None] <= np.arange(n_x)[None, :] + n_c).astype(float)
    want, _, _ = execute(algorithms.get("paged_mhattention", n_kv_heads=n_kv), path=path, X=X, K_pool=cache.K,
                         V_pool=cache.V, table=cache.table(seq), mask=mask, ell_c=n_c, **W)

    def project(name):
        return np.einsum("hdi,it->hdt", W[f"W_{name}"], X) + W[f"b_{name}"][:, :, None]
    cache.append(seq, project("k"), project("v"))
    Y = execute(algorithms.get("paged_attention", n_kv_heads=n_kv), path=path, Q=project("q"), K_pool=cache.K,
                V_pool=cache.V, table=cache.table(seq), ell_c=n_c + n_x)
    np.testing.assert_allclose(W["W_o"] @ Y.reshape(H * d, n_x) + W["b_o"][:, None], want, rtol=0, atol=1e-10)
