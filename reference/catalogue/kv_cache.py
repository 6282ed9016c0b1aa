"""Algorithm 5 and Algorithm 10 over new tokens with a key/value cache — the cache grown by the new tokens' keys
and values, head by head and layer by layer — and their planted bugs.

With rotary embeddings (``rope``) the new tokens sit at positions ℓ_c, ℓ_c + 1, …: their queries and keys are
turned for them, and the cache holds keys turned when they were new, never turned again."""

from __future__ import annotations

from functools import partial

import numpy as np

from .architectures import context
from .attention import (
    GROUPED,
    attend,
    attend_heads,
    group,
    modulo_group,
    project,
    qk_weights,
    rope_options,
    rope_settings,
    turn,
)
from .blocks import ATTENTION, Stack, overwriting_pre_ln
from .embedding import TABLES, tables_with
from .entry import Implementation, makers
from .numerics import causal

__all__ = ["kv_mhattention", "kv_dtransformer", "grow_keys", "IMPLEMENTATIONS", "MUTANTS", "EQUIVALENT"]


def _append(cache, new):
    """The cache grown by the new tokens' columns (heads×d×ℓ_c, heads×d×ℓ_x → heads×d×(ℓ_c + ℓ_x))."""
    return np.concatenate([cache, new], axis=-1)


def _from(start, M):
    return start + np.arange(M.shape[-1])


def grow_keys(K_c, K, r, start, append):
    """The keys after the new tokens': the new ones K turned for their positions ``start`` … (by the rotary
    settings ``r``; None turns nothing), then appended to the cache K_c (None: no cache), whose keys were turned
    when they were new."""
    K = K if r is None else turn(K, _from(start, K), r)
    return K if K_c is None else append(K_c, K)


def kv_mhattention(*, bias=True, empty="zero", n_kv_heads=None, step="extend", score_cap=None, qk_norm=None,
                   qk_eps=1e-6, _attend=attend, _group=group, _append=_append, _mask=lambda mask: mask,
                   _grow_keys=grow_keys, _query_start=lambda start: start, _qk=qk_weights, **rope):
    """Algorithm 5 over new tokens X with a key/value cache: returns ``(Ṽ, K, V)``, K and V the grown cache.

    ``step="prefill"`` has no cache (K_c, V_c are not passed); ``"extend"`` appends to K_c, V_c; ``empty`` is the
    policy for a new token whose mask admits no key.  With ``rope`` the new tokens' queries and keys are turned for
    positions ℓ_c, ℓ_c + 1, … (:func:`grow_keys`).  ``qk_norm`` normalises the new queries and keys before they
    turn (the cache holds normalised keys), and ``score_cap`` soft-caps every head's scaled scores.
    """
    rotation = rope_settings(rope)
    attend_ = _attend if score_cap is None else partial(_attend, cap=score_cap)

    def kv_mhattention(X, mask, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None, K_c=None,
                       V_c=None, gamma_q=None, gamma_k=None, beta_q=None, beta_k=None):
        start = 0 if K_c is None else K_c.shape[-1]
        norm_q, norm_k = _qk(qk_norm, gamma_q, gamma_k, beta_q, beta_k, eps=qk_eps)
        K, V = norm_k(project(W_k, X, b_k, bias)), project(W_v, X, b_v, bias)       # H_kv×d×ℓ_x
        K = _grow_keys(K_c, K, rotation, start, _append)
        if V_c is not None:
            V = _append(V_c, V)
        queries = None if rotation is None else \
            (lambda Q, K, V: (turn(Q, _from(_query_start(start), Q), rotation), K, V))
        heads = partial(attend_heads, bias=bias, empty=empty, attend=attend_, group=_group, stack=np.concatenate,
                        rotate=queries, norm_q=norm_q)
        return heads(X, K, V, _mask(mask), W_q, b_q, W_o, b_o), K, V
    return kv_mhattention


def _bottom_right(ell_z, ell_x):
    return causal(ell_z, ell_x, shift=ell_z - ell_x)           # the last new token sees every cached one


def _grow(cache, new, ell_max):
    return np.concatenate([cache, new], axis=-1)               # heads×d×(ℓ_c + ℓ_x)


def kv_dtransformer(*, step="extend", _mask=_bottom_right, _grow=_grow, _group=group, _grow_keys=grow_keys,
                    _query_start=lambda start: start, _attend=attend, _qk=qk_weights, **options):
    """Algorithm 10 with a key/value cache per layer: ``(P, K, V) ← DTransformerKV(x, K_c, V_c | θ)``.

    The ℓ_x new tokens sit at positions ℓ_c, …, ℓ_c + ℓ_x − 1 (ℓ_c = 0 for ``step="prefill"``, which passes
    no cache); K and V (L×H_kv×d×(ℓ_c + ℓ_x)) are the cache grown by them.  The rotary options, ``qk_norm`` (ε the
    stack's ``eps``) and ``score_cap`` go to every layer's attention; ``logit_cap`` soft-caps the final logits.
    """
    rope = rope_options(options)
    stack = Stack(**options)

    def kv_dtransformer(x, params, K_c=None, V_c=None, ell_max=None):
        p, start = params, 0 if K_c is None else K_c.shape[-1]
        grow = lambda cache, new: _grow(cache, new, context(p, ell_max))  # noqa: E731
        attend = kv_mhattention(bias=stack.bias, n_kv_heads=stack.n_kv_heads, step=step, _group=_group,
                                _append=grow, _grow_keys=_grow_keys, _query_start=_query_start, **stack.qk_and_cap,
                                _attend=_attend, _qk=_qk, **rope)
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


# ------------------------------------------------------------------------------------- planted pieces
def _rows_layout_cache_mask(ell_z, ell_x):
    """The cached decoder's mask built query × key (rows layout) and reshaped, not transposed, to ℓ_z×ℓ_x:
    right only when a single token is new."""
    return np.tril(np.ones((ell_x, ell_z)), k=ell_z - ell_x).reshape(ell_z, ell_x)


def _evicting_cache(cache, new, ell_max):
    """A cache of ℓ_max − 1 columns: it drops the oldest once the context is full."""
    return np.concatenate([cache, new], axis=-1)[..., -(ell_max - 1):]


def _new_keys_from_zero(K_c, K, r, start, append):
    """The new keys turned for positions 0, 1, … instead of ℓ_c, ℓ_c + 1, …: the cache's length forgotten."""
    return grow_keys(K_c, K, r, 0, append)


def _cache_turned_again(K_c, K, r, start, append):
    """The keys turned after the append, the cache's among them: each cached key (turned when it was new) is
    turned again for its position."""
    grown = K if K_c is None else append(K_c, K)
    return turn(grown, _from(0, grown), r)


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("kv_mhattention", kv_mhattention,
                   seconds={"quick": (0.5, 0.1), "thorough": (1.4, 0.5)}),
    Implementation("kv_dtransformer", kv_dtransformer,
                   seconds={"quick": (2.0, 0.37), "thorough": (8.5, 1.86)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_PAPER, _VASWANI = TABLES["sinusoidal-paper"], TABLES["sinusoidal-vaswani"]

_KV_MULTIHEAD = [
    _seam("kv_mhattention_prepends_new_keys", "kv_mhattention", {},
          "puts the new tokens' keys and values before the cached ones (step=extend)", "variant option step",
          _append=lambda cache, new: np.concatenate([new, cache], axis=-1)),
    _seam("kv_mhattention_mask_transposed", "kv_mhattention", {"step": "prefill"},
          "reads the mask transposed (query × key)", "review", _mask=lambda mask: mask.T),
    _seam("kv_mhattention_gqa_modulo", "kv_mhattention", GROUPED,
          "query head h reads cached key/value head h % H_kv instead of h // (H/H_kv)",
          "variant option n_kv_heads", _group=modulo_group),
    _variant("kv_mhattention_ignores_biases", "kv_mhattention", {}, {"bias": False},
             "drops the biases of the projections and of W_o under the default bias=true"),
    _seam("kv_mhattention_rope_new_keys_from_zero", "kv_mhattention", {"rope": "half"},
          "turns the new keys for positions 0, 1, … (the queries for ℓ_c, …): the cache's length forgotten",
          "review", _grow_keys=_new_keys_from_zero),
    _seam("kv_mhattention_rope_queries_from_zero", "kv_mhattention", {"rope": "interleaved"},
          "turns the new queries for positions 0, 1, … (the keys for ℓ_c, …)", "review",
          _query_start=lambda start: 0),
    _seam("kv_mhattention_rope_cache_turned_again", "kv_mhattention", {"rope": "half"},
          "turns the keys after appending them, so the cache's keys, turned when new, turn again", "review",
          _grow_keys=_cache_turned_again),
]

_CACHED = [
    _seam("kv_dtransformer_pre_ln_overwrites_residual", "kv_dtransformer", {},
          "each pre-LN sublayer of the cached decoder replaces the residual stream X by LN(X)", "review",
          _sublayer=overwriting_pre_ln),
    _seam("kv_dtransformer_mask_rows_layout", "kv_dtransformer", {},
          "builds its mask query × key and reshapes it instead of transposing: right only for one new token",
          "review", _mask=_rows_layout_cache_mask),
    _seam("kv_dtransformer_drops_oldest_column", "kv_dtransformer", {},
          "keeps ℓ_max − 1 cached columns: the oldest is dropped once the context is full", "review",
          _grow=_evicting_cache),
    _seam("kv_dtransformer_positions_restart", "kv_dtransformer", {},
          "gives the new tokens positions 0, 1, … instead of ℓ_c, ℓ_c + 1, … (step=extend)", "variant option step",
          _positions=lambda W_p, start, n: W_p[:, :n]),
    _seam("kv_dtransformer_mask_top_left", "kv_dtransformer", {},
          "aligns the causal mask top-left: new tokens see only the first cached ones (step=extend)",
          "variant option step", _mask=causal),
    _variant("kv_dtransformer_layer_norm_under_rms", "kv_dtransformer", {"norm": "rms"}, {"norm": "layer"},
             "subtracts the mean in every norm under norm=rms"),
    _variant("kv_dtransformer_ignores_eps", "kv_dtransformer", {"eps": 0.1}, {"eps": 0.0},
             "leaves eps out of every norm under eps=0.1"),
    _seam("kv_dtransformer_vaswani_is_paper", "kv_dtransformer", {"position": "sinusoidal-vaswani"},
          "adds the paper's table (base ℓ_max, 1-indexed) for Vaswani et al.'s", "variant option position",
          _table=tables_with(sinusoidal_vaswani=_PAPER)),
    _variant("kv_dtransformer_relu_under_gelu", "kv_dtransformer", {}, {"activation": "relu"},
             "uses ReLU under the default activation=gelu"),
    _variant("kv_dtransformer_ignores_biases", "kv_dtransformer", {}, {"bias": False},
             "drops every bias of the attention and the MLP under the default bias=true"),
    _seam("kv_dtransformer_tied_not_transposed", "kv_dtransformer", {"tied": True},
          "ties W_u to W_e reshaped to N_V×d_e instead of transposed", "variant option tied",
          _tie=lambda W_e: W_e.reshape(W_e.shape[::-1])),
    _seam("kv_dtransformer_gqa_first_kv_head", "kv_dtransformer", GROUPED,
          "every query head reads cached key/value head 0 under n_kv_heads=2", "variant option n_kv_heads",
          _group=lambda h, H, H_kv: 0),
    _variant("kv_dtransformer_post_ln_under_pre", "kv_dtransformer", {}, {"norm_position": "post"},
             "arranges every sublayer post-LN under the default norm_position=pre"),
    _seam("kv_dtransformer_rope_positions_restart", "kv_dtransformer", {"rope": "half"},
          "turns the new tokens' queries and keys for positions 0, 1, … in every layer, not ℓ_c, ℓ_c + 1, …",
          "review", _grow_keys=_new_keys_from_zero, _query_start=lambda start: 0),
]

_QK_AND_CAPS = [
    _seam("kv_mhattention_score_cap_after_mask", "kv_mhattention", {"score_cap": 2.0},
          "soft-caps every head's scores after the mask: hidden keys become −c", "variant option score_cap",
          _attend=partial(attend, _cap_first=False)),
    _seam("kv_mhattention_qk_norm_queries_only", "kv_mhattention", {"qk_norm": "layer"},
          "normalises the new queries but not the new keys under qk_norm=layer", "variant option qk_norm",
          _qk=partial(qk_weights, _keys=False)),
    _variant("kv_mhattention_qk_rms_under_layer", "kv_mhattention", {"qk_norm": "layer"}, {"qk_norm": "rms"},
             "takes RMS norm of the new queries and keys under qk_norm=layer"),
    _variant("kv_dtransformer_qk_norm_ignored", "kv_dtransformer", {"qk_norm": "rms"}, {"qk_norm": None},
             "leaves every layer's queries and keys unnormalised under qk_norm=rms"),
    _seam("kv_dtransformer_score_cap_after_mask", "kv_dtransformer", {"score_cap": 2.0},
          "every layer soft-caps its scores after the mask: hidden keys become −c", "variant option score_cap",
          _attend=partial(attend, _cap_first=False)),
    _variant("kv_dtransformer_logit_cap_ignored", "kv_dtransformer", {"logit_cap": 2.0}, {"logit_cap": None},
             "leaves the final logits uncapped under logit_cap=2"),
]

MUTANTS = tuple(_KV_MULTIHEAD + _CACHED + _QK_AND_CAPS)

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {"a key/value cache that evicts beyond ℓ_max columns": "the cache never holds more than ℓ_max columns"}
