"""Hypothesis strategies for the recurrent cells, layers and stacks, built constructively.

The parameter shapes are written here by hand from the papers' equations (a gate g has W_xg ∈ ℝ^{d_h×d_x},
W_hg ∈ ℝ^{d_h×d_h} and its biases), never read from the algorithm objects: the tests compare the objects
against this independent table.
"""

from __future__ import annotations

import numpy as np
from cases import SEED, Case, normal
from hypothesis import strategies as st

from formal.algorithms import recurrent

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
