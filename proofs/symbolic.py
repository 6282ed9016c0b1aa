"""Shared steps of the theorems about the ops' symbolic meaning: a decision as an outcome, and the check that
the meaning a theorem reasons about is the one the package executes."""

from __future__ import annotations

from .theorem import Outcome

__all__ = ["decided", "twin", "tied", "one_op", "TIE_SEEDS"]

#: Seeds of the entries on which each symbolic result is compared with the numpy execution, at each size.
TIE_SEEDS = 2


def decided(lhs, rhs, what: str, *, ranges=None) -> Outcome | None:
    """None when ``lhs = rhs`` for every size (exactly); otherwise a failed outcome with the counterexample, or
    saying the identity is undecided."""
    from formal.core.sums import decide
    decision = decide(lhs, rhs, ranges=ranges)
    if decision.holds:
        return None
    return Outcome(False, f"{what}: {decision.detail}")


def twin(lhs, rhs, what: str, *, ranges=None) -> Outcome:
    """A twin ``lhs = rhs``: rejected (holds False) only with a counterexample; undecided is not a rejection."""
    from formal.core.sums import decide
    decision = decide(lhs, rhs, ranges=ranges)
    if decision.holds is False:
        return Outcome(False, f"{what}: {decision.detail}")
    return Outcome(True, f"{what}: {decision.detail}")


def tied(algorithm, symbolic: dict, meaning, output: str, sizes: list) -> str | None:
    """The first disagreement between ``algorithm``'s execution and its symbolic ``meaning`` of ``output``
    (instantiated exactly, compared in float64 to 1e-12) at each assignment of ``sizes`` and
    :data:`TIE_SEEDS` seeds of entries; None when they agree everywhere."""
    import numpy as np

    from formal.engine.meaning import execution_mismatch
    for n, at in enumerate(sizes):
        for seed in range(TIE_SEEDS):
            found = execution_mismatch(algorithm, symbolic, meaning, output, at, np.random.default_rng([seed, n]))
            if found:
                return f"{found} (seed {seed})"
    return None


def one_op(op, shape, name: str = "s"):
    """The one-line algorithm ``y ← op(name)`` over an input of ``shape``, to execute an op on its own."""
    from formal.core.shapes import TensorSpec
    from formal.engine.algorithm import Algorithm, Assign
    from formal.ops import Apply, Ref
    return Algorithm(number=0, name=op.name, display=op.name, summary=f"the spec's {op.name} on its own",
                     inputs=[TensorSpec(name, shape, doc="the op's argument")], params=[],
                     output=TensorSpec("y", shape, doc=f"{op.name}({name})"),
                     lines=[Assign("y", Apply(op, (Ref(name),)), returns=True)])
