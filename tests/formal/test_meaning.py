"""The ops' symbolic meaning (formal.engine.meaning) agrees with their numpy execution, and the normaliser of
sums (formal.core.sums) decides the identities the theorems need."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from formal import algorithms, ops
from formal.core.sums import decide, normal
from formal.core.symbolic import AXES, Value, entries
from formal.core.symbols import d_e, dim
from formal.engine.meaning import Context, concrete, evaluate, inputs
from formal.errors import FormalError

A, B = dim("a"), dim("b")

#: Every op with a meaning, as (op, the symbolic shapes of its arguments in the sizes a, b).
CASES = {
    "add": (ops.Add(), [(A, B), (A, B)]), "sub": (ops.Sub(), [(A, B), ()]), "mul": (ops.Mul(), [(A,), (A,)]),
    "div": (ops.Div(), [(A, B), (B,)]), "square": (ops.Square(), [(A, B)]), "sqrt": (ops.Sqrt(), [(A, B)]),
    "add_constant": (ops.AddConstant(0.5, "ε", "e"), [(A, B)]),
    "standardize": (ops.Standardize(0.25, nonzero="zero"), [(A, B), (B,)]),
    "div_sqrt": (ops.DivSqrt(A), [(A, B)]), "mean": (ops.Mean(A), [(A, B)]), "softmax": (ops.Softmax(), [(A, B)]),
    "matmul": (ops.MatMul(), [(A, B), (B, A)]), "matmul_t": (ops.MatMul(transpose_a=True), [(A, B), (A,)]),
    "add_bias": (ops.AddBias(), [(A, B), (A,)]), "transpose": (ops.Transposed(), [(A, B)]),
}
NAMES = "xyz"


class _NumpyContext:
    """What an op's numpy face asks of its context, at concrete sizes."""

    def __init__(self, sizes):
        self.sizes = sizes

    def evaluate(self, expr):
        return int(sp.sympify(expr).xreplace({k: sp.Integer(v) for k, v in self.sizes.items()}))

    def where(self):
        return "test"


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=6, deadline=None)
@given(a=st.integers(1, 3), b=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_every_meaning_is_its_numpy_execution(name, a, b, seed):
    """For random sizes (non-square matrices included) and entries, the meaning instantiated exactly equals the
    numpy face: an op whose two faces disagree fails here."""
    op, shapes = CASES[name]
    sizes, rng = {A: a, B: b}, np.random.default_rng(seed)
    symbolic = [entries(NAMES[n], s) for n, s in enumerate(shapes)]
    arrays = {}
    for n, s in enumerate(shapes):
        shape = tuple(int(x.xreplace(sizes)) for x in s)
        arrays[NAMES[n]] = rng.integers(1, 9, size=shape) / 4 if shape else float(rng.integers(1, 9) / 4)
    meant = concrete(op.meaning(Context(None), *symbolic), sizes, arrays,
                     {sp.Symbol(k, real=True): sp.Rational(str(v)) for k, v in arrays.items() if np.ndim(v) == 0})
    executed = op.numpy(_NumpyContext(sizes), *arrays.values())
    np.testing.assert_allclose(meant, executed, rtol=1e-12, atol=1e-12)


def test_an_op_without_a_meaning_and_a_loop_are_named():
    with pytest.raises(FormalError, match=r"line 1: the op relu \(ReLU\) has no symbolic meaning"):
        evaluate(algorithms.get("mlp"), inputs(algorithms.get("mlp")))
    with pytest.raises(FormalError, match="line 1: a loop has no symbolic meaning"):
        evaluate(algorithms.get("mhattention"), inputs(algorithms.get("mhattention")))


def test_layer_norm_lines_read_the_derived_sizes():
    """Algorithm 6's mean is a sum over the symbolic width d_e, the ε bound by its glyph."""
    eps = sp.Symbol("epsilon", positive=True)
    meaning = evaluate(algorithms.get("layer_norm"), inputs(algorithms.get("layer_norm")), constants={"ε": eps})
    m = meaning.values["m"].expr
    assert m.atoms(sp.Sum) and all(s.limits[0][2] == d_e - 1 for s in m.atoms(sp.Sum))
    assert eps in meaning.values["e_hat"].expr.free_symbols and meaning.constants == {eps: 0}


def test_normal_pulls_out_splits_and_renames():
    x, k, j = sp.IndexedBase("x"), sp.Symbol("k", integer=True), sp.Symbol("j", integer=True)
    c = sp.Symbol("c")
    left = sp.Sum(sp.exp(x[k] + c), (k, 0, A + B - 1))
    right = sp.exp(c) * (sp.Sum(sp.exp(x[j]), (j, 0, A - 1)) + sp.Sum(sp.exp(x[k]), (k, A, A + B - 1)))
    assert normal(left - right) == 0          # the sum over a + b rows is split where the other sum starts
    assert normal(sp.Sum(c, (k, 0, A - 1))) == A * c


def test_decide_proves_refutes_with_a_counterexample():
    e = entries("e", (d_e,))
    k = sp.Symbol("k", integer=True, nonnegative=True)
    mean = sp.Sum(e.at(k), (k, 0, d_e - 1)) / d_e
    assert decide(sp.Sum(e.at(k) - mean, (k, 0, d_e - 1)), 0).holds is True
    wrong = decide(sp.Sum((e.at(k) - mean) ** 2, (k, 0, d_e - 1)), 0)
    assert wrong.holds is False and "d_e = 2" in wrong.detail


def test_broadcast_meets_each_column():
    """A row of values (one per column) meets each row of a matrix, as numpy broadcasts it."""
    s, c = entries("s", (A, B)), entries("c", (B,))
    got = ops.Add().meaning(Context(None), s, c)
    assert got.shape == (A, B) and got.expr == s.expr + c.at(AXES[1])
    assert isinstance(got, Value)


def test_an_all_ones_mask_is_the_identity_and_another_has_no_meaning():
    from formal.core.symbolic import constant
    s = entries("s", (A, B))
    assert ops.MaskFill().meaning(Context(None), s, constant(1, (A, B))) == s
    with pytest.raises(FormalError, match="mask with entries other than 1"):
        ops.MaskFill().meaning(Context(algorithms.get("attention")), s, entries("mask", (A, B)))
