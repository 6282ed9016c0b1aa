"""The recurrent sequence models: seq2seq (a fixed context, Bahdanau's RNNsearch, Luong's global attention),
Show, Attend and Tell and its doubly stochastic loss, and hierarchical attention networks — on the cells and
layers of :mod:`.recurrent`.

numpy only, one column per token, 0-based indices; every model takes its parameters as one dict ``params``.
Each factory takes the variant's options and returns the function conform calls; its keyword-only
``_``-arguments are the seams the catalogue plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .numerics import softmax
from .recurrent import cell_step, layer, sigmoid

__all__ = ["final_state", "alignment", "seq2seq", "show_attend_tell", "doubly_stochastic", "show_attend_tell_loss",
           "attention_pool", "han"]


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
        dec = (lambda name: p["dec_" + name])
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


# ----------------------------------------------------------------------------------------- captioning
def _gate(p, h):
    """``β = σ(w_βᵀ h + b_β)``."""
    return sigmoid(p["w_beta"] @ h + p["b_beta"])


def _row_major(F):
    """The grid F (n_h×n_w×D) as its n_h·n_w locations, row-major: location (r, c) is column r·n_w + c."""
    return F.reshape(-1, F.shape[-1]).T


def show_attend_tell(*, gate=True, bias="single", inputs="annotations", _grid=_row_major,
                     _mean=lambda A: A.mean(axis=1), _init_c="W_init_c", _gate=_gate,
                     _deep=lambda x, h, z, p: x + p["L_h"] @ h + p["L_z"] @ z, _map=lambda alpha, beta: alpha,
                     **cell_seams):
    """Show, Attend and Tell with soft attention: annotations A (d_z×ℓ_z) — or, with ``inputs="grid"``, a
    feature grid F (n_h×n_w×d_z) read into them by ``_grid`` — and words x ↦ (P, α).

    ``h_0, c_0 = tanh(W_init ā + b)``; per word: ``α = softmax(v_aᵀ tanh(W_a h + U_a a_i))``, the context
    ``ẑ = β A α`` (β = 1 without the gate), the LSTM on ``[E x_t; ẑ]``, ``p = softmax(L_o(E x_t + L_h h +
    L_z ẑ))``.
    """
    step = cell_step("lstm", bias=bias, **cell_seams)

    def show_attend_tell(A, x, params):
        p = params
        a_bar = _mean(A)
        h = np.tanh(p["W_init_h"] @ a_bar + p["b_init_h"])
        c = np.tanh(p[_init_c] @ a_bar + p[_init_c.replace("W_", "b_")])
        K = p["U_a"] @ A                                                        # d_a×ℓ_z
        X = p["E"][:, x]
        P, alphas = [], []
        for t in range(len(x)):
            alpha = softmax(p["v_a"] @ np.tanh((p["W_a"] @ h)[:, None] + K))
            beta = _gate(p, h) if gate else 1.0
            z_hat = beta * (A @ alpha)
            h, c = step(_concat(X[:, t], z_hat), (h, c), p.__getitem__)
            P.append(softmax(p["L_o"] @ _deep(X[:, t], h, z_hat, p)))
            alphas.append(_map(alpha, beta))
        return np.stack(P, axis=1), np.stack(alphas, axis=1)

    if inputs == "annotations":
        return show_attend_tell

    def show_attend_tell_from_grid(F, x, params):
        return show_attend_tell(_grid(F), x, params)
    return show_attend_tell_from_grid


def doubly_stochastic(alpha, weight):
    """``λ Σ_i (1 − Σ_t α_ti)²``: every location's weight summed over the caption's steps."""
    return weight * np.sum((1.0 - alpha.sum(axis=1)) ** 2)


def _nll(P, x):
    """``−Σ_{t=1}^{ℓ−1} log P[x[t+1], t]``."""
    return -np.sum(np.log(P[x[1:], np.arange(len(x) - 1)]))


def show_attend_tell_loss(*, gate=True, bias="single", penalty=1.0, inputs="annotations", _penalty=doubly_stochastic,
                          _nll=_nll, **seams):
    """The caption's negative log-likelihood plus the doubly stochastic penalty."""
    model = show_attend_tell(gate=gate, bias=bias, inputs=inputs, **seams)

    def loss(P, alpha, x):
        return _nll(P, x) + _penalty(alpha, penalty)

    def show_attend_tell_loss(A, x, params):
        return loss(*model(A, x, params), x)

    def show_attend_tell_loss_from_grid(F, x, params):
        return loss(*model(F, x, params), x)
    return show_attend_tell_loss if inputs == "annotations" else show_attend_tell_loss_from_grid


# --------------------------------------------------------------------------------------- hierarchical
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

