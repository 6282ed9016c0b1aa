"""The shipped catalogue ``verify --mutants`` runs, assembled from the family modules of this package:
correct implementations (*controls*: conform must pass each) and planted bugs (*mutants*: conform must fail
each).

Each family module declares, beside its correct numpy implementations, ``IMPLEMENTATIONS`` (an
:class:`~.entry.Implementation` per algorithm: its factory and the measured seconds of its verify tasks) and
``MUTANTS``, and may declare ``CONTROLS`` (correct implementations beyond the factories') and ``EQUIVALENT``
(bugs left out because no input can detect them, and why).  This module finds them (:func:`families`), so that
adding an algorithm touches its family module only.  Every mutant is detectable by some input; the equivalent
ones were left out.

The controls are derived: the correct implementation of every algorithm's defaults and of every variant a
mutant is checked under (so that a mutant's failure is its bug's, not conform's), then the declared ones.
Algorithms come in the order of :data:`formal.sampling.examples.EXAMPLE_ALGORITHMS`; each one's entries in
the order declared.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

__all__ = ["families", "implementations", "mutants", "controls", "equivalent",  # noqa: F822 - the views are
           "IMPLEMENTATIONS", "FACTORIES", "MUTANTS", "CONTROLS", "EQUIVALENT"]          # this module's __getattr__'s


@functools.cache
def families() -> tuple:
    """The family modules of :mod:`reference.catalogue`: those that declare ``IMPLEMENTATIONS``."""
    package = importlib.import_module(__package__)
    modules = (importlib.import_module(f"{__package__}.{info.name}")
               for info in pkgutil.iter_modules(package.__path__))
    return tuple(m for m in modules if "IMPLEMENTATIONS" in vars(m))   # this module's are views, not declared


def _position(name) -> tuple:
    from formal.sampling.examples import EXAMPLE_ALGORITHMS
    return (EXAMPLE_ALGORITHMS.index(name), name) if name in EXAMPLE_ALGORITHMS else (len(EXAMPLE_ALGORITHMS), name)


@functools.cache
def implementations() -> dict:
    """Algorithm name → its :class:`~.entry.Implementation`, every one declared once."""
    found = {}
    for module in families():
        for implementation in module.IMPLEMENTATIONS:
            if found.setdefault(implementation.algorithm, implementation) is not implementation:
                raise RuntimeError(f"{module.__name__} declares {implementation.algorithm}, declared before")
    return {name: found[name] for name in sorted(found, key=_position)}


def _entries(kind: str) -> tuple:
    """The ``MUTANTS`` or ``CONTROLS`` the families declare, by algorithm, each one's in the order declared."""
    entries = [e for module in families() for e in getattr(module, kind, ())]
    unknown = sorted({e.algorithm for e in entries} - set(implementations()))
    if unknown:
        raise RuntimeError(f"{kind} of {unknown[0]}, which no family implements")
    order = list(implementations())
    return tuple(sorted(entries, key=lambda e: order.index(e.algorithm)))


@functools.cache
def mutants() -> tuple:
    """Every planted bug, by algorithm."""
    return _entries("MUTANTS")


@functools.cache
def controls() -> tuple:
    """The correct implementation of every algorithm's defaults and of every variant a mutant is checked under,
    then the correct implementations the families add."""
    order = list(implementations())
    variants = dict.fromkeys([(a, ()) for a in order] + sorted(
        {(m.algorithm, tuple(sorted(m.options.items()))) for m in mutants()},
        key=lambda v: (order.index(v[0]), len(v[1]), str(v[1]))))
    derived = tuple(implementations()[a].correct(dict(o)) for a, o in variants)
    return derived + _entries("CONTROLS")


@functools.cache
def equivalent() -> dict:
    """Bugs left out because no input can detect them (equivalent mutants), and why, from every family."""
    return {k: v for module in families() for k, v in getattr(module, "EQUIVALENT", {}).items()}


_VIEWS = {"IMPLEMENTATIONS": implementations, "MUTANTS": mutants, "CONTROLS": controls, "EQUIVALENT": equivalent,
          "FACTORIES": lambda: {name: i.factory for name, i in implementations().items()}}


def __getattr__(name):
    """``FACTORIES`` (algorithm name → the factory of its correct implementation), ``MUTANTS``, ``CONTROLS``,
    ``EQUIVALENT`` and ``IMPLEMENTATIONS``, assembled when first asked for."""
    if name in _VIEWS:
        return _VIEWS[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
