"""A cached attention written as much real code writes it — the scores plus an additive −∞ mask, then a softmax (Meta's
llama code) — gives NaN for a new token whose mask admits no key.  ``kv_mhattention`` and ``paged_mhattention`` take the
empty-neighbourhood policy (``empty``) as Algorithm 4 does, so such code conforms with ``empty="nan"`` and fails with
the default ``zero`` (before the option, no correct implementation of this kind could pass)."""

import numpy as np
import pytest

from reference.conformance.conform import conform


def additive_cached(X, mask, W_q, W_k, W_v, W_o, K_c=None, V_c=None, b_q=None, b_k=None, b_v=None, b_o=None):
    """New tokens X (d_x×ℓ_x, columns) over a cache K_c, V_c (H_kv×d×ℓ_c) and themselves; an additive float mask."""
    import torch
    t = {k: None if v is None else torch.as_tensor(np.asarray(v, dtype=np.float64))
         for k, v in dict(X=X, W_q=W_q, W_k=W_k, W_v=W_v, W_o=W_o, K_c=K_c, V_c=V_c, b_q=b_q, b_k=b_k, b_v=b_v,
                          b_o=b_o).items()}
    x = t["X"].T                                                            # (ℓ_x, d_x)
    q = torch.einsum("hax,lx->hla", t["W_q"], x)
    k = torch.einsum("hax,lx->hla", t["W_k"], x)
    v = torch.einsum("hax,lx->hla", t["W_v"], x)
    if t["b_q"] is not None:
        q, k, v = q + t["b_q"][:, None], k + t["b_k"][:, None], v + t["b_v"][:, None]
    if t["K_c"] is not None:
        k, v = torch.cat((t["K_c"].transpose(1, 2), k), 1), torch.cat((t["V_c"].transpose(1, 2), v), 1)
    group = q.shape[0] // k.shape[0]
    keys, values = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)
    rows = torch.as_tensor(np.asarray(mask)).T                              # (ℓ_x, ℓ_c + ℓ_x): the spec's, as rows
    additive = torch.zeros(rows.shape, dtype=torch.float64).masked_fill(rows == 0, -torch.inf)
    scores = q @ keys.transpose(1, 2) / q.shape[-1] ** 0.5 + additive      # as Meta's llama code: scores + mask
    y = torch.softmax(scores, dim=-1) @ values
    out = y.transpose(0, 1).reshape(x.shape[0], -1) @ t["W_o"].T
    if t["b_o"] is not None:
        out = out + t["b_o"]
    return out.T.numpy(), k.transpose(1, 2).numpy(), v.transpose(1, 2).numpy()


def test_additive_mask_cached_attention_conforms_with_empty_nan():
    pytest.importorskip("torch")
    options = {"step": "extend", "rope": None}
    nan = conform(additive_cached, "kv_mhattention", options={**options, "empty": "nan"}, isolate=False)
    assert nan.ok, nan.failure
    zero = conform(additive_cached, "kv_mhattention", options={**options, "empty": "zero"}, isolate=False)
    assert not zero.ok and zero.failure["property"] != "runs", zero.failure


def test_the_paged_algorithm_passes_its_policy_on():
    """paged_mhattention's empty option is the cached attention's: under nan the token's output is NaN, under zero
    its heads give 0 and its output is W_o·0 + b_o."""
    from formal.algorithms import get
    from formal.sampling.examples import example
    for policy in ("nan", "zero"):
        algorithm = get("paged_mhattention", empty=policy)
        args = dict(example(algorithm, 0).arguments)
        ell_x, ell_c = args["X"].shape[1], args["ell_c"]
        args["mask"] = np.ones((ell_c + ell_x, ell_x))
        args["mask"][:, 0] = 0                                              # new token 0 sees no key
        out = algorithm(**args)[0]
        if policy == "nan":
            assert np.isnan(out[:, 0]).all()
        else:
            np.testing.assert_array_equal(out[:, 0], args["b_o"])
        assert np.isfinite(out[:, 1:]).all()
