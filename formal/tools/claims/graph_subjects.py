"""Graph subjects: a pattern of the ``graph`` command with its parameters as ``args``
(:mod:`formal.graphs.schema`), reported by :func:`formal.graphs.report`; the quantity is a dotted key of
``graph --json`` (the last layer's, where a key holds a list).

Growth (``theta``/``big_o`` with ``in = ["ARG"]``) is measured at ``ARG = 2^10 … 2^50``
(:func:`formal.tools.claims.growth.measured`), each point answered without edges:

- a built-in pattern but random from its structure (:mod:`formal.graphs.structure`), at any size;
- BigBird's random keys from their exact edge count (:meth:`formal.graphs.specs.GraphSpec.edge_count`): the
  count is the same for every seed, so ``edges``, ``density`` and ``in_degree.mean`` are measured, and
  nothing that depends on the keys drawn;
- in ``layers``, the receptive field after ``L`` layers from the structure's closed forms, never a row per
  layer.  A field stops growing once the sequence's ends cut it, so a growth claim in ``layers`` speaks of
  the field before they do: where the field's reach per layer does not depend on ``n`` (windows, dilated
  windows, Longformer's causal window with global positions) ``n`` is taken unbounded (:data:`UNBOUNDED`
  positions, past every field's reach); where it does (the full and causal patterns, hubs that reach
  everything in two layers, blocks), the field settles after a few layers whatever ``n`` is, and it is
  measured at the claim's ``n``.  The verdict says which.

An integer arg may be a formula in the growing argument (``stride = "sqrt(n)"``, parsed by
:func:`formal.core.formula.parse`, never evaluated as code), taken at each measured point as its floor:
the largest integer not above it, its exact value wherever it is an integer.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, NamedTuple

from ...core.formula import parse
from ...errors import FormalError, shown
from .claim import ClaimError
from .values import Value, only

__all__ = ["graph_value", "graph_spec", "dotted", "Growth", "GROWTH_POINTS", "UNBOUNDED", "DRAW_FREE", "FIELD_KEYS"]

#: Where a graph quantity's growth is measured: the growing argument at 2^10 … 2^50.
GROWTH_POINTS = tuple(2**k for k in (10, 20, 30, 40, 50))
#: The sequence length a growth claim in ``layers`` takes for "unbounded": past the reach of every field
#: after 2^50 layers of windows up to 2^50 keys.
UNBOUNDED = 2**128
#: The args that name the sequence length of a pattern (``ell`` is ``n``'s alias).
LENGTH_ARGS = ("n", "ell")
#: What a random pattern's growth may ask: the quantities its exact edge count gives, the same at every seed.
DRAW_FREE = ("edges", "density", "in_degree.mean")
#: The per-layer receptive-field keys, by ``layers.receptive_field.KEY``: which entry of a structure's
#: ``spread(L)`` (min, mean, max) gives it, and whether with the residual path; ``max_span`` is its ``span(L)``.
FIELD_KEYS = {"min": (0, True), "mean": (1, True), "max": (2, True), "min_without_residual": (0, False),
              "max_span": None}


class Growth(NamedTuple):
    """How a graph quantity grows: ``arg`` the growing argument, ``at(x)`` the quantity there (an int,
    Fraction or float), ``note`` what the verdict says about how it was measured ("" for nothing)."""

    arg: str
    at: Callable
    note: str = ""


def graph_value(subject, quantity, growing=(), base_dir=".") -> Value:
    """The value of ``quantity`` (a dotted key of ``graph --json``) for the graph ``subject``; with
    ``growing`` (one of its args), also how it grows (:class:`Growth`, as ``Value.measure``)."""
    only(subject, ("graph", "args"), "a graph")
    pattern, args = subject["graph"], _args(subject, base_dir)
    formulas = _formulas(pattern, args, growing)
    what = f"{pattern} {quantity}"
    if not growing:
        return Value("number", dotted(graph_spec(pattern, args).report(), quantity, "graph --json"), dict(args), what)
    arg = growing[0]
    args = {**_defaults(pattern, arg), **args}
    if arg == "layers" and not any(k in args for k in LENGTH_ARGS):
        args["n"] = UNBOUNDED       # a field's growth in layers with no sequence named: none cuts it
    if len(growing) != 1 or arg not in args:
        raise ClaimError(f"in = {list(growing)}: a graph's growth is measured in one of its args "
                         f"({', '.join(sorted(args))})")
    if not isinstance(args[arg], int) or isinstance(args[arg], bool):
        raise ClaimError(f"args {arg} = {shown(args[arg])}: the growing argument is a number (its value in the "
                         "claim); the others may be formulas in it")

    def point(x):
        """The args at ``arg = x``: each formula at its floor there."""
        return {**args, arg: x, **{k: _floor(f, arg, x, k) for k, f in formulas.items()}}

    growth = _growth(pattern, quantity, arg, point, graph_spec(pattern, point(args[arg])))
    fixed = {k: v for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool) and k != arg}
    return Value("number", growth.at(args[arg]), fixed, what, measure=growth)


def _args(subject, base_dir) -> dict:
    import os
    args = subject.get("args", {})
    if not isinstance(args, dict):
        raise ClaimError(f"args = {shown(args)} must be a table of the pattern's parameters")
    args = dict(args)
    if isinstance(args.get("file"), str):
        args["file"] = os.path.join(base_dir, args["file"])
    return args


def _defaults(pattern, arg) -> dict:
    """``{arg: its default}`` where the pattern gives the growing ``arg`` a number by default (``layers``)."""
    from ...graphs.schema import schema_of
    default = next((p.default for p in schema_of(pattern).parameters if p.name == arg), None)
    return {arg: default} if isinstance(default, int) and not isinstance(default, bool) else {}


def _formulas(pattern, args, growing) -> dict:
    """The args given as formulas (a string where the pattern takes an integer), parsed: each may name the
    growing argument only.  Only a growth claim has them: elsewhere the schema refuses a string."""
    from ...graphs.kinds import Integer
    from ...graphs.schema import schema_of
    try:
        schema = schema_of(pattern)
    except FormalError as exc:
        raise ClaimError(f"graph args: {exc}") from None
    formulas = {}
    for key, raw in args.items():
        parameter = next((p for p in schema.parameters if key == p.name or key in p.aliases), None)
        if growing and isinstance(raw, str) and parameter is not None and isinstance(parameter.kind, Integer):
            formulas[key] = parse(raw, names={growing[0]}, what=f"args {key}")
    return formulas


def _floor(formula, arg, x, key) -> int:
    """``formula`` at ``arg = x``, rounded down to an integer, exactly."""
    exact = formula.value({arg: x})
    if exact is None:
        import sympy as sp
        value = sp.floor(formula.sympy({arg: sp.Integer(x)}))
        if not value.is_Integer:
            raise ClaimError(f"args {key} = {shown(formula.text)} is not a real number at {arg} = {x}")
        return int(value)
    return int(exact // 1) if isinstance(exact, Fraction) else int(exact)


def graph_spec(pattern, args):
    """The pattern ``pattern`` with the claim's ``args``, checked against its schema; a wrong parameter is
    invalid ("graph args: …")."""
    from ...graphs.specs import spec
    try:
        return spec(pattern, **args)
    except FormalError as exc:
        raise ClaimError(f"graph args: {exc}") from None


# ------------------------------------------------------------------------------------------ growth
def _growth(pattern, quantity, arg, point, given) -> Growth:
    """How ``quantity`` grows in ``arg``: ``point(x)`` gives the args at ``x``, ``given`` is the claim's spec."""
    if given.schema.builder == "random":
        return _drawn(pattern, quantity, arg, point)
    if not given.structured:
        raise ClaimError(f"the growth of a {pattern} pattern is not measured: it has no structure to answer large "
                         "sizes from (an edge list is read as it is)")
    if arg == "layers":
        return _in_layers(pattern, quantity, point, given)

    def at(x):
        return dotted(graph_spec(pattern, point(x)).report(), quantity, "graph --json")
    return Growth(arg, at)


def _drawn(pattern, quantity, arg, point) -> Growth:
    """BigBird's random keys: what the exact edge count gives, the same at every seed."""
    if quantity not in DRAW_FREE:
        raise ClaimError(f"the growth of {quantity} of a random pattern is not measured: it depends on the keys "
                         f"drawn (measured: {', '.join(DRAW_FREE)}, which its exact edge count gives at every seed)")

    def at(x):
        s = graph_spec(pattern, point(x))
        try:
            edges = s.edge_count()
        except FormalError as exc:
            raise ClaimError(f"graph args at {arg} = {x}: {exc}") from None
        n = s.values["n"]
        return {"edges": edges, "density": Fraction(edges, n * n), "in_degree.mean": Fraction(edges, n)}[quantity]
    return Growth(arg, at, "the count of every draw, so the expected count: no drawn key repeats a fixed edge")


def _in_layers(pattern, quantity, point, given) -> Growth:
    """The receptive field after ``L`` layers from the structure's closed forms; any other key does not
    depend on ``layers`` and is the report's at the claim's args."""
    parts = quantity.split(".")
    if parts[:2] != ["layers", "receptive_field"] or len(parts) != 3 or parts[2] not in FIELD_KEYS:
        if parts[:2] == ["layers", "receptive_field"]:
            raise ClaimError(f"quantity {shown(quantity)}: the receptive field's keys are "
                             f"{', '.join(FIELD_KEYS)}")
        constant = dotted(given.report(), quantity, "graph --json")
        return Growth("layers", lambda x: constant, "it does not depend on the layers")
    structure, note, settled = _field_structure(pattern, point, given)

    def at(x):          # past the layer where a field cut by the sequence's ends settles: growth as L → ∞
        layers = settled + x
        if FIELD_KEYS[parts[2]] is None:
            return structure.span(layers)
        index, residual = FIELD_KEYS[parts[2]]
        return structure.spread(layers, residual=residual)[index]
    return Growth("layers", at, note)


def _field_structure(pattern, point, given):
    """The structure the field is measured on, what the verdict says, and the layers after which the field
    has settled (0 where nothing cuts it): unbounded ``n`` where the claim leaves ``n`` out and the field's reach
    per layer does not depend on it, else the claim's ``n``, whose ends stop the field after a number of layers
    (growth in layers is measured past them: a field that stops growing is Θ(1) in layers)."""
    from ...graphs.analysis import max_path_length
    here = given.build()
    try:
        settles = max_path_length(here)
    except FormalError as exc:
        raise ClaimError(f"{pattern}: {exc}") from None
    n = given.values["n"]
    if given.schema.builder == "swin" or n is None:
        return here, f"at the claim's grid: every field settles after {settles} layer(s)", settles
    if n != UNBOUNDED:          # the claim binds n: its growth in layers is at that n, cut by its ends
        return here, (f"at the claim's n = {n:,} (a size the claim binds is part of it; leave n out for a "
                      f"sequence no field reaches the ends of): the field stops growing after {settles:,} layer(s), "
                      "and is measured past them"), settles
    further = graph_spec(pattern, {**point(given.values["layers"]), "n": 2 * UNBOUNDED}).build()
    if here.spread(GROWTH_POINTS[-1])[2] != further.spread(GROWTH_POINTS[-1])[2]:
        raise ClaimError(f"the receptive field of {pattern} reaches a share of n, so its growth in layers depends "
                         "on n: give n in args")
    return here, "with n left out, so unbounded (2^128 positions): the sequence's ends cut no field", 0


def dotted(data, key, what):
    """The number at the dotted ``key`` of ``data`` (the last entry where a key holds a list)."""
    node = data
    for part in (key or "").split("."):
        if isinstance(node, list):
            node = node[-1] if node else None
        if not isinstance(node, dict) or part not in node:
            known = ", ".join(sorted(node)) if isinstance(node, dict) else "nothing further"
            raise ClaimError(f"quantity {shown(key)} is not a key of {what}: at {part!r}, known: {known}")
        node = node[part]
    if isinstance(node, list):
        node = node[-1] if node else None
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        raise ClaimError(f"quantity {shown(key)} of {what} is not a number (it is {shown(node)})")
    return node
