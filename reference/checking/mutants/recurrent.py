"""Recurrent cells and layers: Elman's RNN, the GRU and the LSTM, run over a sequence forwards, backwards or
both ways, and stacked in layers.

A cell here is a *step* ``step(x, state, p) → state``: ``state`` is ``(h,)`` or, for the LSTM, ``(h, c)``,
and ``p(name)`` returns the parameter the spec names ``name`` (``W_xr``, ``b_hz`` …), so that the layers,
stacks and sequence models (:mod:`.sequence_models`) run the same cells on their own renamed parameters.
The LSTM is written as a user porting torch weights would: the four gates' weights packed in torch's order
(i, f, g, o) into one matrix, one product, the result split — which is where a gate-order bug hides.

Each factory takes the variant's options and returns the function conform calls; its keyword-only
``_``-arguments are the seams the catalogue plants bugs through.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GATES", "TORCH_ORDER", "sigmoid", "biases", "rnn_step", "gru_step", "lstm_step", "cell_step",
           "layer", "rnn_cell", "gru_cell", "lstm_cell", "rnn_layer", "rnn"]

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
            q = (lambda name, s=suffix: p(name + s))
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
