"""Algorithm 5: multi-head attention, grouped-query heads and a key/value cache, and their planted bugs.

Each factory takes the variant's options and returns the function conform calls (Algorithm 4's seams,
:mod:`.attention`, pass through ``_attend``).  Without biases (``bias=False``) every bias is zero, whatever is
passed.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .attention import attend, bias_or_zeros, filled
from .entry import Entry, Implementation, makers

__all__ = ["group", "modulo_group", "GROUPED", "mhattention", "kv_mhattention", "IMPLEMENTATIONS", "MUTANTS",
           "EQUIVALENT"]


def group(h: int, H: int, H_kv: int) -> int:
    """The key/value head query head h reads: H/H_kv consecutive query heads share one (GQA)."""
    return h // (H // H_kv)


def _project(W, X, b, use):
    """``W[h] X + b[h] 1ᵀ`` for every head h: W is heads×d×d_in, the result heads×d×ℓ."""
    return np.einsum("hdi,it->hdt", W, X) + bias_or_zeros(b, W.shape[:2], use)[:, :, None]


def _heads(X, K, V, mask, W_q, b_q, W_o, b_o, *, bias, empty, attend, group, stack, B=None,
           head_bias=lambda B, h: B[h]):
    """Algorithm 5: query head h attends with its key/value head's K and V (and, given a score bias B
    (H×ℓ_z×ℓ_x), its own B^h); ``W_o [Y¹; …; Yᴴ] + b_o 1ᵀ``."""
    H, H_kv = len(W_q), len(K)
    Q = _project(W_q, X, b_q, bias)                                            # H×d_attn×ℓ_x
    Y = [attend(Q[h], K[group(h, H, H_kv)], V[group(h, H, H_kv)], mask, empty=empty,
                **({} if B is None else {"bias": head_bias(B, h)})) for h in range(H)]
    return W_o @ stack(Y) + bias_or_zeros(b_o, len(W_o), bias)[:, None]        # d_out×ℓ_x


def mhattention(*, bias=True, empty="zero", n_kv_heads=None, score_bias=False, _attend=attend, _group=group,
                _stack=np.concatenate, _context=lambda X, Z: X if Z is None else Z, _head_bias=lambda B, h: B[h]):
    """Algorithm 5 (``n_kv_heads``: grouped-query, W_k and W_v with H_kv heads; the count is read from W_k;
    ``score_bias``: head h adds B[h] to its scaled scores)."""
    heads = partial(_heads, bias=bias, empty=empty, attend=_attend, group=_group, stack=_stack,
                    head_bias=_head_bias)

    def mhattention(X, mask, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None, Z=None, B=None):
        Z = _context(X, Z)
        K, V = _project(W_k, Z, b_k, bias), _project(W_v, Z, b_v, bias)       # H_kv×d×ℓ_z
        return heads(X, K, V, mask, W_q, b_q, W_o, b_o, B=B if score_bias else None)
    return mhattention


def _append(cache, new):
    """The cache grown by the new tokens' columns (heads×d×ℓ_c, heads×d×ℓ_x → heads×d×(ℓ_c + ℓ_x))."""
    return np.concatenate([cache, new], axis=-1)


def kv_mhattention(*, bias=True, n_kv_heads=None, step="extend", _attend=attend, _group=group,
                   _append=_append, _mask=lambda mask: mask):
    """Algorithm 5 over new tokens X with a key/value cache: returns ``(Ṽ, K, V)``, K and V the grown cache.

    ``step="prefill"`` has no cache (K_c, V_c are not passed); ``"extend"`` appends to K_c, V_c.
    """
    heads = partial(_heads, bias=bias, empty="zero", attend=_attend, group=_group, stack=np.concatenate)

    def kv_mhattention(X, mask, W_q, W_k, W_v, W_o, b_q=None, b_k=None, b_v=None, b_o=None, K_c=None,
                       V_c=None):
        K, V = _project(W_k, X, b_k, bias), _project(W_v, X, b_v, bias)       # H_kv×d×ℓ_x
        if K_c is not None:
            K, V = _append(K_c, K), _append(V_c, V)
        return heads(X, K, V, _mask(mask), W_q, b_q, W_o, b_o), K, V
    return kv_mhattention


# ------------------------------------------------------------------------------------- planted pieces
def modulo_group(h: int, H: int, H_kv: int) -> int:
    """The key/value head as ``h % H_kv``: a GQA grouping bug, for ``h // (H/H_kv)``."""
    return h % H_kv


#: Grouped-query options a mutant is checked under: H ∈ {2, 4}, so h // (H/H_kv) and h % H_kv differ at H = 4.
GROUPED = {"n_kv_heads": 2}

# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("mhattention", mhattention, {"float32": 3e-6, "bfloat16": 0.08},
                   seconds={"quick": (0.2, 0.1), "thorough": (0.6, 0.47)}),
    Implementation("kv_mhattention", kv_mhattention, {"float32": 2e-6, "bfloat16": 0.06},
                   seconds={"quick": (0.2, 0.1), "thorough": (0.6, 0.5)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)

MUTANTS = (
    _seam("mhattention_heads_interleaved", "mhattention", {},
          "stacks the heads interleaved (row i of head h at i·H + h) before W_o", "review",
          _stack=lambda Y: np.stack(Y, axis=1).reshape(-1, Y[0].shape[1])),
    _seam("mhattention_gqa_modulo", "mhattention", GROUPED,
          "query head h reads key/value head h % H_kv instead of h // (H/H_kv)", "review", _group=modulo_group),
    _seam("mhattention_gqa_first_kv_head", "mhattention", GROUPED,
          "every query head reads key/value head 0 (multi-query attention under n_kv_heads=2)",
          "variant option n_kv_heads", _group=lambda h, H, H_kv: 0),
    _seam("mhattention_ignores_context", "mhattention", {},
          "takes keys and values from X even when a context Z is given", "review", _context=lambda X, Z: X),
    _variant("mhattention_zeros_under_empty_nan", "mhattention", {"empty": "nan"}, {"empty": "zero"},
             "returns zeros, not NaN, for a query with no admitted key under empty=nan"),
    _variant("mhattention_ignores_biases", "mhattention", {}, {"bias": False},
             "drops the biases of the projections and of W_o under the default bias=true"),
    _seam("mhattention_score_bias_of_head_0", "mhattention", {"score_bias": True},
          "every head adds head 0's score bias B[0] (the bias table read without its head index)",
          "variant option score_bias", _head_bias=lambda B, h: B[0]),
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
)

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {
    "GQA grouping h % H_kv under n_kv_heads = 1, or at H = H_kv": "h % H_kv and h // (H/H_kv) then agree",
}


# ------------------------------------------- masking by a large negative fill: empty="uniform", and its bugs
_UNIFORM = {"empty": "uniform"}

MUTANTS += (
    _variant("mhattention_zeros_under_empty_uniform", "mhattention", _UNIFORM, {"empty": "zero"},
             "returns zeros, not the mean of every value, for a query with no admitted key under empty=uniform"),
    _seam("mhattention_additive_mask_under_uniform", "mhattention", _UNIFORM,
          "adds (1 − mask)·(−10⁴) to every head's scores (BERT's additive mask): a query with no admitted key "
          "weighs every key by its own score, not uniformly", "README",
          _attend=partial(filled, fill=-1e4, additive=True)),
    _seam("mhattention_fill_mask_transposed", "mhattention", _UNIFORM,
          "fills every head's scores by the mask read transposed (key × query)", "review",
          _attend=partial(filled, transposed=True)),
)

CONTROLS = (Entry("mhattention_correct_large_negative_fill", "mhattention", _UNIFORM,
                  mhattention(empty="uniform", _attend=filled), "", "correct"),)
