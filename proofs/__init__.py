"""Machine-checked theorems about the formal algorithm objects, each with a perturbed twin that must be
rejected (``formal-transformers prove``).

A theorem (:class:`~proofs.theorem.Theorem`) is stated in words and LaTeX, names the algorithm objects it is
about, and says how it is checked and what level of evidence that reaches (``symbolic``; ``symbolic, sizes ≤
k``; ``exhaustive``; ``property-tested``).  Its twin is the same statement made slightly false; ``prove``
fails unless every theorem is proved and every twin rejected.  Modules: :mod:`proofs.softmax`,
:mod:`proofs.attention`, :mod:`proofs.rotary`, :mod:`proofs.norms`, :mod:`proofs.costs`, :mod:`proofs.graphs`; the
runner :mod:`proofs.theorem`, and :mod:`proofs.registry`, which lists and runs them (the command:
``formal-transformers prove``).

>>> from proofs import prove
>>> [r.ok for r in prove(["kaplan-n"])]
[True]
"""

__all__ = ["prove", "theorems"]


def prove(names=()):
    """The results of the named theorems (all by default)."""
    from .registry import prove as run
    return run(names)


def theorems():
    """Every theorem object."""
    from .registry import theorems as every
    return every()
