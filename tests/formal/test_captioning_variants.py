"""Show, Attend and Tell's variants — Xu et al.'s and the one the common PyTorch tutorial implements (ReLU in
f_att with biases, a vector gate, linear initial states, the words from the state alone) — against their
equations written here by hand, and their derived parameter counts and costs."""

import numpy as np
import sympy as sp
from hypothesis import given, strategies as st

from formal import algorithms
from formal.core.symbols import N_V, d_a, d_h, d_z, ell_x, ell_z
from tests.strategies.recurrent import show_attend_tell_cases


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _softmax(a):
    e = np.exp(a - a.max())
    return e / e.sum()


def _lstm(x, h, c, k, bias):
    """One LSTM step on the spec's per-gate parameters (i, f, o sigmoid; g tanh)."""
    def pre(g):
        b = {"single": k.get(f"b_{g}", 0), "double": k.get(f"b_x{g}", 0) + k.get(f"b_h{g}", 0), "none": 0}[bias]
        return k[f"W_x{g}"] @ x + k[f"W_h{g}"] @ h + b
    i, f, g, o = _sigmoid(pre("i")), _sigmoid(pre("f")), np.tanh(pre("g")), _sigmoid(pre("o"))
    c = f * c + i * g
    return o * np.tanh(c), c


_PHI = {"tanh": np.tanh, "relu": lambda a: np.maximum(a, 0), "leaky_relu": lambda a: np.where(a > 0, a, 0.2 * a)}


def _by_hand(A, x, k, o):
    """Xu et al. eqs. 1–7 with each option's alternative: the initial states, f_att's φ and biases, the gate,
    the word distribution."""
    a_bar = A.mean(axis=1)
    init = np.tanh if o["init"] == "tanh" else (lambda a: a)
    h, c = init(k["W_init_h"] @ a_bar + k["b_init_h"]), init(k["W_init_c"] @ a_bar + k["b_init_c"])
    b_a, b_k = (k["b_a"], k["b_k"]) if o["score_bias"] else (0, 0)
    P, alphas = [], []
    for t in range(len(x)):
        e = np.array([k["v_a"] @ _PHI[o["activation"]](k["W_a"] @ h + b_a + k["U_a"] @ A[:, i] + b_k)
                      for i in range(A.shape[1])])
        alpha = _softmax(e)
        z = sum(alpha[i] * A[:, i] for i in range(A.shape[1]))
        if o["gate"] == "vector":
            z = _sigmoid(k["W_beta"] @ h + k["b_beta"]) * z
        elif o["gate"]:
            z = _sigmoid(k["w_beta"] @ h + k["b_beta"]) * z
        y = k["E"][:, x[t]]
        h, c = _lstm(np.concatenate([y, z]), h, c, k, o["bias"])
        if o["output"] == "state":
            P.append(_softmax(k["W_out"] @ h + k["b_out"]))
        else:
            P.append(_softmax(k["L_o"] @ (y + k["L_h"] @ h + k["L_z"] @ z)))
        alphas.append(alpha)
    return np.stack(P, axis=1), np.stack(alphas, axis=1)


@given(show_attend_tell_cases(inputs=st.just("annotations")))
def test_every_variant_is_its_equations(case):
    """Each option's alternative does what its documentation says, and nothing else: the spec's P and α
    equal the equations written out per location and per step."""
    P, alpha = case.algorithm(**case.kwargs)
    want_P, want_alpha = _by_hand(case.kwargs["A"], case.kwargs["x"], case.kwargs, case.algorithm.options)
    np.testing.assert_allclose(P, want_P, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(alpha, want_alpha, rtol=1e-10, atol=1e-13)


def _params(**options):
    return algorithms.get("show_attend_tell", **options).cost().params


def test_each_variant_adds_the_parameters_of_its_layers():
    """The parameter count follows the variant's layers: the vector gate W_β (d_z×d_h) and b_β (d_z) where
    the scalar gate has w_β (d_h) and b_β; f_att's biases 2·d_a; the state's output W_out (N_V×d_h) and
    b_out (N_V) where the deep output has L_h (d_e×d_h), L_z (d_e×d_z) and L_o (N_V×d_e).  The initial
    states' and the score's nonlinearities have none."""
    from formal.core.symbols import d_e
    base = _params()
    assert sp.expand(_params(gate="vector") - base - (d_z * d_h + d_z - d_h - 1)) == 0
    assert sp.expand(_params(gate=False) - base + d_h + 1) == 0
    assert sp.expand(_params(score_bias=True) - base - 2 * d_a) == 0
    assert sp.expand(_params(output="state") - base - (N_V * d_h + N_V - d_e * d_h - d_e * d_z - N_V * d_e)) == 0
    assert sp.expand(_params(init="linear", activation="relu") - base) == 0


def test_the_variants_cost_what_their_lines_compute():
    """Under the matmul convention the vector gate's product costs 2·d_h·d_z per word where the scalar gate's
    costs 2·d_h; the state's output 2·N_V·d_h per word where the deep output's costs 2·d_e·(d_h + d_z + N_V);
    f_att's nonlinearity and biases cost nothing there, but under ``full`` the biases cost d_a per word and
    d_a·ℓ_z once (the keys'), and ReLU one FLOP per entry of the d_a×ℓ_z sums, as tanh does."""
    from formal.core.symbols import d_e

    def flops(convention="matmul", **options):
        return algorithms.get("show_attend_tell", **options).cost(convention).flops
    base = flops()
    assert sp.expand(flops(gate="vector") - base - ell_x * (2 * d_h * d_z - 2 * d_h)) == 0
    assert sp.expand(flops(output="state") - base - ell_x * (2 * N_V * d_h - 2 * d_e * (d_h + d_z + N_V))) == 0
    assert sp.expand(flops(activation="relu", score_bias=True, init="linear") - base) == 0
    full = flops("full")
    assert sp.expand(flops("full", activation="relu") - full) == 0
    assert sp.expand(flops("full", score_bias=True) - full - d_a * ell_x - d_a * ell_z) == 0
    assert sp.expand(flops("full", init="linear") - full + 2 * d_h) == 0


def test_the_loss_takes_the_models_options():
    """show_attend_tell_loss is declared with every option of the model, with the same domains and
    defaults, and builds the model of its options."""
    model = algorithms.get("show_attend_tell").option_specs
    loss = algorithms.get("show_attend_tell_loss").option_specs
    assert all(loss[name] is model[name] for name in model)
    variant = algorithms.get("show_attend_tell_loss", gate="vector", output="state", init="linear")
    assert {s.name for s in variant.params} == {s.name for s in algorithms.get(
        "show_attend_tell", gate="vector", output="state", init="linear").params}
