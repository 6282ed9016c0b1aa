"""What an algorithm's entry shows beside its pseudocode: how to use it (a Python call and the commands to copy)
and what it is related to — the algorithms it calls and those that call it, the presets built on it, the
theorems and claims about it, the torch reference that runs it and its source.  Everything is found from the
objects (the registry, the presets, the claims catalogue), the theorems of :mod:`proofs` and the torch reference
(:mod:`reference.model.runners`; without torch, no link)."""

from __future__ import annotations

import functools

from docutils import nodes
from sphinx import addnodes

from . import nodes as build

__all__ = ["usage", "related", "callers", "presets_using", "claims_about", "theorems_about", "reference_of", "family"]


def usage(name: str, algorithm, options: dict) -> list:
    """A Python call and the commands of the command line for ``algorithm`` (registry ``name``, built with
    ``options``), as code blocks to copy."""
    variant = ", ".join(f"{k}={v!r}" for k, v in options.items())
    call = f'algorithms.get("{name}"' + (f", {variant})" if variant else ")")
    example = _option_example(algorithm) if not options else None
    inputs = ", ".join(f"{i.name}={i.name}" for i in algorithm.inputs)
    python = ["from formal import algorithms", "", f"alg = {call}"
              + (f"  # a variant: {example}" if example else ""),
              'cost = alg.cost("matmul")  # sympy expressions in the sizes',
              f"out = alg({inputs}, **params)  # numpy arrays, one column per token"]
    flags = "".join(f" -o {k}={_cli(v)}" for k, v in options.items())
    console = [f"$ formal-transformers show {name}{flags} --params   # the parameters' names and shapes",
               f"$ formal-transformers conform path/to/yours.py:FUNCTION --algorithm {name}{flags}"]
    return [nodes.rubric(text="Use it"), _code("\n".join(python), "python"), _code("\n".join(console), "console")]


def related(name: str, algorithm, calls) -> list:
    """The fields linking the entry to the objects related to it (none that are empty)."""
    fields = []
    if calls:
        fields.append(("Calls", build.joined([build.xref("alg", c) for c in calls])))
    by = callers(name)
    if by:
        fields.append(("Called by", build.joined([build.xref("alg", c) for c in by])))
    direct, through = presets_using(name)
    if direct or through:
        text = build.joined([build.xref("model", p) for p in direct])
        if through:
            text += ([nodes.Text("; through the algorithms it is called by: ")] if direct else []) + \
                build.joined([build.xref("model", p) for p in through])
        fields.append(("Presets", text))
    theorems = theorems_about(name)
    if theorems:
        fields.append(("Theorems", build.joined([build.xref("theorem", t) for t in theorems])))
    claims = claims_about(name)
    if claims:
        fields.append(("Claims", build.joined([build.xref("claim", c) for c in claims])))
    reference = reference_of(name)
    if reference:
        fields.append(("Torch reference", [_py("func", reference), nodes.Text(", checked against this entry by "),
                                           nodes.literal(text=f"formal-transformers verify --only {name}")]))
    fields.append(("Source", [_py("mod", family(name))]))
    return [nodes.rubric(text="Related"), build.field_list(fields)]


@functools.cache
def _callees() -> dict:
    from ... import algorithms
    from ...engine.render import callees
    return {n: callees(a) for n, a in algorithms.ALGORITHMS.items()}


def callers(name: str) -> tuple:
    """The algorithms whose lines call ``name``, in registry order."""
    return tuple(n for n, called in _callees().items() if name in called)


def _reach(name: str) -> set:
    """``name`` and every algorithm its lines call, directly or not."""
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo += _callees().get(n, ())
    return seen


def presets_using(name: str) -> tuple:
    """The presets built on ``name`` itself, and those built on an algorithm that calls it (directly or not)."""
    from ...models.presets import PRESETS
    direct = tuple(p.name for p in PRESETS.values() if p.algorithm == name)
    through = tuple(p.name for p in PRESETS.values() if p.algorithm != name and name in _reach(p.algorithm))
    return direct, through


@functools.cache
def _claims() -> tuple:
    """(claim id, the algorithm it is about) of every catalogue claim, a model claim through its preset."""
    from ...models.presets import PRESETS
    from ..claims.catalogue import files
    from ..claims.claim import load
    out = []
    for path in files():
        for claim in load(path):
            subject = claim.subject
            about = subject.get("algorithm")
            model = subject.get("model")
            if about is None and isinstance(model, str) and model in PRESETS:
                about = PRESETS[model].algorithm
            if isinstance(about, str):
                out.append((claim.id, about))
    return tuple(out)


def claims_about(name: str) -> tuple:
    """The catalogue's claims about ``name`` (or a preset built on it)."""
    return tuple(c for c, about in _claims() if about == name)


def theorems_about(name: str) -> tuple:
    """The declared theorems whose ``about`` names ``name``; none where no package declares theorems."""
    from .theorems import declared
    try:
        return tuple(t.name for t in declared() if name in t.about)
    except LookupError:
        return ()


@functools.cache
def _references() -> dict:
    """Algorithm name → the dotted name of the torch function that runs it (:func:`reference.model.runners.documented`);
    none where the reference cannot be imported (no torch): no link, not an error."""
    try:
        from reference.model.runners import documented
        return documented()
    except ImportError:
        return {}


def reference_of(name: str) -> str | None:
    """The dotted name of the function that runs ``name`` in a declared reference implementation."""
    return _references().get(name)


def family(name: str) -> str:
    """The module that defines the algorithm called ``name`` (its family module)."""
    from ... import algorithms
    return algorithms.family(name)


def _py(kind: str, target: str) -> addnodes.pending_xref:
    """A link to a Python object's API entry (plain text where the project does not document it)."""
    ref = addnodes.pending_xref("", refdomain="py", reftype=kind, reftarget=target, refexplicit=False,
                                refwarn=False)
    ref += nodes.literal(target, target, classes=["xref", "py"])
    return ref


def _code(text: str, language: str) -> nodes.literal_block:
    block = nodes.literal_block(text, text, language=language)
    block["classes"].append("formal-usage")
    return block


def _cli(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _option_example(algorithm) -> str | None:
    """``KEY=VALUE`` of the first option with an example value other than its default."""
    for key, spec in algorithm.option_specs.items():
        for value in getattr(spec, "examples", ()) or ():
            if value != spec.default:
                return f"{key}={value!r}"
    return None
