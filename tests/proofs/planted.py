"""A small catalogue of planted bugs for the tests of ``prove --mutants``'s runner (not shipped): one the theorem
it is about catches, one it cannot see, one that cannot be planted, one about no theorem; and three whose process
fails: it dies while planting, dies while checking, or hangs while planting."""

import os
import time

from proofs.mutants.entry import SpecMutant, patch


def _twelve_becomes_thirteen():
    """Kaplan's count gains a d² per layer: the MLP's hidden width is 5d, not 4d."""
    from formal.models import complexity
    original = complexity.Model.params

    def params(self):
        import sympy as sp

        from formal.core.symbols import by_name
        counts = dict(original(self))
        extra = by_name("L") * by_name("d_mlp") * by_name("d_e") / 4
        counts["non_embedding"] = sp.expand(counts["non_embedding"] + extra)
        return counts
    patch(complexity.Model, "params", params)


def _nothing_that_matters():
    """A module constant no theorem reads."""
    from formal.costs import conventions
    patch(conventions, "__doc__", "changed")


def _cannot_plant():
    raise RuntimeError("the planted code does not exist")


def _dies():
    os._exit(3)


def _dies_checking():
    """Kaplan's count ends the interpreter when it is asked for."""
    from formal.models import complexity
    patch(complexity.Model, "params", lambda self: os._exit(3))


def _sees_a_fresh_process():
    """Nothing of the theorems is imported, and no algorithm variant built, before the bug is planted."""
    import sys
    if "proofs.registry" in sys.modules or "proofs.kaplan" in sys.modules:
        raise RuntimeError("the theorems were imported before the bug was planted")
    engine = sys.modules.get("formal.engine.algorithm")
    if engine is not None and engine._VARIANTS:
        raise RuntimeError(f"variants were built before the bug was planted: {list(engine._VARIANTS)}")


def _hangs():
    time.sleep(3600)


MUTANTS = (
    SpecMutant("kaplan-mlp-five", "the MLP counted 5d wide", ("kaplan-n",), "cost rule", _twelve_becomes_thirteen),
    SpecMutant("harmless", "changes a docstring", ("kaplan-n",), "cost rule", _nothing_that_matters),
    SpecMutant("unplantable", "its planting raises", ("kaplan-n",), "op", _cannot_plant),
    SpecMutant("about-nothing", "changes a docstring", (), "cost rule", _nothing_that_matters),
    SpecMutant("dies-planting", "its planting ends the process", ("kaplan-n",), "op", _dies),
    SpecMutant("dies-checking", "Kaplan's count ends the process", ("kaplan-n",), "cost rule", _dies_checking),
    SpecMutant("sees-a-fresh-process", "plants nothing: it checks that nothing was computed before it",
               ("kaplan-n",), "op", _sees_a_fresh_process),
    SpecMutant("hangs-planting", "its planting never returns", ("kaplan-n",), "op", _hangs),
)
