"""The recurrent family's part of the shipped catalogue (:mod:`.catalogue` adds it to ``FACTORIES`` and
``MUTANTS``; the controls follow from them): the cells (RNN, GRU, LSTM), recurrent layers and stacks,
seq2seq, Show-Attend-Tell and its loss, and hierarchical attention networks.

As in :mod:`.catalogue`, a mutant is a correct implementation with one seam replaced, or the correct
implementation of another variant checked under this one; ``source`` says where the bug comes from.
Every option examples draw for these algorithms is got wrong by some mutant checked under it.
"""

from __future__ import annotations

import numpy as np

from .entry import Entry
from .numerics import softmax
from .recurrent import (TORCH_ORDER, biases, candidate, gru_cell, lstm_cell, rnn, rnn_cell, rnn_layer, rnn_step, sigmoid)
from .sequence_models import alignment, final_state, han, seq2seq, show_attend_tell, show_attend_tell_loss

__all__ = ["FACTORIES", "MUTANTS", "EQUIVALENT"]

#: Algorithm name → the factory of its correct implementation.
FACTORIES = {
    "rnn_cell": rnn_cell, "gru_cell": gru_cell, "lstm_cell": lstm_cell, "rnn_layer": rnn_layer, "rnn": rnn,
    "seq2seq": seq2seq, "show_attend_tell": show_attend_tell, "show_attend_tell_loss": show_attend_tell_loss,
    "han": han,
}


def _seam(name, algorithm, options, bug, source, **seams):
    """A mutant: the correct implementation of ``options`` with ``seams`` replaced."""
    return Entry(name, algorithm, options, FACTORIES[algorithm](**options, **seams), bug, source)


def _variant(name, algorithm, options, implemented, bug):
    """A mutant: the correct implementation of the variant ``implemented``, checked under ``options``."""
    return Entry(name, algorithm, options, FACTORIES[algorithm](**{**options, **implemented}), bug,
                 "variant option " + ", ".join(implemented))


# ------------------------------------------------------------------------------------- planted pieces
_NOTES_ORDER = ("i", "f", "o", "g")     # the lecture notes' order; torch packs TORCH_ORDER = (i, f, g, o)
assert TORCH_ORDER != _NOTES_ORDER


def _input_bias_only(p, g, bias):
    """Two biases read as one: b_xg is added, b_hg never read."""
    bx, _, b = biases(p, g, bias)
    return bx, 0.0, b


def _channels_first(F):
    """A channel-last grid F (n_h×n_w×D) flattened as a channel-first one: ``F.view(D, −1)``, scrambled."""
    return F.reshape(F.shape[-1], -1)


def _transposed(name):
    """A ``_read`` seam that reads the parameter ``name`` transposed (a row-vector port: h @ W for W h)."""
    return lambda theta, key: theta[key].T if key == name else theta[key]


def _recurrent_bias_outside_reset(p, x, h, r, *, bias, reset, _biases=biases):
    """reset=after with two biases, b_hn added after the reset: ``r ⊙ (W_hn h) + b_hn``."""
    bx, bh, b = _biases(p, "n", bias)
    return p("W_xn") @ x + bx + r * (p("W_hn") @ h) + bh + b


def _reset_unused(p, x, h, r, **options):
    """The reset gate computed and never applied: the candidate reads h itself."""
    return candidate(p, x, h, np.ones_like(r), **options)


def _elman_on_candidate(bias):
    """A GRU layer's step that is Elman's cell on the candidate's weights W_xn, W_hn, b_n: no gates."""
    step = rnn_step(bias=bias)
    return lambda x, state, p: step(x, state, lambda name: p(name[:-1] + "n"))


def _upper_reads_layer_1(params, name, l):
    """Layers 2…L read layer 1's recurrent weights and biases (the ones shaped alike in every layer)."""
    return params[name + "_l"][l] if name.startswith("W_x") else params[name + "_1"]


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


def _penalty_over_steps(alpha, weight):
    """``λ Σ_t (1 − Σ_i α_ti)²``: the sum over locations is 1 at every step, so the penalty is always 0."""
    return weight * np.sum((1.0 - alpha.sum(axis=0)) ** 2)


def _penalty_mean(alpha, weight):
    """``λ mean_i (1 − Σ_t α_ti)²``."""
    return weight * np.mean((1.0 - alpha.sum(axis=1)) ** 2)


def _nll_same_column(P, x):
    """Scores column t against token t instead of t + 1."""
    return -np.sum(np.log(P[x[:-1], np.arange(len(x) - 1)]))


def _identity(H):
    return H


_FORWARD_ENCODER = {"encoder": "forward"}
_LUONG_DOT = {"attention": "luong", "score": "dot", "encoder": "forward"}

# ---------------------------------------------------------------------------------------------- cells
_CELLS = [
    _variant("rnn_cell_ignores_bias", "rnn_cell", {}, {"bias": "none"}, "drops b_h under the default bias=single"),
    _seam("rnn_cell_double_input_bias_only", "rnn_cell", {"bias": "double"},
          "adds b_xh only: the recurrent bias b_hh is never read", "variant option bias", _biases=_input_bias_only),
    _variant("rnn_cell_tanh_under_relu", "rnn_cell", {"nonlinearity": "relu"}, {"nonlinearity": "tanh"},
             "applies tanh under nonlinearity=relu"),
    _variant("rnn_cell_relu_under_tanh", "rnn_cell", {}, {"nonlinearity": "relu"},
             "applies ReLU under the default nonlinearity=tanh"),
    _seam("rnn_cell_recurrent_weights_transposed", "rnn_cell", {},
          "multiplies the state by W_hhᵀ (a row-vector port: h @ W_hh for W_hh h)", "review",
          _read=_transposed("W_hh")),
    _seam("gru_cell_update_swapped", "gru_cell", {},
          "keeps (1 − z) of the old state and takes z of the candidate: z and 1 − z swapped under update=cho",
          "review", _update=lambda z, h, n: (1.0 - z) * h + z * n),
    _variant("gru_cell_cho_under_bahdanau", "gru_cell", {"update": "bahdanau"}, {"update": "cho"},
             "updates h ← z ⊙ h + (1 − z) ⊙ n under update=bahdanau"),
    _variant("gru_cell_after_under_before", "gru_cell", {}, {"reset": "after"},
             "resets after the recurrent product, r ⊙ (W_hn h), under the default reset=before"),
    _variant("gru_cell_before_under_after", "gru_cell", {"reset": "after"}, {"reset": "before"},
             "resets before the recurrent product, W_hn (r ⊙ h), under reset=after"),
    _variant("gru_cell_ignores_bias", "gru_cell", {}, {"bias": "none"},
             "drops b_r, b_z and b_n under the default bias=single"),
    _seam("gru_cell_recurrent_bias_outside_reset", "gru_cell", {"bias": "double", "reset": "after"},
          "adds b_hn after the reset, r ⊙ (W_hn h) + b_hn, not inside it, r ⊙ (W_hn h + b_hn)",
          "variant option bias", _candidate=_recurrent_bias_outside_reset),
    _seam("gru_cell_reset_unused", "gru_cell", {},
          "computes the reset gate and never applies it: the candidate reads W_hn h", "review",
          _candidate=_reset_unused),
    _seam("gru_cell_update_weights_transposed", "gru_cell", {"reset": "after"},
          "multiplies the state by W_hzᵀ in the update gate", "review", _read=_transposed("W_hz")),
    _seam("lstm_cell_gates_in_notes_order", "lstm_cell", {},
          "splits the torch-packed gates (i, f, g, o) in the lecture notes' order (i, f, o, g): o and g swapped",
          "review", _order=_NOTES_ORDER),
    _seam("lstm_cell_without_forget_gate", "lstm_cell", {},
          "leaves out the forget gate: c ← c + i ⊙ g (the 1997 LSTM)", "review",
          _memory=lambda f, c, i, g: c + i * g),
    _seam("lstm_cell_forget_bias_one", "lstm_cell", {},
          "adds 1 to the forget gate's preactivation (TensorFlow's forget_bias=1.0)", "review", _forget_bias=1.0),
    _seam("lstm_cell_output_without_tanh", "lstm_cell", {},
          "emits h ← o ⊙ c, without the tanh of the memory cell", "review", _emit=lambda o, c: o * c),
    _seam("lstm_cell_coupled_gates", "lstm_cell", {},
          "forgets with 1 − i instead of its own gate f: c ← (1 − i) ⊙ c + i ⊙ g", "review",
          _memory=lambda f, c, i, g: (1.0 - i) * c + i * g),
    _variant("lstm_cell_ignores_bias", "lstm_cell", {}, {"bias": "none"},
             "drops the gates' biases under the default bias=single"),
    _seam("lstm_cell_double_input_bias_only", "lstm_cell", {"bias": "double"},
          "adds b_xg only: the recurrent biases b_hg are never read", "variant option bias",
          _biases=_input_bias_only),
]

# ----------------------------------------------------------------------------------- layers and stacks
_BACKWARD, _BOTH = {"direction": "backward"}, {"direction": "bidirectional"}
_READS_FORWARDS = {"forward": (("", False),), "backward": (("_back", False),),
                   "bidirectional": (("", False), ("_back", False))}
_SHARED_WEIGHTS = {"forward": (("", False),), "backward": (("", True),),
                   "bidirectional": (("", False), ("", True))}


def _layers(algorithm):
    """The mutants a recurrent layer and a stack of them share (``algorithm``: rnn_layer or rnn)."""
    return [
        _seam(f"{algorithm}_gates_in_notes_order", algorithm, {},
              "splits the torch-packed LSTM gates in the lecture notes' order (i, f, o, g): o and g swapped",
              "review", _order=_NOTES_ORDER),
        _seam(f"{algorithm}_backward_not_rereversed", algorithm, _BACKWARD,
              "returns the backward pass's states in the order computed: column t holds the state of position "
              "ℓ − 1 − t", "review", _unreverse=_identity),
        _seam(f"{algorithm}_backward_reads_forwards", algorithm, _BACKWARD,
              "runs from the first position under direction=backward", "variant option direction",
              _passes=_READS_FORWARDS),
        _seam(f"{algorithm}_bidirectional_halves_swapped", algorithm, _BOTH,
              "stacks the states [H⃖; H⃗] instead of [H⃗; H⃖]", "review", _join=lambda F, B: np.concatenate([B, F])),
        _seam(f"{algorithm}_backward_reads_forward_weights", algorithm, _BOTH,
              "the backward pass reads the forward parameters, not the _back ones", "review",
              _passes=_SHARED_WEIGHTS),
        _seam(f"{algorithm}_collects_memory_cells", algorithm, {},
              "collects the LSTM's memory cells c as the states instead of h", "review",
              _state=lambda state: state[-1]),
        _seam(f"{algorithm}_gru_as_elman", algorithm, {"cell": "gru"},
              "runs Elman's cell on the candidate's weights W_xn, W_hn, b_n (no gates) under cell=gru",
              "variant option cell", _step=_elman_on_candidate("single")),
        _variant(f"{algorithm}_tanh_under_relu", algorithm, {"cell": "rnn", "nonlinearity": "relu"},
                 {"nonlinearity": "tanh"}, "applies tanh under nonlinearity=relu"),
        _variant(f"{algorithm}_before_under_after", algorithm, {"cell": "gru", "reset": "after"},
                 {"reset": "before"}, "resets before the recurrent product under reset=after"),
        _variant(f"{algorithm}_cho_under_bahdanau", algorithm, {"cell": "gru", "update": "bahdanau"},
                 {"update": "cho"}, "updates h ← z ⊙ h + (1 − z) ⊙ n under update=bahdanau"),
        _seam(f"{algorithm}_double_input_bias_only", algorithm, {"bias": "double"},
              "adds b_xg only: the recurrent biases b_hg are never read", "variant option bias",
              _biases=_input_bias_only),
        _variant(f"{algorithm}_ignores_bias", algorithm, {}, {"bias": "none"},
                 "drops the gates' biases under the default bias=single"),
    ]


_LAYERS = _layers("rnn_layer") + _layers("rnn") + [
    _seam("rnn_upper_layers_read_layer_1", "rnn", {},
          "layers 2…L read layer 1's recurrent weights and biases (their input weights their own)", "review",
          _upper=_upper_reads_layer_1),
    _seam("rnn_upper_layers_share_layer_2", "rnn", {},
          "every layer above the first reads layer 2's parameters (entry 0 of the _l stacks)", "review",
          _upper=lambda params, name, l: params[name + "_l"][0]),
    _seam("rnn_returns_first_layer", "rnn", {},
          "returns the first layer's states, not the last's", "review", _output=lambda layers: layers[0]),
]

# -------------------------------------------------------------------------------------------- seq2seq
_SEQ2SEQ = [
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
          _encoder_seams={"_unreverse": _identity}),
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
]

# ---------------------------------------------------------------------------------- Show, Attend, Tell
_CAPTIONING = [
    _variant("show_attend_tell_ignores_gate", "show_attend_tell", {}, {"gate": False},
             "leaves the gate β out of the context under the default gate=true"),
    _variant("show_attend_tell_ignores_bias", "show_attend_tell", {}, {"bias": "none"},
             "drops the LSTM's biases under the default bias=single"),
    _seam("show_attend_tell_double_input_bias_only", "show_attend_tell", {"bias": "double"},
          "adds b_xg only: the LSTM's recurrent biases b_hg are never read", "variant option bias",
          _biases=_input_bias_only),
    _seam("show_attend_tell_gates_in_notes_order", "show_attend_tell", {},
          "splits the torch-packed LSTM gates in the lecture notes' order (i, f, o, g)", "review",
          _order=_NOTES_ORDER),
    _seam("show_attend_tell_memory_from_f_init_h", "show_attend_tell", {},
          "initialises the memory cell with f_init,h (W_init_h, b_init_h) instead of f_init,c", "review",
          _init_c="W_init_h"),
    _seam("show_attend_tell_summed_annotations", "show_attend_tell", {},
          "initialises from the sum of the annotations instead of their mean ā", "review",
          _mean=lambda A: A.sum(axis=1)),
    _seam("show_attend_tell_deep_output_without_word", "show_attend_tell", {},
          "leaves E y_{t−1} out of the deep output: L_o (L_h h + L_z ẑ)", "review",
          _deep=lambda x, h, z, p: p["L_h"] @ h + p["L_z"] @ z),
    _seam("show_attend_tell_gate_without_bias", "show_attend_tell", {},
          "computes β = σ(w_βᵀ h), without b_β", "review",
          _gate=lambda p, h: sigmoid(p["w_beta"] @ h)),
    _seam("show_attend_tell_gated_map", "show_attend_tell", {},
          "returns β·α as the attention map instead of α", "review", _map=lambda alpha, beta: beta * alpha),
    _seam("show_attend_tell_grid_column_major", "show_attend_tell", {"inputs": "grid"},
          "reads the feature grid column-major: location (r, c) becomes annotation c·n_h + r, not r·n_w + c",
          "variant option inputs", _grid=lambda F: F.transpose(1, 0, 2).reshape(-1, F.shape[-1]).T),
    _seam("show_attend_tell_grid_as_channels_first", "show_attend_tell", {"inputs": "grid"},
          "flattens a channel-last grid as if it were channel-first (torch's NCHW .view(D, −1))",
          "variant option inputs", _grid=_channels_first),
    _seam("show_attend_tell_loss_penalty_over_steps", "show_attend_tell_loss", {},
          "sums the penalty over steps, λ Σ_t (1 − Σ_i α_ti)² (always 0), instead of over locations", "review",
          _penalty=_penalty_over_steps),
    _seam("show_attend_tell_loss_penalty_mean", "show_attend_tell_loss", {},
          "averages the penalty over the locations instead of summing it", "review", _penalty=_penalty_mean),
    _variant("show_attend_tell_loss_without_penalty", "show_attend_tell_loss", {}, {"penalty": 0.0},
             "leaves the doubly stochastic penalty out under the default penalty=1"),
    _variant("show_attend_tell_loss_penalty_under_zero", "show_attend_tell_loss", {"penalty": 0.0},
             {"penalty": 1.0}, "adds the penalty with λ = 1 under penalty=0"),
    _seam("show_attend_tell_loss_nll_same_column", "show_attend_tell_loss", {},
          "scores column t against word t instead of t + 1", "review", _nll=_nll_same_column),
    _variant("show_attend_tell_loss_ignores_gate", "show_attend_tell_loss", {}, {"gate": False},
             "leaves the gate β out of the context under the default gate=true"),
    _variant("show_attend_tell_loss_ignores_bias", "show_attend_tell_loss", {}, {"bias": "none"},
             "drops the LSTM's biases under the default bias=single"),
    _seam("show_attend_tell_loss_grid_as_channels_first", "show_attend_tell_loss", {"inputs": "grid"},
          "flattens a channel-last grid as if it were channel-first (torch's NCHW .view(D, −1))",
          "variant option inputs", _grid=_channels_first),
]

# ------------------------------------------------------------------------------------------------- HAN
_HAN = [
    _seam("han_mean_pooling", "han", {},
          "pools every level with the mean of the states instead of attention", "review",
          _pool=lambda Z, W, b, u: Z.mean(axis=1)),
    _seam("han_sentence_reads_word_attention", "han", {},
          "the sentence level pools with the word level's W_w, b_w, u_w", "review", _sentence=("W_w", "b_w", "u_w")),
    _seam("han_pool_without_tanh", "han", {},
          "scores u_wᵀ (W z_t + b), without the tanh", "review",
          _pool=lambda Z, W, b, u: Z @ softmax(u @ (W @ Z + b[:, None]))),
    _seam("han_returns_logits", "han", {},
          "returns the classifier's logits W_c v + b_c, not their softmax", "review", _classify=_identity),
    _seam("han_backward_not_rereversed", "han", {},
          "the encoders' backward states are left in the order computed", "review", _unreverse=_identity),
    _seam("han_gru_as_elman", "han", {},
          "runs Elman's cell on the candidate's weights W_xn, W_hn, b_n (no gates) under cell=gru",
          "variant option cell", _step=_elman_on_candidate("single")),
    _seam("han_lstm_collects_memory_cells", "han", {"cell": "lstm"},
          "collects the LSTM's memory cells c as the states instead of h under cell=lstm", "variant option cell",
          _state=lambda state: state[-1]),
    _variant("han_before_under_after", "han", {}, {"reset": "before"},
             "resets before the recurrent product under the default reset=after (Yang et al.'s)"),
    _variant("han_cho_under_bahdanau", "han", {}, {"update": "cho"},
             "updates h ← z ⊙ h + (1 − z) ⊙ n under the default update=bahdanau (Yang et al.'s)"),
    _variant("han_ignores_biases", "han", {}, {"bias": "none"},
             "drops the encoders' biases under the default bias=single"),
]

MUTANTS = _CELLS + _LAYERS + _SEQ2SEQ + _CAPTIONING + _HAN

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {
    "the GRU's b_hn added outside the reset under reset=before": "W_hn (r ⊙ h) + b_hn: the reset multiplies the "
                                                                "state, never the bias, before the product",
    "HAN's encoder states all listed last position first (both directions reversed together)":
        "attention pooling is invariant under permuting its columns",
    "the Show-Attend-Tell penalty summed over steps under penalty = 0": "0 · anything = 0",
    "Show-Attend-Tell's loss reading the feature grid in another order (column-major)":
        "the loss is invariant under permuting the locations: ā, the attention's context and the penalty all "
        "sum over them (the model's attention map, an output, is not: its mutant is killed)",
}
