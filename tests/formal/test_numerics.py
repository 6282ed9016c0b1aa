"""Numbers are never silently wrong: layer norm at any scale float64 holds, sampling at any temperature,
and a NaN or ∞ that overflow makes from finite inputs is an error naming the line it began on."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import formal
from formal.algorithms.normalization import build_layer_norm
from formal.errors import DomainError, ResourceError
from formal.guards import limits
from formal.ops import Softmax
from formal.ops.sequences import tempered
from tests.tiers import fast_few

columns = st.integers(2, 12).flatmap(lambda d: st.lists(st.floats(-10, 10), min_size=d, max_size=d).map(np.array))
exponents = st.integers(-300, 300)


def _spread(e) -> bool:
    return np.ptp(e) > 1e-3 * max(1.0, np.max(np.abs(e)))


def _norm_args(norm, e):
    d = e.size
    gamma, beta = np.linspace(0.5, 1.5, d), np.linspace(-1, 1, d)
    return dict(e=e, gamma=gamma) if norm == "rms" else dict(e=e, gamma=gamma, beta=beta)


@pytest.mark.parametrize("norm", fast_few(["layer", "rms"]))
@given(e=columns, k=exponents)
def test_layer_norm_without_eps_is_scale_invariant_at_every_magnitude(norm, e, k):
    """With eps = 0, LN(s·e) = LN(e) for every s > 0: at s = 10^±300 too, where v = mean((s·e − m)²)
    overflows or underflows float64 and the naive √v would return zeros or call the column constant."""
    if norm == "layer" and not _spread(e) or norm == "rms" and not np.any(np.abs(e) > 1e-3):
        return
    ln = build_layer_norm(norm=norm)
    scaled = ln(**_norm_args(norm, e * 10.0**k))
    np.testing.assert_allclose(scaled, ln(**_norm_args(norm, e)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm", ["layer", "rms"])
@given(e=columns, k=st.integers(-150, 150))
def test_layer_norm_with_eps_at_every_magnitude_equals_its_rescaled_form(norm, e, k):
    """LN_ε(s·e) = LN_{ε/s²}(e): the scaled route computes the same real number as the formula."""
    if norm == "layer" and not _spread(e):
        return
    eps, s = 1e-5, 10.0**k
    got = build_layer_norm(norm=norm, eps=eps)(**_norm_args(norm, e * s))
    args = _norm_args(norm, e)
    centred = e - e.mean() if norm == "layer" else e
    want = centred / np.sqrt(np.mean(centred**2) + eps / s**2) * args["gamma"] + args.get("beta", 0)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-300)


def test_layer_norm_of_a_constant_column_is_still_a_domain_error():
    with pytest.raises(DomainError, match="constant column"):
        formal.layer_norm(e=np.full(4, 1e-200), gamma=np.ones(4), beta=np.zeros(4))


@given(p=st.lists(st.floats(0, 1), min_size=2, max_size=8).filter(lambda p: sum(p) > 0),
       tau=st.floats(5e-324, 1e300))
def test_tempered_distribution_is_a_distribution_at_every_temperature(p, tau):
    """p^{1/τ} normalised has no NaN, sums to 1, keeps zeros at zero, and for τ ≤ 1 puts at least as much
    mass on the most likely entry as p does: for any τ in (0, 10³⁰⁰]."""
    p = np.array(p) / sum(p)
    q = tempered(p, tau)
    assert np.all(np.isfinite(q)) and abs(q.sum() - 1) < 1e-12
    assert np.all(q[p == 0] == 0)
    if tau <= 1:
        assert q[np.argmax(p)] >= p.max() - 1e-12


@given(p=st.lists(st.floats(0.01, 1), min_size=2, max_size=8), tau=st.floats(0.1, 10))
def test_tempered_equals_the_power_formula_where_it_is_representable(p, tau):
    p = np.array(p) / sum(p)
    np.testing.assert_allclose(tempered(p, tau), p ** (1 / tau) / np.sum(p ** (1 / tau)), rtol=1e-10)


def test_tempered_at_the_extremes_is_greedy_and_uniform():
    p = np.array([0.1, 0.6, 0.3, 0.0])
    np.testing.assert_array_equal(tempered(p, 1e-30), [0, 1, 0, 0])
    np.testing.assert_allclose(tempered(p, 1e300), [1 / 3, 1 / 3, 1 / 3, 0])


def _attention_args(scale=1.0, ell=5):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, ell)) * scale
    return dict(X=X, W_q=rng.normal(size=(4, 8)), b_q=np.zeros(4), W_k=rng.normal(size=(4, 8)), b_k=np.zeros(4),
                W_v=rng.normal(size=(8, 8)), b_v=np.zeros(8))


def test_overflow_in_the_scores_is_an_error_naming_the_line():
    """Scores of 10⁴⁰⁰ overflow to ∞; softmax would return NaN (or, treating +∞ as an empty column, zeros):
    a wrong number, so the executor names line 4 (S ← KᵀQ) instead."""
    assert np.all(np.isfinite(formal.attention(**_attention_args(1e100))))
    with pytest.raises(DomainError, match=r"line 4: S is not finite \(float64 overflowed"):
        formal.attention(**_attention_args(1e200))


def test_nan_by_design_and_nan_passed_in_are_not_errors():
    """``empty="nan"`` returns NaN columns by design, through a call (Algorithm 5) too; a NaN in the
    input passes through as numpy would."""
    args = _attention_args()
    mask = np.ones((5, 5))
    mask[:, 0] = 0
    out = formal.get("attention", empty="nan")(**args, mask=mask)
    assert np.all(np.isnan(out[:, 0])) and np.all(np.isfinite(out[:, 1:]))
    heads = {k: v[None] for k, v in args.items() if k != "X"}
    multi = formal.get("mhattention", empty="nan")(X=args["X"], mask=mask, **heads, W_o=np.eye(8), b_o=np.zeros(8))
    assert np.all(np.isnan(multi[:, 0]))
    args["X"][0, 0] = np.nan
    assert np.isnan(formal.attention(**args)).any()


def test_softmax_does_not_take_an_infinite_score_for_an_empty_column():
    """Only a column of −∞ is empty; a +∞ score is an overflow and must not become a zero column."""
    s = np.array([[np.inf, 0.0], [1.0, 0.0]])
    with np.errstate(invalid="ignore"):
        out = Softmax("zero").numpy(None, s)
    assert np.isnan(out[:, 0]).any() and np.allclose(out[:, 1], 0.5)


def test_execution_refuses_a_line_whose_arrays_exceed_the_memory_limit():
    """The score matrix of ℓ = 50 is 20 KB: refused under a 10 KB limit, before it is allocated; run under
    the default."""
    args = _attention_args(ell=50)
    with limits.memory_limit("10K"), pytest.raises(ResourceError, match=r"line 4 \(S at .*ell_x = 50"):
        formal.attention(**args)
    assert formal.attention(**args).shape == (8, 50)


def test_an_overflow_on_a_line_that_writes_what_it_reads_is_named():
    """``X ← X + Y`` where X + Y overflows: the line read finite values, so the ∞ began there — judged on what the
    line read, not on what it wrote (which is already ∞)."""
    from formal.core.shapes import TensorSpec
    from formal.core.symbols import d_x, ell_x
    from formal.engine import tape
    from formal.engine.algorithm import Algorithm, Assign
    from formal.ops import add

    twice = Algorithm(number=None, source="a test", name="twice", display="Twice", summary="X + X.",
                      inputs=[TensorSpec("X", (d_x, ell_x))], params=[], output=TensorSpec("X", (d_x, ell_x)),
                      lines=[Assign("X", add("X", "X"), returns=True)])
    assert twice(X=np.ones((2, 3)))[0, 0] == 2
    for _ in range(2):   # checked, then on the same shapes (a replay meets the overflow, the checked run names it)
        with pytest.raises(DomainError, match=r"line 1: X is not finite \(float64 overflowed"):
            twice(X=np.full((2, 3), 1e308))
    with tape.untaped(), pytest.raises(DomainError, match="line 1: X is not finite"):
        twice(X=np.full((2, 3), 1e308))
