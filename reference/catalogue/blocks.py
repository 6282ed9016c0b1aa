"""The parts Algorithms 8–10 are built from: the embedding line, attention and MLP sublayers arranged pre- or
post-LN, and the unembedding, for every option the stacks share.

Parameters come as one dict of the spec's canonical names (``formal-transformers show NAME --params``);
every per-layer parameter is stacked on a leading layer axis (``W_q`` is L×H×d_attn×d_e, ``gamma1`` L×d_e),
and a prefix (``enc_``, ``dec_``, ``cross_``) names a stack's own.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Callable

import numpy as np

from .attention import mhattention
from .embedding import position_table
from .normalization import normalise
from .numerics import ACTIVATIONS, affine, silu
from .unembedding import unembed

__all__ = ["ATTENTION", "MLP", "pre_ln", "post_ln", "swiglu", "Stack", "overwriting_pre_ln",
           "whole_tensor_norm"]

ATTENTION = ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o", "gamma_q", "gamma_k", "beta_q", "beta_k")
MLP = ("W_mlp1", "W_mlp2", "W_gate", "b_mlp1", "b_mlp2")


def pre_ln(X, f, norm):
    """Pre-LN (GPT-2, Algorithm 10): ``X + f(LN(X))``; the residual stream X is never replaced by LN(X)."""
    return X + f(norm(X))


def post_ln(X, f, norm):
    """Post-LN (Algorithms 8 and 9): ``LN(X + f(X))``."""
    return norm(X + f(X))


def overwriting_pre_ln(X, f, norm):
    """A planted bug: pre-LN that overwrites the residual stream, ``X ← LN(X); X ← X + f(X)``."""
    X = norm(X)
    return X + f(X)


def whole_tensor_norm(X, gamma, beta=None, *, norm="layer", eps=0.0):
    """A planted bug: layer norm with one mean and one variance over the whole d_e×ℓ tensor, not per column."""
    E = X - X.mean() if norm == "layer" else X
    out = E / np.sqrt((E**2).mean() + eps) * gamma[:, None]
    return out if beta is None or norm == "rms" else out + beta[:, None]


def swiglu(gate, up):
    """SwiGLU's hidden layer ``SiLU(W_gate X) ⊙ (W_mlp1 X + b_mlp1 1ᵀ)`` (Shazeer 2020)."""
    return silu(gate) * up


@dataclass(frozen=True)
class Stack:
    """The options Algorithms 8–10 share, and the seams (``_``-fields) bugs are planted through."""

    norm: str = "layer"
    eps: float = 0.0
    position: str = "learned"
    activation: str = "gelu"
    bias: bool = True
    tied: bool = False
    n_kv_heads: int | None = None
    norm_position: str = "pre"
    qk_norm: str | None = None
    score_cap: float | None = None
    logit_cap: float | None = None
    _: KW_ONLY
    _normalise: Callable = normalise
    _attention: Callable | None = None                 # Algorithm 5; None: mhattention of this variant
    _sublayer: Callable | None = None                  # None: pre_ln or post_ln, as norm_position says
    _table: Callable = position_table
    _positions: Callable = lambda W_p, start, n: W_p[:, start:start + n]
    _layer: Callable = lambda l: l                      # the layer whose parameters layer l reads
    _activation: Callable | None = None                # None: ACTIVATIONS[activation]
    _swiglu: Callable = swiglu
    _tie: Callable = lambda W_e: W_e.T
    _unembed: Callable = unembed

    @property
    def qk_and_cap(self) -> dict:
        """What every attention sublayer of the stack takes beyond its weights: the QK-norm (ε the stack's own)
        and the score cap."""
        return {"qk_norm": self.qk_norm, "qk_eps": self.eps, "score_cap": self.score_cap}

    def weights(self, p, prefix, l, names):
        """Layer l's slices of the named parameters, the prefix dropped; biases only where the variant has them."""
        l = self._layer(l)
        return {n: p[prefix + n][l] for n in names
                if prefix + n in p and (self.bias or not n.startswith("b_"))}

    def embed(self, p, tokens, ell_max=None, start=0):
        """``∀t: X[:, t] ← W_e[:, x[t]] + W_p[:, start + t]`` (Algorithms 1 and 2): d_e×ℓ."""
        X = p["W_e"][:, tokens]
        if self.position == "none":
            return X
        table = self._table(self.position, W_p=p.get("W_p"), d_e=len(X), ell_max=ell_max)
        return X + self._positions(table, start, len(tokens))

    def layer_norm(self, p, name, X, l=None):
        """Algorithm 6 on every column with ``gamma<name>`` (and ``beta<name>``), of layer l if given."""
        gamma, beta = p["gamma" + name], p.get("beta" + name)
        if l is not None:
            gamma, beta = gamma[self._layer(l)], None if beta is None else beta[self._layer(l)]
        return self._normalise(X, gamma, beta, norm=self.norm, eps=self.eps)

    def sublayer(self, p, name, l, X, f):
        """``X ← X + f(LN(X))`` (pre) or ``X ← LN(X + f(X))`` (post), the norm ``gamma<name>`` of layer l."""
        arrange = self._sublayer or {"pre": pre_ln, "post": post_ln}[self.norm_position]
        return arrange(X, f, lambda Y: self.layer_norm(p, name, Y, l))

    def attention(self, p, prefix, l, X, Z, mask):
        """``MHAttention(X, Z | W_l, Mask)`` with layer l's ``<prefix>W_q`` …"""
        attend = self._attention or mhattention(bias=self.bias, n_kv_heads=self.n_kv_heads, **self.qk_and_cap)
        return attend(X=X, Z=Z, mask=mask, **self.weights(p, prefix, l, ATTENTION))

    def mlp(self, p, prefix, l, X):
        """``W_mlp2 φ(W_mlp1 X + b_mlp1 1ᵀ) + b_mlp2 1ᵀ`` of layer l; SwiGLU gates the hidden layer."""
        w = self.weights(p, prefix, l, MLP)
        up = affine(w["W_mlp1"], X, w.get("b_mlp1"))                                # d_mlp×ℓ
        if self.activation == "swiglu":
            hidden = self._swiglu(w["W_gate"] @ X, up)
        else:
            hidden = (self._activation or ACTIVATIONS[self.activation])(up)
        return affine(w["W_mlp2"], hidden, w.get("b_mlp2"))

    def unembed(self, p, X, b_u=None):
        """``P ← softmax(W_u X + b_u 1ᵀ)`` (Algorithm 7 on every column); tied: ``W_u = W_eᵀ``; with a
        ``logit_cap`` c the logits are soft-capped first, ``c·tanh(z/c)``."""
        W_u = self._tie(p["W_e"]) if self.tied else p["W_u"]
        if self.logit_cap is None:
            return self._unembed(W_u, X, b_u)
        return self._unembed(W_u, X, b_u, cap=self.logit_cap)
