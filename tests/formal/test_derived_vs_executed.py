"""Derivation against execution, for every algorithm and variant:
shapes, parameter counts and FLOPs derived symbolically must equal what the numpy execution did."""

import numpy as np
import pytest
from hypothesis import given, settings

from tests.oracles.flops import tallied_run
from tests.strategies import strategies
from tests.strategies.cases import evaluate
from tests.strategies.swin import SWIN_EXAMPLES
from tests.tiers import fast_few, in_fast_tier

STRATEGIES = strategies()        # every family module's, found by itself
ALGORITHMS = sorted(STRATEGIES)

#: The registered algorithms without a strategy here, and where their derivation is checked instead.
ELSEWHERE = {
    "edtraining": "a gradient step executes in the torch reference: tests/reference/model/test_training.py",
    "etraining": "a gradient step executes in the torch reference: tests/reference/model/test_training.py",
    "dtraining": "a gradient step executes in the torch reference: tests/reference/model/test_training.py",
    "edinference": "its cost is that of the steps a run took: tests/formal/test_stack.py counts it per run",
    "kv_mhattention": "its FLOPs against FlopCounterMode and its outputs against recomputation: verify "
                      "(tests/reference/verification/test_verify.py)",
    "kv_dtransformer": "its FLOPs against FlopCounterMode and its decoding against recomputation: verify and "
                       "tests/formal/test_stack.py",
}


def test_every_registered_algorithm_is_derived_against_its_execution_here_or_says_where():
    """A new algorithm gets a strategy here (its shapes, parameter count and FLOPs checked against what its
    execution did), or an entry in ``ELSEWHERE`` naming where that is checked."""
    from formal.algorithms import ALGORITHMS as REGISTERED
    here = set(STRATEGIES) & set(REGISTERED)          # (other keys draw more variants of a registered one)
    assert here | set(ELSEWHERE) == set(REGISTERED), sorted(set(REGISTERED) - here - set(ELSEWHERE))
    assert not here & set(ELSEWHERE) and set(ELSEWHERE) <= set(REGISTERED)


def _bounded(name, check):
    """``check`` with at most the examples a slow algorithm affords (a whole Swin runs for a second)."""
    cap = SWIN_EXAMPLES.get(name)
    return check if cap is None else settings(max_examples=min(cap, settings.default.max_examples))(check)


@pytest.mark.parametrize("name", fast_few(ALGORITHMS, keep=in_fast_tier))
def test_executed_shapes_equal_derived_shapes(name):
    """Every output of an execution has its derived shape evaluated at the binding, and the binding is
    exactly the sizes the case was built from."""

    @given(STRATEGIES[name])
    def check(case):
        run = case.algorithm.run(**case.kwargs)
        assert {str(k): v for k, v in run.binding.items()} == case.sizes
        outputs = run.output if len(case.algorithm.outputs) > 1 else (run.output,)
        for output, shape in zip(outputs, case.algorithm.derivation.output_shapes, strict=True):
            assert np.shape(output) == tuple(int(evaluate(d, case.sizes)) for d in shape)

    _bounded(name, check)()


@pytest.mark.parametrize("name", fast_few(ALGORITHMS, keep=in_fast_tier))
def test_derived_parameter_count_equals_arrays_consumed(name):
    """The derived parameter count equals the total size of the parameter arrays the execution read, and
    the execution reads every parameter it is given."""

    @given(STRATEGIES[name])
    def check(case):
        run = case.algorithm.run(**case.kwargs)
        assert set(run.consumed) == set(case.params)
        consumed = sum(np.size(case.kwargs[p]) for p in run.consumed)
        assert evaluate(case.algorithm.param_count(), case.sizes) == consumed

    _bounded(name, check)()


@pytest.mark.parametrize("convention", fast_few(["matmul", "full"]))  # kaplan and chinchilla drop parts of these
@pytest.mark.parametrize("name", fast_few(ALGORITHMS, keep=in_fast_tier))
def test_derived_flops_equal_counted_flops(name, convention):
    """Derived FLOPs equal an independent tally of what numpy performed: the matrix products (matmul
    convention, 2mkn each) or every floating-point operation (full convention)."""

    @given(STRATEGIES[name])
    def check(case):
        _, tally = tallied_run(case.algorithm, case.kwargs)
        counted = tally.matmul if convention == "matmul" else tally.full
        assert evaluate(case.algorithm.cost(convention).flops, case.sizes) == counted, tally.products

    _bounded(name, check)()
