"""The FLOP-count theorem and its counter: the counter counts what numpy is asked to do by the convention's rules
(checked here against counts written by hand), and every op's full count equals it on the spec's executions."""

import math

import numpy as np
import pytest

from proofs.counting import counted
from proofs.flops import THEOREMS, unchecked
from proofs.theorem import run


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


def test_op_flop_counts_is_proved_and_its_twin_refuted():
    theorem, = THEOREMS
    result = run(theorem)
    assert result.proved, result.detail
    assert result.twin_rejected and "its matmul count is" in result.counterexample
    assert theorem.level == "property-tested" and "not symbolic" in theorem.method


def test_every_op_is_counted():
    """No op class of the package goes uncounted: each is run by an example or on its own (a new op that is neither
    makes the theorem undecided, naming it)."""
    from formal.engine.execution import execute
    from proofs.flops import examples, observer, on_their_own
    found = {"mismatch": None, "ops": {}}
    for _, ex in examples():
        execute(ex.algorithm, dict(ex.arguments), observe=observer(found, "full"))
    seen = set(found["ops"]) | {type(op).__name__ for op, _ in on_their_own(found["ops"])}
    assert unchecked(seen) == []
    assert {"Softmax", "MatMul", "Mean", "Standardize", "GELU", "AdditiveScore"} <= seen
