"""The 1-D convolution and the graph convolution (formal.algorithms.convolution) against independent oracles:
torch.nn.Conv1d for output lengths, parameter counts and FLOPs (FlopCounterMode counts conv1d on CPU in
torch 2.13: 2·B·d_out·ℓ_out·d_in·k), the numpy tally of tests/oracles/flops.py, hand-written formulas
(Kipf & Welling's normalised adjacency), and the symmetries each layer has (translation, permutation).

The strategies below are built constructively (ℓ is drawn at least as long as one window needs) and write
the parameter shapes by hand, from the equations, never from the algorithm objects.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from formal.algorithms.convolution import (
    build_conv1d,
    build_graph_conv,
    conv1d,
    graph_conv,
    layers_to_cover,
    receptive_field,
)
from formal.core.symbols import L, d_in, d_out, ell, k
from formal.engine.render import to_json, to_latex, to_text
from formal.errors import ConfigError
from tests.strategies.cases import SEED, evaluate
from tests.strategies.convolution import CONVOLUTION_STRATEGIES, SMALL, conv1d_cases, geometries, graph_conv_cases

torch = pytest.importorskip("torch")
F = torch.nn.functional

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning")

STRATEGIES = CONVOLUTION_STRATEGIES


def torch_conv1d(X, W, b, *, stride, padding, dilation):
    """torch's conv1d on the spec's arrays: X (d_in, ℓ), W (k, d_out, d_in) ↦ (d_out, ℓ_out)."""
    weight = torch.tensor(W).permute(1, 2, 0)                           # torch's (d_out, d_in, k)
    bias = None if b is None else torch.tensor(b)
    return F.conv1d(torch.tensor(X)[None], weight, bias, stride=stride, padding=padding, dilation=dilation)[0]


# ---------------------------------------------------------------------------------- output length
@given(ell_=st.integers(1, 40), kernel=st.integers(1, 7), geometry=geometries())
def test_output_length_is_torchs(ell_, kernel, geometry):
    """The derived ℓ_out equals the length torch.nn.Conv1d produces for every (ℓ, k, s, p, δ), and the
    stated size constraint holds exactly when torch accepts the input (torch.nn.Conv1d docs, L_out)."""
    stride, padding, dilation = geometry
    algorithm = conv1d.variant(stride=stride, padding=padding, dilation=dilation)
    sizes = {ell: ell_, k: kernel}
    holds = all(c.holds({s: sizes[s] for s in c.symbols}) for c in algorithm.size_constraints)
    module = torch.nn.Conv1d(1, 1, kernel, stride=stride, padding=padding, dilation=dilation)
    try:
        got = module(torch.zeros(1, 1, ell_)).shape[-1]
    except RuntimeError:                                                # torch: the kernel does not fit
        assert not holds
        return
    assert holds
    assert int(algorithm.output_shape[1].xreplace(sizes)) == got


def test_output_length_is_a_polynomial_at_stride_1_and_a_floor_above():
    """Stride 1: ℓ + 2p − δ(k − 1); stride s > 1: ⌊(ℓ + 2p − δ(k − 1) − 1)/s⌋ + 1 (seed §7, error 1)."""
    assert conv1d.variant(padding=2, dilation=3).output_shape == (d_out, ell + 4 - 3 * (k - 1))
    assert conv1d.variant(padding="same").output_shape == (d_out, ell)
    strided = conv1d.variant(stride=2, padding=1).output_shape[1]
    assert strided.has(sp.floor)
    assert sp.simplify(strided - (sp.floor((ell + 2 - (k - 1) - 1) / sp.Integer(2)) + 1)) == 0


@given(T=st.integers(2, 40), kernel=st.integers(1, 8))
def test_the_seeds_output_length_is_two_short(T, kernel):
    """Seed 002 claims a standard convolution returns T − k − 1 positions; stride 1 without padding gives
    T − k + 1 (the lecture notes say T − k − 1), as torch does and the spec follows."""
    if kernel > T:
        return
    torch_length = torch.nn.Conv1d(1, 1, kernel)(torch.zeros(1, 1, T)).shape[-1]
    derived = int(conv1d.output_shape[1].xreplace({ell: T, k: kernel}))
    assert derived == torch_length == T - kernel + 1 != T - kernel - 1


def test_conv1d_8_16_3_on_10_positions():
    """torch.nn.Conv1d: nn.Conv1d(8, 16, 3) on T = 10 gives 8 positions (the seed's formula 6) and has
    400 parameters."""
    module = torch.nn.Conv1d(8, 16, 3)
    assert module(torch.zeros(1, 8, 10)).shape[-1] == 8
    assert conv1d.output_shape[1].xreplace({ell: 10, k: 3}) == 8
    assert sum(p.numel() for p in module.parameters()) == 400
    assert conv1d.param_count().xreplace({d_in: 8, d_out: 16, k: 3}) == 400


# ---------------------------------------------------------------------------------- params and FLOPs
@given(sizes=st.tuples(SMALL, SMALL, st.integers(1, 6)), bias=st.booleans())
def test_params_are_torchs(sizes, bias):
    """Derived parameters k·d_in·d_out (+ d_out) = numel of torch.nn.Conv1d's parameters (a weight per offset,
    not the seed's shared θ)."""
    i, o, kernel = sizes
    module = torch.nn.Conv1d(i, o, kernel, bias=bias)
    derived = build_conv1d(bias=bias).param_count().xreplace({d_in: i, d_out: o, k: kernel})
    assert derived == sum(p.numel() for p in module.parameters())


@given(case=conv1d_cases(activation="none"))
def test_flops_are_flopcountermodes(case):
    """Derived FLOPs (matmul convention) = torch.utils.flop_counter.FlopCounterMode's count of
    torch.nn.functional.conv1d, 2·d_out·ℓ_out·d_in·k (the matmul convention is
    FlopCounterMode's)."""
    from torch.utils.flop_counter import FlopCounterMode
    o = case.algorithm.options
    with FlopCounterMode(display=False) as counter:
        torch_conv1d(case.kwargs["X"], case.kwargs["W"], case.kwargs.get("b"), stride=o["stride"],
                     padding=o["padding"], dilation=o["dilation"])
    assert evaluate(case.algorithm.cost("matmul").flops, case.sizes) == counter.get_total_flops()


def test_same_padding_flops_at_k3_n1024_d512():
    """Vaswani et al. Table 1, convolutional row, at the sizes of the comparison: same-padding k = 3, n = 1024,
    d = 512: 1,610,612,736 FLOPs."""
    flops = conv1d.variant(padding="same").cost("matmul").flops
    assert flops.xreplace({k: 3, ell: 1024, d_in: 512, d_out: 512}) == 1_610_612_736


# ------------------------------------------------------------------------------ derived vs executed
@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_executed_shapes_equal_derived_shapes(name):
    """The output has the derived shape at the binding, and the binding is the sizes the case was built from."""

    @given(STRATEGIES[name])
    def check(case):
        run = case.algorithm.run(**case.kwargs)
        assert {str(s): v for s, v in run.binding.items()} == case.sizes
        assert np.shape(run.output) == tuple(int(evaluate(d, case.sizes)) for d in case.algorithm.output_shape)

    check()


@given(case=conv1d_cases())
def test_spec_equals_torch_conv1d(case):
    """The spec's numpy execution equals torch.nn.functional.conv1d (then the activation) in float64."""
    o = case.algorithm.options
    expected = torch_conv1d(case.kwargs["X"], case.kwargs["W"], case.kwargs.get("b"), stride=o["stride"],
                            padding=o["padding"], dilation=o["dilation"])
    activations = {"none": lambda y: y, "relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
                   "gelu": F.gelu}
    expected = activations[o["activation"]](expected).numpy()
    np.testing.assert_allclose(case.algorithm(**case.kwargs), expected, rtol=1e-12, atol=1e-12)


def test_depth_is_constant_in_ell():
    """A convolution's sequential operations are O(1) (Vaswani et al. 2017, Table 1): no ℓ in the depth."""
    for algorithm in (conv1d, conv1d.variant(stride=2, activation="relu"), graph_conv):
        assert ell not in algorithm.cost().depth.free_symbols


# ------------------------------------------------------------------------------------------ symmetries
@given(case=conv1d_cases(slack=(6, 14)), shift_by=st.integers(1, 3))
def test_conv1d_is_translation_equivariant(case, shift_by):
    """Shifting the input by s positions shifts the output by one position, wherever no window reads the
    padding or the columns that moved in or out (convolution is
    translation-equivariant away from the borders).  X2[:, t] = X[:, t + m·s] ⇒ Y2[:, t] = Y[:, t + m]."""
    o, X = case.algorithm.options, case.kwargs["X"]
    s, delta, kernel = o["stride"], o["dilation"], case.sizes["k"]
    move = shift_by * s
    rng = np.random.default_rng(0)
    X2 = np.concatenate([X[:, move:], rng.normal(size=(X.shape[0], move))], axis=1)
    Y, Y2 = case.algorithm(**case.kwargs), case.algorithm(**{**case.kwargs, "X": X2})
    left = (delta * (kernel - 1)) // 2 if o["padding"] == "same" else o["padding"]
    n = X.shape[1]
    for t in range(Y2.shape[1]):
        first = s * t - left                           # X2's positions output t reads: first … first + δ(k−1)
        last = first + delta * (kernel - 1)
        if first >= 0 and last < n - move and t + shift_by < Y.shape[1]:
            np.testing.assert_allclose(Y2[:, t], Y[:, t + shift_by], rtol=1e-12, atol=1e-12)


@given(case=graph_conv_cases(), seed=SEED)
def test_graph_conv_is_permutation_equivariant(case, seed):
    """Renumbering the nodes (features and adjacency together) renumbers the output the same way: a graph
    convolution shares W across nodes and neighbours (Kipf & Welling 2017)."""
    n = case.sizes["ell"]
    perm = np.random.default_rng(seed).permutation(n)
    A = case.kwargs.get("A")
    moved = {**case.kwargs, "X": case.kwargs["X"][:, perm]}
    if A is not None:
        moved["A"] = A[np.ix_(perm, perm)]
    np.testing.assert_allclose(case.algorithm(**moved), case.algorithm(**case.kwargs)[:, perm], rtol=1e-12,
                               atol=1e-12)


@given(case=graph_conv_cases(norm="gcn", activation="none"), symmetric=st.booleans())
def test_gcn_is_kipf_and_wellings_formula(case, symmetric):
    """norm="gcn" is Kipf & Welling 2017, eq. (2), in the column layout: Y = W X D^(−1/2)(A + I)D^(−1/2) + b1ᵀ,
    D the diagonal degrees of A + I — for a graph without self-loops, written out here by hand (the
    in-degrees, column sums, for a directed one, as PyG's gcn_norm counts them)."""
    n = case.sizes["ell"]
    rng = np.random.default_rng(n)
    A = rng.random((n, n)) < 0.5
    if symmetric:
        A = A | A.T
    np.fill_diagonal(A, False)
    A_tilde = A + np.eye(n)
    D = np.diag(A_tilde.sum(axis=0) ** -0.5)
    W, X, b = case.kwargs["W"], case.kwargs["X"], case.kwargs.get("b", np.zeros(case.sizes["d_out"]))
    expected = W @ X @ D @ A_tilde @ D + b[:, None]
    np.testing.assert_allclose(case.algorithm(**{**case.kwargs, "A": A}), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm", ["sum", "mean"])
def test_an_isolated_node_gets_zero_not_nan(norm):
    """A node no edge enters has an empty neighbourhood: its sum, and its mean, is 0, never 0/0 = NaN (design
    the convention of decision-empty-neighbourhood, PyG's)."""
    rng = np.random.default_rng(0)
    A = rng.random((5, 5)) < 0.7
    A[:, 3] = False
    Y = build_graph_conv(norm=norm, bias=False)(X=rng.normal(size=(2, 5)), A=A, W=rng.normal(size=(3, 2)))
    assert np.all(np.isfinite(Y))
    np.testing.assert_array_equal(Y[:, 3], 0.0)


def test_mean_divides_each_column_by_its_in_degree():
    """norm="mean": Y[:, i] is the mean of the in-neighbours' transformed features."""
    A = np.array([[0, 1, 1], [0, 0, 1], [1, 0, 1]], dtype=bool)      # A[j, i]: edge j → i
    X = np.array([[1.0, 2.0, 4.0]])
    Y = build_graph_conv(norm="mean", bias=False)(X=X, A=A, W=np.ones((1, 1)))
    np.testing.assert_allclose(Y, [[4.0, 1.0, (1 + 2 + 4) / 3]])


# ------------------------------------------------------------------------------------- receptive field
@given(layers=st.integers(1, 4), kernel=st.integers(2, 4), dilation=st.integers(1, 3))
def test_receptive_field_of_stacked_layers(layers, kernel, dilation):
    """1 + L·δ(k − 1), checked by executing the stack: output position 0 of L
    stacked stride-1 convolutions changes with input position RF − 1 and not with position RF."""
    rf = receptive_field(layers, kernel, dilation)
    assert rf == 1 + layers * dilation * (kernel - 1)
    algorithm = conv1d.variant(dilation=dilation, bias=False)
    rng = np.random.default_rng(layers * 100 + kernel * 10 + dilation)
    weights = [rng.normal(size=(kernel, 1, 1)) + 3.0 for _ in range(layers)]   # no weight is 0

    def first_output(X):
        for W in weights:
            X = algorithm(X=X, W=W)
        return X[0, 0]

    X = rng.normal(size=(1, rf + 1))
    for position, changes in ((rf - 1, True), (rf, False)):
        nudged = X.copy()
        nudged[0, position] += 1.0
        assert (first_output(nudged) != first_output(X)) == changes


def test_receptive_field_symbolic_and_dilated():
    """1 + L(k − 1) symbolically; WaveNet-style dilations k^(l−1) reach k^L."""
    assert sp.expand(receptive_field(L, k) - (L * (k - 1) + 1)) == 0
    assert receptive_field(L, k, "exponential") == k ** L
    assert receptive_field(3, 2, "exponential") == 8


@given(n=st.integers(1, 3000), kernel=st.integers(2, 9))
def test_layers_to_cover_is_the_fewest(n, kernel):
    """⌈(n − 1)/(k − 1)⌉ layers cover n positions and one fewer does not (Vaswani et al. 2017, Table 1:
    O(n/k)); dilated, ⌈log_k n⌉ (O(log_k n))."""
    for dilation in (1, "exponential"):
        layers = layers_to_cover(n, kernel, dilation)
        assert receptive_field(layers, kernel, dilation) >= n
        assert layers == 0 or receptive_field(layers - 1, kernel, dilation) < n
    assert layers_to_cover(n, kernel) == -(-(n - 1) // (kernel - 1))


def test_a_kernel_of_one_covers_nothing():
    with pytest.raises(ConfigError, match="kernel = 1 never widens"):
        layers_to_cover(5, 1)


# ------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("options, message", [
    ({"stride": 0}, "stride = 0 must be a positive integer"),
    ({"stride": 1.5}, "stride = 1.5 must be a positive integer"),
    ({"padding": -1}, "padding = -1 must be a non-negative integer or 'same'"),
    ({"padding": "valid"}, "padding = 'valid' must be a non-negative integer or 'same'"),
    ({"dilation": 0}, "dilation = 0 must be a positive integer"),
    ({"stride": 2, "padding": "same"}, "padding = 'same' needs stride = 1, not 2"),
    ({"bias": 1}, "bias = 1 must be True or False"),
    ({"activation": "softmax"}, "activation = 'softmax' must be 'none', 'relu', 'tanh', 'sigmoid' or 'gelu'"),
])
def test_bad_conv1d_options_are_config_errors_naming_them(options, message):
    """Each option is checked when the object is built; the error names the option and its value."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        build_conv1d(**options)
    with pytest.raises(ConfigError, match=re.escape(message)):
        conv1d.variant(**options)


@pytest.mark.parametrize("norm", ["none", "sym", 1])
def test_an_unknown_norm_is_a_config_error_naming_it(norm):
    with pytest.raises(ConfigError, match=re.escape(f"norm = {norm!r} must be 'sum', 'mean' or 'gcn'")):
        graph_conv.variant(norm=norm)


@pytest.mark.parametrize("options, length", [({}, 4), ({"dilation": 2}, 8), ({"padding": 1}, 2)])
def test_a_sequence_shorter_than_a_window_is_a_config_error(options, length):
    """The output is empty unless δ(k − 1) + 1 ≤ ℓ + 2p: a ConfigError naming k and the bound ℓ puts on it,
    before anything runs."""
    algorithm = conv1d.variant(**options)
    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError, match=r"conv1d \(LeCun.*\): k = 5 exceeds ell"):
        algorithm(X=rng.normal(size=(2, length)), W=rng.normal(size=(5, 3, 2)), b=np.zeros(3))


def test_a_window_that_just_fits_gives_one_position():
    rng = np.random.default_rng(0)
    Y = conv1d.variant(dilation=2)(X=rng.normal(size=(2, 9)), W=rng.normal(size=(5, 3, 2)), b=np.zeros(3))
    assert Y.shape == (3, 1)


# ------------------------------------------------------------------------------------------- rendering
@pytest.mark.parametrize("algorithm", [conv1d, conv1d.variant(padding="same", activation="relu", bias=False),
                                       conv1d.variant(padding=2, dilation=3), graph_conv,
                                       graph_conv.variant(norm="mean"), graph_conv.variant(norm="sum")])
def test_rendering(algorithm):
    """Every face renders: the text view (with the leading order), LaTeX and JSON."""
    assert "Conv" in to_text(algorithm) and r"\begin{algorithm}" in to_latex(algorithm)
    assert to_json(algorithm)["name"] == algorithm.name


def test_a_strided_convolution_derives_and_renders_in_latex_and_json():
    """Stride > 1: the output length is a floor; derivation, execution, LaTeX and JSON handle it.  (The text
    view's leading-order line needs formal.costs.asymptotics to read ⌊x⌋ as x + O(1), which it does not yet.)"""
    algorithm = conv1d.variant(stride=2, padding=1)
    assert algorithm.cost("full").flops.has(sp.floor)
    assert r"\lfloor" in to_latex(algorithm)
    assert "floor" in str(to_json(algorithm)["outputs"])
    rng = np.random.default_rng(0)
    assert algorithm(X=rng.normal(size=(2, 8)), W=rng.normal(size=(3, 4, 2)), b=np.zeros(4)).shape == (4, 4)


def test_unfold_and_aggregate_render_as_the_paper_would():
    text = to_text(conv1d.variant(padding=1, dilation=3))
    assert "U ← unfold_k(X | p=1, δ=3)" in text and "[W_1, …, W_k] U + b1ᵀ" in text
    assert "X̃ (D^(−1/2) (A + I) D^(−1/2)) + b1ᵀ" in to_text(graph_conv)
