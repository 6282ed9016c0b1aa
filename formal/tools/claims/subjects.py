"""What a claim is about, derived from the objects: the value of its ``quantity`` for its subject.

- ``model``: a preset (``complexity --list``) with ``options``, ``sizes`` (numbers or formulas), ``seq_len``,
  ``batch``, ``dtype`` and ``convention`` as ``complexity`` takes them; the quantity is a dotted key of
  ``complexity --json`` (``params.total``, ``kv_cache.bytes_per_token``): :mod:`formal.tools.claims.models`.
- ``algorithm``: any algorithm of ``list`` with ``options``; the quantity ``params``, ``flops``, ``memory``
  or ``depth`` is its derived cost, a formula in its sizes, those ``sizes`` binds replaced.
- ``algorithm`` or ``op`` with ``inputs``: the spec executed on the given arrays.
- ``graph``: a pattern of the ``graph`` command with its parameters as ``args``:
  :mod:`formal.tools.claims.graph_subjects`.

A value is a :class:`~formal.tools.claims.values.Value`: a number (int, Fraction or float), a sympy formula, or an
array, with the sizes a claimed formula may name.
"""

from __future__ import annotations

from ...costs.conventions import check_convention
from ...errors import FormalError, shown
from .claim import ClaimError
from .graph_subjects import GROWTH_POINTS, graph_value
from .models import model_value
from .stack_subjects import STACK_QUANTITIES, stack_value
from .values import Value, check_expansion, check_growing, formula_value, numbers_at, only, size_value, spelled

__all__ = ["Value", "value_of", "costs", "GROWTH_POINTS"]


def costs() -> tuple:
    """The cost totals of an algorithm a claim may ask for: the fields of :class:`formal.costs.cost.Cost`."""
    import dataclasses

    from ...costs.cost import Cost
    return tuple(f.name for f in dataclasses.fields(Cost) if f.name != "convention")


def value_of(subject: dict, quantity: str | None, *, formula: bool = False, growing=(), base_dir: str = ".") -> Value:
    """The value of ``quantity`` for ``subject`` (a claim's subject fields); ``formula`` asks for a formula
    even where the sizes are numbers (the sizes in ``growing`` are then left free)."""
    try:
        subject = spelled(subject)
        if "model" in subject:
            return model_value(subject, quantity, formula or bool(growing), growing)
        if "graph" in subject:
            return graph_value(subject, quantity, growing, base_dir)
        if "inputs" in subject or "op" in subject:
            return _executed(subject, quantity)
        if quantity in STACK_QUANTITIES:
            return stack_value(subject, quantity, growing)
        return _algorithm(subject, quantity, growing)
    except ClaimError:
        raise
    except FormalError as exc:
        raise ClaimError(str(exc)) from None


# ------------------------------------------------------------------------------------------- algorithms
def _algorithm(subject, quantity, growing) -> Value:
    import sympy as sp

    from ...algorithms import get
    from ...core.symbols import by_name
    only(subject, ("algorithm", "options", "sizes", "convention"), "an algorithm's cost")
    algorithm = get(subject["algorithm"], **subject.get("options", {}))
    if quantity not in costs():
        raise ClaimError(f"quantity {shown(quantity)} is not a cost of an algorithm; known: {', '.join(costs())}")
    cost = algorithm.cost(check_convention(subject.get("convention", "matmul")))
    expr = getattr(cost, quantity)
    known = {str(s) for s in algorithm.symbols}
    sizes = subject.get("sizes", {})
    unknown = sorted(set(sizes) - known)
    if unknown:
        raise ClaimError(f"{algorithm.label} has no size {shown(unknown[0])}; its sizes: {', '.join(sorted(known))}")
    check_growing(growing, known, sizes, algorithm.label)
    bound, numbers, formulas, named = {}, {}, {}, {}
    for k, v in sizes.items():
        v = size_value(k, v)
        bound[by_name(k)] = sp.Integer(v) if isinstance(v, int) else v.sympy()
        named[k] = v if isinstance(v, int) else bound[by_name(k)]
        if isinstance(v, int):
            numbers[by_name(k)] = v
        else:
            formulas[k] = v
    for k, v in numbers_at(formulas, {str(s): n for s, n in numbers.items()}).items():
        bound[by_name(k)] = sp.Integer(v)               # d_attn = "d_x/H" at d_x = 8, H = 2 is 4
        numbers[by_name(k)] = named[k] = v
        del formulas[k]
    check_expansion(expr, formulas)
    for c in algorithm.size_constraints:
        symbols = set().union(*(sp.sympify(a).free_symbols for a in c.args))
        if symbols <= set(numbers) and not c.holds(numbers):
            raise ClaimError(f"{algorithm.label}: {c.explain(numbers)}")
    return formula_value(sp.sympify(expr).xreplace(bound), f"{algorithm.name} {quantity}", bound=named)


def _executed(subject, rows=None) -> Value:
    import numpy as np

    from .ops import subject_algorithm
    only(subject, ("algorithm", "op", "options", "sizes", "inputs"), "an executed algorithm or op")
    algorithm = subject_algorithm(subject)
    arguments = {}
    specs = {s.name: s for s in algorithm.signature}
    for name, raw in subject.get("inputs", {}).items():
        if name not in specs:
            raise ClaimError(f"{algorithm.label} has no input {shown(name)}; its inputs: {', '.join(specs)}")
        arguments[name] = _array(name, raw, specs[name].kind == "index")
    for name, raw in subject.get("sizes", {}).items():
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise ClaimError(f"size {name} = {shown(raw)}: an executed claim binds sizes to integers")
        arguments[name] = size_value(name, raw)
    out = np.asarray(algorithm(**arguments))
    what = f"{algorithm.name} output"
    if rows is not None:
        start, stop = (int(x) for x in rows.split(":"))
        if not start < stop <= len(out):
            raise ClaimError(f"quantity {rows!r}: the output has {len(out)} rows")
        out, what = out[start:stop], f"{what}, rows {rows}"
    return Value("array", out, {}, what)


def _array(name, raw, integer):
    import numpy as np
    try:
        array = np.array(raw, dtype=np.int64 if integer else np.float64)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ClaimError(f"input {name} = {shown(raw)} is not a rectangular array of numbers ({exc})") from None
    if array.size > 1_000_000:
        raise ClaimError(f"input {name} holds {array.size:,} numbers, more than 1,000,000")
    return array
