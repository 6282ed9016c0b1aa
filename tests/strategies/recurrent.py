"""Hypothesis strategies for the recurrent cells, layers and stacks, and the models built on them (the
RNN encoder–decoder, Show-Attend-Tell, hierarchical attention networks), built constructively.

The parameter shapes are written here by hand from the papers' equations (a gate g has W_xg ∈ ℝ^{d_h×d_x},
W_hg ∈ ℝ^{d_h×d_h} and its biases), never read from the algorithm objects: the tests compare the objects
against this independent table.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from formal import algorithms
from formal.algorithms import recurrent
from tests.strategies.cases import SEED, Case, normal

GATES = {"rnn": "h", "gru": "rzn", "lstm": "ifgo"}
BIAS = st.sampled_from(["single", "double", "none"])


def gate_shapes(kind, bias, d_h, d_in) -> dict:
    """name → shape of one cell's parameters, by hand."""
    shapes = {}
    for g in GATES[kind]:
        shapes[f"W_x{g}"], shapes[f"W_h{g}"] = (d_h, d_in), (d_h, d_h)
        if bias == "double":
            shapes[f"b_x{g}"], shapes[f"b_h{g}"] = (d_h,), (d_h,)
        elif bias == "single":
            shapes[f"b_{g}"] = (d_h,)
    return shapes


@st.composite
def cell_options(draw, kind):
    options = {"bias": draw(BIAS)}
    if kind == "rnn":
        options["nonlinearity"] = draw(st.sampled_from(["tanh", "relu"]))
    if kind == "gru":
        options["reset"] = draw(st.sampled_from(["before", "after"]))
        options["update"] = draw(st.sampled_from(["cho", "bahdanau"]))
    return options


@st.composite
def cell_cases(draw, kind):
    options = draw(cell_options(kind))
    s = {"d_x": draw(st.integers(1, 5)), "d_h": draw(st.integers(1, 5))}
    rng = np.random.default_rng(draw(SEED))
    params = {n: normal(rng, *shape) for n, shape in gate_shapes(kind, options["bias"], s["d_h"], s["d_x"]).items()}
    inputs = {"x": normal(rng, s["d_x"]), "h": normal(rng, s["d_h"])}
    if kind == "lstm":
        inputs["c"] = normal(rng, s["d_h"])
    algorithm = recurrent.build_cell(kind, **options)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


def _layer_shapes(kind, bias, direction, d_h, d_in, tail="", layers=()):
    shapes = {}
    for suffix in {"forward": ("",), "backward": ("_back",), "bidirectional": ("", "_back")}[direction]:
        for name, shape in gate_shapes(kind, bias, d_h, d_in).items():
            shapes[f"{name}{suffix}{tail}"] = layers + shape
    return shapes


@st.composite
def layer_cases(draw, stacked=False):
    kind = draw(st.sampled_from(["rnn", "gru", "lstm"]))
    options = draw(cell_options(kind))
    direction = draw(st.sampled_from(["forward", "backward", "bidirectional"]))
    s = {"d_x": draw(st.integers(1, 4)), "d_h": draw(st.integers(1, 4)), "ell": draw(st.integers(1, 5))}
    width = s["d_h"] * (2 if direction == "bidirectional" else 1)
    if stacked:
        s["L"] = draw(st.integers(1, 3))
        shapes = {**_layer_shapes(kind, options["bias"], direction, s["d_h"], s["d_x"], "_1"),
                  **_layer_shapes(kind, options["bias"], direction, s["d_h"], width, "_l", (s["L"] - 1,))}
    else:
        shapes = _layer_shapes(kind, options["bias"], direction, s["d_h"], s["d_x"])
    rng = np.random.default_rng(draw(SEED))
    params = {n: normal(rng, *shape) for n, shape in shapes.items()}
    build = recurrent.build_rnn if stacked else recurrent.build_rnn_layer
    algorithm = build(cell=kind, direction=direction, **options)
    return Case(algorithm, {"X": normal(rng, s["d_x"], s["ell"]), **params}, s, tuple(params))


RECURRENT_STRATEGIES = {
    "rnn_cell": cell_cases("rnn"),
    "gru_cell": cell_cases("gru"),
    "lstm_cell": cell_cases("lstm"),
    "rnn_layer": layer_cases(),
    "rnn": layer_cases(stacked=True),
}


@st.composite
def seq2seq_cases(draw):
    """A recurrent encoder–decoder with hand-written parameter shapes: embeddings d_e×N_V; the encoder's
    gates read d_e; the decoder's read d_e + D (the context beside the token; Luong: d_e alone); W_init
    d_h×D (d_h×d_h from h⃖_1); the alignment W_a d_a×d_h, U_a d_a×D, v_a d_a (general: W_a D×d_h); Luong's
    W_c d_h×(D + d_h); the output W_u N_V×(d_h + D) (Luong: N_V×d_h) — D = 2·d_h both ways, d_h forwards."""
    attention = draw(st.sampled_from(["none", "bahdanau", "luong"]))
    score = "additive" if attention == "none" else draw(st.sampled_from(["additive", "dot", "general"]))
    encoder = "forward" if score == "dot" else draw(st.sampled_from(["bidirectional", "forward"]))
    init = draw(st.sampled_from(["final", "backward"])) if encoder == "bidirectional" else "final"
    kind = draw(st.sampled_from(["gru", "lstm"]))
    bias = draw(BIAS)
    s = {"N_V": draw(st.integers(2, 6)), "d_e": draw(st.integers(1, 4)), "d_h": draw(st.integers(1, 4)),
         "ell_z": draw(st.integers(1, 4)), "ell_x": draw(st.integers(1, 4))}
    D = 2 * s["d_h"] if encoder == "bidirectional" else s["d_h"]
    shapes = {"W_src": (s["d_e"], s["N_V"]), "W_e": (s["d_e"], s["N_V"])}
    shapes.update({f"enc_{k}": v for k, v in _layer_shapes(kind, bias, encoder, s["d_h"], s["d_e"]).items()})
    shapes["W_init"] = (s["d_h"], s["d_h"] if init == "backward" else D)
    if attention != "none" and score == "additive":
        s["d_a"] = draw(st.integers(1, 4))
        shapes.update(W_a=(s["d_a"], s["d_h"]), U_a=(s["d_a"], D), v_a=(s["d_a"],))
    elif attention != "none" and score == "general":
        shapes["W_a"] = (D, s["d_h"])
    dec_in = s["d_e"] + (0 if attention == "luong" else D)
    shapes.update({f"dec_{k}": v for k, v in gate_shapes(kind, bias, s["d_h"], dec_in).items()})
    if attention == "luong":
        shapes["W_c"] = (s["d_h"], D + s["d_h"])
    shapes["W_u"] = (s["N_V"], s["d_h"] + (0 if attention == "luong" else D))
    if bias != "none":
        shapes.update(b_init=(s["d_h"],), b_u=(s["N_V"],))
    rng = np.random.default_rng(draw(SEED))
    params = {n: normal(rng, *shape) for n, shape in shapes.items()}
    tokens = {"z": rng.integers(0, s["N_V"], s["ell_z"]), "x": rng.integers(0, s["N_V"], s["ell_x"])}
    algorithm = algorithms.get("seq2seq", attention=attention, score=score, cell=kind, encoder=encoder, init=init,
                               bias=bias)
    return Case(algorithm, {**tokens, **params}, s, tuple(params))


RECURRENT_STRATEGIES["seq2seq"] = seq2seq_cases()


def _sat_shapes(s, o):
    """Show, Attend and Tell's parameters by hand (Xu et al. §3.1.2): E d_e×N_V; the initial MLPs d_h×D;
    f_att W_a d_a×d_h, U_a d_a×D, v_a d_a (and its biases b_a, b_k, d_a each); the gate w_β d_h and b_β (a
    scalar) or, vector, W_β D×d_h and b_β D; the LSTM's gates reading [E y; ẑ] (d_e + D); the deep output
    L_h d_e×d_h, L_z d_e×D, L_o N_V×d_e or the state's W_out N_V×d_h and b_out N_V."""
    D = s["d_z"]
    shapes = {"E": (s["d_e"], s["N_V"]), "W_init_h": (s["d_h"], D), "b_init_h": (s["d_h"],),
              "W_init_c": (s["d_h"], D), "b_init_c": (s["d_h"],), "W_a": (s["d_a"], s["d_h"]),
              "U_a": (s["d_a"], D), "v_a": (s["d_a"],)}
    if o["score_bias"]:
        shapes.update(b_a=(s["d_a"],), b_k=(s["d_a"],))
    if o["gate"] == "vector":
        shapes.update(W_beta=(D, s["d_h"]), b_beta=(D,))
    elif o["gate"]:
        shapes.update(w_beta=(s["d_h"],), b_beta=())
    shapes.update(gate_shapes("lstm", o["bias"], s["d_h"], s["d_e"] + D))
    if o["output"] == "state":
        return {**shapes, "W_out": (s["N_V"], s["d_h"]), "b_out": (s["N_V"],)}
    return {**shapes, "L_h": (s["d_e"], s["d_h"]), "L_z": (s["d_e"], D), "L_o": (s["N_V"], s["d_e"])}


def locations(sizes: dict) -> int:
    """L, the number of annotation vectors: ℓ_z, or n_h·n_w for a feature grid."""
    return sizes["ell_z"] if "ell_z" in sizes else sizes["height"] * sizes["width"]


@st.composite
def show_attend_tell_cases(draw, loss=False, inputs=st.sampled_from(["annotations", "grid"])):
    """Show-Attend-Tell with its annotations A (d_z×ℓ_z) given, or a feature grid F (n_h×n_w×d_z)."""
    kind = draw(inputs)
    o = {"gate": draw(st.sampled_from([True, False, "vector"])), "bias": draw(BIAS),
         "activation": draw(st.sampled_from(["tanh", "leaky_relu", "relu"])), "score_bias": draw(st.booleans()),
         "init": draw(st.sampled_from(["tanh", "linear"])), "output": draw(st.sampled_from(["deep", "state"]))}
    s = {k: draw(st.integers(1, 4)) for k in ("d_e", "d_h", "d_a", "d_z")}
    if kind == "grid":
        s["height"], s["width"] = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    else:
        s["ell_z"] = draw(st.integers(1, 4))
    s["N_V"], s["ell_x"] = draw(st.integers(2, 6)), draw(st.integers(2 if loss else 1, 4))
    rng = np.random.default_rng(draw(SEED))
    params = {n: normal(rng, *shape) for n, shape in _sat_shapes(s, o).items()}
    image = {"F": normal(rng, s["height"], s["width"], s["d_z"])} if kind == "grid" else \
        {"A": normal(rng, s["d_z"], s["ell_z"])}
    inputs = {**image, "x": rng.integers(0, s["N_V"], s["ell_x"])}
    if loss:
        algorithm = algorithms.get("show_attend_tell_loss", **o, inputs=kind,
                                   penalty=draw(st.sampled_from([0.0, 1.0, 2.5])))
    else:
        algorithm = algorithms.get("show_attend_tell", **o, inputs=kind)
    return Case(algorithm, {**inputs, **params}, s, tuple(params))


@st.composite
def han_cases(draw):
    """A hierarchical attention network by hand (Yang et al. §2): word and sentence bi-GRUs (inputs d_e and
    2·d_h), word and sentence attention (W d_a×2d_h, b d_a, u d_a), the classifier N_C×2d_h."""
    kind, bias = draw(st.sampled_from(["gru", "lstm"])), draw(BIAS)
    s = {"N_V": draw(st.integers(2, 6)), "d_e": draw(st.integers(1, 3)), "d_h": draw(st.integers(1, 3)),
         "d_a": draw(st.integers(1, 3)), "ell": draw(st.integers(1, 4)), "n_sent": draw(st.integers(1, 3)),
         "n_classes": draw(st.integers(2, 4))}
    width = 2 * s["d_h"]
    shapes = {"W_e": (s["d_e"], s["N_V"])}
    shapes.update({f"w_{k}": v for k, v in _layer_shapes(kind, bias, "bidirectional", s["d_h"], s["d_e"]).items()})
    shapes.update(W_w=(s["d_a"], width), b_w=(s["d_a"],), u_w=(s["d_a"],))
    shapes.update({f"s_{k}": v for k, v in _layer_shapes(kind, bias, "bidirectional", s["d_h"], width).items()})
    shapes.update(W_s=(s["d_a"], width), b_s=(s["d_a"],), u_s=(s["d_a"],), W_c=(s["n_classes"], width),
                  b_c=(s["n_classes"],))
    rng = np.random.default_rng(draw(SEED))
    params = {n: normal(rng, *shape) for n, shape in shapes.items()}
    x = rng.integers(0, s["N_V"], (s["ell"], s["n_sent"]))
    algorithm = algorithms.get("han", cell=kind, bias=bias)
    return Case(algorithm, {"x": x, **params}, s, tuple(params))


RECURRENT_STRATEGIES.update({"show_attend_tell": show_attend_tell_cases(),
                             "show_attend_tell_loss": show_attend_tell_cases(loss=True), "han": han_cases()})
