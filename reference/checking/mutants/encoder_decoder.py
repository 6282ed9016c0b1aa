"""Algorithm 8, the encoder–decoder transformer (Vaswani et al. 2017)."""

from __future__ import annotations

import numpy as np

from .blocks import Stack
from .numerics import causal

__all__ = ["edtransformer"]


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
