"""The shipped catalogue of planted bugs (:mod:`reference.catalogue`): ``conform`` passes every correct
implementation (a control) and fails every mutant, in this process, on its default examples from seed 0.
One test per entry, named by it, so a failure names the control conform rejects or the mutant that survives.

Known exceptions are strict xfails, each with its reason: once conform or its examples improve, the xfail
passes, which fails the suite until its line below is deleted.
"""

import pytest

from formal import algorithms
from formal.sampling.examples import EXAMPLE_ALGORITHMS
from reference.catalogue.catalogue import CONTROLS, FACTORIES, MUTANTS
from reference.conformance.conform import conform
from tests.tiers import fast_few, in_fast_tier

#: Correct implementations conform rejects (its defects), and why.
CONFORM_DEFECTS: dict = {}

#: Mutants conform's examples do not kill yet, and what configuration would.
SURVIVORS: dict = {}

_CACHE: dict = {}   # the spec's outputs, shared by the entries of one variant


def check(entry):
    """``conform`` on one catalogue entry: the default examples, seed 0, in this process."""
    return conform(entry.function, entry.algorithm, options=entry.options, name=entry.name, cache=_CACHE)


def _params(entries, known):
    """One parameter per entry, named by it; the fast tier keeps the default variants of its algorithms
    (in_fast_tier)."""
    return fast_few([pytest.param(e, id=e.name, marks=[pytest.mark.xfail(strict=True, reason=known[e.name])]
                                  if e.name in known else []) for e in entries],
                    keep=lambda e: in_fast_tier(e.algorithm) and not e.options)


@pytest.mark.parametrize("entry", _params(CONTROLS, CONFORM_DEFECTS))
def test_control_passes(entry):
    """A correct implementation of the variant passes every property."""
    report = check(entry)
    assert report.ok, f"conform rejects the correct {entry.name}: {report.failure}"


@pytest.mark.parametrize("entry", _params(MUTANTS, SURVIVORS))
def test_mutant_fails(entry):
    """A planted bug fails some property."""
    report = check(entry)
    assert not report.ok, f"{entry.name} survived conform: {entry.bug}"


def test_catalogue_is_complete():
    """Every algorithm conform checks has a correct implementation, and a control for its defaults and for
    every variant a mutant is checked under; names are unique; every mutant says what is wrong and why."""
    assert set(FACTORIES) == set(EXAMPLE_ALGORITHMS)
    variants = {(e.algorithm, tuple(sorted(e.options.items()))) for e in CONTROLS}
    assert {(a, ()) for a in EXAMPLE_ALGORITHMS} <= variants
    assert {(m.algorithm, tuple(sorted(m.options.items()))) for m in MUTANTS} <= variants
    names = [e.name for e in CONTROLS + MUTANTS]
    assert len(names) == len(set(names))
    assert all(m.bug and m.source for m in MUTANTS) and not any(c.bug for c in CONTROLS)
    assert set(CONFORM_DEFECTS) <= {c.name for c in CONTROLS} and set(SURVIVORS) <= {m.name for m in MUTANTS}


def test_every_option_has_a_mutant():
    """Each option examples draw (one whose declaration gives the examples more than one value) is got wrong by
    some mutant checked under it."""
    options = {name for a in EXAMPLE_ALGORITHMS for name, option in algorithms.get(a).option_specs.items()
               if len(option.examples) > 1}
    planted = {o.strip() for m in MUTANTS if m.source.startswith("variant option ")
               for o in m.source[len("variant option "):].split(",")}
    assert options - planted == set()
