"""Show, Attend and Tell and its doubly stochastic loss, on the cells of :mod:`.recurrent`; their planted bugs.

numpy only, one column per token, 0-based indices; every model takes its parameters as one dict ``params``.
Each factory takes the variant's options and returns the function conform calls; its keyword-only
``_``-arguments are the seams the catalogue (at the end) plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .attention import SCORE_ACTIVATIONS
from .entry import Implementation, makers
from .numerics import softmax
from .recurrent import NOTES_ORDER, cell_step, input_bias_only, sigmoid

__all__ = ["show_attend_tell", "doubly_stochastic", "show_attend_tell_loss",
           "IMPLEMENTATIONS", "MUTANTS", "EQUIVALENT"]


def _concat(*parts):
    return np.concatenate(parts)


# ----------------------------------------------------------------------------------------- captioning
def _scalar_gate(p, h):
    """``β = σ(w_βᵀ h + b_β)`` (a scalar)."""
    return sigmoid(p["w_beta"] @ h + p["b_beta"])


def _vector_gate(p, h):
    """``β = σ(W_β h + b_β)``, one weight per channel of the context."""
    return sigmoid(p["W_beta"] @ h + p["b_beta"])


#: f_att's nonlinearity by the spec's option name.
PHI = {**SCORE_ACTIVATIONS, "relu": lambda a: np.maximum(a, 0.0)}


def _row_major(F):
    """The grid F (n_h×n_w×D) as its n_h·n_w locations, row-major: location (r, c) is column r·n_w + c."""
    return F.reshape(-1, F.shape[-1]).T


def _deep(x, h, z, p):
    """Xu et al.'s deep output's logits ``L_o(E y + L_h h + L_z ẑ)``."""
    return p["L_o"] @ (x + p["L_h"] @ h + p["L_z"] @ z)


def _from_state(x, h, z, p):
    """The logits ``W_out h + b_out``."""
    return p["W_out"] @ h + p["b_out"]


def _context(A, alpha, beta):
    """``β ⊙ Σ_i α_i a_i``."""
    return beta * (A @ alpha)


def _initial(p, a_bar, name, init):
    """``tanh(W_init ā + b)`` or, ``init="linear"``, ``W_init ā + b``, reading the parameters ``name`` names."""
    affine = p[name] @ a_bar + p[name.replace("W_", "b_")]
    return np.tanh(affine) if init == "tanh" else affine


def show_attend_tell(*, gate=True, bias="single", activation="tanh", score_bias=False, init="tanh", output="deep",
                     inputs="annotations", _grid=_row_major, _mean=lambda A: A.mean(axis=1),
                     _init=("W_init_h", "W_init_c"), _gate=None, _phi=None, _context=_context, _logits=None,
                     _map=lambda alpha, beta: alpha, _gate_annotations=False, **cell_seams):
    """Show, Attend and Tell with soft attention: annotations A (d_z×ℓ_z) — or, with ``inputs="grid"``, a
    feature grid F (n_h×n_w×d_z) read into them by ``_grid`` — and words x ↦ (P, α).

    ``h_0, c_0 = tanh(W_init ā + b)`` (without tanh under ``init="linear"``); per word:
    ``α = softmax(v_aᵀ φ(W_a h + b_a + U_a a_i + b_k))`` (the biases under ``score_bias``), the context
    ``ẑ = β ⊙ A α`` (β = 1 without the gate, a scalar or a d_z-vector), the LSTM on ``[E x_t; ẑ]``, then
    ``p = softmax(L_o(E x_t + L_h h + L_z ẑ))`` or ``softmax(W_out h + b_out)`` (``output="state"``).
    """
    step = cell_step("lstm", bias=bias, **cell_seams)
    phi = _phi or PHI[activation]
    gated = _gate or (_vector_gate if gate == "vector" else _scalar_gate)
    logits = _logits or (_from_state if output == "state" else _deep)

    def keys(A, p):
        return p["U_a"] @ A + (p["b_k"][:, None] if score_bias else 0.0)

    def show_attend_tell(A, x, params):
        p = params
        a_bar = _mean(A)
        h, c = (_initial(p, a_bar, name, init) for name in _init)
        K = keys(A, p)                                                          # d_a×ℓ_z
        X = p["E"][:, x]
        P, alphas = [], []
        for t in range(len(x)):
            beta = gated(p, h) if gate else 1.0
            if _gate_annotations:   # the planted bug: the gated annotations replace A for the steps to come
                A = np.reshape(beta, (-1, 1)) * A
                K, beta = keys(A, p), 1.0
            query = p["W_a"] @ h + (p["b_a"] if score_bias else 0.0)
            alpha = softmax(p["v_a"] @ phi(query[:, None] + K))
            z_hat = _context(A, alpha, beta)
            h, c = step(_concat(X[:, t], z_hat), (h, c), p.__getitem__)
            P.append(softmax(logits(X[:, t], h, z_hat, p)))
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


def show_attend_tell_loss(*, penalty=1.0, inputs="annotations", _penalty=doubly_stochastic, _nll=_nll, **model_options):
    """The caption's negative log-likelihood plus the doubly stochastic penalty; ``model_options``: the
    model's options and seams."""
    model = show_attend_tell(inputs=inputs, **model_options)

    def loss(P, alpha, x):
        return _nll(P, x) + _penalty(alpha, penalty)

    def show_attend_tell_loss(A, x, params):
        return loss(*model(A, x, params), x)

    def show_attend_tell_loss_from_grid(F, x, params):
        return loss(*model(F, x, params), x)
    return show_attend_tell_loss if inputs == "annotations" else show_attend_tell_loss_from_grid


# ------------------------------------------------------------------------------------- planted pieces
def _channels_first(F):
    """A channel-last grid F (n_h×n_w×D) flattened as a channel-first one: ``F.view(D, −1)``, scrambled."""
    return F.reshape(F.shape[-1], -1)



def _penalty_over_steps(alpha, weight):
    """``λ Σ_t (1 − Σ_i α_ti)²``: the sum over locations is 1 at every step, so the penalty is always 0."""
    return weight * np.sum((1.0 - alpha.sum(axis=0)) ** 2)


def _penalty_mean(alpha, weight):
    """``λ mean_i (1 − Σ_t α_ti)²``."""
    return weight * np.mean((1.0 - alpha.sum(axis=1)) ** 2)


def _nll_same_column(P, x):
    """Scores column t against token t instead of t + 1."""
    return -np.sum(np.log(P[x[:-1], np.arange(len(x) - 1)]))


def _unchanged(H):
    return H


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("show_attend_tell", show_attend_tell,
                   seconds={"quick": (1.1, 0.18), "thorough": (5.1, 1.32)}),
    Implementation("show_attend_tell_loss", show_attend_tell_loss,
                   seconds={"quick": (1.1, 0.21), "thorough": (6.4, 1.44)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
#: The variant the common PyTorch tutorial implements: ReLU in f_att with biases, the vector gate, linear
#: initial states, the words from the state alone, torch's LSTMCell (two biases).
_TUTORIAL = {"gate": "vector", "activation": "relu", "score_bias": True, "init": "linear", "output": "state",
             "bias": "double"}

MUTANTS = (
    _variant("show_attend_tell_ignores_gate", "show_attend_tell", {}, {"gate": False},
             "leaves the gate β out of the context under the default gate=true"),
    _variant("show_attend_tell_ignores_bias", "show_attend_tell", {}, {"bias": "none"},
             "drops the LSTM's biases under the default bias=single"),
    _seam("show_attend_tell_double_input_bias_only", "show_attend_tell", {"bias": "double"},
          "adds b_xg only: the LSTM's recurrent biases b_hg are never read", "variant option bias",
          _biases=input_bias_only),
    _seam("show_attend_tell_gates_in_notes_order", "show_attend_tell", {},
          "splits the torch-packed LSTM gates in the lecture notes' order (i, f, o, g)", "review",
          _order=NOTES_ORDER),
    _seam("show_attend_tell_memory_from_f_init_h", "show_attend_tell", {},
          "initialises the memory cell with f_init,h (W_init_h, b_init_h) instead of f_init,c", "review",
          _init=("W_init_h", "W_init_h")),
    _seam("show_attend_tell_summed_annotations", "show_attend_tell", {},
          "initialises from the sum of the annotations instead of their mean ā", "review",
          _mean=lambda A: A.sum(axis=1)),
    _seam("show_attend_tell_deep_output_without_word", "show_attend_tell", {},
          "leaves E y_{t−1} out of the deep output: L_o (L_h h + L_z ẑ)", "review",
          _logits=lambda x, h, z, p: p["L_o"] @ (p["L_h"] @ h + p["L_z"] @ z)),
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
    _seam("show_attend_tell_gate_on_annotations", "show_attend_tell", _TUTORIAL,
          "gates the annotations instead of the context, A ← β ⊙ A, so that every later step attends over "
          "annotations gated again", "review", _gate_annotations=True),
    _seam("show_attend_tell_scalar_gate_on_annotations", "show_attend_tell", {},
          "gates the annotations instead of the context, A ← β A, under the scalar gate", "review",
          _gate_annotations=True),
    _variant("show_attend_tell_relu_under_tanh", "show_attend_tell", {}, {"activation": "relu"},
             "scores with v_aᵀ ReLU(·) under the default activation=tanh (Xu et al.'s)"),
    _variant("show_attend_tell_tanh_under_relu", "show_attend_tell", _TUTORIAL, {"activation": "tanh"},
             "scores with v_aᵀ tanh(·) under activation=relu"),
    _seam("show_attend_tell_mean_over_channels", "show_attend_tell", _TUTORIAL,
          "averages each location over its channels (ā ∈ ℝ^L) instead of the locations (ā ∈ ℝ^D)", "review",
          _mean=lambda A: A.mean(axis=0)),
    _seam("show_attend_tell_initial_states_swapped", "show_attend_tell", _TUTORIAL,
          "initialises h with f_init,c and c with f_init,h", "review", _init=("W_init_c", "W_init_h")),
    _variant("show_attend_tell_tanh_init_under_linear", "show_attend_tell", _TUTORIAL, {"init": "tanh"},
             "initialises the states with tanh(W_init ā + b) under init=linear"),
    _variant("show_attend_tell_linear_init_under_tanh", "show_attend_tell", {}, {"init": "linear"},
             "initialises the states without the tanh under the default init=tanh"),
    _variant("show_attend_tell_ignores_score_bias", "show_attend_tell", _TUTORIAL, {"score_bias": False},
             "leaves f_att's biases b_a and b_k out under score_bias=true"),
    _variant("show_attend_tell_deep_output_under_state", "show_attend_tell", _TUTORIAL, {"output": "deep"},
             "computes Xu et al.'s deep output, reading L_h, L_z and L_o, under output=state (whose parameters are "
             "W_out and b_out)"),
    _seam("show_attend_tell_output_without_bias", "show_attend_tell", _TUTORIAL,
          "computes the word scores W_out h without b_out under output=state", "review",
          _logits=lambda x, h, z, p: p["W_out"] @ h),
    _seam("show_attend_tell_vector_gate_without_bias", "show_attend_tell", _TUTORIAL,
          "computes the vector gate σ(W_β h) without b_β", "review",
          _gate=lambda p, h: sigmoid(p["W_beta"] @ h)),
    _seam("show_attend_tell_loss_initial_states_swapped", "show_attend_tell_loss", _TUTORIAL,
          "initialises h with f_init,c and c with f_init,h", "review", _init=("W_init_c", "W_init_h")),
    _variant("show_attend_tell_loss_tanh_under_relu", "show_attend_tell_loss", _TUTORIAL, {"activation": "tanh"},
             "scores with v_aᵀ tanh(·) under activation=relu"),
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
)

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {
    "the Show-Attend-Tell penalty summed over steps under penalty = 0": "0 · anything = 0",
    "Show-Attend-Tell's f_att biases added after the nonlinearity, v_aᵀ(φ(W_a h + U_a a_i) + b_a + b_k)":
        "v_aᵀ(b_a + b_k) is the same at every location and cancels in the softmax (as a bias on the scores "
        "does)",
    "Show-Attend-Tell's loss reading the feature grid in another order (column-major)":
        "the loss is invariant under permuting the locations: ā, the attention's context and the penalty all "
        "sum over them (the model's attention map, an output, is not: its mutant is killed)",
}
