"""The shipped catalogue ``verify --mutants`` runs: correct implementations (*controls*: conform must pass
each) and the same implementations with one planted bug each (*mutants*: conform must fail each).

A mutant is a correct implementation with one seam replaced (:mod:`.bugs` holds the pieces longer than a
lambda), or the correct implementation of another variant checked under this one (an option ignored).  Its
``source`` says where the bug comes from: ``README`` (bugs public implementations of the paper have had),
``review`` (bugs an independent reviewer planted, and more of their kind), or ``variant option <name>`` (the
option got wrong while checked under it).  ``options`` name only what differs from the algorithm's defaults.
Every mutant is detectable by some input; the equivalent ones were left out (:data:`EQUIVALENT`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from . import bugs
from .attention import attend, attention, fill, kv_mhattention, mhattention, single_query_attention, weights
from .paged import gather, paged_mhattention
from .decoder import dtransformer, kv_dtransformer
from .embedding import TABLES, position_table, positional_embedding, token_embedding
from .encoder import etransformer, image_patches
from .encoder_decoder import edtransformer
from .inference import dinference, edinference
from .losses import dloss, edloss, eloss, masked_nll, next_token_nll
from .normalization import layer_norm, normalise
from .numerics import affine, causal, gelu_tanh, silu, softmax
from .unembedding import unembedding
from .vision import (layer_norm_rows, merge_groups, partition, patch_merging, relative_bias, relative_index, reverse, swin, swin_block, swin_stage, window_mhattention)

__all__ = ["Entry", "FACTORIES", "CONTROLS", "MUTANTS", "EQUIVALENT"]


@dataclass(frozen=True)
class Entry:
    name: str           # "attention_divides_by_d"
    algorithm: str      # registry name, as --algorithm takes it
    options: dict       # the variant conform checks against (what -o would pass); {} = the algorithm's defaults
    function: Callable  # what conform calls
    bug: str            # one sentence: what is wrong ("" for a control)
    source: str         # where the bug comes from: "README", "review", "variant option <name>"


#: Algorithm name → the factory of its correct implementation: options → the function conform calls.
FACTORIES = {
    "token_embedding": token_embedding, "positional_embedding": positional_embedding,
    "single_query_attention": single_query_attention, "attention": attention, "mhattention": mhattention,
    "kv_mhattention": kv_mhattention, "paged_mhattention": paged_mhattention, "layer_norm": layer_norm,
    "unembedding": unembedding,
    "dtransformer": dtransformer, "etransformer": etransformer, "edtransformer": edtransformer,
    "kv_dtransformer": kv_dtransformer, "dloss": dloss, "eloss": eloss, "edloss": edloss,
    "dinference": dinference, "edinference": edinference,
    "window_mhattention": window_mhattention, "swin_block": swin_block, "patch_merging": patch_merging,
    "swin_stage": swin_stage, "swin": swin,
}

from .scores_catalogue import (CONTROLS as _SCORE_CONTROLS, EQUIVALENT as _SCORE_EQUIVALENT, FACTORIES as _SCORE_FACTORIES, MUTANTS as _SCORE_MUTANTS)

FACTORIES.update(_SCORE_FACTORIES)   # attention scores, attention pooling, convolutions

from .recurrent_catalogue import (EQUIVALENT as _RECURRENT_EQUIVALENT, FACTORIES as _RECURRENT_FACTORIES, MUTANTS as _RECURRENT_MUTANTS)

FACTORIES.update(_RECURRENT_FACTORIES)   # recurrent cells and layers, seq2seq, Show-Attend-Tell, HAN


def _seam(name, algorithm, options, bug, source, **seams):
    """A mutant: the correct implementation of ``options`` with ``seams`` replaced."""
    return Entry(name, algorithm, options, FACTORIES[algorithm](**options, **seams), bug, source)


def _variant(name, algorithm, options, implemented, bug):
    """A mutant: the correct implementation of the variant ``implemented``, checked under ``options``."""
    return Entry(name, algorithm, options, FACTORIES[algorithm](**{**options, **implemented}), bug,
                 "variant option " + ", ".join(implemented))


def _tables(**replaced):
    """A stack's ``_table`` seam: the fixed position tables with ``replaced`` ones (by encoding, ``_`` for ``-``)."""
    return partial(position_table, tables={**TABLES, **{k.replace("_", "-"): v for k, v in replaced.items()}})


def _attend(**seams):
    return partial(attend, **seams)


def _modulo(h, H, H_kv):
    return h % H_kv                                            # for h // (H/H_kv)


def _bias_before_scaling(Q, K, V, mask, *, empty="zero", bias=None):
    """The score bias added to KᵀQ before the 1/√d_attn scaling: ``softmax((KᵀQ + B)/√d_attn)``."""
    return V @ weights(fill((K.T @ Q + bias) / math.sqrt(Q.shape[0]), mask), empty)


_PAPER, _VASWANI = TABLES["sinusoidal-paper"], TABLES["sinusoidal-vaswani"]
_GROUPED = {"n_kv_heads": 2}     # H ∈ {2, 4}: h // (H/H_kv) and h % H_kv differ at H = 4
_SCORE_BIAS = {"score_bias": True}

# ----------------------------------------------------------------------------------- Algorithms 1–3
_EMBEDDING = [
    _seam("token_embedding_one_indexed", "token_embedding", {},
          "reads the paper's 1-indexed id: column v − 1 (token 0 gets the last column)", "review",
          _index=lambda v: v - 1),
    _seam("positional_embedding_one_indexed", "positional_embedding", {},
          "reads column t + 1 of the learned W_p (1-indexed positions)", "variant option encoding",
          _index=lambda t: t + 1),
    _seam("positional_embedding_paper_is_vaswani", "positional_embedding", {"encoding": "sinusoidal-paper"},
          "gives Vaswani et al.'s table (base 10000, 0-indexed) for the paper's", "variant option encoding",
          _tables={**TABLES, "sinusoidal-paper": _VASWANI}),
    _seam("positional_embedding_paper_zero_indexed", "positional_embedding", {"encoding": "sinusoidal-paper"},
          "reads the paper's formula (base ℓ_max) with 0-indexed t and i", "review",
          _tables={**TABLES, "sinusoidal-paper": bugs.zero_indexed_table}),
    _seam("positional_embedding_vaswani_base_ell_max", "positional_embedding", {"encoding": "sinusoidal-vaswani"},
          "uses base ℓ_max instead of 10000 in Vaswani et al.'s table", "variant option encoding",
          _tables={**TABLES, "sinusoidal-vaswani": bugs.zero_indexed_table}),
    _seam("positional_embedding_sin_cos_swapped", "positional_embedding", {"encoding": "sinusoidal-vaswani"},
          "puts the cosines in the even rows and the sines in the odd ones", "review",
          _tables={**TABLES, "sinusoidal-vaswani": bugs.sin_cos_swapped(_VASWANI)}),
    _seam("single_query_attention_unscaled", "single_query_attention", {},
          "forgets the 1/√d_attn scaling of the scores", "review", _scale=lambda d: 1.0),
    _variant("single_query_attention_ignores_biases", "single_query_attention", {}, {"bias": False},
             "drops b_q and b_v under the default bias=true (b_k cannot matter)"),
]

# ------------------------------------------------------------------------------------- Algorithm 4
_ATTENTION = [
    _seam("attention_einsum_ignores_weights", "attention", {},
          "the einsum sums the values with ones: the attention weights are computed and never used", "README",
          _attend=bugs.einsum_ignoring_weights),
    _seam("attention_multiplicative_mask", "attention", {},
          "multiplies the scores by the mask instead of setting hidden ones to −∞", "README",
          _attend=_attend(_fill=lambda S, mask: S * mask)),
    _seam("attention_divides_by_d", "attention", {},
          "divides the scores by d_attn instead of √d_attn", "README", _attend=_attend(_scale=lambda d: d)),
    _seam("attention_scores_transposed", "attention", {},
          "computes QᵀK and normalises over the queries instead of the keys", "review",
          _attend=bugs.transposed_scores),
    _seam("attention_nan_for_empty_rows", "attention", {},
          "gives NaN (a plain softmax of −∞) for a query with no admitted key under the default empty=zero",
          "review", _attend=_attend(_weights=bugs.softmax_without_empty_rows)),
    _seam("attention_large_negative_fill", "attention", {},
          "fills hidden scores with −1e9: a query with no admitted key averages every value", "variant option empty",
          _attend=_attend(_fill=bugs.large_negative_fill)),
    _seam("attention_mask_after_softmax", "attention", {},
          "zeroes hidden weights after the softmax, without renormalising", "review",
          _attend=bugs.mask_after_softmax),
    _seam("attention_chunked_forgets_earlier_keys", "attention", {},
          "attends in chunks of 8 queries, each to its own chunk's keys only", "review",
          _attend=bugs.chunked_attention),
    _variant("attention_zeros_under_empty_nan", "attention", {"empty": "nan"}, {"empty": "zero"},
             "returns zeros, not NaN, for a query with no admitted key under empty=nan"),
    _variant("attention_ignores_biases", "attention", {}, {"bias": False},
             "drops the biases b_q, b_k, b_v under the default bias=true"),
    _seam("attention_score_bias_scaled", "attention", _SCORE_BIAS,
          "adds the score bias B before the 1/√d_attn scaling, so that B is scaled too", "variant option score_bias",
          _attend=_bias_before_scaling),
]

# ------------------------------------------------------------------ Algorithm 5, grouped-query, KV cache
_MHA = [
    _seam("mhattention_heads_interleaved", "mhattention", {},
          "stacks the heads interleaved (row i of head h at i·H + h) before W_o", "review",
          _stack=lambda Y: np.stack(Y, axis=1).reshape(-1, Y[0].shape[1])),
    _seam("mhattention_gqa_modulo", "mhattention", _GROUPED,
          "query head h reads key/value head h % H_kv instead of h // (H/H_kv)", "review", _group=_modulo),
    _seam("mhattention_gqa_first_kv_head", "mhattention", _GROUPED,
          "every query head reads key/value head 0 (multi-query attention under n_kv_heads=2)",
          "variant option n_kv_heads", _group=lambda h, H, H_kv: 0),
    _seam("mhattention_ignores_context", "mhattention", {},
          "takes keys and values from X even when a context Z is given", "review", _context=lambda X, Z: X),
    _variant("mhattention_zeros_under_empty_nan", "mhattention", {"empty": "nan"}, {"empty": "zero"},
             "returns zeros, not NaN, for a query with no admitted key under empty=nan"),
    _variant("mhattention_ignores_biases", "mhattention", {}, {"bias": False},
             "drops the biases of the projections and of W_o under the default bias=true"),
    _seam("mhattention_score_bias_of_head_0", "mhattention", _SCORE_BIAS,
          "every head adds head 0's score bias B[0] (the bias table read without its head index)",
          "variant option score_bias", _head_bias=lambda B, h: B[0]),
    _seam("kv_mhattention_prepends_new_keys", "kv_mhattention", {},
          "puts the new tokens' keys and values before the cached ones (step=extend)", "variant option step",
          _append=lambda cache, new: np.concatenate([new, cache], axis=-1)),
    _seam("kv_mhattention_mask_transposed", "kv_mhattention", {"step": "prefill"},
          "reads the mask transposed (query × key)", "review", _mask=lambda mask: mask.T),
    _seam("kv_mhattention_gqa_modulo", "kv_mhattention", _GROUPED,
          "query head h reads cached key/value head h % H_kv instead of h // (H/H_kv)",
          "variant option n_kv_heads", _group=_modulo),
    _variant("kv_mhattention_ignores_biases", "kv_mhattention", {}, {"bias": False},
             "drops the biases of the projections and of W_o under the default bias=true"),
    _seam("paged_mhattention_blocks_in_physical_order", "paged_mhattention", {},
          "reads the sequence's blocks in the pool's order (the table sorted), not the table's", "review",
          _gather=lambda pool, table, ell_c: gather(pool, sorted(table), ell_c)),
    _seam("paged_mhattention_slot_major", "paged_mhattention", {},
          "flattens the gathered blocks slot-major: token j of block b lands at j·n_b + b, not b·B + j", "review",
          _gather=lambda pool, table, ell_c: pool[np.asarray(table)].transpose(1, 2, 3, 0).reshape(
              pool.shape[1], pool.shape[2], -1)[..., :ell_c]),
    _seam("paged_mhattention_reads_stale_slots", "paged_mhattention", {},
          "attends over every slot of the last block, the unused ones past ℓ_c too", "review",
          _gather=lambda pool, table, ell_c: gather(pool, table, len(table) * pool.shape[-1])),
    _variant("paged_mhattention_ignores_biases", "paged_mhattention", {}, {"bias": False},
             "drops every projection's bias under the default bias=true"),
]

# ------------------------------------------------------------------------------------ Algorithms 6, 7
_NORM = [
    _seam("layer_norm_unbiased_variance", "layer_norm", {},
          "divides the squared deviations by d_e − 1 (the unbiased variance)", "review",
          _spread=bugs.spread_unbiased),
    _seam("layer_norm_eps_outside_sqrt", "layer_norm", {"eps": 1e-5},
          "adds eps outside the square root: (e − m)/(√v + ε)", "review", _spread=bugs.spread_eps_outside),
    _variant("layer_norm_subtracts_mean_under_rms", "layer_norm", {"norm": "rms"}, {"norm": "layer"},
             "subtracts the mean under norm=rms"),
    _variant("layer_norm_rms_under_layer", "layer_norm", {}, {"norm": "rms"},
             "neither subtracts the mean nor adds β under the default norm=layer"),
    _variant("layer_norm_fixed_eps", "layer_norm", {}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (torch's default) under the default eps = 0"),
    _variant("layer_norm_ignores_eps", "layer_norm", {"eps": 1e-5}, {"eps": 0.0},
             "leaves eps out under eps=1e-5"),
    _variant("unembedding_ignores_bias", "unembedding", {"bias": True}, {"bias": False},
             "drops the bias b_u of the logits"),
    _seam("unembedding_without_softmax", "unembedding", {},
          "returns the logits W_u e, not their softmax", "review", _unembed=affine),
]

# ------------------------------------------------------------------------------------- Algorithm 10
_DECODER = [
    _seam("dtransformer_pre_ln_overwrites_residual", "dtransformer", {},
          "each pre-LN sublayer replaces the residual stream X by LN(X)", "README",
          _sublayer=bugs.overwriting_pre_ln),
    _seam("dtransformer_layer_norm_over_whole_tensor", "dtransformer", {},
          "normalises the whole d_e×ℓ tensor with one mean and variance instead of each column", "README",
          _normalise=bugs.whole_tensor_norm),
    _seam("dtransformer_softmax_over_positions", "dtransformer", {},
          "takes the output softmax over positions (axis 1) instead of the vocabulary", "README",
          _unembed=lambda W_u, X, b_u: softmax(affine(W_u, X, b_u), axis=1)),
    _seam("dtransformer_causal_mask_only_at_ell_max", "dtransformer", {},
          "slices its causal mask from an ℓ_max×ℓ_max one aligned bottom-right: causal only at ℓ = ℓ_max",
          "README", _mask=bugs.mask_right_only_at_ell_max),
    _seam("dtransformer_scores_divided_by_d", "dtransformer", {},
          "divides the attention scores by d_attn instead of √d_attn", "README",
          _attention=mhattention(_attend=_attend(_scale=lambda d: d))),
    _seam("dtransformer_positions_sliced_for_ell_max", "dtransformer", {},
          "adds the last ℓ columns of W_p (W_p[:, −ℓ:]) instead of the first ℓ", "review",
          _positions=lambda W_p, start, n: W_p[:, -n:]),
    _seam("dtransformer_chunked_forgets_earlier_keys", "dtransformer", {},
          "attends in chunks of 8 tokens, each to its own chunk's keys only", "review",
          _attention=mhattention(_attend=bugs.chunked_attention)),
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
          _table=_tables(sinusoidal_paper=_VASWANI)),
    _variant("dtransformer_gelu_under_gelu_tanh", "dtransformer", {"activation": "gelu-tanh"},
             {"activation": "gelu"}, "uses the exact GELU under activation=gelu-tanh"),
    _seam("dtransformer_swiglu_gate_swapped", "dtransformer", {"activation": "swiglu"},
          "applies SiLU to W_mlp1 X and gates it with W_gate X (the two projections swapped)",
          "variant option activation", _swiglu=lambda gate, up: silu(up) * gate),
    _variant("dtransformer_ignores_biases", "dtransformer", {}, {"bias": False},
             "drops every bias of the attention and the MLP under the default bias=true"),
    _seam("dtransformer_gqa_modulo", "dtransformer", _GROUPED,
          "query head h reads key/value head h % H_kv instead of h // (H/H_kv)", "variant option n_kv_heads",
          _attention=mhattention(_group=_modulo)),
    _variant("dtransformer_pre_ln_under_post", "dtransformer", {"norm_position": "post"},
             {"norm_position": "pre"}, "arranges every sublayer pre-LN, with a final norm, under norm_position=post"),
]

# ---------------------------------------------------------------------------- Algorithm 10 with a cache
_CACHED = [
    _seam("kv_dtransformer_pre_ln_overwrites_residual", "kv_dtransformer", {},
          "each pre-LN sublayer of the cached decoder replaces the residual stream X by LN(X)", "review",
          _sublayer=bugs.overwriting_pre_ln),
    _seam("kv_dtransformer_mask_rows_layout", "kv_dtransformer", {},
          "builds its mask query × key and reshapes it instead of transposing: right only for one new token",
          "review", _mask=bugs.rows_layout_cache_mask),
    _seam("kv_dtransformer_drops_oldest_column", "kv_dtransformer", {},
          "keeps ℓ_max − 1 cached columns: the oldest is dropped once the context is full", "review",
          _grow=bugs.evicting_cache),
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
          _table=_tables(sinusoidal_vaswani=_PAPER)),
    _variant("kv_dtransformer_relu_under_gelu", "kv_dtransformer", {}, {"activation": "relu"},
             "uses ReLU under the default activation=gelu"),
    _variant("kv_dtransformer_ignores_biases", "kv_dtransformer", {}, {"bias": False},
             "drops every bias of the attention and the MLP under the default bias=true"),
    _seam("kv_dtransformer_tied_not_transposed", "kv_dtransformer", {"tied": True},
          "ties W_u to W_e reshaped to N_V×d_e instead of transposed", "variant option tied",
          _tie=lambda W_e: W_e.reshape(W_e.shape[::-1])),
    _seam("kv_dtransformer_gqa_first_kv_head", "kv_dtransformer", _GROUPED,
          "every query head reads cached key/value head 0 under n_kv_heads=2", "variant option n_kv_heads",
          _group=lambda h, H, H_kv: 0),
    _variant("kv_dtransformer_post_ln_under_pre", "kv_dtransformer", {}, {"norm_position": "post"},
             "arranges every sublayer post-LN under the default norm_position=pre"),
]

# -------------------------------------------------------------------------------------- Algorithm 9
_VIT = {"inputs": "patches", "head": "classifier"}
_IMAGE = {"inputs": "image", "head": "classifier", "patch_order": "channel-first"}
_ENCODER = [
    _seam("etransformer_layer_norm_over_whole_tensor", "etransformer", {},
          "normalises the whole d_e×ℓ tensor with one mean and variance instead of each column", "README",
          _normalise=bugs.whole_tensor_norm),
    _variant("etransformer_layer_norm_under_rms", "etransformer", {"norm": "rms"}, {"norm": "layer"},
             "subtracts the mean in every norm under norm=rms"),
    _seam("etransformer_eps_outside_sqrt", "etransformer", {"eps": 0.1},
          "adds eps outside the square root in every norm: (e − m)/(√v + ε)", "variant option eps",
          _normalise=partial(normalise, _spread=bugs.spread_eps_outside)),
    _seam("etransformer_paper_sinusoid_zero_indexed", "etransformer", {"position": "sinusoidal-paper"},
          "reads the paper's sinusoid formula (base ℓ_max) with 0-indexed t and i", "variant option position",
          _table=_tables(sinusoidal_paper=bugs.zero_indexed_table)),
    _seam("etransformer_head_gelu_tanh", "etransformer", {"activation": "gelu-tanh"},
          "uses the layers' GELU-tanh in the head, whose GELU is the exact one", "variant option activation",
          _head_activation=gelu_tanh),
    _variant("etransformer_ignores_biases", "etransformer", {}, {"bias": False},
             "drops every bias of the layers and of W_f under the default bias=true"),
    _seam("etransformer_tied_not_transposed", "etransformer", {"tied": True},
          "ties W_u to W_e reshaped to N_V×d_e instead of transposed", "variant option tied",
          _tie=lambda W_e: W_e.reshape(W_e.shape[::-1])),
    _seam("etransformer_gqa_modulo", "etransformer", _GROUPED,
          "query head h reads key/value head h % H_kv instead of h // (H/H_kv)", "variant option n_kv_heads",
          _attention=mhattention(_group=_modulo)),
    _variant("etransformer_post_ln_under_pre", "etransformer", {"norm_position": "pre"},
             {"norm_position": "post"}, "arranges every sublayer post-LN, without the final norm, under "
                                        "norm_position=pre"),
    _variant("etransformer_ignores_token_types", "etransformer", {"token_types": True},
             {"token_types": False}, "ignores the token types s (no W_s[:, s[t]])"),
    _variant("etransformer_without_embedding_norm", "etransformer", {"embedding_norm": True},
             {"embedding_norm": False}, "leaves out the layer norm after the embedding"),
    _variant("etransformer_ignores_unembedding_bias", "etransformer", {"unembedding_bias": True},
             {"unembedding_bias": False}, "drops the bias b_u of the logits"),
    _seam("etransformer_class_token_last", "etransformer", _VIT,
          "appends the class token after the patches instead of before them", "variant option inputs",
          _class_token=lambda x_class, patches: np.concatenate([patches, x_class], axis=1)),
    _seam("etransformer_classifies_last_token", "etransformer", _VIT,
          "classifies from the last column instead of the class token", "variant option head",
          _class_column=-1),
    _seam("etransformer_tokens_classifies_last_token", "etransformer", {"head": "classifier"},
          "classifies a token sequence from its last token instead of its first", "variant option head",
          _class_column=-1),
    _variant("etransformer_channel_last_patches_under_channel_first", "etransformer", _IMAGE,
             {"patch_order": "channel-last"}, "flattens each patch as (i, j, c) where HF's Conv2d reads (c, i, j)"),
    _variant("etransformer_channel_first_patches_under_channel_last", "etransformer",
             {**_IMAGE, "patch_order": "channel-last"}, {"patch_order": "channel-first"},
             "flattens each patch as (c, i, j) under patch_order=channel-last"),
    _seam("etransformer_patches_column_major", "etransformer", _IMAGE,
          "lists the patches column by column, so patch (r, c) meets the position embedding of c·n_h + r",
          "variant option inputs", _patches_of=partial(image_patches, _row_major=False)),
]

# -------------------------------------------------------------------------------------- Algorithm 8
_ENCODER_DECODER = [
    _seam("edtransformer_shared_self_cross_weights", "edtransformer", {},
          "cross-attention uses the decoder's self-attention weights W^dec instead of its own W^e/d", "README",
          _cross="dec_"),
    _seam("edtransformer_cross_attention_causal", "edtransformer", {},
          "masks the cross-attention with the causal mask", "review", _cross_mask=causal),
    _seam("edtransformer_encoder_causal", "edtransformer", {},
          "masks the encoder's self-attention with the causal mask", "review", _encoder_mask=causal),
    _seam("edtransformer_reads_embeddings", "edtransformer", {},
          "cross-attends to the encoder's input embeddings, not its output", "review",
          _decoder_reads=lambda embedded, encoded: embedded),
    _variant("edtransformer_layer_norm_under_rms", "edtransformer", {"norm": "rms"}, {"norm": "layer"},
             "subtracts the mean in every norm under norm=rms"),
    _seam("edtransformer_eps_outside_sqrt", "edtransformer", {"eps": 0.1},
          "adds eps outside the square root in every norm: (e − m)/(√v + ε)", "variant option eps",
          _normalise=partial(normalise, _spread=bugs.spread_eps_outside)),
    _seam("edtransformer_vaswani_base_ell_max", "edtransformer", {"position": "sinusoidal-vaswani"},
          "uses base ℓ_max instead of 10000 in Vaswani et al.'s table", "variant option position",
          _table=_tables(sinusoidal_vaswani=bugs.zero_indexed_table)),
    _variant("edtransformer_gelu_under_relu", "edtransformer", {}, {"activation": "gelu"},
             "uses GELU in the MLPs under the default activation=relu (the paper's Algorithm 8)"),
    _variant("edtransformer_ignores_biases", "edtransformer", {}, {"bias": False},
             "drops every bias of the attention and the MLPs under the default bias=true"),
    _variant("edtransformer_untied_reads_w_e", "edtransformer", {}, {"tied": True},
             "unembeds with W_eᵀ and ignores W_u under the default tied=false"),
    _seam("edtransformer_gqa_modulo", "edtransformer", _GROUPED,
          "query head h reads key/value head h % H_kv instead of h // (H/H_kv)", "variant option n_kv_heads",
          _attention=mhattention(_group=_modulo)),
    _variant("edtransformer_post_ln_under_pre", "edtransformer", {"norm_position": "pre"},
             {"norm_position": "post"}, "arranges every sublayer post-LN under norm_position=pre"),
    _seam("edtransformer_without_encoder_norm", "edtransformer", {"norm_position": "pre"},
          "the decoder reads the pre-LN encoder's output without its final norm", "variant option norm_position",
          _encoder_norm=False),
]

# ------------------------------------------------------------------------------------ Algorithms 11–13
_LOSSES = [
    _seam("dloss_off_by_one", "dloss", {},
          "scores column t against token t instead of t + 1", "review",
          _nll=lambda P, x: -np.sum(np.log(P[x, np.arange(len(x))]))),
    _seam("dloss_mean", "dloss", {},
          "averages the ℓ − 1 terms instead of summing them", "review",
          _nll=lambda P, x: next_token_nll(P, x) / (len(x) - 1)),
    _seam("dloss_tied_not_transposed", "dloss", {"tied": True},
          "ties W_u to W_e reshaped to N_V×d_e instead of transposed", "variant option tied",
          _tie=lambda W_e: W_e.reshape(W_e.shape[::-1])),
    _seam("edloss_rolled_targets", "edloss", {},
          "takes the targets as np.roll(x, −1): the last column is scored against x[0]", "review",
          _nll=lambda P, x: -np.sum(np.log(P[np.roll(x, -1), np.arange(len(x))]))),
    _seam("edloss_without_encoder_norm", "edloss", {"norm_position": "pre"},
          "the decoder reads the pre-LN encoder's output without its final norm", "variant option norm_position",
          _encoder_norm=False),
    _seam("eloss_all_positions", "eloss", {},
          "sums the loss over every position instead of the masked ones", "review",
          _nll=lambda P, x, m: masked_nll(P, x, np.ones_like(m))),
    _seam("eloss_mask_token_one_indexed", "eloss", {},
          "replaces masked tokens by id N_V − 2 (the paper's 1-indexed mask_token, which is bos)", "review",
          _replace=lambda x, m, mask_token: np.where(m == 1, mask_token + 1, x)),
    _seam("eloss_masks_with_1_minus_p", "eloss", {},
          "masks a token with probability 1 − p_mask", "review",
          _draw=lambda rng, x, p_mask: (rng.random(len(x)) >= p_mask).astype(float)),
    _variant("eloss_ignores_token_types", "eloss", {"token_types": True}, {"token_types": False},
             "ignores the token types s (no W_s[:, s[t]])"),
    _variant("eloss_fixed_p_mask", "eloss", {"p_mask": 0.5}, {"p_mask": 0.15},
             "masks each token with BERT's hard-coded probability 0.15 under p_mask=0.5"),
]

# ------------------------------------------------------------------------------------ Algorithms 14, 15
_GREEDY = {"decoding": "greedy"}
_INFERENCE = [
    _seam("dinference_power_tau", "dinference", {"tau": 2.0},
          "samples from p^τ instead of p^(1/τ)", "review", _draw=bugs.power_tau_sample),
    _seam("dinference_greedy_wrong_axis", "dinference", _GREEDY,
          "takes the argmax over positions (the last row of P) instead of the vocabulary", "review",
          _last=lambda P: P[-1]),
    _seam("dinference_first_column", "dinference", _GREEDY,
          "draws from P[:, 0] (the first token's prediction) instead of the last column", "review",
          _last=lambda P: P[:, 0]),
    _seam("dinference_not_truncated", "dinference", {},
          "runs the model on the whole sequence instead of its last ℓ_max tokens (kv_cache=false)", "review",
          _truncate=lambda x, ell_max: x),
    _variant("dinference_ignores_tau", "dinference", {"tau": 0.5}, {"tau": 1.0}, "samples from p under tau=0.5"),
    _seam("dinference_samples_under_greedy", "dinference", _GREEDY,
          "samples (from a generator seeded 0) under decoding=greedy", "variant option decoding",
          _draw=bugs.sample_whatever_decoding),
    _seam("dinference_cache_positions_restart", "dinference", {"kv_cache": True},
          "the cached steps give each new token position 0", "variant option kv_cache",
          _positions=lambda W_p, start, n: W_p[:, :n]),
    _seam("dinference_gqa_first_kv_head", "dinference", {**_GREEDY, **_GROUPED},
          "every query head reads key/value head 0 under n_kv_heads=2", "variant option n_kv_heads",
          _attention=mhattention(_group=lambda h, H, H_kv: 0)),
    _seam("edinference_ignores_eos", "edinference", {},
          "keeps drawing after eos_token, up to ℓ_gen tokens", "review", _stop=lambda y, eos: False),
    _seam("edinference_starts_with_eos", "edinference", {},
          "starts from id N_V − 1 (the paper's 1-indexed bos_token, which is eos)", "review", _start="eos"),
    _seam("edinference_keeps_eos", "edinference", {},
          "returns the final eos_token with the generated tokens", "review", _strip=lambda x, eos: x[1:]),
    _seam("edinference_power_tau", "edinference", {"tau": 0.5},
          "samples from p^τ instead of p^(1/τ)", "variant option tau", _draw=bugs.power_tau_sample),
    _variant("edinference_greedy_under_sample", "edinference", {}, {"decoding": "greedy"},
             "takes the argmax under the default decoding=sample"),
    _seam("edinference_paper_sinusoid_is_vaswani", "edinference", {"position": "sinusoidal-paper"},
          "adds Vaswani et al.'s table (base 10000, 0-indexed) for the paper's", "variant option position",
          _table=_tables(sinusoidal_paper=_VASWANI)),
]

# ------------------------------------------------------------------------- Swin (Liu et al. 2021)
_SHIFTED = {"shifted": True}


def _no_shift_mask(n_h, n_w, M, shift):
    """Every pair of a window may attend: the tokens the roll wrapped around meet their new neighbours."""
    return np.ones((n_h * n_w // (M * M), M * M, M * M), dtype=bool)


def _bias_stride_2m(B_hat, M):
    """The flat relative index with row stride 2M (for 2M − 1), read from the flattened table, wrapping."""
    return relative_bias(B_hat, M, _index=lambda M: relative_index(M, _stride=2 * M), _mode="wrap")


def _norm_after_reduction(G, gamma_m, beta_m, W_m, eps, spread):
    """Swin V2's patch merging: ``LN(W_m x)`` over 2C, with the first 2C entries of the 4C-wide γ_m, β_m."""
    Y = G @ W_m.T
    return layer_norm_rows(Y, gamma_m[:Y.shape[-1]], beta_m[:Y.shape[-1]], eps, _spread=spread)


def _column_major(which):
    """Partition and reverse both with ``which`` (windows or tokens) column-major: consistent with each other."""
    return {"_partition": partial(partition, **{which: "column"}), "_reverse": partial(reverse, **{which: "column"})}


_SWIN = [
    _seam("window_mhattention_roll_reversed", "window_mhattention", _SHIFTED,
          "rolls the grid by +σ before the attention and by −σ after it (the shift's direction reversed)",
          "review", _roll=lambda X, s: np.roll(X, (s, s), axis=(0, 1)),
          _unroll=lambda Y, s: np.roll(Y, (-s, -s), axis=(0, 1))),
    _seam("window_mhattention_without_reverse_roll", "window_mhattention", _SHIFTED,
          "forgets the reverse roll by +σ after the shifted windows' attention", "review",
          _unroll=lambda Y, s: Y),
    _seam("window_mhattention_without_shift_mask", "window_mhattention", _SHIFTED,
          "leaves out the shift mask: tokens attend across the border the roll wrapped around", "review",
          _mask=_no_shift_mask),
    _seam("window_mhattention_shift_mask_inverted", "window_mhattention", _SHIFTED,
          "adds −100 to the scores of the pairs the mask admits instead of those it separates", "review",
          _fill=lambda S, mask: S - 100.0 * mask),
    _seam("window_mhattention_mask_windows_column_major", "window_mhattention", _SHIFTED,
          "numbers the windows column-major while the shift mask is built row-major: a window gets another's "
          "mask", "review", **_column_major("windows")),
    _seam("window_mhattention_shifts_single_window", "window_mhattention", _SHIFTED,
          "shifts by ⌊M/2⌋ (and masks) even where the grid is one window high or wide, where Swin's σ is 0",
          "review", _shift=lambda n_h, n_w, M, shifted: M // 2 if shifted else 0),
    _seam("window_mhattention_bias_transposed", "window_mhattention", {},
          "reads the bias table at key − query instead of query − key (B̂ transposed)", "review",
          _bias=partial(relative_bias, _index=partial(relative_index, _sign=-1))),
    _seam("window_mhattention_bias_stride_2m", "window_mhattention", {},
          "flattens the relative index with row stride 2M instead of 2M − 1 (wrapping past the table's end)",
          "review", _bias=_bias_stride_2m),
    _seam("window_mhattention_bias_scaled", "window_mhattention", {},
          "adds the relative-position bias before the 1/√d_attn scaling, so it is scaled too", "review",
          _score=lambda QK, B, d: (QK + B) / math.sqrt(d)),
    _seam("window_mhattention_tokens_column_major", "window_mhattention", {},
          "reads each window's tokens column-major (and writes them back so): the bias meets the transposed "
          "positions", "review", **_column_major("tokens")),
    _variant("window_mhattention_regular_under_shifted", "window_mhattention", _SHIFTED, {"shifted": False},
             "attends in the regular windows, neither rolled nor masked, under shifted=true"),
    _variant("window_mhattention_shifted_under_regular", "window_mhattention", {}, {"shifted": True},
             "rolls and masks the windows under the default shifted=false"),
    _seam("swin_block_res_post_norm", "swin_block", {},
          "normalises each sublayer's output before the residual, x + LN(f(x)) (Swin V2's res-post-norm)",
          "review", _arrange=lambda X, f, norm: X + norm(f(X))),
    _seam("swin_block_pre_ln_overwrites_residual", "swin_block", {},
          "each sublayer replaces the residual stream x by LN(x)", "review", _arrange=bugs.overwriting_pre_ln),
    _seam("swin_block_gelu_tanh", "swin_block", {},
          "uses GELU's tanh approximation where Swin's nn.GELU is the exact one", "review",
          _activation=gelu_tanh),
    _seam("swin_block_unbiased_variance", "swin_block", {},
          "divides the squared deviations by C − 1 in both layer norms (torch.var's default)", "review",
          _spread=bugs.spread_unbiased),
    _seam("swin_block_without_shift_mask", "swin_block", _SHIFTED,
          "its SW-MSA has no shift mask: tokens attend across the wrapped-around border", "review",
          _attention=window_mhattention(shifted=True, _mask=_no_shift_mask)),
    _variant("swin_block_regular_under_shifted", "swin_block", _SHIFTED, {"shifted": False},
             "attends in the regular windows (W-MSA) under shifted=true"),
    _variant("swin_block_fixed_eps", "swin_block", {"eps": 0.1}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (nn.LayerNorm's default) under eps=0.1"),
    _seam("patch_merging_x0_x2_x1_x3", "patch_merging", {},
          "concatenates the 2×2 group as x0, x2, x1, x3 (the column offset first, a reshape's order)", "review",
          _merge=partial(merge_groups, order=(0, 2, 1, 3))),
    _seam("patch_merging_norm_after_reduction", "patch_merging", {},
          "normalises after the reduction (Swin V2's order), with γ_m, β_m cut to 2d_e", "review",
          _reduce=_norm_after_reduction),
    _seam("patch_merging_eps_outside_sqrt", "patch_merging", {"eps": 0.1},
          "adds eps outside the square root: (x − m)/(√v + ε)", "variant option eps",
          _spread=bugs.spread_eps_outside),
    _variant("patch_merging_fixed_eps", "patch_merging", {"eps": 0.1}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (nn.LayerNorm's default) under eps=0.1"),
    _seam("swin_stage_shifts_even_blocks", "swin_stage", {},
          "shifts the first block of each pair (i % 2 == 0) instead of the second", "review",
          _shifts=(True, False)),
    _seam("swin_stage_never_shifts", "swin_stage", {},
          "gives every block regular windows: the shifted block of each pair is W-MSA", "review",
          _shifts=(False, False)),
    _seam("swin_stage_pairs_share_parameters", "swin_stage", {},
          "every pair reads pair 0's parameters", "review", _pair=lambda l: 0),
    _variant("swin_stage_without_merge", "swin_stage", {}, {"merge": False},
             "leaves out patch merging under the default merge=true"),
    _variant("swin_stage_fixed_eps", "swin_stage", {"eps": 0.1}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (nn.LayerNorm's default) in every norm under eps=0.1"),
    _seam("swin_pools_first_token", "swin", {},
          "classifies the first token instead of the mean over the tokens", "review", _pool=lambda Z: Z[0]),
    _seam("swin_channel_last_patches", "swin", {},
          "flattens each patch as (i, j, c) where the stride-P convolution reads (c, i, j)", "review",
          _patch_order="channel-last"),
    _seam("swin_without_patch_norm", "swin", {},
          "leaves out the layer norm after the patch embedding (patch_norm=False)", "review", _patch_norm=False),
    _seam("swin_shifts_even_blocks", "swin", {},
          "shifts the first block of each pair in every stage instead of the second", "review",
          _stage=partial(swin_stage, _shifts=(True, False))),
    _seam("swin_mlp_width_of_first_stage", "swin", {},
          "sizes every stage's MLP as mlp_ratio·C, the first stage's width, not mlp_ratio·(its own width)",
          "variant option mlp_ratio", _hidden=lambda mlp_ratio, width, C: mlp_ratio * C),
    _variant("swin_mlp_ratio_2_under_4", "swin", {}, {"mlp_ratio": 2},
             "builds every MLP 2·(width) wide under the default mlp_ratio=4: half of each hidden layer is lost"),
    _variant("swin_fixed_eps", "swin", {"eps": 0.1}, {"eps": 1e-5},
             "adds a hard-coded eps = 1e-5 (nn.LayerNorm's default) in every norm under eps=0.1"),
]

MUTANTS = tuple(_EMBEDDING + _ATTENTION + _MHA + _NORM + _DECODER + _CACHED + _ENCODER + _ENCODER_DECODER
                + _LOSSES + _INFERENCE + _SWIN + _SCORE_MUTANTS + _RECURRENT_MUTANTS)


def _z_required_attention(X, Z, mask, W_q, W_k, W_v, b_q=None, b_k=None, b_v=None):
    """Algorithm 4 with the paper's signature ``Attention(X, Z | W_qkv, Mask)``: Z is required."""
    return attention()(X=X, Z=Z, mask=mask, W_q=W_q, W_k=W_k, W_v=W_v, b_q=b_q, b_k=b_k, b_v=b_v)


def _controls():
    """The correct implementation of every algorithm's defaults and of every variant a mutant is checked
    under (so that a mutant's failure is its bug's, not conform's), and Algorithm 4 with Z required."""
    variants = dict.fromkeys([(a, ()) for a in FACTORIES] + sorted(
        {(m.algorithm, tuple(sorted(m.options.items()))) for m in MUTANTS},
        key=lambda v: (list(FACTORIES).index(v[0]), len(v[1]), str(v[1]))))
    controls = [Entry("_".join([a, "correct"] + [f"{k}_{v}" for k, v in o]), a, dict(o), FACTORIES[a](**dict(o)),
                      "", "correct") for a, o in variants]
    return tuple(controls) + (Entry("attention_correct_z_required", "attention", {}, _z_required_attention, "",
                                    "correct"),)


CONTROLS = _controls() + tuple(_SCORE_CONTROLS)

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {
    "attention without the key bias b_k": "KᵀQ + 1·(b_kᵀQ) adds the same number to every score of a query, "
                                          "which the softmax over keys cancels",
    "GQA grouping h % H_kv under n_kv_heads = 1, or at H = H_kv": "h % H_kv and h // (H/H_kv) then agree",
    "eps outside the square root under eps = 0": "√v + 0 = √(v + 0)",
    "sampling from p^τ under τ = 1": "p^τ = p^(1/τ)",
    "a key/value cache that evicts beyond ℓ_max columns": "the cache never holds more than ℓ_max columns",
    "Swin's shift mask as +100 on the admitted scores (or −100, not −∞, on the others)":
        "the softmax over a query's keys cancels a constant added to all of them; the separated pairs' weights "
        "differ by less than e^{−100}",
    "Swin's windows numbered column-major for the tokens, the mask and the reverse alike":
        "attention stays inside each window: the same windows are attended, in another order",
    "Swin's MLPs cut to mlp_ratio·(width) hidden units with mlp_ratio larger than checked":
        "the parameters have fewer hidden units than the cut: every one is used",
}
EQUIVALENT.update(_SCORE_EQUIVALENT)
EQUIVALENT.update(_RECURRENT_EQUIVALENT)
