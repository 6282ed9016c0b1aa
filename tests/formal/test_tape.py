"""Replaying a checked run (:mod:`formal.engine.tape`): the same results as a checked run, for every algorithm,
and every error still the checked run's."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from formal import algorithms
from formal.engine import tape
from formal.engine.lines import layout
from formal.errors import DomainError, ResourceError, ShapeError
from formal.guards import limits
from tests.formal.test_derived_vs_executed import STRATEGIES
from tests.tiers import fast_few, in_fast_tier, slow

ALGORITHMS = sorted(name for name in STRATEGIES if name in algorithms.ALGORITHMS)


def _checked(algorithm, kwargs):
    tape.forget()
    return algorithm.run(**kwargs)


@pytest.mark.parametrize("name", fast_few(ALGORITHMS, keep=lambda name: in_fast_tier(name) or name == "swin_block"))
def test_a_replayed_run_is_the_checked_run(name):
    """Property: a run on arguments of the shapes of an earlier one (which may replay its tape) returns the
    output, every intermediate value, the binding and the parameters read of a fully checked run, exactly."""

    @settings(max_examples=10)
    @given(STRATEGIES[name])
    def check(case):
        kwargs = dict(case.kwargs)
        first = _checked(case.algorithm, kwargs)
        again = case.algorithm.run(**kwargs)        # a tape, where the algorithm's checks allow one
        for a, b in zip(np.atleast_1d(first.output) if not isinstance(first.output, tuple) else first.output,
                        np.atleast_1d(again.output) if not isinstance(again.output, tuple) else again.output):
            np.testing.assert_array_equal(a, b)
        assert again.binding == first.binding and again.consumed == first.consumed
        assert again.values.keys() == first.values.keys()
        for key in first.values:
            np.testing.assert_array_equal(np.asarray(again.values[key]), np.asarray(first.values[key]))

    check()


def _stack():
    stack = algorithms.get("dtransformer", position="learned")
    rng = np.random.default_rng(0)
    sizes = {"N_V": 5, "d_e": 4, "ell_max": 6, "d_mlp": 3, "L": 1, "H": 1, "d_attn": 2, "d_mid": 2}
    from tests.strategies.cases import evaluate
    kwargs = {p.name: rng.normal(size=tuple(int(evaluate(d, sizes)) for d in p.shape)) for p in stack.params}
    return stack, {**kwargs, "x": np.array([0, 1, 2])}


def test_the_tape_is_kept_and_replayed():
    """A second run on the same shapes replays (the tape is there), a run on other shapes records another."""
    stack, kwargs = _stack()
    tape.forget()
    stack.run(**kwargs)
    stack.run(**kwargs)
    signature = tape.key(kwargs)
    assert tape.recall(layout(stack).tapes, signature) is not None
    shorter = {**kwargs, "x": np.array([0, 1])}
    assert tape.key(shorter) != signature


def test_an_error_on_replay_is_the_checked_runs():
    """A token id outside the vocabulary, met on the same shapes as a taped run: the checked run's error."""
    stack, kwargs = _stack()
    tape.forget()
    stack.run(**kwargs)
    bad = {**kwargs, "x": np.array([0, 9, 1])}
    with pytest.raises(DomainError) as replayed:
        stack.run(**bad)
    tape.forget()
    with pytest.raises(DomainError) as checked:
        stack.run(**bad)
    assert str(replayed.value) == str(checked.value) and "9" in str(checked.value)


def test_the_key_tells_sizes_given_as_numpy_scalars_apart():
    """A size passed as a numpy integer is its value in the key: ``ell_max=np.int64(6)`` and ``np.int64(8)`` are
    two runs, not one replayed at the other's size; an argument the key cannot describe is never taped."""
    assert tape.key({"ell_max": np.int64(6)}) != tape.key({"ell_max": np.int64(8)})
    assert tape.key({"ell_max": 6}) != tape.key({"ell_max": 6.0})
    assert tape.key({"mask": lambda t_z, t_x: True}) is None
    assert tape.key({"x": [[1, 2], [3]]}) is None


def test_other_shapes_and_another_memory_limit_are_checked_in_full():
    """A parameter of another shape is a ShapeError naming it, even after a taped run; a lower memory limit is
    a ResourceError, not a replay of a run made under a higher one."""
    stack, kwargs = _stack()
    tape.forget()
    stack.run(**kwargs)
    with pytest.raises(ShapeError):
        stack.run(**{**kwargs, "W_u": np.zeros((5, 3))})
    with limits.memory_limit(64), pytest.raises(ResourceError):
        stack.run(**kwargs)


@slow
def test_a_run_that_binds_a_size_from_data_is_not_taped():
    """Algorithm 15 decodes until eos is drawn: the generated length is the data's, so no tape is kept, while
    Algorithm 14 (ℓ_gen tokens, always) keeps one."""
    from tests.strategies.stacks import edinference_cases

    @settings(max_examples=8)
    @given(st.one_of(edinference_cases(), STRATEGIES["dinference"]))
    def check(case):
        tape.forget()
        case.algorithm.run(**case.kwargs)
        generation = tape.key({})[-1]
        kept = [k for k in layout(case.algorithm).tapes if k[-1] == generation]
        assert bool(kept) == (case.algorithm.name == "dinference")
    check()


@slow
def test_a_random_algorithm_replays_from_the_same_seed():
    """A random algorithm (Algorithm 12's masking, sampled decoding) draws from its seed: a replay draws what a
    checked run draws."""
    cases = [name for name in ALGORITHMS if algorithms.get(name).random]
    assert cases
    for name in cases:
        @settings(max_examples=5)
        @given(STRATEGIES[name])
        def check(case):
            kwargs = {**case.kwargs, **({"seed": 3} if case.algorithm.random else {})}
            first = _checked(case.algorithm, dict(kwargs))
            again = case.algorithm.run(**dict(kwargs))
            np.testing.assert_array_equal(np.asarray(first.output), np.asarray(again.output))
        check()
