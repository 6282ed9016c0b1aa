"""Show, Attend and Tell (Xu et al. 2015): a caption generated from a grid of image features by an LSTM that
attends, at every word, over the grid's locations with an additive score — and its loss with the doubly
stochastic penalty.

The features are the annotation vectors A = [a_1, …, a_L] ∈ ℝ^{D×L}, the H×W×D grid of a CNN read
row-major as L = H·W columns (the notes' "stretch into N = H×W vectors"); here D is ``d_z`` and L is
``ℓ_z`` (the paper's VGG conv5_4 grid: 14×14×512, L = 196, D = 512).  The interface is Algorithm 8's: P
column t is the distribution of word t + 1 given the image and words 1…t; the model also returns the
attention map α (L×ℓ_x), which the penalty reads.

Lines (Xu et al. eqs. 1–7, 13–14): ``h_0, c_0 = tanh(W_init,· ā + b)``, ā the mean annotation;
``e_t = v_aᵀ tanh(W_a h_{t−1} + U_a a_i)`` (f_att, an MLP — not the "linear layer" one slide calls it);
``α_t = softmax(e_t)``; ``ẑ_t = β_t Σ_i α_ti a_i`` with the gate ``β_t = σ(w_βᵀ h_{t−1} + b_β)`` (option
``gate``); ``(h_t, c_t) = LSTM([E y_{t−1}; ẑ_t], h_{t−1}, c_{t−1})``; the deep output
``p_t = softmax(L_o(E y_{t−1} + L_h h_t + L_z ẑ_t))``.  Soft (deterministic) attention only; the hard,
sampled attention is trained by a variational bound and is not an executable algorithm here.  The
initialisations are one tanh layer each (the paper's f_init are MLPs of unstated depth).

The options name what implementations do instead (the defaults are Xu et al.'s): f_att's nonlinearity
(``activation``, ReLU in the widely copied PyTorch tutorial) and the biases of its two linear maps
(``score_bias``: b_a added to W_a h, b_k to the keys, both inside the nonlinearity — a bias after v_a is the
same at every location and cancels in the softmax, so there is none); the gate (``gate``: Xu et al.'s scalar,
none, or ``vector``, σ(W_β h + b_β) ∈ ℝ^D elementwise); the initial states without the tanh (``init``); the
word distribution from the state alone, softmax(W_out h_t + b_out) (``output="state"``).

References
----------
- K. Xu et al., "Show, attend and tell: neural image caption generation with visual attention",
  ICML 2015, §3.1.2 (the LSTM decoder), §4.2 (soft attention, the gate β, the doubly stochastic penalty).
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import N_V, by_name, d_a, d_e, d_h, d_x, d_z, ell_x, ell_z
from ..engine.algorithm import Algorithm, Assign, Loop, call, call_columns
from ..engine.declarations import Option, Options
from ..engine.domains import BOOL, Choice, Real
from ..ops import (
    LoopIndex,
    activation,
    add,
    add_bias,
    column,
    column_mean,
    dot,
    grid_columns,
    matmul,
    mul,
    sequence,
    softmax,
    stack_vertical,
    weighted_sum,
)
from ..ops.losses import DoublyStochastic, NextTokenNLL
from ..ops.scores import SCORE_ACTIVATIONS, additive_score
from .embedding import token_embedding
from .recurrent import CELL_BIAS, build_lstm_cell
from .unembedding import build_unembedding

__all__ = ["ALGORITHMS", "build_show_attend_tell", "build_show_attend_tell_loss", "show_attend_tell",
           "show_attend_tell_loss", "INPUTS", "GATES", "INITS", "OUTPUTS", "GATE", "LSTM_BIAS", "SCORE_ACTIVATION",
           "SCORE_BIASES", "INIT", "OUTPUT", "IMAGE_INPUTS", "MODEL_OPTIONS", "PENALTY"]

_SOURCE = "Xu et al. 2015"
#: What the model is given: the annotation vectors A (D×L), or the CNN's feature grid F (n_h×n_w×D).
INPUTS = ("annotations", "grid")
_ROWS, _COLUMNS = by_name("height"), by_name("width")

#: The gate on the context: none, Xu et al.'s scalar β, or the vector gate of the common PyTorch tutorial.
GATES = (True, False, "vector")
#: How the initial states are made from the mean annotation ā: Xu et al.'s tanh layer, or an affine map.
INITS = ("tanh", "linear")
#: Where the word distribution comes from: Xu et al.'s deep output, or the state h alone.
OUTPUTS = ("deep", "state")

GATE = Option("gate", True, Choice(*GATES),
              "the gate on the context: True, Xu et al.'s scalar β_t = σ(w_βᵀ h_(t−1) + b_β) (§4.2.1); vector, "
              "β_t = σ(W_β h_(t−1) + b_β) ∈ ℝ^(d_z) applied elementwise; False, none")
LSTM_BIAS = CELL_BIAS.but(doc="the LSTM's bias convention: single, double or none")
SCORE_ACTIVATION = Option("activation", "tanh", Choice(*SCORE_ACTIVATIONS),
                          "f_att's nonlinearity: tanh (Xu et al.'s), leaky_relu (slope 0.2) or relu")
SCORE_BIASES = Option("score_bias", False, BOOL,
                      "whether f_att's two linear maps have biases inside the nonlinearity: b_a with W_a h, b_k "
                      "with the keys U_a a_i")
INIT = Option("init", "tanh", Choice(*INITS),
              "the initial states from ā: tanh(W_init ā + b) (Xu et al.'s f_init) or linear, W_init ā + b")
OUTPUT = Option("output", "deep", Choice(*OUTPUTS),
                "the word distribution: deep, softmax(L_o(E y_(t−1) + L_h h_t + L_z ẑ_t)) (Xu et al. eq. 7), or "
                "state, softmax(W_out h_t + b_out)")
IMAGE_INPUTS = Option("inputs", "annotations", Choice(*INPUTS),
                      "annotations (A, D×L), or grid (the CNN's n_h×n_w×D features, read row-major)")
#: The options the model and its loss share, in the order ``show`` lists them.
MODEL_OPTIONS = (GATE, LSTM_BIAS, SCORE_ACTIVATION, SCORE_BIASES, INIT, OUTPUT, IMAGE_INPUTS)
#: The weight λ of the doubly stochastic penalty.
PENALTY = Option("penalty", 1.0, Real(0), "λ, the weight of the doubly stochastic penalty Σ_i (1 − Σ_t α_ti)²",
                 examples=(0.0, 1.0))


def _features(inputs):
    """The image's input, the lines that make the annotations A of it, and L, the number of locations."""
    if inputs == "annotations":
        return TensorSpec("A", (d_z, ell_z), doc="annotation vectors: the feature grid's L = H·W locations",
                          role="tokens"), [], ell_z
    locations = _ROWS * _COLUMNS
    spec = TensorSpec("F", (_ROWS, _COLUMNS, d_z), doc="the CNN's feature grid: n_h rows, n_w columns, D channels",
                      grid=True)
    return spec, [Assign("A", grid_columns("F", _ROWS, _COLUMNS), note="Annotations, row-major")], locations


def _init(name, init):
    """f_init of the state ``name``: ``tanh(W ā + b)`` or, ``init="linear"``, ``W ā + b``."""
    affine = add(matmul(f"W_init_{name}", "a_bar"), f"b_init_{name}")
    return Assign(name, activation("tanh", affine) if init == "tanh" else affine, note=f"f_init,{name}")


def _gated(gate, glimpse):
    """The gate's line (none without it) and the context: ``β Σ_i α_i a_i`` (β a scalar or, ``"vector"``, a
    d_z-vector applied elementwise)."""
    if gate is False:
        return [], glimpse
    logit = add(matmul("W_beta", "h"), "b_beta") if gate == "vector" else add(dot("w_beta", "h"), "b_beta")
    return [Assign("beta", activation("sigmoid", logit), note="Gate")], mul("beta", glimpse)


def _word(output, x_t):
    """The lines from the new state to the word distribution p."""
    if output == "state":
        return [Assign("p", softmax(add(matmul("W_out", "h"), "b_out"), over="logits"), note="Output")]
    return [Assign("o", add(add(x_t, matmul("L_h", "h")), matmul("L_z", "z_hat")), note="Deep output"),
            Assign("p", call(build_unembedding(bias=False), label=("L_o", "L_o"), e="o", W_u="L_o"))]


def _params(cell, *, gate, score_bias, output) -> list:
    """The model's parameters: the embeddings, f_init, f_att, the gate, the LSTM, the output."""
    params = [TensorSpec("E", (d_e, N_V), doc="word embeddings", embedding=True),
              TensorSpec("W_init_h", (d_h, d_z), doc="f_init,h"), TensorSpec("b_init_h", (d_h,), doc="f_init,h bias"),
              TensorSpec("W_init_c", (d_h, d_z), doc="f_init,c"), TensorSpec("b_init_c", (d_h,), doc="f_init,c bias"),
              TensorSpec("W_a", (d_a, d_h), doc="f_att: the state's side"),
              TensorSpec("U_a", (d_a, d_z), doc="f_att: the annotations' side"),
              TensorSpec("v_a", (d_a,), doc="f_att: the output vector")]
    if score_bias:
        params += [TensorSpec("b_a", (d_a,), doc="f_att: the state's side's bias"),
                   TensorSpec("b_k", (d_a,), doc="f_att: the annotations' side's bias")]
    if gate == "vector":
        params += [TensorSpec("W_beta", (d_z, d_h), doc="the vector gate's weights (f_β)"),
                   TensorSpec("b_beta", (d_z,), doc="the vector gate's bias")]
    elif gate:
        params += [TensorSpec("w_beta", (d_h,), doc="the gate's weights (f_β)"),
                   TensorSpec("b_beta", (), doc="the gate's bias")]
    params += [TensorSpec(p.name, tuple(d_e + d_z if d == d_x else d for d in p.shape), doc=f"LSTM: {p.doc}")
               for p in cell.params]
    if output == "state":
        return params + [TensorSpec("W_out", (N_V, d_h), doc="output: the state to the words' logits", embedding=True),
                         TensorSpec("b_out", (N_V,), doc="output: the logits' bias")]
    return params + [TensorSpec("L_h", (d_e, d_h), doc="deep output: from the state"),
                     TensorSpec("L_z", (d_e, d_z), doc="deep output: from the context"),
                     TensorSpec("L_o", (N_V, d_e), doc="deep output: to the words", embedding=True)]


@Options(*MODEL_OPTIONS).builds
def build_show_attend_tell(*, gate, bias, activation, score_bias, init, output, inputs) -> Algorithm:
    """Show, Attend and Tell with soft attention: annotations A (d_z×ℓ_z) — or a feature grid F
    (n_h×n_w×d_z, ``inputs="grid"``) read row-major into L = n_h·n_w annotations — and words x ↦ (P, α).

    With ``score_bias`` the attention MLP's two linear maps have biases, as ``nn.Linear`` layers do: b_a is
    added to W_a h and b_k to the keys, inside the nonlinearity.  The bias a third linear layer would add to
    the scores (the tutorial's ``full_att``) is the same at every location and cancels in the softmax, so the
    spec has none.
    """
    image, annotate, locations = _features(inputs)
    cell = build_lstm_cell(bias=bias)
    t = LoopIndex("t")
    x_t = column("X", t, ell_x)
    query = add(matmul("W_a", "h"), "b_a") if score_bias else matmul("W_a", "h")
    gate_lines, glimpse = _gated(gate, weighted_sum("A", "alpha"))
    body = [Assign("e", additive_score(query, "K", "v_a", activation, single=True), note="f_att"),
            Assign("alpha", softmax("e")), *gate_lines, Assign("z_hat", glimpse, note="Context"),
            Assign(("h", "c"), call(cell, label=("θ", r"\theta"), x=stack_vertical(x_t, "z_hat"), h="h", c="c",
                                    **{p.name: p.name for p in cell.params})),
            *_word(output, x_t)]
    keys = add_bias(matmul("U_a", "A"), "b_k") if score_bias else matmul("U_a", "A")
    lines = annotate + [
        Assign("X", call_columns(token_embedding, label=("E", "E"), v="x", W_e="E"), forall="t"),
        Assign("a_bar", column_mean("A", locations), note="Mean annotation"),
        _init("h", init), _init("c", init),
        Assign("K", keys, note="Keys, computed once"),
        Loop("t", ell_x, tuple(body), stack=(("p", "P_steps"), ("alpha", "alpha_steps")), sequential=True),
        Assign("P", sequence("P_steps", ell_x, "p", "p")),
        Assign("alpha_map", sequence("alpha_steps", ell_x, "α", r"\alpha"), returns=True),
    ]
    return Algorithm(
        number=None, source=_SOURCE, name="show_attend_tell", display="ShowAttendTell",
        summary="Show, Attend and Tell: an LSTM captioner attending over a grid of image features.",
        inputs=[image, TensorSpec("x", (ell_x,), "index", "the caption's words (teacher forcing)", bound=N_V)],
        params=_params(cell, gate=gate, score_bias=score_bias, output=output),
        output=(TensorSpec("P", (N_V, ell_x), doc="P[:, t]: the distribution of word t + 1"),
                TensorSpec("alpha_map", (locations, ell_x), doc="α[i, t]: the weight of location i at step t")),
        lines=lines, params_label="θ", model=True,
    )


@Options(*MODEL_OPTIONS[:-1], PENALTY, IMAGE_INPUTS).builds
def build_show_attend_tell_loss(*, gate, bias, activation, score_bias, init, output, penalty, inputs) -> Algorithm:
    """The training loss of Show, Attend and Tell: ``−Σ_t log P[x[t+1], t] + λ Σ_i (1 − Σ_t α_ti)²``."""
    shared = {"gate": gate, "bias": bias, "activation": activation, "score_bias": score_bias, "init": init,
              "output": output}
    model = build_show_attend_tell(**shared, inputs=inputs)
    arguments = {s.name: s.name for s in model.signature}
    lines = [Assign(("P", "alpha_map"), call(model, label=("θ", r"\theta"), **arguments)),
             Assign("loss", add(NextTokenNLL()("P", "x"), DoublyStochastic(penalty)("alpha_map")), returns=True)]
    return Algorithm(
        number=None, source=_SOURCE, name="show_attend_tell_loss", display="ShowAttendTellLoss",
        summary=("Show, Attend and Tell's loss: the caption's negative log-likelihood and the doubly stochastic "
                 "penalty."),
        inputs=model.inputs, params=model.params, output=TensorSpec("loss", (), doc="the loss of one caption"),
        lines=lines, params_label="θ", model=True,
    )


show_attend_tell = build_show_attend_tell()
show_attend_tell_loss = build_show_attend_tell_loss()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (show_attend_tell, show_attend_tell_loss)
