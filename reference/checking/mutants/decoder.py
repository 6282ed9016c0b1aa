"""Algorithm 10, the decoder-only transformer (GPT), and the same over new tokens with a key/value cache."""

from __future__ import annotations

import numpy as np

from .attention import group, kv_mhattention
from .blocks import ATTENTION, Stack
from .numerics import causal

__all__ = ["context", "dtransformer", "kv_dtransformer"]


def context(params, ell_max=None):
    """ℓ_max: the learned position table's width, else the size given (None without positions)."""
    return params["W_p"].shape[1] if "W_p" in params else ell_max


def _causal(ell, ell_max):
    return causal(ell, ell)                                    # Mask[t_z, t_x] = [[t_z ≤ t_x]]


def dtransformer(*, _mask=_causal, _final_norm=True, **options):
    """Algorithm 10: ``P ← DTransformer(x | θ)``, N_V×ℓ, column t the distribution of token t + 1.

    Defaults as the paper's: pre-LN, GELU, causal self-attention, learned positions, a final layer norm.
    """
    stack = Stack(**options)

    def dtransformer(x, params, ell_max=None):
        p = params
        X = stack.embed(p, x, ell_max)                                          # d_e×ℓ
        mask = _mask(len(x), context(p, ell_max))
        for l in range(len(p["W_q"])):
            X = stack.sublayer(p, "1", l, X, lambda Y: stack.attention(p, "", l, Y, Y, mask))
            X = stack.sublayer(p, "2", l, X, lambda Y: stack.mlp(p, "", l, Y))
        if stack.norm_position == "pre" and _final_norm:
            X = stack.layer_norm(p, "", X)
        return stack.unembed(p, X)
    return dtransformer


def _bottom_right(ell_z, ell_x):
    return causal(ell_z, ell_x, shift=ell_z - ell_x)           # the last new token sees every cached one


def _grow(cache, new, ell_max):
    return np.concatenate([cache, new], axis=-1)               # heads×d×(ℓ_c + ℓ_x)


def kv_dtransformer(*, step="extend", _mask=_bottom_right, _grow=_grow, _group=group, **options):
    """Algorithm 10 with a key/value cache per layer: ``(P, K, V) ← DTransformerKV(x, K_c, V_c | θ)``.

    The ℓ_x new tokens sit at positions ℓ_c, …, ℓ_c + ℓ_x − 1 (ℓ_c = 0 for ``step="prefill"``, which passes
    no cache); K and V (L×H_kv×d×(ℓ_c + ℓ_x)) are the cache grown by them.
    """
    stack = Stack(**options)

    def kv_dtransformer(x, params, K_c=None, V_c=None, ell_max=None):
        p, start = params, 0 if K_c is None else K_c.shape[-1]
        grow = lambda cache, new: _grow(cache, new, context(p, ell_max))  # noqa: E731
        attend = kv_mhattention(bias=stack.bias, n_kv_heads=stack.n_kv_heads, step=step, _group=_group,
                                _append=grow)
        X = stack.embed(p, x, ell_max, start=start)                             # d_e×ℓ_x
        mask = _mask(start + len(x), len(x))                                    # (ℓ_c + ℓ_x)×ℓ_x
        K, V = [], []
        for l in range(len(p["W_q"])):
            cache = {} if K_c is None else {"K_c": K_c[l], "V_c": V_c[l]}

            def self_attention(Y, l=l, cache=cache):
                out, keys, values = attend(X=Y, mask=mask, **stack.weights(p, "", l, ATTENTION), **cache)
                K.append(keys)
                V.append(values)
                return out
            X = stack.sublayer(p, "1", l, X, self_attention)
            X = stack.sublayer(p, "2", l, X, lambda Y: stack.mlp(p, "", l, Y))
        if stack.norm_position == "pre":
            X = stack.layer_norm(p, "", X)
        return stack.unembed(p, X), np.stack(K), np.stack(V)
    return kv_dtransformer
