"""Every column of a column call at once (:mod:`formal.engine.columns`) against the definition, one column
at a time: the same values (to rounding: a sum over axis 0 of a matrix adds in another order than a sum of
one column), the same errors, for every algorithm that makes column calls, and per op for every op that
says how it computes all columns."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from formal import algorithms
from formal.engine.calls import ColumnCallOp, calls_in
from formal.engine.columns import columnar, one_by_one
from formal.errors import FormalError
from formal.ops import Add, Div, Gather, MatMul, Mean, Mul, NotColumnar, Softmax, Square, Standardize, Sub
from tests.formal.test_derived_vs_executed import STRATEGIES
from tests.tiers import fast_few

#: Agreement to rounding: relative to the output's scale, a few ulps of float64 per addition.
RTOL = 1e-12


def _makes_column_calls(algorithm) -> bool:
    """Whether ``algorithm`` or an algorithm it calls makes a column call."""
    return any(isinstance(node.op, ColumnCallOp) or _makes_column_calls(node.op.callee)
               for node in calls_in(algorithm.lines))


COLUMN_CALLERS = sorted(name for name in STRATEGIES
                        if name in algorithms.ALGORITHMS and _makes_column_calls(algorithms.get(name)))


def _outcome(algorithm, kwargs):
    """The output, or the error's type and message."""
    try:
        return algorithm(**kwargs)
    except FormalError as error:
        return type(error), str(error)


def _same(together, alone):
    if isinstance(alone, tuple) and alone and isinstance(alone[0], type):
        assert together == alone
        return
    for a, b in zip(together if isinstance(together, tuple) else (together,),
                    alone if isinstance(alone, tuple) else (alone,), strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype.kind == b.dtype.kind
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0, where=np.isfinite(b))))
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * scale, equal_nan=True)


def test_the_column_callers_are_the_stacks_and_they_have_columnar_callees():
    """The property below covers the algorithms that make column calls, and their callees (layer and RMS norm,
    the embeddings, the unembedding) take every column at once: the fast path is the one taken."""
    assert {"etransformer", "dtransformer", "edtransformer", "dinference"} <= set(COLUMN_CALLERS)
    def callees(algorithm):
        for node in calls_in(algorithm.lines):
            yield from [node.op.callee] if isinstance(node.op, ColumnCallOp) else callees(node.op.callee)
    callees = {c for name in COLUMN_CALLERS for c in callees(algorithms.get(name))}
    assert callees and all(columnar(c) for c in callees)


@pytest.mark.parametrize("name", fast_few(COLUMN_CALLERS, keep={"dtransformer", "swin_block"}))
def test_all_columns_at_once_equals_one_by_one(name):
    """Property: an algorithm's output with every column call run at once equals its output with the columns
    run one by one (the definition), and where one raises, the other raises the same error."""

    @settings(max_examples=25)
    @given(STRATEGIES[name])
    def check(case):
        together = _outcome(case.algorithm, case.kwargs)
        with one_by_one():
            alone = _outcome(case.algorithm, case.kwargs)
        _same(together, alone)

    check()


def test_an_error_in_one_column_is_the_definitions():
    """A token id outside the vocabulary fails in the batched lookup; the columns then run one by one, so the
    error names the id and the line as the definition does."""
    stack = algorithms.get("dtransformer", position="learned")
    rng = np.random.default_rng(0)
    kwargs = _stack_arguments(stack, rng)
    kwargs["x"] = np.array([0, 9, 1])     # N_V = 5: id 9 is outside
    together = _outcome(stack, kwargs)
    with one_by_one():
        alone = _outcome(stack, kwargs)
    assert together == alone and "9" in together[1] and "outside" in together[1]


def _stack_arguments(stack, rng, N_V=5, d_e=4, ell_max=6, d_mlp=3):
    sizes = {"N_V": N_V, "d_e": d_e, "ell_max": ell_max, "d_mlp": d_mlp, "L": 1, "H": 1, "d_attn": 2, "d_mid": 2}
    from tests.strategies.cases import evaluate
    kwargs = {p.name: rng.normal(size=tuple(int(evaluate(d, sizes)) for d in p.shape)) for p in stack.params}
    return kwargs


# --------------------------------------------------------------------------------------------- per op
def _columns_of(value, n, batched):
    return [value[..., j] if batched else value for j in range(n)]


def _per_column(op, values, batched, n):
    """The definition: the op's numpy semantics on each column, stacked last."""
    parts = [op.numpy(None, *[v[..., j] if b else v for v, b in zip(values, batched)]) for j in range(n)]
    return np.stack(parts, axis=-1)


FINITE = st.floats(-1e3, 1e3, allow_nan=False, width=64)


@st.composite
def _elementwise_case(draw):
    """A binary elementwise op on a vector or a scalar per column, batched or shared (broadcast)."""
    op = draw(st.sampled_from([Add(), Sub(), Mul(), Div()]))
    d, n = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    shapes = [draw(st.sampled_from([(d,), ()])) for _ in range(2)]
    batched = draw(st.lists(st.booleans(), min_size=2, max_size=2).filter(any))
    values = [np.array(draw(st.lists(FINITE, min_size=int(np.prod(s + ((n,) if b else ()))),
                                     max_size=int(np.prod(s + ((n,) if b else ())))))).reshape(s + ((n,) if b else ()))
              for s, b in zip(shapes, batched)]
    if isinstance(op, Div):
        values[1] = np.where(np.abs(values[1]) < 1e-3, 1.0, values[1])
    return op, values, batched, n


@given(_elementwise_case())
def test_elementwise_ops_take_every_column_at_once(case):
    """Property: ``a ∘ b`` over columns equals it column by column, whichever operand carries the columns and
    whether each is a vector or a scalar per column (a shared γ broadcasts as over one column)."""
    op, values, batched, n = case
    np.testing.assert_array_equal(op.columns(None, values, batched), _per_column(op, values, batched, n))


@given(d=st.integers(1, 6), m=st.integers(1, 4), n=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_reductions_products_and_lookups_take_every_column_at_once(d, m, n, seed):
    """Property: Mean, Square, Softmax (a column of −∞ included, under every empty policy), Standardize,
    W·x and W[:, v] over columns equal them column by column."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(d, n))
    for op in (Mean(d), Square()):
        np.testing.assert_allclose(op.columns(None, [x], [True]), _per_column(op, [x], [True], n), rtol=RTOL)
    s = rng.normal(size=(d, n))
    s[:, 0] = -np.inf
    for empty in ("zero", "nan", "uniform"):
        op = Softmax(empty=empty)
        np.testing.assert_allclose(op.columns(None, [s], [True]), _per_column(op, [s], [True], n), rtol=RTOL)
    v = np.var(x, axis=0) if d > 1 else np.ones(n)
    op = Standardize(eps=1e-5, nonzero="zero variance")
    centred = x - x.mean(axis=0)
    np.testing.assert_allclose(op.columns(None, [centred, v], [True, True]),
                               _per_column(op, [centred, v], [True, True], n), rtol=RTOL)
    w = rng.normal(size=(m, d))
    np.testing.assert_allclose(MatMul().columns(None, [w, x], [False, True]),
                               _per_column(MatMul(), [w, x], [False, True], n), rtol=RTOL)
    ids = rng.integers(0, d, size=n)
    table = rng.normal(size=(m, d))
    np.testing.assert_array_equal(Gather().columns(None, [table, ids], [False, True]),
                                  _per_column(Gather(), [table, ids], [False, True], n))


def test_an_op_that_cannot_take_the_columns_says_so():
    """A batched left factor, a batched lookup table, and any op that does not declare how: NotColumnar, and
    a subclass that changes the numpy semantics of a columnar op is not columnar until it says so again."""
    x = np.ones((2, 3))
    with pytest.raises(NotColumnar):
        MatMul().columns(None, [np.ones((2, 2, 3)), x], [True, True])
    with pytest.raises(NotColumnar):
        Gather().columns(None, [np.ones((2, 4, 3)), np.zeros(3, dtype=int)], [True, True])

    class Doubled(Mean):
        def numpy(self, ctx, a):
            return 2 * super().numpy(ctx, a)

    from formal.engine.lines import declares
    assert declares(Mean(2), "columns") and not declares(Doubled(2), "columns")
