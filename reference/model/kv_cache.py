"""Multi-head attention and the decoder-only transformer (Algorithm 10) over new tokens with a key/value cache, in
torch, batch-first: the cache grows by the new tokens' keys and values, layer by layer."""

from __future__ import annotations

from functools import partial

from .. import require_torch
from .architectures import embed, final_norm, layer, layer_qk, mlp_sublayer, probabilities, stack_options, unembed
from .attention import MHA, attend, attend_heads, causal_mask, heads, normed, positions_of, qk_of
from .convert import mask_to_rows, rows_to_columns, to_numpy
from .rotary import rotate, settings
from .runners import runs, stack_paths

__all__ = ["mhattention_kv", "run_kv_mhattention", "kv_dtransformer", "run_kv_dtransformer"]

torch = require_torch()
F = torch.nn.functional

def mhattention_kv(X, K_c=None, V_c=None, mask=None, *, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None,
                   b_o=None, path="explicit", rope=None, empty="zero", qk=None, cap=None):
    """Algorithm 5 as self-attention of new tokens X (B, ℓ_x, d_x) over a key/value cache K_c, V_c
    (B, H_kv, ℓ_c, ·) and themselves: (output (B, ℓ_x, d_out), keys, values), the cache grown by ℓ_x.  With
    ``rope`` the new tokens sit at positions ℓ_c, …: their queries and keys are rotated, and the cache's keys
    were rotated when they were new.  ``empty``: what a new token no key is admitted to gets
    (:func:`reference.model.attention.attend`); ``qk`` and ``cap``: the QK-norm and the soft cap (a cache holds
    normalised keys)."""
    start = 0 if K_c is None else K_c.shape[2]
    K, V = heads(X, W_k, b_k), heads(X, W_v, b_v)
    K = rotate(normed(K, qk, "k"), positions_of(X.shape[1], start, device=X.device), rope)
    if K_c is not None:
        K, V = torch.cat((K_c, K), dim=2), torch.cat((V_c, V), dim=2)
    attend_fn = None if cap is None else partial(attend, cap=cap)
    return attend_heads(X, K, V, mask, W_q, b_q, W_o, b_o, empty, path, attend_fn, rope=rope, start=start,
                        qk=qk), K, V


@runs("kv_mhattention", paths=stack_paths)
def run_kv_mhattention(c):
    X = c.rows("X")
    cache = (None, None)
    if c.options["step"] == "extend":  # the spec's cache is H_kv×d×ℓ_c per head; the reference's (1, H_kv, ℓ_c, d)
        cache = (c.tensor("K_c").transpose(-1, -2)[None], c.tensor("V_c").transpose(-1, -2)[None])
    total = X.shape[1] + (0 if cache[0] is None else cache[0].shape[2])
    mask = mask_to_rows(c.get("mask"), total, X.shape[1], device=c.device)
    Y, K, V = mhattention_kv(X, *cache, mask, path=c.path, rope=settings(c.options), empty=c.options["empty"],
                             qk=qk_of(c.options["qk_norm"], c.options["qk_eps"], c.params), cap=c.options["score_cap"],
                             **c.weights(*MHA))
    return rows_to_columns(Y), to_numpy(K[0].transpose(-1, -2)), to_numpy(V[0].transpose(-1, -2))


def kv_dtransformer(x, cache, p, options, *, ell_max=None, path="explicit"):
    """Algorithm 10 over new tokens x (B, ℓ_x) after a cache of ℓ_c tokens: (logits (B, ℓ_x, N_V), the
    new cache).  ``cache`` is None (prefill) or one ``(K, V)`` per layer, each (B, H_kv, ℓ_c, ·)."""
    opts = stack_options(options)
    ell_c = 0 if cache is None else cache[0][0].shape[2]
    X = embed(p, x, opts, start=ell_c, ell_max=ell_max)
    mask = causal_mask(ell_c + x.shape[-1], x.shape[-1], align="bottom-right", device=x.device)
    grown = []

    def attend(l, h):
        K_c, V_c = (None, None) if cache is None else cache[l]
        Y, K, V = mhattention_kv(h, K_c, V_c, mask, path=path, rope=settings(opts.rope_options),
                                 qk=layer_qk(p, "", l, opts), cap=opts.score_cap,
                                 **{n: p[n][l] for n in MHA if n in p})
        grown.append((K, V))
        return Y

    for l in range(p["W_q"].shape[0]):
        X = layer(X, [("1", lambda h: attend(l, h)), ("2", lambda h: mlp_sublayer(p, "", l, h, opts))], opts, p, l)
    if opts.norm_position == "pre":
        X = final_norm(p, opts, "", X)
    return unembed(p, X, opts), grown


@runs("kv_dtransformer", paths=stack_paths)
def run_kv_dtransformer(c):
    cache = None
    if c.options["step"] == "extend":  # the spec's L×H_kv×d×ℓ_c ↦ one (1, H_kv, ℓ_c, d) pair per layer
        K_c, V_c = c.tensor("K_c").transpose(-1, -2), c.tensor("V_c").transpose(-1, -2)
        cache = [(K_c[l][None], V_c[l][None]) for l in range(K_c.shape[0])]
    logits, grown = kv_dtransformer(c.tokens("x"), cache, c.params, c.options, **c.kwargs())
    K = torch.stack([k[0] for k, _ in grown]).transpose(-1, -2)
    V = torch.stack([v[0] for _, v in grown]).transpose(-1, -2)
    return rows_to_columns(probabilities(logits)), to_numpy(K), to_numpy(V)
