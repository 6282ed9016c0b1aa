"""Properties of the recurrent cells, layers and stacks (formal.algorithms.recurrent), each checked on the
spec's numpy execution against an independent statement of the paper's equations."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from formal import algorithms
from formal.algorithms import recurrent
from formal.core.symbols import L, by_name, d_h, d_x, ell
from formal.costs.asymptotics import big_theta
from formal.errors import ConfigError
from tests.strategies.cases import SEED, normal
from tests.strategies.recurrent import RECURRENT_STRATEGIES, cell_cases, layer_cases


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


@given(RECURRENT_STRATEGIES["lstm_cell"])
def test_lstm_cell_is_the_gated_memory_of_gers_et_al(case):
    """Hochreiter & Schmidhuber 1997 with Gers et al.'s forget gate: i, f, o = σ(·), g = tanh(·),
    c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c'), computed here by hand."""
    k, bias = case.kwargs, case.algorithm.options["bias"]

    def pre(g):
        total = k[f"W_x{g}"] @ k["x"] + k[f"W_h{g}"] @ k["h"]
        if bias == "double":
            total = total + k[f"b_x{g}"] + k[f"b_h{g}"]
        elif bias == "single":
            total = total + k[f"b_{g}"]
        return total
    i, f, g, o = sigmoid(pre("i")), sigmoid(pre("f")), np.tanh(pre("g")), sigmoid(pre("o"))
    c = f * k["c"] + i * g
    h, c_out = case.algorithm(**k)
    np.testing.assert_allclose(c_out, c, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h, o * np.tanh(c), rtol=1e-12, atol=1e-12)


@given(st.integers(1, 4), st.integers(1, 4), SEED)
def test_lstm_with_open_forget_gate_and_shut_input_gate_keeps_its_memory(d_in, width, seed):
    """Lecture notes (LSTM slide): "if f = 1 and i = 0, the information of that cell is preserved
    indefinitely" — with the forget gate saturated open and the input gate shut (σ(±50) is 1 and 0 in
    float64), the new memory cell equals the old one exactly, whatever the input."""
    rng = np.random.default_rng(seed)
    cell = algorithms.get("lstm_cell")
    params = {f"W_{s}{g}": normal(rng, width, d_in if s == "x" else width, scale=0.1) for g in "ifgo" for s in "xh"}
    params.update({f"b_{g}": normal(rng, width) for g in "go"}, b_f=np.full(width, 50.0), b_i=np.full(width, -50.0))
    c = normal(rng, width)
    _, c_out = cell(x=normal(rng, d_in), h=normal(rng, width), c=c, **params)
    np.testing.assert_array_equal(c_out, c)


@given(cell_cases("gru"))
def test_gru_update_conventions_differ_by_the_sign_of_the_update_gate(case):
    """Cho et al. 2014 (h' = z ⊙ h + (1 − z) ⊙ n) and Bahdanau et al. 2015, App. A (h' = (1 − z) ⊙ h + z ⊙ n)
    are one family: σ(−a) = 1 − σ(a), so negating W_xz, W_hz and the z biases turns one into the other."""
    options = case.algorithm.options
    other = "bahdanau" if options["update"] == "cho" else "cho"
    flipped = {k: (-v if k in ("W_xz", "W_hz", "b_z", "b_xz", "b_hz") else v) for k, v in case.kwargs.items()}
    swapped = recurrent.build_gru_cell(**{**options, "update": other})
    np.testing.assert_allclose(swapped(**flipped), case.algorithm(**case.kwargs), rtol=1e-12, atol=1e-12)


@given(cell_cases("gru"), SEED)
def test_gru_reset_before_and_after_agree_only_for_a_diagonal_recurrent_weight(case, seed):
    """W_hn (r ⊙ h) (Cho et al.) and r ⊙ (W_hn h) (cuDNN, torch) are equal when W_hn is diagonal, and in
    general they are not: the two placements are different models, not a reparametrisation."""
    options = {**case.algorithm.options, "bias": "none"}
    kwargs = {k: v for k, v in case.kwargs.items() if not k.startswith("b_")}
    before = recurrent.build_gru_cell(**{**options, "reset": "before"})
    after = recurrent.build_gru_cell(**{**options, "reset": "after"})
    diagonal = {**kwargs, "W_hn": np.diag(np.diag(kwargs["W_hn"]))}
    np.testing.assert_allclose(before(**diagonal), after(**diagonal), rtol=1e-12, atol=1e-12)
    if kwargs["h"].size >= 2:  # a full random W_hn mixes the reset entries: the results differ
        rng = np.random.default_rng(seed)
        full = {**kwargs, "W_hn": rng.normal(size=kwargs["W_hn"].shape), "W_xr": kwargs["W_xr"] * 0,
                "W_hr": rng.normal(size=kwargs["W_hr"].shape) * 3}
        assert np.max(np.abs(before(**full) - after(**full))) > 1e-9


@pytest.mark.parametrize("kind, reset", [("rnn", None), ("lstm", None), ("gru", "before"), ("gru", "after")])
def test_two_biases_are_one_summed_except_inside_the_gru_reset(kind, reset):
    """torch keeps b_xg and b_hg where the papers write one b_g.  Wherever both are added to the gate's sum
    they act as b_g = b_xg + b_hg (the counts differ, the model does not); with the GRU's reset after the
    recurrent product, b_hn sits inside r ⊙ (W_hn h + b_hn) and is not foldable."""
    rng = np.random.default_rng(0)
    extra = {"reset": reset} if reset else {}
    double = recurrent.build_cell(kind, bias="double", **extra)
    single = recurrent.build_cell(kind, bias="single", **extra)
    kwargs = {p.name: rng.normal(size=tuple(int(d.xreplace({d_h: 3, d_x: 2})) for d in p.shape)) for p in double.params}
    inputs = {"x": rng.normal(size=2), "h": rng.normal(size=3), **({"c": rng.normal(size=3)} if kind == "lstm" else {})}
    folded = {k: v for k, v in kwargs.items() if not k.startswith("b_")}
    folded.update({f"b_{g}": kwargs[f"b_x{g}"] + kwargs[f"b_h{g}"] for g in recurrent.GATES[kind]})
    want, got = np.hstack(double(**inputs, **kwargs)), np.hstack(single(**inputs, **folded))
    if reset == "after":
        assert np.max(np.abs(want - got)) > 1e-9
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@given(layer_cases(), st.data())
def test_a_recurrent_layer_reads_only_one_side_of_each_position(case, data):
    """A forward layer's state at t depends on x_1 … x_t only (h_t = f(h_{t−1}, x_t)); a backward layer's
    on x_t … x_ℓ; a bidirectional layer's upper half is the forward one's, its lower half the backward's."""
    X = case.kwargs["X"]
    t = data.draw(st.integers(0, X.shape[1] - 1))
    moved = X.copy()
    moved[:, t] += 1.0
    before, after = case.algorithm(**case.kwargs), case.algorithm(**{**case.kwargs, "X": moved})
    d = case.sizes["d_h"]
    direction = case.algorithm.options["direction"]
    forward_rows = slice(0, d) if direction != "backward" else slice(0, 0)
    backward_rows = {"bidirectional": slice(d, 2 * d), "backward": slice(0, d)}.get(direction, slice(0, 0))
    np.testing.assert_array_equal(after[forward_rows, :t], before[forward_rows, :t])
    np.testing.assert_array_equal(after[backward_rows, t + 1:], before[backward_rows, t + 1:])


@given(layer_cases(stacked=True))
def test_a_stack_is_its_layers_composed(case):
    """torch.nn.LSTM(num_layers=L) semantics: layer 1 reads X with the parameters ``*_1``; layer l + 1 reads
    layer l's states with the l-th slice of ``*_l``."""
    options = case.algorithm.options
    layer = recurrent.build_rnn_layer(**options)
    H = layer(X=case.kwargs["X"], **{k[:-2]: v for k, v in case.kwargs.items() if k.endswith("_1")})
    for l in range(case.sizes["L"] - 1):
        H = layer(X=H, **{k[:-2]: v[l] for k, v in case.kwargs.items() if k.endswith("_l")})
    np.testing.assert_allclose(case.algorithm(**case.kwargs), H, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cell", recurrent.CELLS)
def test_depth_grows_with_the_sequence_and_attention_does_not(cell):
    """Vaswani et al., Table 1, "sequential operations": O(n) for a recurrent layer, O(1) for self-attention
    — read from the objects' derived depth, which counts sequential lines."""
    layer = recurrent.build_rnn_layer(cell=cell)
    assert big_theta(layer.cost().depth, [ell]) == "Θ(ℓ)"
    attention_depth = algorithms.mhattention.cost().depth
    assert not attention_depth.free_symbols & {by_name("ell_x"), by_name("ell_z")}


def test_parameter_counts_of_the_lecture_notes_and_torch():
    """The counts torch's modules have (numel, checked against the modules in tests/reference): RNN 640,
    GRU 1920, LSTM 2560 at d_x = 10, d_h = 20 with two biases; a 2-layer bidirectional LSTM 15040;
    GRU/LSTM = 3/4 exactly (the notes' "less parameters")."""
    sizes = {d_x: 10, d_h: 20, L: 2}
    counts = {c: recurrent.build_rnn_layer(cell=c, bias="double").param_count().xreplace(sizes)
              for c in recurrent.CELLS}
    assert counts == {"rnn": 640, "gru": 1920, "lstm": 2560}
    stack = recurrent.build_rnn(cell="lstm", bias="double", direction="bidirectional")
    assert stack.param_count().xreplace(sizes) == 15040
    gru, lstm = (recurrent.build_cell(c).param_count() for c in ("gru", "lstm"))
    assert sp.simplify(gru / lstm) == sp.Rational(3, 4)


@pytest.mark.parametrize("options, message", [
    ({"cell": "transformer"}, "cell = 'transformer' must be 'rnn', 'gru' or 'lstm'"),
    ({"cell": "lstm", "reset": "after"}, "reset = 'after' applies to cell = 'gru' only, not 'lstm'"),
    ({"cell": "gru", "nonlinearity": "relu"}, "nonlinearity = 'relu' applies to cell = 'rnn' only"),
    ({"direction": "sideways"}, "direction = 'sideways' must be 'forward', 'backward' or 'bidirectional'"),
    ({"bias": True}, "bias = True must be 'single', 'double' or 'none'"),
])
def test_bad_options_name_the_option_and_its_value(options, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        recurrent.build_rnn_layer(**options)


def test_a_stack_of_one_layer_takes_empty_upper_parameters():
    """L = 1: the parameters of layers 2…L are stacked on an axis of length 0, and L is read from it."""
    rng = np.random.default_rng(0)
    stack = recurrent.build_rnn(cell="gru")
    kwargs = {p.name: rng.normal(size=tuple(int(d.xreplace({d_h: 3, d_x: 2, L: 1})) for d in p.shape))
              for p in stack.params}
    run = stack.run(X=rng.normal(size=(2, 4)), **kwargs)
    assert run.binding[L] == 1 and run.output.shape == (3, 4)
    layer = recurrent.build_rnn_layer(cell="gru")
    np.testing.assert_array_equal(run.output, layer(X=run.values["X"], **{k[:-2]: v for k, v in kwargs.items()
                                                                          if k.endswith("_1")}))
