"""The scores of Algorithms 3 and 4 and attention pooling: the spec's numpy execution against the torch
reference (reference.model.attention, reference.model.pooling) in float64, under every score, bias, mask and
empty-neighbourhood policy; and the reference's bad input."""

import numpy as np
import pytest
import torch
from hypothesis import given

from formal.errors import ConfigError
from reference.model import attention as torch_attention, pooling
from reference.model.convert import columns_to_rows, mask_to_rows, params_to_torch, rows_to_columns, to_numpy
from tests.strategies.scores import pooling_cases, scored_attention_cases, scored_single_query_cases

RELATIVE = 1e-10


def _params(case):
    return params_to_torch({k: case.kwargs[k] for k in case.params}, device="cpu")


def reference_attention(case, path="explicit"):
    """Algorithm 4 of ``case`` on the reference, in the spec's layout."""
    kw, options = case.kwargs, case.algorithm.options
    X = columns_to_rows(kw["X"], device="cpu")
    Z = X if kw.get("Z") is None else columns_to_rows(kw["Z"], device="cpu")
    mask = mask_to_rows(kw.get("mask"), Z.shape[1], X.shape[1], device="cpu")
    params = _params(case)
    v_a = params.pop("v_a", None)
    Y = torch_attention.attention(X, Z, mask, empty=options["empty"], path=path, score=options["score"], v_a=v_a,
                         activation=options["activation"], **params)
    return rows_to_columns(Y)


def reference_single_query(case):
    kw, options = case.kwargs, case.algorithm.options
    params = _params(case)
    v_a = params.pop("v_a", None)
    e = torch.tensor(kw["e"], dtype=torch.float64)[None]
    y = torch_attention.single_query_attention(e, columns_to_rows(kw["e_t"], device="cpu"), score=options["score"],
                                               v_a=v_a, activation=options["activation"], **params)
    return to_numpy(y[0])


def reference_pooling(case):
    s = pooling.attention_pooling(columns_to_rows(case.kwargs["Z"], device="cpu"),
                                  score=case.algorithm.options["score"], **_params(case))
    return to_numpy(s[0])


def assert_close(want, got):
    """|want − got| ≤ 1e-10 · max(1, max |want|), NaN exactly where the spec has NaN."""
    want, got = np.asarray(want, dtype=np.float64), np.asarray(got, dtype=np.float64)
    assert want.shape == got.shape
    assert np.array_equal(np.isnan(want), np.isnan(got)), "NaN where the spec has none, or the reverse"
    finite = ~np.isnan(want)
    if finite.any():
        scale = max(1.0, float(np.max(np.abs(want[finite]))))
        assert float(np.max(np.abs(want[finite] - got[finite]))) <= RELATIVE * scale


@given(scored_attention_cases())
def test_attention_reference_equals_spec_under_every_score(case):
    """Algorithm 4 under scaled_dot, dot and additive (tanh, leaky ReLU), with and without biases, under
    every mask and empty-neighbourhood policy: the reference equals the spec in float64."""
    assert_close(case.algorithm(**case.kwargs), reference_attention(case))


@given(scored_attention_cases(score="dot"))
def test_sdpa_path_computes_the_dot_score_with_scale_one(case):
    """The fast path (scaled_dot_product_attention with scale = 1) computes the unscaled dot score."""
    assert_close(reference_attention(case), reference_attention(case, path="sdpa"))


@given(scored_single_query_cases())
def test_single_query_reference_equals_spec_under_every_score(case):
    """Algorithm 3 under every score and bias: the reference equals the spec in float64."""
    assert_close(case.algorithm(**case.kwargs), reference_single_query(case))


@given(pooling_cases())
def test_attention_pooling_reference_equals_spec(case):
    """Attention pooling, dot and mlp (Yang et al. 2016, eqs. 5–7): the reference equals the spec in float64."""
    assert_close(case.algorithm(**case.kwargs), reference_pooling(case))


# ------------------------------------------------------------------------------------------ bad input
def _qkv(rng, d=3, ell=4):
    Q, K, V = (torch.tensor(rng.normal(size=(1, 1, ell, d))) for _ in range(3))
    return Q, K, V


@pytest.mark.parametrize("kwargs, words", [
    ({"score": "cosine"}, ["score", "'cosine'"]),
    ({"score": "additive"}, ["v_a"]),
    ({"score": "dot", "v_a": torch.ones(3, dtype=torch.float64)}, ["v_a", "'dot'"]),
    ({"score": "additive", "v_a": torch.ones(3, dtype=torch.float64), "activation": "gelu"}, ["activation", "'gelu'"]),
    ({"score": "dot", "activation": "leaky_relu"}, ["activation", "'leaky_relu'"]),
    ({"score": "additive", "v_a": torch.ones(3, dtype=torch.float64), "path": "sdpa"}, ["path", "'sdpa'", "additive"]),
])
def test_reference_score_options_are_checked(kwargs, words):
    """The reference's score options are ConfigErrors naming the option and its value: an unknown score or
    activation, v_a missing or given where it means nothing, and the additive score on a fused path."""
    Q, K, V = _qkv(np.random.default_rng(0))
    with pytest.raises(ConfigError) as error:
        torch_attention.attend(Q, K, V, **kwargs)
    assert all(w in str(error.value) for w in words), str(error.value)


@pytest.mark.parametrize("kwargs, words", [
    ({"score": "additive", "q": torch.ones(3)}, ["score", "'additive'"]),
    ({"score": "dot"}, ["q"]),
    ({"score": "mlp", "W": torch.ones(2, 3), "b": torch.ones(2)}, ["u_w"]),
    ({"score": "dot", "q": torch.ones(3), "u_w": torch.ones(2)}, ["u_w"]),
])
def test_reference_pooling_options_are_checked(kwargs, words):
    """Attention pooling's reference names an unknown score, and a parameter missing or foreign to it."""
    with pytest.raises(ConfigError) as error:
        pooling.attention_pooling(torch.ones(1, 4, 3), **kwargs)
    assert all(w in str(error.value) for w in words), str(error.value)
