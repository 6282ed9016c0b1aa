"""Recurrent encoder–decoders (the spec's ``seq2seq``): a fixed context, Bahdanau's RNNsearch and Luong's global
attention, on the cells and layers of :mod:`.recurrent`; their planted bugs.

numpy only, one column per token, 0-based indices; the model takes its parameters as one dict ``params``.
The factory takes the variant's options and returns the function conform calls; its keyword-only
``_``-arguments are the seams the catalogue (at the end) plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .entry import Entry, Implementation, makers
from .numerics import softmax
from .recurrent import cell_step, layer

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
    U_a H, computed once; ``+ b_a`` inside the tanh when the parameters have it), dot ``h_jᵀ s`` or general
    ``h_jᵀ W_a s``; none scaled."""
    if kind == "additive":
        side = p["W_a"] @ s + p["b_a"] if "b_a" in p else p["W_a"] @ s
        return p["v_a"] @ np.tanh(side[:, None] + K)
    if kind == "dot":
        return H.T @ s
    return H.T @ (p["W_a"] @ s)


def readout(output, s, c, e):
    """What the output layer reads: ``[s; c]``, ``[s; c; E x_t]`` or ``[E x_t; s; c]``."""
    parts = {"state_context": (s, c), "state_context_embedding": (s, c, e), "embedding_state_context": (e, s, c)}
    return _concat(*parts[output])


def seq2seq(*, attention="bahdanau", score="additive", cell="gru", encoder="bidirectional",
            init="final", bias="single", reset="before", update="cho", align_bias=False, output="state_context",
            _final=final_state, _score=alignment, _readout=readout,
            _feed=_concat, _memory_start=lambda s: np.zeros_like(s), _query=None,
            _attentional=lambda c, s: _concat(c, s), _fixed_context=None, _encoder_seams=None):
    """A recurrent encoder–decoder: source tokens z and target tokens x ↦ P (N_V×ℓ_x), column t the
    distribution of token t + 1 (teacher forcing).

    The encoder is a recurrent layer over the source embeddings (parameters ``enc_``); the decoder starts from
    ``s_0 = tanh(W_init h + b_init)``, h the encoder's final state, and steps its cell (``dec_``) once per
    target token.  Bahdanau: the previous state queries, the cell reads ``[E x_t; c_t]``, the output layer
    ``[s_t; c_t]`` (``output``: with ``E x_t`` after or before); none: c is the encoder's final state
    throughout; Luong: the cell reads ``E x_t``, the new state queries, ``h̃ = tanh(W_c [c_t; s_t])`` feeds the
    output layer (``align_bias``: ``b_a`` joins ``W_a s`` in the additive score).  ``_query``: which state queries, the
    previous (before the step) or the new one (after it, the step reading the previous step's context).
    """
    query = _query or {"bahdanau": "previous", "luong": "new"}.get(attention)
    gru = {"reset": reset, "update": update} if cell == "gru" else {}
    encode = layer(cell=cell, direction=encoder, bias=bias, **gru, **(_encoder_seams or {}))
    step = cell_step(cell, bias=bias, **gru)
    lstm = cell == "lstm"
    biased = bias != "none"

    def seq2seq(z, x, params):
        p = params if align_bias else {k: v for k, v in params.items() if k != "b_a"}
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
                out = _readout(output, state[0], c, X[:, t])
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
IMPLEMENTATIONS = (
    Implementation("seq2seq", seq2seq,
                   seconds={"quick": (2.3, 0.21), "thorough": (9.5, 1.63)}),
)
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


# ---------------------------------- seq2seq as the widely copied PyTorch seq2seq-with-attention code writes it
def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _gru_step(x, h, m, name):
    """torch.nn.GRU's step on rows: gates stacked [r; z; n] in weight_ih/weight_hh, both biases, the reset after
    the recurrent product, ``h ← (1 − z) ⊙ n + z ⊙ h``."""
    gi = x @ m[f"weight_ih_{name}"].T + m[f"bias_ih_{name}"]
    gh = h @ m[f"weight_hh_{name}"].T + m[f"bias_hh_{name}"]
    (i_r, i_z, i_n), (h_r, h_z, h_n) = np.split(gi, 3, axis=-1), np.split(gh, 3, axis=-1)
    r, z = _sigmoid(i_r + h_r), _sigmoid(i_z + h_z)
    n = np.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


def _softmax_last(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def torch_style_seq2seq(src, trg, m, *, cat_order="sh", out_order=("output", "weighted", "embedded"),
                        attn_bias=True):
    """Encoder (embedding, bidirectional GRU, ``tanh(fc(cat(hidden[-2], hidden[-1])))``), attention
    (``v(tanh(attn(cat(hidden, encoder_outputs))))``, softmax over the source) and decoder (GRU over
    ``cat(embedded, weighted)``, ``fc_out(cat(output, weighted, embedded))``), tokens as rows, ``nn.Linear``
    weights (out × in) in ``m`` under the module's names; returns the distributions, one row per target token."""
    enc = {k[len("encoder.rnn."):]: v for k, v in m.items() if k.startswith("encoder.rnn.")}
    dec = {k[len("decoder.rnn."):]: v for k, v in m.items() if k.startswith("decoder.rnn.")}
    emb = m["encoder.embedding.weight"][src]                                   # ℓ_z×d_e
    d_h = enc["weight_hh_l0"].shape[1]
    forward, backward, h_f, h_b = [], [], np.zeros(d_h), np.zeros(d_h)
    for t in range(len(src)):
        h_f = _gru_step(emb[t], h_f, enc, "l0")
        h_b = _gru_step(emb[len(src) - 1 - t], h_b, enc, "l0_reverse")
        forward.append(h_f)
        backward.insert(0, h_b)
    encoder_outputs = np.concatenate([np.stack(forward), np.stack(backward)], axis=1)   # ℓ_z×2d_h
    hidden = np.tanh(np.concatenate([h_f, h_b]) @ m["encoder.fc.weight"].T + m["encoder.fc.bias"])
    out = []
    for t in range(len(trg)):
        embedded = m["decoder.embedding.weight"][trg[t]]
        repeated = np.repeat(hidden[None], len(src), axis=0)                    # ℓ_z×d_h
        pair = (repeated, encoder_outputs) if cat_order == "sh" else (encoder_outputs, repeated)
        energy = np.concatenate(pair, axis=1) @ m["decoder.attention.attn.weight"].T
        energy = np.tanh(energy + m["decoder.attention.attn.bias"] if attn_bias else energy)
        a = _softmax_last(energy @ m["decoder.attention.v.weight"].T[:, 0])     # ℓ_z
        weighted = a @ encoder_outputs                                          # 2d_h
        output = hidden = _gru_step(np.concatenate([embedded, weighted]), hidden, dec, "l0")
        parts = {"output": output, "weighted": weighted, "embedded": embedded}
        prediction = np.concatenate([parts[k] for k in out_order]) @ m["decoder.fc_out.weight"].T
        out.append(_softmax_last(prediction + m["decoder.fc_out.bias"]))
    return np.stack(out)


def _torch_gru(p, prefix, suffix):
    """nn.GRU's stacked gate weights from the spec's per-gate ones (blocks, in torch's order r, z, n)."""
    def stack(kind):
        return np.concatenate([p[f"{prefix}{kind}{g}{suffix}"] for g in "rzn"])
    return {"weight_ih": stack("W_x"), "weight_hh": stack("W_h"), "bias_ih": stack("b_x"), "bias_hh": stack("b_h")}


def torch_module_params(p, cat_order="sh"):
    """The adapter: the spec's parameters under the torch modules' names, as blocks of the same matrices (the
    attention's one weight over ``cat(hidden, encoder_outputs)`` is ``[W_a, U_a]``; over the other order
    ``[U_a, W_a]``).  Embeddings as rows, as nn.Embedding keeps them."""
    m = {"encoder.embedding.weight": p["W_src"].T, "decoder.embedding.weight": p["W_e"].T,
         "encoder.fc.weight": p["W_init"], "encoder.fc.bias": p["b_init"],
         "decoder.attention.attn.weight": np.concatenate(
             [p["W_a"], p["U_a"]] if cat_order == "sh" else [p["U_a"], p["W_a"]], axis=1),
         "decoder.attention.attn.bias": p["b_a"], "decoder.attention.v.weight": p["v_a"][None],
         "decoder.fc_out.weight": p["W_u"], "decoder.fc_out.bias": p["b_u"]}
    for direction, suffix in (("l0", ""), ("l0_reverse", "_back")):
        m.update({f"encoder.rnn.{k}_{direction}": v for k, v in _torch_gru(p, "enc_", suffix).items()})
    m.update({f"decoder.rnn.{k}_l0": v for k, v in _torch_gru(p, "dec_", "").items()})
    return m


def torch_style(*, cat_order="sh", adapter_order=None, **seams):
    """What conform calls: the spec's (z, x, params) mapped onto :func:`torch_style_seq2seq`'s names, P back as
    columns (``adapter_order``: the attention weight's blocks assembled for another cat order — a bug)."""
    def seq2seq(z, x, params):
        m = torch_module_params(params, adapter_order or cat_order)
        return torch_style_seq2seq(z, x, m, cat_order=cat_order, **seams).T
    return seq2seq


#: The variant the widely copied code is: torch's GRU (both biases, the reset after), nn.Linear's bias in the
#: additive score, and the output layer over cat(output, weighted, embedded).
TORCH_STYLE = {"bias": "double", "reset": "after", "align_bias": True, "output": "state_context_embedding"}

MUTANTS += (
    _variant("seq2seq_align_bias_ignored", "seq2seq", {"align_bias": True}, {"align_bias": False},
             "leaves b_a out of the additive score's tanh under align_bias=true"),
    _variant("seq2seq_readout_embedding_first", "seq2seq", {"output": "state_context_embedding"},
             {"output": "embedding_state_context"},
             "reads [E x_t; s_t; c_t] under output=state_context_embedding ([s_t; c_t; E x_t])"),
    _seam("seq2seq_readout_embedding_dropped", "seq2seq", {"output": "embedding_state_context"},
          "feeds zeros where the output layer reads E x_t: W_u's embedding columns never matter", "review",
          _readout=lambda output, s, c, e: readout(output, s, c, np.zeros_like(e))),
    _variant("seq2seq_readout_embedding_ignored_under_none", "seq2seq",
             {"attention": "none", "output": "embedding_state_context"}, {"output": "state_context"},
             "reads [s_t; c] under attention=none and output=embedding_state_context"),
    Entry("seq2seq_torch_style_attn_without_bias", "seq2seq", TORCH_STYLE, torch_style(attn_bias=False),
          "the widely copied code with attn = nn.Linear(…, bias=False) checked under align_bias=true", "review"),
    Entry("seq2seq_torch_style_cat_order_mismatch", "seq2seq", TORCH_STYLE,
          torch_style(cat_order="hs", adapter_order="sh"),
          "scores over cat(encoder_outputs, hidden) with attn's weight laid out for cat(hidden, encoder_outputs)",
          "review"),
    Entry("seq2seq_torch_style_readout_order", "seq2seq", TORCH_STYLE,
          torch_style(out_order=("output", "embedded", "weighted")),
          "fc_out over cat(output, embedded, weighted): the embedding's and the context's columns of W_u swapped",
          "review"),
)

#: Correct implementations written as the widely copied PyTorch code writes them, under either cat order.
CONTROLS = (Entry("seq2seq_correct_torch_style", "seq2seq", TORCH_STYLE, torch_style(), "", "correct"),
            Entry("seq2seq_correct_torch_style_cat_h_s", "seq2seq", TORCH_STYLE, torch_style(cat_order="hs"), "",
                  "correct"))

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {
    "b_a added outside the tanh, v_aᵀ tanh(W_a s + U_a h) + v_aᵀ b_a": "the term is the same for every source "
                                                                        "position, which the softmax cancels",
}
