"""What a family module of the catalogue declares: each algorithm's :class:`Implementation` (its correct
numpy implementation and the measured seconds of its verify tasks) and :class:`Entry` objects, the mutants and
extra controls ``verify --mutants`` runs.

A mutant is a correct implementation with one seam replaced (:meth:`Implementation.seam`), or the correct
implementation of another variant checked under this one (:meth:`Implementation.variant`: an option
ignored).  Its ``source`` says where the bug comes from: ``README`` (bugs public implementations of the paper
have had), ``review`` (bugs an independent reviewer planted, and more of their kind), or ``variant option
<name>`` (the option got wrong while checked under it).  ``options`` name only what differs from the
algorithm's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Entry", "Implementation", "makers"]


@dataclass(frozen=True)
class Entry:
    """One entry of the catalogue: the function conform calls, the variant it is checked under, and what is
    wrong with it (nothing, for a control)."""

    name: str           # "attention_divides_by_d"
    algorithm: str      # registry name, as --algorithm takes it
    options: dict       # the variant conform checks against (what -o would pass); {} = the algorithm's defaults
    function: Callable  # what conform calls
    bug: str            # one sentence: what is wrong ("" for a control)
    source: str         # where the bug comes from: "README", "review", "variant option <name>"; "correct"


@dataclass(frozen=True)
class Implementation:
    """The correct numpy implementation of the spec's ``algorithm``: ``factory(**options)`` is the function
    ``conform`` calls for that variant (its keyword-only ``_``-arguments are the seams bugs are planted
    through).  ``seconds``: profile → ``(checks, variant)``, the CPU seconds of ``verify``'s
    task of its checks on examples drawn across its variants, and of one variant's task (``--variants``), in a
    worker with one torch thread on the 2-core development machine, as measured (``python
    benchmarks/bench_campaign.py --costs --profile P`` prints them in this form; those under 0.05 and 0.01 s at
    0.05 and 0.01): what orders a campaign's tasks and ``--dry-run`` estimates it from
    (:mod:`reference.verification.estimates`)."""

    algorithm: str
    factory: Callable
    seconds: dict = field(default_factory=dict)

    def correct(self, options: dict, *, name: str = "") -> Entry:
        """A control: the correct implementation of the variant ``options``."""
        name = name or "_".join([self.algorithm, "correct"] + [f"{k}_{v}" for k, v in sorted(options.items())])
        return Entry(name, self.algorithm, dict(options), self.factory(**options), "", "correct")

    def seam(self, name, options, bug, source, **seams) -> Entry:
        """A mutant: the correct implementation of ``options`` with ``seams`` replaced."""
        return Entry(name, self.algorithm, options, self.factory(**options, **seams), bug, source)

    def variant(self, name, options, implemented, bug) -> Entry:
        """A mutant: the correct implementation of the variant ``implemented``, checked under ``options`` (its
        source: the options it gets wrong)."""
        return Entry(name, self.algorithm, options, self.factory(**{**options, **implemented}), bug,
                     "variant option " + ", ".join(implemented))



def makers(*implementations):
    """A family module's two mutant makers, each naming its algorithm (one of ``implementations``):
    ``seam(name, algorithm, options, bug, source, **seams)`` (:meth:`Implementation.seam`) and
    ``variant(name, algorithm, options, implemented, bug)`` (:meth:`Implementation.variant`)."""
    by_name = {i.algorithm: i for i in implementations}

    def seam(name, algorithm, options, bug, source, **seams):
        return by_name[algorithm].seam(name, options, bug, source, **seams)

    def variant(name, algorithm, options, implemented, bug):
        return by_name[algorithm].variant(name, options, implemented, bug)
    return seam, variant
