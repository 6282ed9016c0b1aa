"""Algorithm 9, the encoder-only transformer: BERT (masked-LM head) and ViT (patches or the image itself,
classifier head); its planted bugs."""

from __future__ import annotations

from functools import partial

import numpy as np

from .blocks import Stack, whole_tensor_norm
from .embedding import tables_with, zero_indexed_table
from .entry import Implementation, makers
from .multihead import GROUPED, mhattention, modulo_group
from .normalization import normalise, spread_eps_outside
from .numerics import affine, gelu, gelu_tanh, softmax

__all__ = ["etransformer", "image_patches", "IMPLEMENTATIONS", "MUTANTS"]


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


def _classifier(stack, p, X, _class_column):
    """ViT's head: ``p ← softmax(W_head LN(X)[:, class] + b_head)`` over the classes."""
    X = stack.layer_norm(p, "", X)
    return softmax(affine(p["W_head"], X[:, _class_column], p.get("b_head") if stack.bias else None))


def etransformer(*, token_types=False, embedding_norm=False, unembedding_bias=False, inputs="tokens",
                 head="mlm", norm_position="post", patch_order=None,
                 _class_token=lambda x_class, patches: np.concatenate([x_class, patches], axis=1),
                 _class_column=0, _head_activation=gelu, _patches_of=image_patches, **options):
    """Algorithm 9: ``P ← ETransformer(x | θ)``, column t the distribution of the token at t (BERT), or
    ViT's ``p`` over the classes (from patches X_p, or the image X_img cut into patches of side P, read
    from W_patch's P²·C columns).  Post-LN, GELU, Mask ≡ 1; W_u is N_V×d_f (:ref:`decision-unembedding-width`)."""
    stack = Stack(norm_position=norm_position, **options)

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
        return _classifier(stack, p, X, _class_column)
    return etransformer


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("etransformer", etransformer, {"float32": 4e-5, "bfloat16": 0.7},
                   seconds={"quick": (0.9, 0.26), "thorough": (3.0, 1.28)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_VIT = {"inputs": "patches", "head": "classifier"}
_IMAGE = {"inputs": "image", "head": "classifier", "patch_order": "channel-first"}

MUTANTS = (
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
)
