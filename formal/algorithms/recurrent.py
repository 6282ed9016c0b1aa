"""Recurrent cells and layers: Elman's RNN, the LSTM and the GRU, run over a sequence forwards, backwards or
both ways, and stacked in layers — the recurrence that attention replaced, written in the paper's style so
that Vaswani et al.'s Table 1 can be derived from objects (a recurrent layer's depth grows with ℓ).

Conventions (one column per token, as in Phuong & Hutter): the input X is d_x×ℓ, a state is a d_h-vector,
the layer's output H has one column per position (d_h×ℓ, or 2d_h×ℓ both ways).  Every gate ``g`` has
its own input weight ``W_xg`` (d_h×d_x) and recurrent weight ``W_hg`` (d_h×d_h); its bias follows the
``bias`` option: ``"single"`` — one ``b_g``, as the papers write it; ``"double"`` — ``b_xg`` and ``b_hg``,
as torch and cuDNN keep them (their sum is the single bias, but the parameter count differs); ``"none"``.
The start state is 0 ("Can set initial state h_0 to all 0's", as the lecture notes and torch do).

References
----------
- J. L. Elman, "Finding structure in time", Cognitive Science 14, 1990.
- S. Hochreiter, J. Schmidhuber, "Long short-term memory", Neural Computation 9, 1997; F. A. Gers,
  J. Schmidhuber, F. Cummins, "Learning to forget", Neural Computation 12, 2000 (the forget gate).
- K. Cho et al., "Learning phrase representations using RNN encoder–decoder", EMNLP 2014, eqs. (5)–(8).
- D. Bahdanau, K. Cho, Y. Bengio, "Neural machine translation by jointly learning to align and
  translate", ICLR 2015, Appendix A (the update written with z and 1 − z the other way round).
"""

from __future__ import annotations

from ..core.shapes import TensorSpec
from ..core.symbols import L, d_h, d_x, ell
from ..engine.algorithm import Algorithm, Assign, Loop, call
from ..engine.declarations import Option, Options
from ..engine.domains import Choice
from ..ops import LoopIndex, activation, add, column, matmul, mul, one_minus, pick, sequence, stack_vertical, zeros

__all__ = ["ALGORITHMS", "CELLS", "BIASES", "RESETS", "UPDATES", "NONLINEARITIES", "DIRECTIONS", "GATES", "CELL",
           "DIRECTION", "CELL_BIAS", "NONLINEARITY", "RESET", "UPDATE", "LAYER_OPTIONS", "build_rnn_cell",
           "build_gru_cell", "build_lstm_cell", "build_cell", "build_rnn_layer", "build_rnn", "rnn_cell", "gru_cell",
           "lstm_cell", "rnn_layer", "rnn"]

CELLS = ("rnn", "gru", "lstm")
BIASES = ("single", "double", "none")
RESETS = ("before", "after")
UPDATES = ("cho", "bahdanau")
NONLINEARITIES = ("tanh", "relu")
DIRECTIONS = ("forward", "backward", "bidirectional")

#: Each cell's gates, in the order torch packs them into ``weight_ih``.
GATES = {"rnn": ("h",), "gru": ("r", "z", "n"), "lstm": ("i", "f", "g", "o")}

_SOURCES = {"rnn": "Elman 1990", "gru": "Cho et al. 2014", "lstm": "Hochreiter & Schmidhuber 1997; Gers et al. 2000"}
_STATE = {"rnn": ("h",), "gru": ("h",), "lstm": ("h", "c")}

CELL_BIAS = Option("bias", "single", Choice(*BIASES),
                   "the bias convention: single (one b_g per gate, the papers'), double (b_xg and b_hg, torch's and "
                   "cuDNN's) or none")
NONLINEARITY = Option("nonlinearity", "tanh", Choice(*NONLINEARITIES),
                      "the RNN cell's: tanh (Elman's) or relu (torch's nonlinearity='relu')")
RESET = Option("reset", "before", Choice(*RESETS),
               "the GRU's reset gate: before the recurrent product, W_hn (r ⊙ h) (Cho et al.), or after it, "
               "r ⊙ (W_hn h) (cuDNN, torch.nn.GRU)")
UPDATE = Option("update", "cho", Choice(*UPDATES),
                "the GRU's update: cho, h ← z ⊙ h + (1 − z) ⊙ n (Cho et al., torch), or bahdanau, "
                "h ← (1 − z) ⊙ h + z ⊙ n (Bahdanau et al. 2015, Yang et al. 2016)")
CELL = Option("cell", "lstm", Choice(*CELLS), "the recurrent cell: rnn (Elman), gru or lstm")
DIRECTION = Option("direction", "forward", Choice(*DIRECTIONS),
                   "forward, backward (the last position first) or bidirectional ([H⃗; H⃖], 2d_h rows)")
#: A recurrent layer's and stack's options: a cell option has an effect with its own cell only.
LAYER_OPTIONS = Options(CELL, DIRECTION, CELL_BIAS, NONLINEARITY.when("cell", "rnn"), RESET.when("cell", "gru"),
                        UPDATE.when("cell", "gru"))


def _gate_params(gate, bias) -> list:
    specs = [TensorSpec(f"W_x{gate}", (d_h, d_x), doc=f"input weights of gate {gate}"),
             TensorSpec(f"W_h{gate}", (d_h, d_h), doc=f"recurrent weights of gate {gate}")]
    if bias == "double":
        specs += [TensorSpec(f"b_x{gate}", (d_h,), doc=f"input bias of gate {gate}"),
                  TensorSpec(f"b_h{gate}", (d_h,), doc=f"recurrent bias of gate {gate}")]
    elif bias == "single":
        specs.append(TensorSpec(f"b_{gate}", (d_h,), doc=f"bias of gate {gate}"))
    return specs


def _input_part(gate, bias):
    """``W_xg x`` (+ ``b_xg`` with two biases)."""
    part = matmul(f"W_x{gate}", "x")
    return add(part, f"b_x{gate}") if bias == "double" else part


def _recurrent_part(gate, bias, state="h"):
    """``W_hg h`` (+ ``b_hg`` with two biases)."""
    part = matmul(f"W_h{gate}", state)
    return add(part, f"b_h{gate}") if bias == "double" else part


def _preactivation(gate, bias):
    """``W_xg x + W_hg h + b_g`` under the bias convention."""
    total = add(_input_part(gate, bias), _recurrent_part(gate, bias))
    return add(total, f"b_{gate}") if bias == "single" else total


def _cell(kind, *, lines, bias, summary, notes=()) -> Algorithm:
    state = _STATE[kind]
    inputs = [TensorSpec("x", (d_x,), doc="the input of this step")]
    inputs += [TensorSpec(s, (d_h,), doc="the previous state" if s == "h" else "the previous memory cell")
               for s in state]
    outputs = [TensorSpec(s, (d_h,), doc="the new state" if s == "h" else "the new memory cell") for s in state]
    params = [spec for gate in GATES[kind] for spec in _gate_params(gate, bias)]
    return Algorithm(
        number=None, source=_SOURCES[kind], name=f"{kind}_cell", display=f"{kind.upper()}Cell", summary=summary,
        inputs=inputs, params=params, output=outputs if len(outputs) > 1 else outputs[0], lines=lines,
        params_label="θ", notes=notes,
    )


@Options(CELL_BIAS, NONLINEARITY).builds
def build_rnn_cell(*, bias, nonlinearity) -> Algorithm:
    """Elman's recurrent cell: ``h ← φ(W_xh x + W_hh h + b_h)`` with φ = tanh (or ReLU)."""
    lines = [Assign("h", activation(nonlinearity, _preactivation("h", bias)), returns=True)]
    return _cell("rnn", lines=lines, bias=bias,
                 summary="Elman's recurrent cell: the new state from the input and the previous state.")


@Options(CELL_BIAS).builds
def build_lstm_cell(*, bias) -> Algorithm:
    """The LSTM cell with a forget gate: gates i, f, o (σ) and the candidate g (tanh);
    ``c ← f ⊙ c + i ⊙ g``, ``h ← o ⊙ tanh(c)``."""
    gates = [Assign(g, activation("tanh" if g == "g" else "sigmoid", _preactivation(g, bias)), note=note)
             for g, note in zip(GATES["lstm"], ("Input gate", "Forget gate", "Candidate", "Output gate"))]
    lines = [*gates,
             Assign("c", add(mul("f", "c"), mul("i", "g")), note="Memory cell"),
             Assign("h", mul("o", activation("tanh", "c")), returns=True)]
    return _cell("lstm", lines=lines, bias=bias,
                 summary="The LSTM cell (with Gers et al.'s forget gate): new state and memory cell.",
                 notes=("the lecture notes write the gates in the order (i, f, o, g); torch packs them (i, f, g, o) "
                        "— the names, not the order, say which is which",))


@Options(CELL_BIAS, RESET, UPDATE).builds
def build_gru_cell(*, bias, reset, update) -> Algorithm:
    """The gated recurrent unit: reset gate r, update gate z, candidate n; ``h ← z ⊙ h + (1 − z) ⊙ n``.

    ``reset="before"`` (Cho et al. eq. 7) resets the state before the recurrent product, ``W_hn (r ⊙ h)``;
    ``reset="after"`` (cuDNN, ``torch.nn.GRU``, Keras' ``reset_after=True``) after it, ``r ⊙ (W_hn h)`` — not
    a reparametrisation of each other.  ``update="bahdanau"`` swaps z and 1 − z (σ(−a) = 1 − σ(a): the same
    family with W_xz, W_hz, b_z negated).
    """
    if reset == "before":
        candidate = add(_input_part("n", bias), _recurrent_part("n", bias, state=mul("r", "h")))
    else:
        candidate = add(_input_part("n", bias), mul("r", _recurrent_part("n", bias)))
    if bias == "single":
        candidate = add(candidate, "b_n")
    keep, take = ("z", one_minus("z")) if update == "cho" else (one_minus("z"), "z")
    lines = [Assign("r", activation("sigmoid", _preactivation("r", bias)), note="Reset gate"),
             Assign("z", activation("sigmoid", _preactivation("z", bias)), note="Update gate"),
             Assign("n", activation("tanh", candidate), note="Candidate"),
             Assign("h", add(mul(keep, "h"), mul(take, "n")), returns=True)]
    return _cell("gru", lines=lines, bias=bias,
                 summary="The gated recurrent unit: the new state from reset and update gates.")


def build_cell(cell: str, /, **options) -> Algorithm:
    """The cell ``cell`` (``"rnn"``, ``"gru"``, ``"lstm"``) with ``options`` — those of :data:`LAYER_OPTIONS`
    that apply to it; one that does not must keep its default (it would change nothing)."""
    values = LAYER_OPTIONS.resolve({**options, "cell": cell}, "recurrent cell")
    if cell == "rnn":
        return build_rnn_cell(bias=values["bias"], nonlinearity=values["nonlinearity"])
    if cell == "gru":
        return build_gru_cell(bias=values["bias"], reset=values["reset"], update=values["update"])
    return build_lstm_cell(bias=values["bias"])


# ----------------------------------------------------------------------------------------------- layers
_SUFFIXES = {"forward": ("",), "backward": ("_back",), "bidirectional": ("", "_back")}
_ARROWS = {"": ("→", r"\rightarrow"), "_back": ("←", r"\leftarrow")}


def _direction_lines(cell, read, suffix, label, x):
    """``h ← 0`` (and ``c ← 0``), then ``for t ∈ [ℓ]: h ← Cell(X[:, t], h | θ)``, collecting the states as
    ``h_seq<suffix>``; the cell's parameter ``p`` is ``read(p + suffix)``."""
    state = [s.name for s in cell.outputs]
    t = LoopIndex("t")
    arguments = {"x": column(x, t, ell, reverse=suffix == "_back"), **{s: s for s in state},
                 **{p.name: read(f"{p.name}{suffix}") for p in cell.params}}
    step = Assign(tuple(state) if len(state) > 1 else state[0], call(cell, label=label, **arguments))
    starts = [Assign(s, zeros(d_h), note="Start state" if s == "h" else "Start memory cell") for s in state]
    return starts + [Loop("t", ell, (step,), stack=(("h", f"h_seq{suffix}"),), sequential=True)]


def _layer_lines(cell, direction, *, read=lambda name: name, x="X", layer=""):
    """One layer's lines, ending ``H ← [h_1, …, h_ℓ]`` (``[H⃗; H⃖]`` both ways); ``layer`` is the
    subscript of its parameters' glyph (θ_1, θ_l in a stack)."""
    lines, parts = [], []
    both = direction == "bidirectional"
    for suffix in _SUFFIXES[direction]:
        arrow, tex = _ARROWS[suffix] if both else ("", "")
        label = (f"θ{arrow}" + (f"_{layer}" if layer else ""),
                 r"\theta" + (f"^{{{tex}}}" if tex else "") + (f"_{{{layer}}}" if layer else ""))
        lines += _direction_lines(cell, read, suffix, label, x)
        parts.append(sequence(f"h_seq{suffix}", ell, f"h{arrow}", "h" + (f"^{{{tex}}}" if tex else ""),
                              reverse=suffix == "_back"))
    value = stack_vertical(*parts) if both else parts[0]
    return lines + [Assign("H", value, note="The states as columns")]


def _layer_params(cell, direction, *, tail="", width=d_x, layers=()) -> list:
    """The layer's parameters: the cell's, once per direction (``_back`` backwards), named with ``tail``
    (``_1``, ``_l``), their input width ``width``, stacked on ``layers``."""
    out = []
    for suffix in _SUFFIXES[direction]:
        for p in cell.params:
            shape = tuple(width if d == d_x else d for d in p.shape)
            out.append(TensorSpec(f"{p.name}{suffix}{tail}", layers + shape,
                                  doc=p.doc + (", backward" if suffix else "")))
    return out


def _layer_setup(cell, bias, nonlinearity, reset, update, direction):
    built = build_cell(cell, bias=bias, nonlinearity=nonlinearity, reset=reset, update=update)
    rows = 2 * d_h if direction == "bidirectional" else d_h
    return built, rows


def _returned(lines):
    last = lines[-1]
    return lines[:-1] + [Assign(last.target, last.expr, note=last.note, returns=True)]


@LAYER_OPTIONS.builds
def build_rnn_layer(*, cell, direction, bias, nonlinearity, reset, update) -> Algorithm:
    """A recurrent layer: the cell applied at every position in turn, its state carried from each step to
    the next — a *sequential* loop, so the depth grows with ℓ (Vaswani et al.'s "sequential operations").
    Backward runs from the last position to the first; bidirectional runs both and stacks the states,
    ``H = [H⃗; H⃖]`` (a backward parameter carries the suffix ``_back``)."""
    built, rows = _layer_setup(cell, bias, nonlinearity, reset, update, direction)
    return Algorithm(
        number=None, source=_SOURCES[cell], name="rnn_layer", display=f"{cell.upper()}Layer",
        summary=f"A recurrent layer: the {cell.upper()} cell run over the sequence ({direction}).",
        inputs=[TensorSpec("X", (d_x, ell), doc="the input sequence, one column per token", role="tokens")],
        params=_layer_params(built, direction), output=TensorSpec("H", (rows, ell), doc="the state at every position"),
        lines=_returned(_layer_lines(built, direction)), params_label="θ", model=True,
        causal=None if direction == "bidirectional" else direction,
    )


@LAYER_OPTIONS.builds
def build_rnn(*, cell, direction, bias, nonlinearity, reset, update) -> Algorithm:
    """L stacked recurrent layers, each reading the states of the one below (``torch.nn.RNN/GRU/LSTM`` with
    ``num_layers = L``).  Layer 1 reads X (d_x rows); the layers above read d_h rows (2d_h both ways), so
    their parameters differ in shape: layer 1's carry the suffix ``_1``, those of layers 2…L the suffix
    ``_l`` and are stacked on a leading axis of L − 1 (empty for one layer)."""
    built, rows = _layer_setup(cell, bias, nonlinearity, reset, update, direction)
    l = LoopIndex("l")
    first = _layer_lines(built, direction, read=lambda name: f"{name}_1", layer="1")
    upper = _layer_lines(built, direction, read=lambda name: pick(f"{name}_l", l), x="H", layer="l")
    params = (_layer_params(built, direction, tail="_1")
              + _layer_params(built, direction, tail="_l", width=rows, layers=(L - 1,)))
    return Algorithm(
        number=None, source=_SOURCES[cell], name="rnn", display=cell.upper(),
        summary=f"L stacked recurrent layers of the {cell.upper()} cell ({direction}).",
        inputs=[TensorSpec("X", (d_x, ell), doc="the input sequence, one column per token", role="tokens")],
        params=params, output=TensorSpec("H", (rows, ell), doc="the last layer's state at every position"),
        lines=[*first, Loop("l", L - 1, tuple(upper), sequential=True)], params_label="θ", model=True,
        notes=("layer 1's parameters carry the suffix _1; layers 2…L's the suffix _l, stacked on a leading axis "
               "of L − 1",),
        causal=None if direction == "bidirectional" else direction,
    )


rnn_cell = build_rnn_cell()
gru_cell = build_gru_cell()
lstm_cell = build_lstm_cell()
rnn_layer = build_rnn_layer()
rnn = build_rnn()

#: This family's algorithms, in the order the registry lists them (:data:`formal.algorithms.ALGORITHMS`).
ALGORITHMS = (rnn_cell, gru_cell, lstm_cell, rnn_layer, rnn)
