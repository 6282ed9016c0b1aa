"""Algorithms 8–10: the encoder–decoder transformer (Vaswani et al. 2017), the encoder-only (BERT, and ViT on
images) and the decoder-only (GPT), and their planted bugs.  With a key/value cache the decoder is
:mod:`.kv_cache`'s."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from .attention import (
    GROUPED,
    attend,
    chunked_attention,
    keys_only,
    mhattention,
    modulo_group,
    qk_weights,
    rope_options,
    rope_settings,
    soft_cap,
    unstable_softmax,
    unstable_weights,
)
from .blocks import Stack, overwriting_pre_ln, whole_tensor_norm
from .embedding import TABLES, tables_with, zero_indexed_table
from .entry import Implementation, makers
from .normalization import normalise, spread_eps_outside
from .numerics import affine, causal, gelu, gelu_tanh, silu, softmax

__all__ = ["edtransformer", "image_patches", "etransformer", "context", "dtransformer", "stack_of", "IMPLEMENTATIONS",
           "MUTANTS"]


def stack_of(**options) -> Stack:
    """The :class:`~.blocks.Stack` of a stack's ``options`` (and seams), the rotary ones (``rope`` …) given to its
    attention — every sublayer's, cross-attention's too — unless a seam replaces that attention (``qk_norm`` and
    ``score_cap`` are the Stack's own)."""
    rope = rope_options(options)
    stack = Stack(**options)
    if rope_settings(rope) is None or stack._attention is not None:
        return stack
    return replace(stack, _attention=mhattention(bias=stack.bias, n_kv_heads=stack.n_kv_heads, **stack.qk_and_cap,
                                                 **rope))


# ------------------------------------------------------------------------------------ Algorithm 8
def _ones(ell_z, ell_x):
    return np.ones((ell_z, ell_x))


def _causal_pair(ell_z, ell_x):
    return causal(ell_z, ell_x)


def edtransformer(*, activation="relu", norm_position="post", _encoder_mask=_ones, _cross_mask=_ones,
                  _cross="cross_", _encoder_norm=True, _decoder_reads=lambda embedded, encoded: encoded,
                  **options):
    """Algorithm 8: ``P ← EDTransformer(z, x | θ)``, N_V×ℓ_x, column t the distribution of token t + 1.

    Post-LN and ReLU by default (the paper's).  Encoder layers: self-attention (``enc_``, Mask ≡ 1), MLP;
    decoder layers: causal self-attention (``dec_``), cross-attention to the encoder's output with its own
    weights (``cross_``, Mask ≡ 1), MLP (``dec_``); W_e and W_p are shared by both.  Pre-LN adds a final norm
    to each stack (``gamma_enc``, ``gamma_dec``).
    """
    stack = stack_of(activation=activation, norm_position=norm_position, **options)
    pre = norm_position == "pre"

    def encode(p, z, ell_max):
        """The encoder: what the decoder's cross-attention reads, d_e×ℓ_z."""
        Z = embedded = stack.embed(p, z, ell_max)
        mask = _encoder_mask(len(z), len(z))
        for l in range(len(p["enc_W_q"])):
            Z = stack.sublayer(p, "1", l, Z, lambda Y: stack.attention(p, "enc_", l, Y, Y, mask))
            Z = stack.sublayer(p, "2", l, Z, lambda Y: stack.mlp(p, "enc_", l, Y))
        if pre and _encoder_norm:
            Z = stack.layer_norm(p, "_enc", Z)                                 # the encoder's final norm
        return _decoder_reads(embedded, Z)

    def edtransformer(z, x, params, ell_max=None):
        p = params
        Z = encode(p, z, ell_max)
        X = stack.embed(p, x, ell_max)                                          # d_e×ℓ_x
        self_mask, cross_mask = _causal_pair(len(x), len(x)), _cross_mask(len(z), len(x))
        for l in range(len(p["dec_W_q"])):
            X = stack.sublayer(p, "3", l, X, lambda Y: stack.attention(p, "dec_", l, Y, Y, self_mask))
            X = stack.sublayer(p, "4", l, X, lambda Y: stack.attention(p, _cross, l, Y, Z, cross_mask))
            X = stack.sublayer(p, "5", l, X, lambda Y: stack.mlp(p, "dec_", l, Y))
        if pre:
            X = stack.layer_norm(p, "_dec", X)
        return stack.unembed(p, X)
    return edtransformer


# ------------------------------------------------------------------------------------ Algorithm 9
def image_patches(image, P, order, *, _row_major=True):
    """A channel-last image (P·n_h)×(P·n_w)×C as its patches, one column of P²·C values per patch, patch by
    patch row-major (``_row_major=False``: column-major); a patch's values in (c, i, j) order
    (``channel-first``) or (i, j, c) (``channel-last``)."""
    rows, cols, _ = image.shape
    corners = [(r, c) for r in range(0, rows, P) for c in range(0, cols, P)]
    if not _row_major:
        corners.sort(key=lambda rc: (rc[1], rc[0]))
    blocks = [image[r:r + P, c:c + P, :] for r, c in corners]                  # each P×P×C
    return np.stack([b.transpose(2, 0, 1).ravel() if order == "channel-first" else b.ravel() for b in blocks],
                    axis=1)


def _tokens(stack, p, x, s, ell_max):
    """``X[:, t] ← W_e[:, x[t]] + W_p[:, t] (+ W_s[:, s[t]])``: BERT adds token-type (segment) embeddings."""
    X = stack.embed(p, x, ell_max)
    return X if s is None else X + p["W_s"][:, s]


def _patches(stack, p, X_p, _class_token):
    """ViT: ``X ← [x_class, W_patch X_p + b_patch 1ᵀ] + W_p``: d_e×(ℓ + 1), the class token first."""
    patches = affine(p["W_patch"], X_p, p.get("b_patch") if stack.bias else None)    # d_e×ℓ
    return _class_token(p["x_class"], patches) + p["W_p"]


def _mlm(stack, p, X, unembedding_bias, activation):
    """The masked-LM head, Algorithm 9's last three lines: ``X ← GELU(W_f X + b_f 1ᵀ)``, ``LN(X | γ, β)``,
    ``P ← softmax(W_u X)`` (N_V×ℓ); its GELU is the exact one whatever the layers' activation."""
    if stack.norm_position == "pre":
        X = stack.layer_norm(p, "", X)                                         # the final layer norm
    X = activation(affine(p["W_f"], X, p.get("b_f") if stack.bias else None))
    X = stack.layer_norm(p, "_f", X)
    return stack.unembed(p, X, p["b_u"] if unembedding_bias else None)


def _classifier(stack, p, X, _class_column, cap=True):
    """ViT's head: ``p ← softmax(W_head LN(X)[:, class] + b_head)`` over the classes, the logits soft-capped by
    the stack's ``logit_cap`` (``cap=False`` leaves them uncapped: a planted bug)."""
    X = stack.layer_norm(p, "", X)
    logits = affine(p["W_head"], X[:, _class_column], p.get("b_head") if stack.bias else None)
    return softmax(soft_cap(logits, stack.logit_cap if cap else None))


def etransformer(*, token_types=False, embedding_norm=False, unembedding_bias=False, inputs="tokens",
                 head="mlm", norm_position="post", patch_order=None,
                 _class_token=lambda x_class, patches: np.concatenate([x_class, patches], axis=1),
                 _class_column=0, _head_activation=gelu, _patches_of=image_patches, _head_cap=True, **options):
    """Algorithm 9: ``P ← ETransformer(x | θ)``, column t the distribution of the token at t (BERT), or
    ViT's ``p`` over the classes (from patches X_p, or the image X_img cut into patches of side P, read
    from W_patch's P²·C columns).  Post-LN, GELU, Mask ≡ 1; W_u is N_V×d_f (:ref:`decision-unembedding-width`)."""
    stack = stack_of(norm_position=norm_position, **options)

    def etransformer(params, x=None, s=None, X_p=None, X_img=None, ell_max=None):
        p = params
        if inputs == "image":
            P = int(round((p["W_patch"].shape[1] / X_img.shape[2]) ** 0.5))
            X_p = _patches_of(X_img, P, patch_order)
        if inputs == "tokens":
            X = _tokens(stack, p, x, s if token_types else None, ell_max)       # d_e×ℓ
        else:
            X = _patches(stack, p, X_p, _class_token)                            # d_e×(ℓ + 1)
        if embedding_norm:
            X = stack.layer_norm(p, "_e", X)
        mask = np.ones((X.shape[1], X.shape[1]))                                # every token sees every token
        for l in range(len(p["W_q"])):
            X = stack.sublayer(p, "1", l, X, lambda Y: stack.attention(p, "", l, Y, Y, mask))
            X = stack.sublayer(p, "2", l, X, lambda Y: stack.mlp(p, "", l, Y))
        if head == "mlm":
            return _mlm(stack, p, X, unembedding_bias, _head_activation)
        return _classifier(stack, p, X, _class_column, _head_cap)
    return etransformer


# ----------------------------------------------------------------------------------- Algorithm 10
def context(params, ell_max=None):
    """ℓ_max: the learned position table's width, else the size given (None without positions)."""
    return params["W_p"].shape[1] if "W_p" in params else ell_max


def _causal(ell, ell_max):
    return causal(ell, ell)                                    # Mask[t_z, t_x] = [[t_z ≤ t_x]]


def dtransformer(*, _mask=_causal, _final_norm=True, **options):
    """Algorithm 10: ``P ← DTransformer(x | θ)``, N_V×ℓ, column t the distribution of token t + 1.

    Defaults as the paper's: pre-LN, GELU, causal self-attention, learned positions, a final layer norm.
    """
    stack = stack_of(**options)

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


# ------------------------------------------------------------------------------------- planted pieces
def _mask_right_only_at_ell_max(ell, ell_max):
    """The top-left ℓ×ℓ block of an ℓ_max×ℓ_max causal mask, aligned bottom-right: causal only at ℓ = ℓ_max."""
    return causal(ell, ell, shift=ell_max - ell)


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("edtransformer", edtransformer,
                   seconds={"quick": (3.0, 0.6), "thorough": (12.9, 2.76)}),
    Implementation("etransformer", etransformer,
                   seconds={"quick": (1.8, 0.26), "thorough": (7.9, 1.28)}),
    Implementation("dtransformer", dtransformer,
                   seconds={"quick": (1.3, 0.26), "thorough": (5.1, 1.19)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_PAPER, _VASWANI = TABLES["sinusoidal-paper"], TABLES["sinusoidal-vaswani"]
_VIT = {"inputs": "patches", "head": "classifier"}
_IMAGE = {"inputs": "image", "head": "classifier", "patch_order": "channel-first"}


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
          _normalise=partial(normalise, _spread=spread_eps_outside)),
    _seam("edtransformer_vaswani_base_ell_max", "edtransformer", {"position": "sinusoidal-vaswani"},
          "uses base ℓ_max instead of 10000 in Vaswani et al.'s table", "variant option position",
          _table=tables_with(sinusoidal_vaswani=zero_indexed_table)),
    _variant("edtransformer_gelu_under_relu", "edtransformer", {}, {"activation": "gelu"},
             "uses GELU in the MLPs under the default activation=relu (the paper's Algorithm 8)"),
    _variant("edtransformer_ignores_biases", "edtransformer", {}, {"bias": False},
             "drops every bias of the attention and the MLPs under the default bias=true"),
    _variant("edtransformer_untied_reads_w_e", "edtransformer", {}, {"tied": True},
             "unembeds with W_eᵀ and ignores W_u under the default tied=false"),
    _seam("edtransformer_gqa_modulo", "edtransformer", GROUPED,
          "query head h reads key/value head h % H_kv instead of h // (H/H_kv)", "variant option n_kv_heads",
          _attention=mhattention(_group=modulo_group)),
    _variant("edtransformer_post_ln_under_pre", "edtransformer", {"norm_position": "pre"},
             {"norm_position": "post"}, "arranges every sublayer post-LN under norm_position=pre"),
    _seam("edtransformer_without_encoder_norm", "edtransformer", {"norm_position": "pre"},
          "the decoder reads the pre-LN encoder's output without its final norm", "variant option norm_position",
          _encoder_norm=False),
]

_ENCODER = [

    _seam("etransformer_layer_norm_over_whole_tensor", "etransformer", {},
          "normalises the whole d_e×ℓ tensor with one mean and variance instead of each column", "README",
          _normalise=whole_tensor_norm),
    _variant("etransformer_layer_norm_under_rms", "etransformer", {"norm": "rms"}, {"norm": "layer"},
             "subtracts the mean in every norm under norm=rms"),
    _seam("etransformer_eps_outside_sqrt", "etransformer", {"eps": 0.1},
          "adds eps outside the square root in every norm: (e − m)/(√v + ε)", "variant option eps",
          _normalise=partial(normalise, _spread=spread_eps_outside)),
    _seam("etransformer_paper_sinusoid_zero_indexed", "etransformer", {"position": "sinusoidal-paper"},
          "reads the paper's sinusoid formula (base ℓ_max) with 0-indexed t and i", "variant option position",
          _table=tables_with(sinusoidal_paper=zero_indexed_table)),
    _seam("etransformer_head_gelu_tanh", "etransformer", {"activation": "gelu-tanh"},
          "uses the layers' GELU-tanh in the head, whose GELU is the exact one", "variant option activation",
          _head_activation=gelu_tanh),
    _variant("etransformer_ignores_biases", "etransformer", {}, {"bias": False},
             "drops every bias of the layers and of W_f under the default bias=true"),
    _seam("etransformer_tied_not_transposed", "etransformer", {"tied": True},
          "ties W_u to W_e reshaped to N_V×d_e instead of transposed", "variant option tied",
          _tie=lambda W_e: W_e.reshape(W_e.shape[::-1])),
    _seam("etransformer_gqa_modulo", "etransformer", GROUPED,
          "query head h reads key/value head h % H_kv instead of h // (H/H_kv)", "variant option n_kv_heads",
          _attention=mhattention(_group=modulo_group)),
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
    _seam("dtransformer_rope_keys_only", "dtransformer", {"rope": "interleaved"},
          "every layer turns its keys but not its queries", "review",
          _attention=mhattention(rope="interleaved", _rotate=keys_only)),
    _variant("dtransformer_rope_half_under_interleaved", "dtransformer", {"rope": "interleaved"}, {"rope": "half"},
             "pairs row k with row k + d/2 in every layer where rope=interleaved pairs 2k with 2k + 1"),
]

_RMS_QK, _LAYER_QK, _SCORE_CAP, _LOGIT_CAP = ({"qk_norm": "rms"}, {"qk_norm": "layer"}, {"score_cap": 2.0},
                                              {"logit_cap": 2.0})

_QK_AND_CAPS = [
    _variant("dtransformer_qk_norm_ignored", "dtransformer", _RMS_QK, {"qk_norm": None},
             "leaves every layer's queries and keys unnormalised under qk_norm=rms"),
    _seam("dtransformer_qk_norm_queries_only", "dtransformer", _LAYER_QK,
          "every layer normalises its queries but not its keys under qk_norm=layer", "variant option qk_norm",
          _attention=mhattention(qk_norm="layer", _qk=partial(qk_weights, _keys=False))),
    _seam("dtransformer_score_cap_after_mask", "dtransformer", _SCORE_CAP,
          "every layer soft-caps its scores after the causal mask: hidden keys become −c", "variant option score_cap",
          _attention=mhattention(score_cap=2.0, _attend=partial(attend, _cap_first=False))),
    _variant("dtransformer_logit_cap_ignored", "dtransformer", _LOGIT_CAP, {"logit_cap": None},
             "leaves the final logits uncapped under logit_cap=2"),
    _variant("edtransformer_qk_norm_ignored", "edtransformer", _LAYER_QK, {"qk_norm": None},
             "leaves every attention's queries and keys unnormalised under qk_norm=layer"),
    _seam("edtransformer_qk_eps_zero", "edtransformer", {**_RMS_QK, "eps": 0.1},
          "normalises queries and keys with ε = 10⁻⁶, not the stack's eps=0.1", "variant option qk_norm",
          _attention=mhattention(qk_norm="rms")),
    _variant("edtransformer_score_cap_ignored", "edtransformer", _SCORE_CAP, {"score_cap": None},
             "leaves every attention's scaled scores uncapped under score_cap=2"),
    _variant("edtransformer_logit_cap_ignored", "edtransformer", _LOGIT_CAP, {"logit_cap": None},
             "leaves the decoder's final logits uncapped under logit_cap=2"),
    _variant("etransformer_qk_rms_under_layer", "etransformer", _LAYER_QK, {"qk_norm": "rms"},
             "takes RMS norm of every layer's queries and keys under qk_norm=layer"),
    _variant("etransformer_score_cap_ignored", "etransformer", _SCORE_CAP, {"score_cap": None},
             "leaves every layer's scaled scores uncapped under score_cap=2"),
    _variant("etransformer_logit_cap_ignored", "etransformer", _LOGIT_CAP, {"logit_cap": None},
             "leaves the masked-LM head's logits uncapped under logit_cap=2"),
    _seam("etransformer_classifier_logit_cap_ignored", "etransformer", {**_VIT, **_LOGIT_CAP},
          "leaves ViT's classifier logits uncapped under logit_cap=2", "variant option logit_cap", _head_cap=False),
]

MUTANTS = tuple(_ENCODER_DECODER + _ENCODER + _DECODER + _QK_AND_CAPS)
