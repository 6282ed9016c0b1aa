"""The FLOP-count theorem and its counter: the counter counts what numpy is asked to do by the convention's rules
(checked here against counts written by hand), and every op's full count equals it at every point of the grid of
its applications' sizes."""

import math

import numpy as np
import pytest

from proofs.counting import counted
from proofs.flops import THEOREMS, unchecked
from proofs.theorem import run
from tests.tiers import slow


@pytest.mark.parametrize("function, shape, expected", [
    # softmax of a 4×3 matrix by columns: 3 comparisons per column for the max, 12 subtractions, 12 exps,
    # 3 additions per column, 12 divisions
    (lambda s: (lambda e: e / e.sum(axis=0))(np.exp(s - s.max(axis=0))), (4, 3), 9 + 12 + 12 + 9 + 12),
    (lambda a: a @ a.T, (4, 3), 2 * 3 * 16),                    # (4×3)·(3×4): 2mkn
    (lambda a: np.mean(a, axis=0), (5, 2), 2 * 4 + 2),          # 4 additions and a division per column
    (lambda a: np.where(a > 0, a, 0.0)[::-1].reshape(-1), (3, 3), 0),    # tests, selections and views are free
    (lambda a: np.sqrt(np.sum(a * a)) / math.sqrt(16), (4, 4), 16 + 15 + 1 + 1),  # √16 of a size is free
    (lambda a: np.cumsum(a, axis=0), (4, 3), 3 * 3),            # n − 1 additions per lane
])
def test_the_counter_counts_by_the_conventions_rules(function, shape, expected):
    a = np.random.default_rng(0).normal(size=shape)
    assert counted(function, a).total == expected


def test_the_counter_follows_values_through_scalars_and_object_arrays():
    """A 0-d reduction and a ``frompyfunc``'s object array stay counting: the arithmetic after them is counted."""
    erf = np.frompyfunc(math.erf, 1, 1)
    a = np.random.default_rng(1).normal(size=4)
    assert counted(lambda x: np.sum(x) / 4.0, a).total == 3 + 1
    assert counted(lambda x: 1.0 + erf(x).astype(np.float64), a).total == 4 + 4


def test_the_counter_records_what_it_does_not_model():
    """A routine that computes without ufuncs (a dot product, einsum, a norm from linalg) is recorded as unseen,
    not counted as free."""
    a = np.random.default_rng(2).normal(size=(3, 2))
    tally = counted(lambda x: np.einsum("ij,ij->", x, x) + x.dot(x.T).sum() + np.linalg.norm(x), a)
    assert tally.unseen == {"einsum", "ndarray.dot", "norm"}
    assert counted(lambda x: x @ x.T, a).unseen == set()


@slow
def test_op_flop_counts_is_proved_and_its_twin_refuted():
    theorem, = THEOREMS
    result = run(theorem)
    assert result.proved, result.detail
    assert "grid points" in result.detail and "72 ops" in result.detail
    assert "Rotary" in result.detail and "SoftCap" in result.detail
    assert result.twin_rejected and "its matmul count is" in result.counterexample
    assert theorem.level == "exhaustive" and "not symbolic" in theorem.method and "1, 2, 3, 4" in theorem.method


def test_the_grid_takes_every_size_where_the_shapes_and_constraints_allow():
    """Every assignment of the sizes in 1…4, less those where a dimension is not a positive integer or a
    constraint fails (H divides d_e)."""
    import sympy as sp

    from formal.core.constraints import Constraint
    from formal.ops import MatMul
    from proofs.flops import GRID, grid_points
    d, H, ell = sp.symbols("d_e H ell", positive=True, integer=True)
    shapes = ((d / H, d), (d, ell))
    points = list(grid_points(MatMul(), shapes, (d / H, ell), (Constraint("divides", (H, d)),)))
    expected = {(dv, hv, lv) for dv in GRID for hv in GRID for lv in GRID if dv % hv == 0}
    assert {(int(v[d]), int(v[H]), int(v[ell])) for v, _, _ in points} == expected
    assert all(dims[0] == (v[d] / v[H], v[d]) for v, dims, _ in points)


def test_a_size_that_must_be_a_multiple_takes_the_smallest_multiples_and_no_point_is_reported():
    """A size its own constraint makes a multiple of 8 runs over 8, 16, 24, 32; an application no point of the grid
    gives positive sizes is reported as uncounted, not skipped."""
    import sympy as sp

    from formal.core.constraints import Constraint
    from formal.ops import Sqrt
    from proofs.flops import count_at, grid_points
    h, n = sp.symbols("height n", positive=True, integer=True)
    points = grid_points(Sqrt(), ((h / 8, n),), (h / 8, n), (Constraint("divides", (8, h)),))
    assert sorted({int(v[h]) for v, _, _ in points}) == [8, 16, 24, 32]
    found = {"mismatch": None, "counted": {}, "unseen": {}, "failed": {}}
    count_at(Sqrt(), ((n - 5,),), (n - 5,), ("real",), "full", found)
    assert found["failed"] == {"Sqrt": "anywhere on the grid (no point gives every dimension a size)"}


def test_the_grid_alone_finds_a_wrong_rule(monkeypatch):
    """A softmax rule that forgets the maximum is refuted on the grid, at its first point, without any execution."""
    import sympy as sp

    from formal.core.shapes import numel
    from formal.ops import Softmax
    from proofs.flops import count_at
    monkeypatch.setattr(Softmax, "flops", lambda self, shapes, out: {"full": 4 * numel(out) - out[1]})
    n, m = sp.symbols("n m", positive=True, integer=True)
    found = {"mismatch": None, "counted": {}, "unseen": {}, "failed": {}}
    count_at(Softmax(), ((n, m),), (n, m), ("real",), "full", found)
    assert found["mismatch"].startswith("Softmax (m = 1, n = 2) on 2×1: its full count is 7, its numpy semantics "
                                        "perform 8")


@slow
def test_every_op_is_counted():
    """No op class of the package goes uncounted: each is in an algorithm's lines or run on its own (a new op that
    is neither makes the theorem undecided, naming it)."""
    from proofs.flops import applications, on_their_own
    seen = {type(op).__name__ for op, *_ in applications().values()} | {type(op).__name__ for op, _ in on_their_own()}
    assert unchecked(seen) == []
    assert {"Softmax", "MatMul", "Mean", "Standardize", "GELU", "AdditiveScore"} <= seen
