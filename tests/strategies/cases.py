"""What every strategy of :mod:`tests.strategies` draws: a :class:`Case`, its sizes (``SIZE``), its random
seed (``SEED``), arrays of normal entries, parameters from a table of shapes written by hand; and
:func:`evaluate`, a derived expression at a case's sizes.

Each :class:`Case` carries the keyword arguments of one execution and, as an independent oracle, the
sizes it was built from and the parameter shapes *as the paper states them* — written in the strategies by
hand, never read from the algorithm objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp
from hypothesis import strategies as st

import formal

SIZE = st.integers(1, 5)
SEED = st.integers(0, 2**32 - 1)


@dataclass
class Case:
    algorithm: formal.Algorithm
    kwargs: dict
    sizes: dict                                 # symbol name → int (the oracle's binding)
    params: tuple = field(default_factory=tuple)  # names of the parameter arguments

    def __repr__(self):
        return f"Case({self.algorithm!r}, sizes={self.sizes})"


def evaluate(expr, sizes):
    """A derived expression at the oracle's sizes (given by name)."""
    value = expr.xreplace({s: sp.Integer(sizes[s.name]) for s in expr.free_symbols})
    assert not value.free_symbols, f"{expr} has symbols the case does not size"
    return value


def normal(rng, *shape, scale=1.0):
    return rng.normal(scale=scale, size=shape)


def projections(rng, sizes, specs, bias):
    """Parameters from a hand-written table ``name: shape`` (biases dropped unless ``bias``)."""
    return {name: normal(rng, *shape) for name, shape in specs.items() if bias or not name.startswith("b_")}
