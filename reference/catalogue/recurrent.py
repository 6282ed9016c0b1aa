"""Recurrent cells — Elman's RNN, the GRU and the LSTM, one step each — and the layers and stacks that run a cell
over a sequence forwards, backwards or both ways; their planted bugs.

A cell here is a *step* ``step(x, state, p) → state``: ``state`` is ``(h,)`` or, for the LSTM, ``(h, c)``,
and ``p(name)`` returns the parameter the spec names ``name`` (``W_xr``, ``b_hz`` …), so that the layers and
stacks (below) and the sequence models (:mod:`.seq2seq`, :mod:`.captioning`, :mod:`.hierarchical`) run the same
cells on their own renamed parameters.  The LSTM is written as a user porting torch weights would: the four
gates' weights packed in torch's order (i, f, g, o) into one matrix, one product, the result split — which is
where a gate-order bug hides.

Each factory takes the variant's options and returns the function conform calls; its keyword-only
``_``-arguments are the seams the catalogue (at the end) plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .entry import Implementation, makers

__all__ = ["GATES", "TORCH_ORDER", "sigmoid", "biases", "candidate", "rnn_step", "gru_step", "lstm_step",
           "cell_step", "rnn_cell", "gru_cell", "lstm_cell", "NOTES_ORDER", "input_bias_only", "elman_on_candidate",
           "PASSES", "layer", "rnn_layer", "rnn", "IMPLEMENTATIONS", "MUTANTS", "EQUIVALENT"]

# ------------------------------------------------------------------------------------------------- cells
#: Each cell's gates, by the letter the spec's parameter names end with.
GATES = {"rnn": ("h",), "gru": ("r", "z", "n"), "lstm": ("i", "f", "g", "o")}
#: How torch packs the LSTM's gates into ``weight_ih`` (the lecture notes write i, f, o, g).
TORCH_ORDER = ("i", "f", "g", "o")


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def relu(a):
    return np.maximum(a, 0.0)


_PHI = {"tanh": np.tanh, "relu": relu}


def biases(p, g, bias):
    """Gate g's biases as ``(with the input product, with the recurrent product, outside both)``: one
    ``b_g`` (single), ``b_xg`` and ``b_hg`` (double, torch's), or none."""
    if bias == "double":
        return p(f"b_x{g}"), p(f"b_h{g}"), 0.0
    if bias == "single":
        return 0.0, 0.0, p(f"b_{g}")
    return 0.0, 0.0, 0.0


def _preactivation(p, g, x, h, bias, _biases):
    """``W_xg x + W_hg h`` plus the gate's biases."""
    bx, bh, b = _biases(p, g, bias)
    return p(f"W_x{g}") @ x + bx + p(f"W_h{g}") @ h + bh + b


def rnn_step(*, bias="single", nonlinearity="tanh", _biases=biases):
    """Elman's cell: ``h ← φ(W_xh x + W_hh h + b_h)``."""
    phi = _PHI[nonlinearity]

    def step(x, state, p):
        (h,) = state
        return (phi(_preactivation(p, "h", x, h, bias, _biases)),)
    return step


def candidate(p, x, h, r, *, bias, reset, _biases=biases):
    """The GRU's candidate preactivation: ``W_xn x + W_hn (r ⊙ h)`` (reset before) or ``W_xn x + r ⊙ (W_hn h)``
    (after, cuDNN's), the recurrent bias b_hn inside the reset with two biases."""
    bx, bh, b = _biases(p, "n", bias)
    if reset == "before":
        recurrent = p("W_hn") @ (r * h) + bh
    else:
        recurrent = r * (p("W_hn") @ h + bh)
    return p("W_xn") @ x + bx + recurrent + b


def _cho(z, h, n):
    return z * h + (1.0 - z) * n


def _bahdanau(z, h, n):
    return (1.0 - z) * h + z * n


_UPDATES = {"cho": _cho, "bahdanau": _bahdanau}


def gru_step(*, bias="single", reset="before", update="cho", _biases=biases, _candidate=candidate, _update=None):
    """The GRU: reset gate r, update gate z, candidate n; ``h ← z ⊙ h + (1 − z) ⊙ n`` (cho) or with z and
    1 − z the other way round (bahdanau)."""
    mix = _update or _UPDATES[update]

    def step(x, state, p):
        (h,) = state
        r = sigmoid(_preactivation(p, "r", x, h, bias, _biases))
        z = sigmoid(_preactivation(p, "z", x, h, bias, _biases))
        n = np.tanh(_candidate(p, x, h, r, bias=bias, reset=reset, _biases=_biases))
        return (mix(z, h, n),)
    return step


def _memory(f, c, i, g):
    return f * c + i * g


def _emit(o, c):
    return o * np.tanh(c)


def lstm_step(*, bias="single", _biases=biases, _order=TORCH_ORDER, _forget_bias=0.0, _memory=_memory,
              _emit=_emit):
    """The LSTM with a forget gate.  The gates' weights are packed in torch's order into one 4d_h-row matrix
    (and the biases into one vector); the preactivation is split into four in the order ``_order``."""
    def step(x, state, p):
        h, c = state
        W_x = np.concatenate([p(f"W_x{g}") for g in TORCH_ORDER])             # 4d_h×d_x
        W_h = np.concatenate([p(f"W_h{g}") for g in TORCH_ORDER])             # 4d_h×d_h
        b = np.concatenate([np.broadcast_to(sum(_biases(p, g, bias)), len(h)) for g in TORCH_ORDER])
        a = dict(zip(_order, np.split(W_x @ x + W_h @ h + b, 4)))
        i, f, o = sigmoid(a["i"]), sigmoid(a["f"] + _forget_bias), sigmoid(a["o"])
        g = np.tanh(a["g"])
        c = _memory(f, c, i, g)
        return _emit(o, c), c
    return step


def cell_step(cell, *, bias="single", nonlinearity="tanh", reset="before", update="cho", **seams):
    """The step of ``cell`` with the options that apply to it (the others keep their defaults)."""
    if cell == "rnn":
        return rnn_step(bias=bias, nonlinearity=nonlinearity, **seams)
    if cell == "gru":
        return gru_step(bias=bias, reset=reset, update=update, **seams)
    return lstm_step(bias=bias, **seams)


# ------------------------------------------------------------------------------------ what conform calls
def _read(theta, name):
    """The parameter ``name`` among the keyword arguments ``theta``."""
    return theta[name]


def rnn_cell(*, bias="single", nonlinearity="tanh", _read=_read, **seams):
    """Elman's cell, one step: ``h ← φ(W_xh x + W_hh h + b_h)``."""
    step = rnn_step(bias=bias, nonlinearity=nonlinearity, **seams)

    def rnn_cell(x, h, **theta):
        return step(x, (h,), lambda name: _read(theta, name))[0]
    return rnn_cell


def gru_cell(*, bias="single", reset="before", update="cho", _read=_read, **seams):
    """The GRU, one step."""
    step = gru_step(bias=bias, reset=reset, update=update, **seams)

    def gru_cell(x, h, **theta):
        return step(x, (h,), lambda name: _read(theta, name))[0]
    return gru_cell


def lstm_cell(*, bias="single", _read=_read, **seams):
    """The LSTM, one step: returns the new state and memory cell ``(h, c)``."""
    step = lstm_step(bias=bias, **seams)

    def lstm_cell(x, h, c, **theta):
        return step(x, (h, c), lambda name: _read(theta, name))
    return lstm_cell


# ------------------------------------------------------------------------------------- planted pieces
NOTES_ORDER = ("i", "f", "o", "g")     # the lecture notes' order; torch packs TORCH_ORDER = (i, f, g, o)
assert TORCH_ORDER != NOTES_ORDER


def input_bias_only(p, g, bias):
    """Two biases read as one: b_xg is added, b_hg never read."""
    bx, _, b = biases(p, g, bias)
    return bx, 0.0, b


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


def elman_on_candidate(bias):
    """A GRU layer's step that is Elman's cell on the candidate's weights W_xn, W_hn, b_n: no gates."""
    step = rnn_step(bias=bias)
    return lambda x, state, p: step(x, state, lambda name: p(name[:-1] + "n"))


# ------------------------------------------------------------------------------------------------ layers
#: Direction → its passes: (the suffix of its parameters, whether it reads the sequence last first).
PASSES = {"forward": (("", False),), "backward": (("_back", True),),
          "bidirectional": (("", False), ("_back", True))}


def _unreverse(H):
    """A backward pass's states, collected last position first, put back in the positions' order."""
    return H[:, ::-1]


def _join(forward, backward):
    """``[H⃗; H⃖]``."""
    return np.concatenate([forward, backward])


def layer(*, cell="lstm", direction="forward", bias="single", nonlinearity="tanh", reset="before", update="cho",
          _step=None, _passes=PASSES, _unreverse=_unreverse, _join=_join, _state=lambda state: state[0],
          **cell_seams):
    """A recurrent layer as ``run(X, p) → H``: the cell stepped over the columns of X from a zero state,
    the states collected as columns; ``p(name)`` returns the parameter of the cell's canonical ``name`` with
    the pass's suffix appended (``W_xi``, ``W_xi_back``)."""
    step = _step or cell_step(cell, bias=bias, nonlinearity=nonlinearity, reset=reset, update=update,
                              **cell_seams)
    n_state = 2 if cell == "lstm" else 1
    first = f"W_h{GATES[cell][0]}"

    def run(X, p):
        parts = []
        for suffix, reverse in _passes[direction]:
            def q(name, s=suffix):
                return (p(name + s))
            d_h = len(q(first))
            state = tuple(np.zeros(d_h) for _ in range(n_state))
            columns = X[:, ::-1] if reverse else X
            states = []
            for t in range(X.shape[1]):
                state = step(columns[:, t], state, q)
                states.append(_state(state))
            H = np.stack(states, axis=1)
            parts.append(_unreverse(H) if reverse else H)
        return parts[0] if len(parts) == 1 else _join(*parts)
    return run


def rnn_layer(**options):
    """A recurrent layer over X (d_x×ℓ): H, d_h×ℓ (2d_h×ℓ both ways)."""
    run = layer(**options)

    def rnn_layer(X, params):
        return run(X, params.__getitem__)
    return rnn_layer


def _upper(params, name, l):
    """Parameter ``name`` of layer l + 2: entry l of the ``_l`` stack."""
    return params[name + "_l"][l]


def rnn(*, _upper=_upper, _output=lambda layers: layers[-1], **options):
    """L stacked layers: layer 1 reads X with the ``_1`` parameters, layer l + 2 the states below it with
    entry l of the ``_l`` stacks; the last layer's states are returned."""
    run = layer(**options)
    first = f"W_x{GATES[options.get('cell', 'lstm')][0]}{PASSES[options.get('direction', 'forward')][0][0]}_l"

    def rnn(X, params):
        states = [run(X, lambda name: params[name + "_1"])]
        for l in range(len(params[first])):
            states.append(run(states[-1], lambda name, l=l: _upper(params, name, l)))
        return _output(states)
    return rnn


# ------------------------------------------------------------------------------------- planted pieces
def _upper_reads_layer_1(params, name, l):
    """Layers 2…L read layer 1's recurrent weights and biases (the ones shaped alike in every layer)."""
    return params[name + "_l"][l] if name.startswith("W_x") else params[name + "_1"]


def _unchanged(H):
    return H


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    Implementation("rnn_cell", rnn_cell,
                   seconds={"quick": (0.05, 0.02), "thorough": (0.5, 0.11)}),
    Implementation("gru_cell", gru_cell,
                   seconds={"quick": (0.3, 0.03), "thorough": (0.8, 0.21)}),
    Implementation("lstm_cell", lstm_cell,
                   seconds={"quick": (0.3, 0.04), "thorough": (0.9, 0.26)}),
    Implementation("rnn_layer", rnn_layer,
                   seconds={"quick": (0.4, 0.07), "thorough": (1.9, 0.52)}),
    Implementation("rnn", rnn,
                   seconds={"quick": (1.0, 0.14), "thorough": (4.5, 1.01)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)

_CELLS = (
    _variant("rnn_cell_ignores_bias", "rnn_cell", {}, {"bias": "none"}, "drops b_h under the default bias=single"),
    _seam("rnn_cell_double_input_bias_only", "rnn_cell", {"bias": "double"},
          "adds b_xh only: the recurrent bias b_hh is never read", "variant option bias", _biases=input_bias_only),
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
          "review", _order=NOTES_ORDER),
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
          _biases=input_bias_only),
)
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
              "review", _order=NOTES_ORDER),
        _seam(f"{algorithm}_without_forget_gate", algorithm, {},
              "its LSTM cells leave out the forget gate: c ← c + i ⊙ g (the 1997 LSTM)", "review",
              _memory=lambda f, c, i, g: c + i * g),
        _seam(f"{algorithm}_forward_reads_backwards", algorithm, {},
              "runs from the last position under the default direction=forward", "variant option direction",
              _passes={**PASSES, "forward": (("", True),)}),
        _seam(f"{algorithm}_backward_not_rereversed", algorithm, _BACKWARD,
              "returns the backward pass's states in the order computed: column t holds the state of position "
              "ℓ − 1 − t", "review", _unreverse=_unchanged),
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
              "variant option cell", _step=elman_on_candidate("single")),
        _variant(f"{algorithm}_tanh_under_relu", algorithm, {"cell": "rnn", "nonlinearity": "relu"},
                 {"nonlinearity": "tanh"}, "applies tanh under nonlinearity=relu"),
        _variant(f"{algorithm}_before_under_after", algorithm, {"cell": "gru", "reset": "after"},
                 {"reset": "before"}, "resets before the recurrent product under reset=after"),
        _variant(f"{algorithm}_cho_under_bahdanau", algorithm, {"cell": "gru", "update": "bahdanau"},
                 {"update": "cho"}, "updates h ← z ⊙ h + (1 − z) ⊙ n under update=bahdanau"),
        _seam(f"{algorithm}_double_input_bias_only", algorithm, {"bias": "double"},
              "adds b_xg only: the recurrent biases b_hg are never read", "variant option bias",
              _biases=input_bias_only),
        _variant(f"{algorithm}_ignores_bias", algorithm, {}, {"bias": "none"},
                 "drops the gates' biases under the default bias=single"),
    ]


MUTANTS = _CELLS + tuple(_layers("rnn_layer") + _layers("rnn") + [
    _seam("rnn_upper_layers_read_layer_1", "rnn", {},
          "layers 2…L read layer 1's recurrent weights and biases (their input weights their own)", "review",
          _upper=_upper_reads_layer_1),
    _seam("rnn_upper_layers_share_layer_2", "rnn", {},
          "every layer above the first reads layer 2's parameters (entry 0 of the _l stacks)", "review",
          _upper=lambda params, name, l: params[name + "_l"][0]),
    _seam("rnn_returns_first_layer", "rnn", {},
          "returns the first layer's states, not the last's", "review", _output=lambda layers: layers[0]),
])

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {
    "the GRU's b_hn added outside the reset under reset=before": "W_hn (r ⊙ h) + b_hn: the reset multiplies the "
                                                                "state, never the bias, before the product",
}
