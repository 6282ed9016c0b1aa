"""Algorithm 10, the decoder-only transformer (GPT), and the same over new tokens with a key/value cache; their
planted bugs."""

from __future__ import annotations

from functools import partial

import numpy as np

from .attention import attend, chunked_attention, unstable_softmax, unstable_weights
from .blocks import ATTENTION, Stack, overwriting_pre_ln, whole_tensor_norm
from .embedding import TABLES, tables_with
from .entry import Implementation, makers
from .multihead import GROUPED, group, kv_mhattention, mhattention, modulo_group
from .numerics import affine, causal, silu, softmax

__all__ = ["context", "dtransformer", "kv_dtransformer", "IMPLEMENTATIONS", "MUTANTS", "EQUIVALENT"]


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


# ------------------------------------------------------------------------------------- planted pieces
def _mask_right_only_at_ell_max(ell, ell_max):
    """The top-left ℓ×ℓ block of an ℓ_max×ℓ_max causal mask, aligned bottom-right: causal only at ℓ = ℓ_max."""
    return causal(ell, ell, shift=ell_max - ell)


def _rows_layout_cache_mask(ell_z, ell_x):
    """The cached decoder's mask built query × key (rows layout) and reshaped, not transposed, to ℓ_z×ℓ_x:
    right only when a single token is new."""
    return np.tril(np.ones((ell_x, ell_z)), k=ell_z - ell_x).reshape(ell_z, ell_x)


def _evicting_cache(cache, new, ell_max):
    """A cache of ℓ_max − 1 columns: it drops the oldest once the context is full."""
    return np.concatenate([cache, new], axis=-1)[..., -(ell_max - 1):]


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("dtransformer", dtransformer, {"float32": 2e-5, "bfloat16": 0.7},
                   seconds={"quick": (0.6, 0.26), "thorough": (2.2, 1.19)}),
    Implementation("kv_dtransformer", kv_dtransformer, {"float32": 9e-6, "bfloat16": 0.6},
                   seconds={"quick": (1.1, 0.37), "thorough": (4.3, 1.86)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_PAPER, _VASWANI = TABLES["sinusoidal-paper"], TABLES["sinusoidal-vaswani"]

_DECODER = [
    _seam("dtransformer_pre_ln_overwrites_residual", "dtransformer", {},
          "each pre-LN sublayer replaces the residual stream X by LN(X)", "README",
          _sublayer=overwriting_pre_ln),
    _seam("dtransformer_layer_norm_over_whole_tensor", "dtransformer", {},
          "normalises the whole d_e×ℓ tensor with one mean and variance instead of each column", "README",
          _normalise=whole_tensor_norm),
    _seam("dtransformer_softmax_over_positions", "dtransformer", {},
          "takes the output softmax over positions (axis 1) instead of the vocabulary", "README",
          _unembed=lambda W_u, X, b_u: softmax(affine(W_u, X, b_u), axis=1)),
    _seam("dtransformer_attention_softmax_without_max", "dtransformer", {},
          "takes the attention softmax without subtracting the maximum: NaN once a score passes 709", "review",
          _attention=mhattention(_attend=partial(attend, _weights=unstable_weights))),
    _seam("dtransformer_output_softmax_without_max", "dtransformer", {},
          "takes the output softmax without subtracting the maximum: NaN once a logit passes 709", "review",
          _unembed=lambda W_u, X, b_u: unstable_softmax(affine(W_u, X, b_u))),
    _seam("dtransformer_causal_mask_only_at_ell_max", "dtransformer", {},
          "slices its causal mask from an ℓ_max×ℓ_max one aligned bottom-right: causal only at ℓ = ℓ_max",
          "README", _mask=_mask_right_only_at_ell_max),
    _seam("dtransformer_scores_divided_by_d", "dtransformer", {},
          "divides the attention scores by d_attn instead of √d_attn", "README",
          _attention=mhattention(_attend=partial(attend, _scale=lambda d: d))),
    _seam("dtransformer_positions_sliced_for_ell_max", "dtransformer", {},
          "adds the last ℓ columns of W_p (W_p[:, −ℓ:]) instead of the first ℓ", "review",
          _positions=lambda W_p, start, n: W_p[:, -n:]),
    _seam("dtransformer_chunked_forgets_earlier_keys", "dtransformer", {},
          "attends in chunks of 8 tokens, each to its own chunk's keys only", "review",
          _attention=mhattention(_attend=chunked_attention)),
    _seam("dtransformer_layers_share_parameters", "dtransformer", {},
          "uses layer 0's parameters in every layer", "review", _layer=lambda l: 0),
    _seam("dtransformer_positions_off_by_one", "dtransformer", {},
          "adds W_p[:, t + 1] to token t (1-indexed positions)", "review",
          _positions=lambda W_p, start, n: W_p[:, start + 1:start + 1 + n]),
    _seam("dtransformer_without_final_norm", "dtransformer", {},
          "leaves out the final layer norm of the pre-LN stack", "review", _final_norm=False),
    _seam("dtransformer_without_mask", "dtransformer", {},
          "its self-attention has no causal mask", "review", _mask=lambda ell, ell_max: np.ones((ell, ell))),
    _seam("dtransformer_tied_not_transposed", "dtransformer", {"tied": True},
          "ties W_u to W_e reshaped to N_V×d_e instead of transposed", "review",
          _tie=lambda W_e: W_e.reshape(W_e.shape[::-1])),
    _variant("dtransformer_layer_norm_under_rms", "dtransformer", {"norm": "rms"}, {"norm": "layer"},
             "subtracts the mean in every norm under norm=rms"),
    _variant("dtransformer_ignores_eps", "dtransformer", {"eps": 0.1}, {"eps": 0.0},
             "leaves eps out of every norm under eps=0.1"),
    _seam("dtransformer_paper_sinusoid_is_vaswani", "dtransformer", {"position": "sinusoidal-paper"},
          "adds Vaswani et al.'s table (base 10000, 0-indexed) for the paper's", "variant option position",
          _table=tables_with(sinusoidal_paper=_VASWANI)),
    _variant("dtransformer_gelu_under_gelu_tanh", "dtransformer", {"activation": "gelu-tanh"},
             {"activation": "gelu"}, "uses the exact GELU under activation=gelu-tanh"),
    _seam("dtransformer_swiglu_gate_swapped", "dtransformer", {"activation": "swiglu"},
          "applies SiLU to W_mlp1 X and gates it with W_gate X (the two projections swapped)",
          "variant option activation", _swiglu=lambda gate, up: silu(up) * gate),
    _variant("dtransformer_ignores_biases", "dtransformer", {}, {"bias": False},
             "drops every bias of the attention and the MLP under the default bias=true"),
    _seam("dtransformer_gqa_modulo", "dtransformer", GROUPED,
          "query head h reads key/value head h % H_kv instead of h // (H/H_kv)", "variant option n_kv_heads",
          _attention=mhattention(_group=modulo_group)),
    _variant("dtransformer_pre_ln_under_post", "dtransformer", {"norm_position": "post"},
             {"norm_position": "pre"}, "arranges every sublayer pre-LN, with a final norm, under norm_position=post"),
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
]

MUTANTS = tuple(_DECODER + _CACHED)

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {"a key/value cache that evicts beyond ℓ_max columns": "the cache never holds more than ℓ_max columns"}
