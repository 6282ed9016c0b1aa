"""Hierarchical attention networks (Yang et al. 2016) on the layers of :mod:`.recurrent`, and their planted bugs.

numpy only, one column per token, 0-based indices; the model takes its parameters as one dict ``params``.
The factory takes the variant's options and returns the function conform calls; its keyword-only
``_``-arguments are the seams the catalogue (at the end) plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .entry import Implementation, makers
from .numerics import softmax
from .recurrent import elman_on_candidate, layer

__all__ = ["attention_pool", "han", "IMPLEMENTATIONS", "MUTANTS", "EQUIVALENT"]


def attention_pool(Z, W, b, u):
    """Yang et al.'s attention pooling: ``Σ_t α_t z_t`` with ``α = softmax(tanh(W Z + b)ᵀ u)``."""
    return Z @ softmax(u @ np.tanh(W @ Z + b[:, None]))


def han(*, cell="gru", bias="single", reset="after", update="bahdanau", _pool=attention_pool,
        _sentence=("W_s", "b_s", "u_s"), _classify=lambda logits: softmax(logits), **layer_seams):
    """A hierarchical attention network: a document x (ℓ×n_s, column j sentence j) ↦ class probabilities.

    Each sentence's words are encoded by a bidirectional layer (``w_``) and pooled by attention (W_w, b_w,
    u_w); the sentence vectors are encoded by another (``s_``) and pooled (W_s, b_s, u_s); then classified.
    """
    gru = {"reset": reset, "update": update} if cell == "gru" else {}
    encode = layer(cell=cell, direction="bidirectional", bias=bias, **gru, **layer_seams)
    W_s, b_s, u_s = _sentence

    def han(x, params):
        p = params
        S = np.stack([_pool(encode(p["W_e"][:, x[:, j]], lambda name: p["w_" + name]), p["W_w"], p["b_w"],
                            p["u_w"]) for j in range(x.shape[1])], axis=1)     # 2d_h×n_s
        v = _pool(encode(S, lambda name: p["s_" + name]), p[W_s], p[b_s], p[u_s])
        return _classify(p["W_c"] @ v + p["b_c"])
    return han


def _unchanged(H):
    return H


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("han", han,
                   seconds={"quick": (2.6, 0.24), "thorough": (18.5, 2.16)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)

MUTANTS = (
    _seam("han_mean_pooling", "han", {},
          "pools every level with the mean of the states instead of attention", "review",
          _pool=lambda Z, W, b, u: Z.mean(axis=1)),
    _seam("han_sentence_reads_word_attention", "han", {},
          "the sentence level pools with the word level's W_w, b_w, u_w", "review", _sentence=("W_w", "b_w", "u_w")),
    _seam("han_pool_without_tanh", "han", {},
          "scores u_wᵀ (W z_t + b), without the tanh", "review",
          _pool=lambda Z, W, b, u: Z @ softmax(u @ (W @ Z + b[:, None]))),
    _seam("han_returns_logits", "han", {},
          "returns the classifier's logits W_c v + b_c, not their softmax", "review", _classify=_unchanged),
    _seam("han_backward_not_rereversed", "han", {},
          "the encoders' backward states are left in the order computed", "review", _unreverse=_unchanged),
    _seam("han_gru_as_elman", "han", {},
          "runs Elman's cell on the candidate's weights W_xn, W_hn, b_n (no gates) under cell=gru",
          "variant option cell", _step=elman_on_candidate("single")),
    _seam("han_lstm_collects_memory_cells", "han", {"cell": "lstm"},
          "collects the LSTM's memory cells c as the states instead of h under cell=lstm", "variant option cell",
          _state=lambda state: state[-1]),
    _variant("han_before_under_after", "han", {}, {"reset": "before"},
             "resets before the recurrent product under the default reset=after (Yang et al.'s)"),
    _variant("han_cho_under_bahdanau", "han", {}, {"update": "cho"},
             "updates h ← z ⊙ h + (1 − z) ⊙ n under the default update=bahdanau (Yang et al.'s)"),
    _variant("han_ignores_biases", "han", {}, {"bias": "none"},
             "drops the encoders' biases under the default bias=single"),
)

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {
    "HAN's encoder states all listed last position first (both directions reversed together)":
        "attention pooling is invariant under permuting its columns",
}
