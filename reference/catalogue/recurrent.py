"""Recurrent layers and stacks: a cell (:mod:`.cells`) run over a sequence forwards, backwards or both ways,
and stacked in layers; their planted bugs.

Each factory takes the variant's options and returns the function conform calls; its keyword-only
``_``-arguments are the seams the catalogue (at the end) plants bugs through.
"""

from __future__ import annotations

import numpy as np

from .cells import GATES, NOTES_ORDER, cell_step, elman_on_candidate, input_bias_only
from .entry import Implementation, makers

__all__ = ["PASSES", "layer", "rnn_layer", "rnn", "IMPLEMENTATIONS", "MUTANTS"]


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
    Implementation("rnn_layer", rnn_layer, {"float32": 3e-6, "bfloat16": 0.2},
                   seconds={"quick": (0.12, 0.07), "thorough": (0.6, 0.52)}),
    Implementation("rnn", rnn, {"float32": 5e-6, "bfloat16": 0.2},
                   seconds={"quick": (0.3, 0.14), "thorough": (1.1, 1.01)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
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


MUTANTS = tuple(_layers("rnn_layer") + _layers("rnn") + [
    _seam("rnn_upper_layers_read_layer_1", "rnn", {},
          "layers 2…L read layer 1's recurrent weights and biases (their input weights their own)", "review",
          _upper=_upper_reads_layer_1),
    _seam("rnn_upper_layers_share_layer_2", "rnn", {},
          "every layer above the first reads layer 2's parameters (entry 0 of the _l stacks)", "review",
          _upper=lambda params, name, l: params[name + "_l"][0]),
    _seam("rnn_returns_first_layer", "rnn", {},
          "returns the first layer's states, not the last's", "review", _output=lambda layers: layers[0]),
])
