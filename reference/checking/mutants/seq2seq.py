"""Recurrent encoder–decoders (the spec's ``seq2seq``): a fixed context, Bahdanau's RNNsearch and Luong's global
attention, on the cells and layers of :mod:`.cells` and :mod:`.recurrent`; their planted bugs.

numpy only, one column per token, 0-based indices; the model takes its parameters as one dict ``params``.
The factory takes the variant's options and returns the function conform calls; its keyword-only
``_``-arguments are the seams the catalogue (at the end) plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .cells import cell_step
from .entry import Implementation, makers
from .numerics import softmax
from .recurrent import layer

__all__ = ["final_state", "alignment", "seq2seq", "IMPLEMENTATIONS", "MUTANTS"]


def _concat(*parts):
    return np.concatenate(parts)


def final_state(H, d_h, encoder, which="final"):
    """An encoder's final state from its states H: ``h_ℓ`` forwards; both ways ``[h⃗_ℓ; h⃖_1]`` (each direction
    after reading the whole source), or ``h⃖_1`` alone (``which="backward"``)."""
    if encoder == "forward":
        return H[:, -1]
    if which == "backward":
        return H[d_h:, 0]
    return _concat(H[:d_h, -1], H[d_h:, 0])


def alignment(kind, s, H, K, p):
    """The score of every source position for the query state s: additive ``v_aᵀ tanh(W_a s + U_a h_j)`` (K =
    U_a H, computed once), dot ``h_jᵀ s`` or general ``h_jᵀ W_a s``; none scaled."""
    if kind == "additive":
        return p["v_a"] @ np.tanh((p["W_a"] @ s)[:, None] + K)
    if kind == "dot":
        return H.T @ s
    return H.T @ (p["W_a"] @ s)


def seq2seq(*, attention="bahdanau", score="additive", cell="gru", encoder="bidirectional",
            init="final", bias="single", reset="before", update="cho", _final=final_state, _score=alignment,
            _feed=_concat, _memory_start=lambda s: np.zeros_like(s), _query=None,
            _attentional=lambda c, s: _concat(c, s), _fixed_context=None, _encoder_seams=None):
    """A recurrent encoder–decoder: source tokens z and target tokens x ↦ P (N_V×ℓ_x), column t the
    distribution of token t + 1 (teacher forcing).

    The encoder is a recurrent layer over the source embeddings (parameters ``enc_``); the decoder starts from
    ``s_0 = tanh(W_init h + b_init)``, h the encoder's final state, and steps its cell (``dec_``) once per
    target token.  Bahdanau: the previous state queries, the cell reads ``[E x_t; c_t]``, the output layer
    ``[s_t; c_t]``; none: c is the encoder's final state throughout; Luong: the cell reads ``E x_t``, the new
    state queries, ``h̃ = tanh(W_c [c_t; s_t])`` feeds the output layer.  ``_query``: which state queries, the
    previous (before the step) or the new one (after it, the step reading the previous step's context).
    """
    query = _query or {"bahdanau": "previous", "luong": "new"}.get(attention)
    gru = {"reset": reset, "update": update} if cell == "gru" else {}
    encode = layer(cell=cell, direction=encoder, bias=bias, **gru, **(_encoder_seams or {}))
    step = cell_step(cell, bias=bias, **gru)
    lstm = cell == "lstm"
    biased = bias != "none"

    def seq2seq(z, x, params):
        p = params
        def dec(name):
            return (p["dec_" + name])
        H = encode(p["W_src"][:, z], lambda name: p["enc_" + name])            # D×ℓ_z
        d_h = len(p["W_init"])
        start = p["W_init"] @ _final(H, d_h, encoder, init)
        s = np.tanh(start + p["b_init"] if biased else start)
        state = (s, _memory_start(s)) if lstm else (s,)
        K = p["U_a"] @ H if attention != "none" and score == "additive" else None
        fixed = (_fixed_context or _final)(H, d_h, encoder, "final") if attention == "none" else None

        def attend(query):
            return H @ softmax(_score(score, query, H, K, p))

        X = p["W_e"][:, x]
        P = []
        c = np.zeros(len(H))
        for t in range(len(x)):
            if attention == "none":
                c = fixed
            elif query == "previous":
                c = attend(state[0])                                            # s_{t−1} queries
            state = step(X[:, t] if attention == "luong" else _feed(X[:, t], c), state, dec)
            if attention != "none" and query == "new":
                c = attend(state[0])                                            # s_t queries
            if attention == "luong":
                out = np.tanh(p["W_c"] @ _attentional(c, state[0]))
            else:
                out = _concat(state[0], c)
            logits = p["W_u"] @ out
            P.append(softmax(logits + p["b_u"] if biased else logits))
        return np.stack(P, axis=1)
    return seq2seq


# ------------------------------------------------------------------------------------- planted pieces
def _final_as_forward(H, d_h, encoder, which="final"):
    """A bidirectional encoder's final state read as a forward one's: ``H[:, −1] = [h⃗_ℓ; h⃖_ℓ]``."""
    return H[:, -1]


def _backward_start_last(H, d_h, encoder, which="final"):
    """``init=backward`` reading h⃖_ℓ (the backward pass after one token) for h⃖_1."""
    return H[d_h:, -1] if which == "backward" else final_state(H, d_h, encoder, which)


def _scaled_dot(kind, s, H, K, p):
    """The dot score divided by √d_h (Vaswani et al.'s scaling, which Luong's dot score has not)."""
    return alignment(kind, s, H, K, p) / np.sqrt(len(s)) if kind == "dot" else alignment(kind, s, H, K, p)


def _general_transposed(kind, s, H, K, p):
    """The general score with W_a transposed: ``h_jᵀ W_aᵀ s``."""
    return H.T @ (p["W_a"].T @ s) if kind == "general" else alignment(kind, s, H, K, p)


def _additive_without_tanh(kind, s, H, K, p):
    """The additive score without its tanh: ``v_aᵀ (W_a s + U_a h_j)``."""
    return p["v_a"] @ ((p["W_a"] @ s)[:, None] + K) if kind == "additive" else alignment(kind, s, H, K, p)


def _unchanged(H):
    return H


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (Implementation("seq2seq", seq2seq, {"float32": 9e-6, "bfloat16": 0.5}),)
_seam, _variant = makers(*IMPLEMENTATIONS)
_FORWARD_ENCODER = {"encoder": "forward"}
_LUONG_DOT = {"attention": "luong", "score": "dot", "encoder": "forward"}

MUTANTS = (
    _seam("seq2seq_bahdanau_queries_new_state", "seq2seq", {},
          "attends after the step, queried with the new state s_t (the step reading the previous context)",
          "review", _query="new"),
    _seam("seq2seq_context_not_fed", "seq2seq", {},
          "the decoder cell reads E x_t alone: the context's columns of its input weights are never used",
          "review", _feed=lambda x, c: np.concatenate([x, np.zeros_like(c)])),
    _seam("seq2seq_additive_without_tanh", "seq2seq", {},
          "scores v_aᵀ (W_a s + U_a h_j), without the tanh", "review", _score=_additive_without_tanh),
    _seam("seq2seq_encoder_backward_not_rereversed", "seq2seq", {},
          "the encoder's backward states are left in the order computed", "review",
          _encoder_seams={"_unreverse": _unchanged}),
    _seam("seq2seq_luong_queries_previous_state", "seq2seq", {"attention": "luong"},
          "queries with the previous state s_{t−1} (Bahdanau's) under attention=luong", "variant option attention",
          _query="previous"),
    _seam("seq2seq_fixed_context_not_fed", "seq2seq", {"attention": "none"},
          "feeds the fixed context only through s_0, not to every step, under attention=none",
          "variant option attention", _feed=lambda x, c: np.concatenate([x, np.zeros_like(c)])),
    _seam("seq2seq_fixed_context_mean", "seq2seq", {"attention": "none"},
          "takes the mean of the annotations as the fixed context instead of the final state", "review",
          _fixed_context=lambda H, d_h, encoder, which: H.mean(axis=1)),
    _seam("seq2seq_final_state_last_column", "seq2seq", {},
          "starts the decoder from H[:, −1] = [h⃗_ℓ; h⃖_ℓ], a forward encoder's final state, under "
          "encoder=bidirectional", "variant option encoder", _final=_final_as_forward),
    _seam("seq2seq_backward_init_last_position", "seq2seq", {"init": "backward"},
          "starts the decoder from h⃖_ℓ (the backward pass after one token) instead of h⃖_1", "variant option init",
          _final=_backward_start_last),
    _seam("seq2seq_dot_scaled", "seq2seq", _LUONG_DOT,
          "divides the dot score by √d_h under score=dot", "variant option score", _score=_scaled_dot),
    _variant("seq2seq_dot_under_general", "seq2seq", {"score": "general", **_FORWARD_ENCODER}, {"score": "dot"},
             "scores h_jᵀ s, ignoring W_a, under score=general"),
    _seam("seq2seq_general_transposed", "seq2seq", {"attention": "luong", "score": "general", **_FORWARD_ENCODER},
          "scores h_jᵀ W_aᵀ s (W_a transposed)", "review", _score=_general_transposed),
    _seam("seq2seq_luong_attentional_swapped", "seq2seq", _LUONG_DOT,
          "builds h̃ = tanh(W_c [s_t; c_t]) instead of tanh(W_c [c_t; s_t])", "review",
          _attentional=lambda c, s: np.concatenate([s, c])),
    _seam("seq2seq_lstm_memory_from_start", "seq2seq", {"cell": "lstm"},
          "starts the decoder's memory cell from s_0 too, not from 0, under cell=lstm", "variant option cell",
          _memory_start=lambda s: s),
    _variant("seq2seq_ignores_biases", "seq2seq", {}, {"bias": "none"},
             "drops the cells' biases, b_init and b_u under the default bias=single"),
    _variant("seq2seq_after_under_before", "seq2seq", {}, {"reset": "after"},
             "resets after the recurrent product under the default reset=before"),
    _variant("seq2seq_bahdanau_update_under_cho", "seq2seq", {}, {"update": "bahdanau"},
             "updates with z and 1 − z swapped under the default update=cho"),
)
