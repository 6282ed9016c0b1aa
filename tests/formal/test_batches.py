"""Every trip of a loop at once (:mod:`formal.engine.batches`) against the definition, one trip at a time: the
same values (to rounding), the same errors, for every algorithm with a loop whose trips are independent (the
heads of Algorithm 5, Swin's windows), and per op for every op that says how it computes a batch."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from formal import algorithms
from formal.engine import batches, tape
from formal.engine.algorithm import Loop
from formal.engine.calls import calls_in
from formal.engine.columns import one_by_one
from formal.engine.lines import returns_nonfinite
from formal.errors import DomainError, FormalError, ShapeError
from formal.guards.limits import memory_limit
from formal.ops import (
    Add,
    AddBias,
    DivSqrt,
    LoopIndex,
    MaskFill,
    MatMul,
    Mul,
    NotBatched,
    Pick,
    Softmax,
    StackRows,
    Sub,
)
from formal.ops.sequences import Concat
from tests.formal.test_columns import _outcome, _same
from tests.formal.test_derived_vs_executed import STRATEGIES
from tests.tiers import fast_few


def _loops(lines):
    for line in lines:
        if isinstance(line, Loop):
            yield line
            yield from _loops(line.body)


def _batches(algorithm) -> bool:
    """Whether ``algorithm`` or an algorithm it calls has a loop whose trips may run at once."""
    return (any(batches.batchable(loop) for loop in _loops(algorithm.lines))
            or any(_batches(node.op.callee) for node in calls_in(algorithm.lines)))


BATCHERS = sorted(name for name in STRATEGIES if name in algorithms.ALGORITHMS and _batches(algorithms.get(name)))


class _Counted:
    """Counts the loops :func:`formal.engine.batches.all_trips` ran at once (and those it gave back)."""

    def __init__(self, monkeypatch):
        self.ran = self.refused = 0
        original = batches.all_trips

        def counted(*args, **kwargs):
            made = original(*args, **kwargs)
            if made is None:
                self.refused += 1
            else:
                self.ran += 1
            return made

        monkeypatch.setattr(batches, "all_trips", counted)


def test_the_batched_loops_are_the_heads_and_the_windows():
    """The property below covers Algorithm 5's heads (and every stack that calls it), grouped-query attention
    and Swin's windows; a loop that carries a value from trip to trip (a layer stack, a
    recurrence, a decoder's tokens) is never batched."""
    assert {"mhattention", "window_mhattention", "swin", "dtransformer", "edtransformer"} <= set(BATCHERS)
    carried = [loop for name in ("dtransformer", "rnn_layer") for loop in _loops(algorithms.get(name).lines)]
    assert carried and not any(batches.batchable(loop) for loop in carried)


@pytest.mark.parametrize("name", fast_few(BATCHERS, keep={"mhattention", "window_mhattention"}))
def test_every_trip_at_once_equals_one_by_one(name):
    """Property: an algorithm's output with its independent loops run at once equals its output with every trip
    run one by one (the definition), and where one raises, the other raises the same error; a second run on
    the same shapes (the replayed program) equals it too."""

    @settings(max_examples=25)
    @given(STRATEGIES[name])
    def check(case):
        tape.forget()
        together = _outcome(case.algorithm, case.kwargs)
        replayed = _outcome(case.algorithm, case.kwargs)
        with one_by_one(), tape.untaped():
            alone = _outcome(case.algorithm, case.kwargs)
        _same(together, alone)
        _same(replayed, alone)

    check()


@pytest.mark.parametrize("name", ["mhattention", "window_mhattention"])
def test_the_batch_is_the_path_taken(name, monkeypatch):
    """Algorithm 5's heads and Swin's windows (each window's heads inside the batch) run as one batch wherever
    the output is finite: an op that stopped taking the batch would fall back silently, and the property
    above would not see it.  (Under ``empty="nan"`` every line's values are checked for where a NaN began,
    and a batch holding the mask's −∞ gives way to the trips one by one.)"""
    counted = _Counted(monkeypatch)
    seen = []

    @settings(max_examples=15)
    @given(STRATEGIES[name])
    def check(case):
        with one_by_one(), tape.untaped():
            alone = _outcome(case.algorithm, case.kwargs)
        if isinstance(alone, tuple) or not np.all(np.isfinite(alone)) or returns_nonfinite(case.algorithm):
            return   # an error, or a NaN (by design): the definition's, one trip at a time
        counted.ran = counted.refused = 0
        tape.forget()
        case.algorithm(**case.kwargs)
        assert counted.ran >= 1 and counted.refused == 0
        seen.append(case)

    check()
    assert seen


def _mha_arguments(rng, H=3, d=4, ell=5):
    kwargs = {"X": rng.normal(size=(d, ell)), "mask": "causal"}
    for name in ("q", "k", "v"):
        kwargs[f"W_{name}"] = rng.normal(size=(H, 2, d))
        kwargs[f"b_{name}"] = rng.normal(size=(H, 2))
    kwargs.update(W_o=rng.normal(size=(d, H * 2)), b_o=rng.normal(size=d))
    return kwargs


def _errors(algorithm, kwargs, expected):
    """The error a fresh run raises and the error the definition raises, each checked to be ``expected``."""
    tape.forget()
    with pytest.raises(expected) as batched:
        algorithm(**kwargs)
    with one_by_one(), tape.untaped(), pytest.raises(expected) as alone:
        algorithm(**kwargs)
    return batched.value, alone.value


def test_a_bad_parameter_inside_the_batch_is_the_definitions_error():
    """A head's parameter of the wrong shape fails inside the batch; the trips then run one by one, and the error
    is the definition's: the same type, line and message, with nothing the batch read or bound left behind."""
    kwargs = _mha_arguments(np.random.default_rng(0))
    kwargs["b_v"] = np.ones((3, 5))
    batched, alone = _errors(algorithms.get("mhattention", bias=True), kwargs, ShapeError)
    assert str(batched) == str(alone)


def test_a_batch_over_the_memory_limit_runs_one_trip_at_a_time(monkeypatch):
    """Under a memory limit that one head's arrays fit and all heads' do not, the heads run one by one, to the
    same values, and no error is raised."""
    mha = algorithms.get("mhattention", bias=True)
    kwargs = _mha_arguments(np.random.default_rng(1), H=8, d=16, ell=24)
    with one_by_one(), tape.untaped():
        expected = mha(**kwargs)
    counted = _Counted(monkeypatch)
    tape.forget()
    with memory_limit(24 * 24 * 8 * 4):   # four score matrices: one head's fits, eight heads' do not
        got = mha(**kwargs)
    assert counted.refused >= 1 and counted.ran == 0
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_a_random_algorithm_is_never_batched():
    """A draw per trip is not a draw per batch: a random algorithm's loops run trip by trip."""
    random = [a for a in algorithms.ALGORITHMS.values() if a.random]
    assert random and not any(batches.leadable(a) for a in random)


# ------------------------------------------------------------------------------------------------ per op
def _per_trip(op, values, lead, depth):
    """What ``op.numpy`` gives on each trip, on the batch axes of ``depth`` (a value not flagged is shared)."""
    batch = np.broadcast_shapes(*(np.shape(v)[:depth] for v, b in zip(values, lead) if b))
    out = np.empty(batch, dtype=object)
    for index in np.ndindex(*batch):
        trip = [v[tuple(i if n > 1 else 0 for i, n in zip(index, np.shape(v)[:depth]))] if b else v
                for v, b in zip(values, lead)]
        out[index] = op.numpy(None, *trip)
    return np.stack(list(out.ravel())).reshape(batch + np.shape(out.ravel()[0]))


class _Ctx:
    def __init__(self, lead, sizes=None):
        self.lead, self.loop, self.sizes = lead, {"h": 1}, sizes or {}

    def evaluate(self, expr):
        return self.sizes[str(expr)]


def _batch_shapes(draw, depth):
    """A batch of ``depth`` axes and, per operand, its own (some axes of length 1: a value that does not vary
    over that loop)."""
    full = tuple(draw(st.integers(1, 3)) for _ in range(depth))
    return full, lambda: tuple(n if draw(st.booleans()) else 1 for n in full)


@st.composite
def _cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    depth = draw(st.integers(1, 2))
    _, partial = _batch_shapes(draw, depth)
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    lead = draw(st.lists(st.booleans(), min_size=2, max_size=2).filter(any))

    def value(shape, flagged):
        return rng.normal(size=(partial() if flagged else ()) + shape)

    case = draw(st.sampled_from(["matmul", "matmul_t", "matvec", "add_bias", "add", "sub", "mul", "scalar",
                                 "div_sqrt", "mask", "softmax", "stack_rows", "pick", "concat"]))
    if case in ("matmul", "matmul_t"):
        op = MatMul(transpose_a=case == "matmul_t")
        values = [value((k, m) if case == "matmul_t" else (m, k), lead[0]), value((k, n), lead[1])]
    elif case == "matvec":
        op, values = MatMul(), [value((m, k), lead[0]), value((k,), lead[1])]
    elif case == "add_bias":
        op, values = AddBias(), [value((m, n), lead[0]), value((m,), lead[1])]
    elif case in ("add", "sub", "mul"):
        op = {"add": Add(), "sub": Sub(), "mul": Mul()}[case]
        values = [value((m, n), lead[0]), value((m, n), lead[1])]
    elif case == "scalar":
        op, values = Mul(), [value((), lead[0]), value((m, n), lead[1])]
    elif case == "mask":
        op, values = MaskFill(), [value((m, n), lead[0]), value((m, n), lead[1]) > 0]
    elif case == "concat":
        op, values = Concat(), [value((m, n), lead[0]), value((m, k), lead[1])]
    else:   # one operand
        lead = [True]
        op, values = {"div_sqrt": (DivSqrt("d"), [value((m, n), True)]),
                      "softmax": (Softmax(empty=draw(st.sampled_from(["zero", "nan", "uniform"]))),
                                  [_masked(value((m, n), True))]),
                      "stack_rows": (StackRows("H"), [value((2, m, n), True)]),
                      "pick": (Pick(LoopIndex("h")), [value((2, m), True)])}[case]
    return op, values, lead, depth


@settings(max_examples=200, deadline=None)
@given(_cases())
def test_each_op_computes_the_batch_as_each_trip(case):
    """Property: for every op that declares :meth:`~formal.ops.Op.leading`, its result on a batch (operands with
    one or two leading axes, some of them of length 1, some operands shared) is its numpy result on each trip,
    stacked on the same axes."""
    op, values, lead, depth = case
    ctx = _Ctx(depth, {"d": 3})
    got = op.leading(ctx, values, lead)
    expected = _per_trip(_Bound(op, _Ctx(0, {"d": 3})), values, lead, depth)
    np.testing.assert_allclose(got, np.broadcast_to(expected, np.shape(got)), rtol=1e-13, equal_nan=True)
    assert np.shape(got) == np.shape(expected)


def _masked(scores):
    """Scores with some masked (−∞): whole columns of them too, an empty neighbourhood."""
    return np.where(scores > 0.8, -np.inf, scores)


class _Bound:
    """``op.numpy`` with a context of its own (what one trip sees)."""

    def __init__(self, op, ctx):
        self.op, self.ctx = op, ctx

    def numpy(self, _, *values):
        return self.op.numpy(self.ctx, *values)


def test_an_op_that_does_not_say_how_cannot_take_a_batch():
    """The base class raises NotBatched, and a subclass that changes the numpy semantics of a batching op is not
    batching until it says so again."""
    from formal.engine.lines import declares
    from formal.ops import Sqrt

    with pytest.raises(NotBatched):
        Sqrt().leading(_Ctx(1), [np.ones((2, 3))], [True])

    class Doubled(Softmax):
        def numpy(self, ctx, s, axis=0):
            return 2 * super().numpy(ctx, s, axis)

    assert declares(Softmax(), "leading") and not declares(Doubled(), "leading")


def test_a_stacked_result_is_a_new_array():
    """What a batched loop stacks never shares memory with what it was made from (a stack of trips is new)."""
    from formal.engine.program import stacked

    source = np.arange(12.0).reshape(3, 4)
    view = source[:, :]
    for made in (stacked(view, 0, 3), stacked(source[:1], 0, 3)):
        assert not np.shares_memory(made, source)
        made[...] = -1
    assert source[0, 0] == 0


def test_an_overflow_in_a_batched_callee_is_reported_before_a_later_error():
    """The definition runs Algorithm 4 head by head and reports an overflow in head 1 at once, before line 4 of
    Algorithm 5 reads a W_o of the wrong shape; the batch gives way to it (a callee's output not finite)."""
    kwargs = _mha_arguments(np.random.default_rng(1))
    kwargs["X"] = kwargs["X"] * 1e200
    kwargs["W_o"] = np.ones((4, 7))
    batched, alone = _errors(algorithms.get("mhattention", bias=True), kwargs, FormalError)
    assert type(batched) is type(alone) is DomainError and str(batched) == str(alone)


def test_one_by_one_replays_no_program(monkeypatch):
    """Within one_by_one() a run on the shapes of an earlier one is checked in full, not replayed: a replay would
    run the programs of what the earlier run batched, and the definition would not be what runs."""
    from formal.engine.program import Program

    mha = algorithms.get("mhattention", bias=True)
    kwargs = _mha_arguments(np.random.default_rng(2))
    tape.forget()
    mha(**kwargs)
    ran = []
    original = Program.run
    monkeypatch.setattr(Program, "run", lambda self, *a: ran.append(1) or original(self, *a))
    mha(**kwargs)
    assert ran   # outside: the replay runs the heads' program
    ran.clear()
    with one_by_one():
        mha(**kwargs)
    assert not ran
