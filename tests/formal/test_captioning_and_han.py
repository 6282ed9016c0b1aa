"""Properties of Show, Attend and Tell (Xu et al. 2015) and the hierarchical attention network (Yang et al.
2016), checked on the spec's execution against the papers' equations."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from formal import algorithms
from formal.algorithms import recurrent
from formal.algorithms.pooling import build_attention_pooling
from formal.core.symbols import ell, ell_x, n_sent
from formal.errors import ConfigError
from tests.strategies.recurrent import han_cases, locations, show_attend_tell_cases
from tests.tiers import slow


@given(show_attend_tell_cases())
def test_every_step_attends_with_a_distribution_over_the_locations(case):
    """Xu et al. eq. (5): α_t = softmax over the L locations, so every column of the attention map sums to 1;
    every column of P is a distribution over the vocabulary."""
    P, alpha = case.algorithm(**case.kwargs)
    assert alpha.shape == (locations(case.sizes), case.sizes["ell_x"])
    np.testing.assert_allclose(alpha.sum(axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=1e-12)


@slow
@given(show_attend_tell_cases(loss=True))
def test_the_loss_is_the_captions_nll_plus_the_doubly_stochastic_penalty(case):
    """Xu et al. eq. (14): L_d = −Σ_t log p(y_{t+1}) + λ Σ_i (1 − Σ_t α_ti)², computed here by hand from the
    model's own outputs."""
    options = {k: v for k, v in case.algorithm.options.items() if k != "penalty"}
    P, alpha = algorithms.get("show_attend_tell", **options)(**case.kwargs)
    x = case.kwargs["x"]
    nll = -sum(np.log(P[x[t + 1], t]) for t in range(len(x) - 1))
    penalty = case.algorithm.options["penalty"] * np.sum((1 - alpha.sum(axis=1)) ** 2)
    np.testing.assert_allclose(case.algorithm(**case.kwargs), nll + penalty, rtol=1e-10)


@given(show_attend_tell_cases(), st.data())
def test_the_caption_is_decoded_left_to_right(case, data):
    """Teacher forcing: column t of P and of α depends on the words 1…t only."""
    x = case.kwargs["x"]
    t = data.draw(st.integers(0, len(x) - 1))
    moved = x.copy()
    moved[t + 1:] = (moved[t + 1:] + 1) % case.sizes["N_V"]
    before, after = case.algorithm(**case.kwargs), case.algorithm(**{**case.kwargs, "x": moved})
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a[:, :t + 1], b[:, :t + 1])


@slow
@given(show_attend_tell_cases(inputs=st.just("grid")), show_attend_tell_cases(loss=True, inputs=st.just("grid")))
def test_a_feature_grid_is_read_row_major_into_annotations(case, loss_case):
    """Xu et al. §3.1.1: the 14×14×512 grid is "flattened" into L = 196 annotation vectors.  inputs="grid" is
    the annotations model on a_{(r−1)·n_w + c} = F[r, c, :] (1-based), built here by hand, for the model and
    its loss."""
    for c in (case, loss_case):
        F = c.kwargs["F"]
        n_h, n_w, d = F.shape
        A = np.empty((d, n_h * n_w))
        for r in range(n_h):
            for col in range(n_w):
                A[:, r * n_w + col] = F[r, col, :]
        options = {**c.algorithm.options, "inputs": "annotations"}
        given_annotations = algorithms.get(c.algorithm.name, **options)
        kwargs = {k: v for k, v in c.kwargs.items() if k != "F"}
        got, want = c.algorithm(**c.kwargs), given_annotations(A=A, **kwargs)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)  # a view's layout changes BLAS's order


@slow
@given(show_attend_tell_cases(inputs=st.just("annotations")), st.data())
def test_the_locations_are_a_set(case, data):
    """Soft attention treats the L annotations as a set: permuting them by π leaves every word distribution P
    unchanged (ā, the score and the context ẑ = Σ_i α_i a_i are symmetric in them) and permutes the rows of
    the attention map by the same π.  So the loss, a function of P and of α's row sums, cannot tell how a
    grid was flattened — only the map can."""
    A = case.kwargs["A"]
    pi = np.array(data.draw(st.permutations(range(A.shape[1]))), dtype=int)
    P, alpha = case.algorithm(**case.kwargs)
    P_pi, alpha_pi = case.algorithm(**{**case.kwargs, "A": A[:, pi]})
    np.testing.assert_allclose(P_pi, P, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(alpha_pi, alpha[pi], rtol=1e-10, atol=1e-13)


def test_a_grid_has_n_h_times_n_w_locations():
    """The grid variant's attention map and cost are in terms of L = n_h·n_w: its parameters, FLOPs and
    memory equal the annotation model's with ℓ_z replaced by n_h·n_w (reading the grid is a view: no FLOPs,
    nothing materialised), and its depth is one line more."""
    from formal.core.symbols import by_name, ell_z
    grid, annotations = algorithms.get("show_attend_tell", inputs="grid"), algorithms.get("show_attend_tell")
    L = by_name("height") * by_name("width")
    assert grid.outputs[1].shape[0] == L
    g, a = grid.cost(), annotations.cost()
    for got, want in ((g.flops, a.flops), (g.params, a.params), (g.memory, a.memory), (g.depth, a.depth + 1)):
        assert (got - want.subs(ell_z, L)).expand() == 0


def test_show_attend_tell_decodes_sequentially():
    """The decoder takes one step per word: depth Θ(ℓ_x), whatever the number of locations."""
    depth = algorithms.get("show_attend_tell").cost().depth
    assert depth.diff(ell_x) > 0 and depth.diff(ell_x, 2) == 0 and not depth.has(algorithms.get(
        "show_attend_tell").inputs[0].shape[1])


@slow
@given(han_cases())
def test_han_is_its_levels_composed(case):
    """Yang et al. §2: each sentence j is encoded by the word bi-GRU and pooled by word attention; the
    sentence vectors are encoded and pooled the same way, then classified — composed here from the layer
    and pooling objects."""
    k, options = case.kwargs, case.algorithm.options
    layer = recurrent.build_rnn_layer(cell=options["cell"], direction="bidirectional", bias=options["bias"],
                                      **({"reset": options["reset"], "update": options["update"]}
                                         if options["cell"] == "gru" else {}))
    pool = build_attention_pooling(score="mlp")
    words = {n[2:]: v for n, v in k.items() if n.startswith("w_")}
    sentences = {n[2:]: v for n, v in k.items() if n.startswith("s_")}
    vectors = [pool(Z=layer(X=k["W_e"][:, k["x"][:, j]], **words), W=k["W_w"], b=k["b_w"], u_w=k["u_w"])
               for j in range(k["x"].shape[1])]
    v = pool(Z=layer(X=np.stack(vectors, axis=1), **sentences), W=k["W_s"], b=k["b_s"], u_w=k["u_s"])
    logits = k["W_c"] @ v + k["b_c"]
    want = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    np.testing.assert_allclose(case.algorithm(**k), want, rtol=1e-10, atol=1e-12)


def test_han_encodes_its_sentences_in_parallel():
    """The word level runs once per sentence in a parallel loop: depth Θ(ℓ + n_s), with no ℓ·n_s term."""
    depth = algorithms.get("han").cost().depth
    assert depth.diff(ell) > 0 and depth.diff(n_sent) > 0 and depth.diff(ell).diff(n_sent) == 0


@pytest.mark.parametrize("name, options, message", [
    ("show_attend_tell", {"gate": 1}, "gate = 1 must be True, False or 'vector'"),
    ("show_attend_tell", {"activation": "gelu"}, "activation = 'gelu' must be 'tanh', 'leaky_relu' or 'relu'"),
    ("show_attend_tell_loss", {"output": "logits"}, "output = 'logits' must be 'deep' or 'state'"),
    ("show_attend_tell", {"init": "mlp"}, "init = 'mlp' must be 'tanh' or 'linear'"),
    ("show_attend_tell_loss", {"penalty": -1.0}, "penalty = -1.0 must be a finite number ≥ 0"),
    ("show_attend_tell", {"inputs": "pixels"}, "inputs = 'pixels' must be 'annotations' or 'grid'"),
    ("han", {"cell": "rnn"}, "cell = 'rnn' must be 'gru' or 'lstm'"),
    ("han", {"cell": "lstm", "reset": "before"}, "reset = 'before' applies to cell = 'gru' only, not 'lstm'"),
])
def test_bad_options_name_the_option_and_its_value(name, options, message):
    with pytest.raises(ConfigError, match=message):
        algorithms.get(name, **options)
