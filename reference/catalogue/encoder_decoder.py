"""Algorithm 8, the encoder–decoder transformer (Vaswani et al. 2017), and its planted bugs."""

from __future__ import annotations

from functools import partial

import numpy as np

from .blocks import Stack
from .embedding import tables_with, zero_indexed_table
from .entry import Implementation, makers
from .multihead import GROUPED, mhattention, modulo_group
from .normalization import normalise, spread_eps_outside
from .numerics import causal

__all__ = ["edtransformer", "IMPLEMENTATIONS", "MUTANTS"]


def _ones(ell_z, ell_x):
    return np.ones((ell_z, ell_x))


def _causal(ell_z, ell_x):
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
    stack = Stack(activation=activation, norm_position=norm_position, **options)
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
        self_mask, cross_mask = _causal(len(x), len(x)), _cross_mask(len(z), len(x))
        for l in range(len(p["dec_W_q"])):
            X = stack.sublayer(p, "3", l, X, lambda Y: stack.attention(p, "dec_", l, Y, Y, self_mask))
            X = stack.sublayer(p, "4", l, X, lambda Y: stack.attention(p, _cross, l, Y, Z, cross_mask))
            X = stack.sublayer(p, "5", l, X, lambda Y: stack.mlp(p, "dec_", l, Y))
        if pre:
            X = stack.layer_norm(p, "_dec", X)
        return stack.unembed(p, X)
    return edtransformer


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("edtransformer", edtransformer, {"float32": 4e-4, "bfloat16": 7.0},
                   seconds={"quick": (1.3, 0.6), "thorough": (4.8, 2.76)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)

MUTANTS = (
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
)
