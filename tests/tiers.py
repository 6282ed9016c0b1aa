"""The two test tiers: ``python -m pytest -m "not slow"`` for the edit loop, ``python -m pytest`` (everything) in CI.

A test is marked ``slow`` (declared in ``pyproject.toml``) where it is long; a test over many algorithms, cases
or bugs keeps a few of them in the fast tier (:func:`fast_few`), so that the fast tier still runs every area,
with the same checks, and the full suite runs them all.  Hypothesis profiles and example counts are the same in
both tiers: a tier chooses tests, never weakens one.
"""

from __future__ import annotations

import pytest

__all__ = ["slow", "fast_few", "in_fast_tier", "FAST_ALGORITHMS"]

slow = pytest.mark.slow
_PARAM = type(pytest.param(None))      # what pytest.param returns (pytest names the class only privately)


def fast_few(values, *, keep=1, unpack: bool = False) -> list:
    """``values`` as the parameters of ``pytest.mark.parametrize``, those not kept marked ``slow``.

    ``keep``: how many of the first values stay in the fast tier (an int), or which ones (a collection of
    values, or a function of a value that is true for those kept); ``unpack``: each value is a tuple of the
    arguments of several names (``parametrize("a,b", ...)``).  A value that is already a ``pytest.param`` keeps
    its id and marks.
    """
    values = list(values)
    if isinstance(keep, int):
        kept = set(range(keep))
    else:
        chosen = keep if callable(keep) else (lambda value, _keep=tuple(keep): value in _keep)
        kept = {i for i, value in enumerate(values) if chosen(_value(value))}
    if not kept:
        raise ValueError(f"fast_few keeps none of {len(values)} values with keep={keep!r}: the fast tier "
                         "would not run this test at all")
    return [_param(value, () if i in kept else (slow,), unpack) for i, value in enumerate(values)]


def _value(value):
    """The value a parameter stands for (a ``pytest.param``'s own, where it is one)."""
    if isinstance(value, _PARAM):
        return value.values[0] if len(value.values) == 1 else value.values
    return value


def _param(value, marks: tuple, unpack: bool):
    if isinstance(value, _PARAM):
        return pytest.param(*value.values, marks=(*value.marks, *marks), id=value.id)
    return pytest.param(*(value if unpack else (value,)), marks=marks)


#: The algorithms a test over every algorithm runs in the fast tier: attention (Algorithm 4), multi-head attention
#: (Algorithm 5) and layer normalisation (Algorithm 6).  Each family's own tests (recurrent, convolution, graph
#: attention, Swin, the model stacks) stay in the fast tier; the full suite runs every algorithm.
FAST_ALGORITHMS = ("attention", "mhattention", "layer_norm")


def in_fast_tier(name: str) -> bool:
    """Whether a test over every algorithm runs ``name`` in the fast tier (:data:`FAST_ALGORITHMS`)."""
    return name in FAST_ALGORITHMS
