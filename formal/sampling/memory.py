"""What the examples' arrays take, estimated before any is drawn: a tie (``--size d_attn=d_x**8``) or an option
(``n_kv_heads=1000000``, which raises H to a multiple of it) can make a size grow past anything a machine holds,
and an example drawn there would run out of memory half-way, or ask numpy for an array it cannot describe.

An example's arrays are its arguments, shaped as the algorithm's specs derive them (symbolic shapes,
:attr:`formal.engine.algorithm.Algorithm.signature`) at its sizes — Python integers, exact at any size, never a
float.  A real argument is float64 (8 bytes an entry), a token id int64 (8), a mask boolean (1); one array at a
time is drawn in float64 before it is kept (a mask's uniforms; the large-score case's scaled copy).  A list of
examples (:func:`formal.sampling.examples.examples`) is held whole, so its estimate is their sum.  :func:`require`
refuses an estimate past :func:`formal.guards.limits.max_memory` (``--max-memory``) with one
:class:`~formal.errors.ResourceError` that names the algorithm, the options and ties given, the largest array and
the sizes it reads, and why they are that large.  What the spec's own execution allocates is estimated line by
line where it runs (:mod:`formal.engine.execution`).

Examples
--------
>>> from formal import algorithms
>>> attention = algorithms.get("attention")
>>> argument_bytes(attention, {"W_q": (2, 3), "mask": (4, 4)})
{'W_q': 48, 'mask': 16}
>>> example_bytes(attention, {"W_q": (2, 3), "mask": (4, 4)})      # and the mask drawn as 16 float64
192
>>> number(10**6), number(2**64)
('1,000,000', '≈1.84e+19')
"""

from __future__ import annotations

import math

from ..errors import ResourceError
from ..guards import limits
from ..guards.numbers import count_text as number

__all__ = ["ENTRY_BYTES", "DRAWN_BYTES", "ExamplesTooLarge", "argument_bytes", "example_bytes", "require", "number"]

#: Bytes an entry of an argument takes, by its spec's kind: float64 reals, int64 token ids, boolean masks.
ENTRY_BYTES = {"real": 8, "index": 8, "mask": 1}
#: Bytes an entry takes while it is drawn (float64, before a mask becomes booleans or a weight is scaled).
DRAWN_BYTES = 8


class ExamplesTooLarge(ResourceError):
    """Examples refused by their estimate (a :class:`~formal.errors.ResourceError`, which pickles with its
    figures: a refusal in a worker process, ``verify --jobs`` or a Dask worker, reaches the parent as itself)."""


def argument_bytes(algorithm, shapes: dict) -> dict:
    """Bytes of each array argument kept: ``shapes`` maps an argument's name to its shape (Python ints)."""
    kinds = {spec.name: spec.kind for spec in algorithm.signature}
    return {name: ENTRY_BYTES.get(kinds[name], 8) * math.prod(shape) for name, shape in shapes.items()}


def example_bytes(algorithm, shapes: dict) -> int:
    """An example's arrays (``shapes`` as :func:`argument_bytes` takes them): every one kept, and the largest
    once more in float64 while it is drawn."""
    drawn = max((DRAWN_BYTES * math.prod(shape) for shape in shapes.values()), default=0)
    return sum(argument_bytes(algorithm, shapes).values()) + drawn


def require(plans: list, subject, options: dict, ties) -> None:
    """Refuse the examples ``plans`` (:class:`.examples._Plan`: sizes and shapes, no array yet) of ``subject``
    (an algorithm object or a name; ``options`` those given, ``ties`` the sizes given: :class:`.ties.Ties` or what
    it parses) where their arrays together take more than the memory limit.  The line names the algorithm, the
    options and ties given, the largest array, the sizes it reads, and why they are that large: set by a tie, or
    raised to meet a constraint (``H raised from 3 to meet 1000000 divides H``)."""
    total = sum(plan.nbytes for plan in plans)
    if total <= limits.max_memory():
        return
    from .ties import Ties
    worst = max(plans, key=lambda plan: plan.nbytes)
    kept = argument_bytes(worst.algorithm, worst.array_shapes)
    name = max(kept, key=kept.get)
    spec, shape = worst.shapes[name]
    at = {k: worst.sizes[k] for k in sorted({str(f) for d in spec.shape if hasattr(d, "free_symbols")
                                             for f in d.free_symbols})}
    ties = Ties.parse(worst.algorithm, ties)
    sizes = ", ".join(f"{k} = {number(v)}" for k, v in at.items())
    examples = "the example" if len(plans) == 1 else f"the {len(plans):,} examples"
    what = (f"drawing {examples} of {_subject(worst.algorithm, subject, options, ties)} (the largest array: {name}, "
            f"{'×'.join(number(d) for d in shape)} at {sizes}{_why(worst, at, ties)})")
    try:
        limits.require(total, what)
    except ResourceError as exc:
        raise ExamplesTooLarge(str(exc), needed=exc.needed, limit=exc.limit) from None


def _subject(algorithm, subject, options: dict, ties) -> str:
    """``mhattention with n_kv_heads=1000000 and --size d_attn = d_x**8``: the options given (an algorithm
    object's, those not at their defaults) and the ties."""
    from ..engine.declarations import same_value
    specs = algorithm.option_specs
    given = {**(subject.options if hasattr(subject, "options") else {}), **options}
    shown = [f"{k}={v!r}" for k, v in given.items() if k in specs and not same_value(v, specs[k].default)]
    tied = [f"--size {ties.written(n)}" for n in ties.order]
    said = " and ".join(part for part in (", ".join(shown), ", ".join(tied)) if part)
    return f"{algorithm.name} with {said}" if said else algorithm.name


def _why(plan, at: dict, ties) -> str:
    """Why the sizes ``at`` of ``plan`` are what they are, where they are not as drawn: set by a tie, or raised
    to meet a constraint (the first that breaks with the size as drawn)."""
    reasons = []
    constraints = ties.constraints if ties else plan.algorithm.size_constraints
    for k, value in at.items():
        if k in ties.names:
            reasons.append(f"{k} set by --size {ties.written(k)}")
        elif plan.drawn.get(k, value) != value:
            trial = {**plan.sizes, k: plan.drawn[k]}
            broken = next((c for c in constraints if k in {str(s) for s in c.symbols}
                           and all(str(s) in trial for s in c.symbols)
                           and not c.holds({s: trial[str(s)] for s in c.symbols})), None)
            if broken is not None:
                reasons.append(f"{k} raised from {number(plan.drawn[k])} to meet {broken.text}")
    return "; " + "; ".join(reasons) if reasons else ""
