"""The shipped mutant catalogue's entries (:mod:`reference.catalogue`), each by its name, for
``conform`` to load as ``catalogue.py:NAME`` (``tests.reference.conformance.targets.catalogue:NAME`` as a
module): ``attention_correct`` is the correct attention of the defaults (a control),
``attention_divides_by_d`` that function with its bug planted (a mutant)."""

from reference.catalogue.catalogue import CONTROLS, MUTANTS


def entry(name):
    """The control or mutant called ``name``; KeyError if the catalogue has none."""
    found = [e for e in CONTROLS + MUTANTS if e.name == name]
    if not found:
        raise KeyError(f"the catalogue has no entry {name!r}")
    return found[0]


def __getattr__(name):
    """The function of the catalogue's entry ``name`` (what conform calls); AttributeError for any other name,
    as for a file without that function."""
    try:
        return entry(name).function
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
