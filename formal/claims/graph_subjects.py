"""Graph subjects: a pattern of the ``graph`` command with its parameters as ``args``
(:mod:`formal.graphs.schema`), reported by :func:`formal.graphs.report`; the quantity is a dotted key of
``graph --json`` (the last layer's, where a key holds a list)."""

from __future__ import annotations

from ..errors import FormalError, shown
from .claim import ClaimError
from .values import Value, only

__all__ = ["graph_value", "graph_spec", "dotted", "GROWTH_POINTS"]

#: Where a graph quantity's growth is measured: the growing argument at 2^10 … 2^50.
GROWTH_POINTS = tuple(2**k for k in (10, 20, 30, 40, 50))


def graph_value(subject, quantity, growing=(), base_dir=".") -> Value:
    """The value of ``quantity`` (a dotted key of ``graph --json``) for the graph ``subject``; with
    ``growing`` (one of its args), how to measure it as that argument grows."""
    import os
    only(subject, ("graph", "args"), "a graph")
    args = subject.get("args", {})
    if not isinstance(args, dict):
        raise ClaimError(f"args = {shown(args)} must be a table of the pattern's parameters")
    args = dict(args)
    if isinstance(args.get("file"), str):
        args["file"] = os.path.join(base_dir, args["file"])
    spec = graph_spec(subject["graph"], args)
    value = dotted(spec.report(), quantity, "graph --json")
    if growing:
        if len(growing) != 1 or growing[0] not in args:
            raise ClaimError(f"in = {list(growing)}: a graph's growth is measured in one of its args "
                             f"({', '.join(sorted(args))})")
        if not spec.structured:
            raise ClaimError(f"the growth of a {subject['graph']} pattern is not measured: it has no structure to "
                             "answer large sizes from (only the built-in patterns but random)")
        fixed = {k: v for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool) and k != growing[0]}
        return Value("number", value, fixed, f"{subject['graph']} {quantity}",
                     measure=(growing[0], lambda x: dotted(graph_spec(subject["graph"], {**args, growing[0]: x})
                                                           .report(), quantity, "graph --json")))
    return Value("number", value, dict(args), f"{subject['graph']} {quantity}")


def graph_spec(pattern, args):
    """The pattern ``pattern`` with the claim's ``args``, checked against its schema; a wrong parameter is
    invalid ("graph args: …")."""
    from ..graphs.specs import spec
    try:
        return spec(pattern, **args)
    except FormalError as exc:
        raise ClaimError(f"graph args: {exc}") from None


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
