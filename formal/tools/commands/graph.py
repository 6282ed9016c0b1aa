"""``formal-transformers graph PATTERN --seq-len LENGTH [options]``: a pattern's edges, cost and reach.

Prints the edge count (and its symbolic formula), density, in-degrees, the attention FLOPs against dense
attention of the same size, the receptive field per layer, the layers until every position reaches every
position it may, and the maximum path length; ``--json`` prints the same as one object and ``--draw FILE``
writes a picture.

The flags are the patterns' parameters as their schema declares them (:mod:`formal.graphs.schema`), and the
report is :func:`formal.graphs.report`'s.  The built-in patterns other than BigBird's random keys are
analysed from their structure (:mod:`formal.graphs.structure`): no edge is made unless ``--draw`` asks for
the picture, so a window over a million tokens takes as long as one over a thousand.  For the others
(``random``, ``edgelist``), everything that grows with ℓ², ``|E|`` or the number of layers is estimated before
it is built and refused beyond ``--max-memory`` (default 4 GiB, :mod:`formal.guards.limits`) with one line
giving the estimate.

This module imports numpy, networkx and sympy only when the command runs, so registering it costs the
other commands nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile

from ...graphs.schema import PARAMETERS, SCHEMAS
from ...guards import files, limits
from ..arguments import bounded_int, memory_size
from ..helptext import deprecated_alias

__all__ = ["register", "to_text"]


def register(sub):
    """Add the ``graph`` subcommand to the parser's subcommands: a flag for every parameter the patterns
    declare (:data:`formal.graphs.schema.PARAMETERS`), grouped by the patterns that take it, and the command's
    own output options."""
    from ..helptext import epilog
    p = sub.add_parser("graph", help="Analyse an attention pattern as a graph: edges, FLOPs, receptive field, "
                                     "path length",
                       description="Analyse an attention pattern as a graph: edges (with the symbolic count), "
                                   "density, attention FLOPs against dense attention, receptive field per layer, "
                                   "layers to full coverage, maximum path length. Each pattern takes the options of "
                                   "the groups that name it.",
                       epilog=epilog("graph sliding-window --seq-len 4096 --window 256",
                                     "graph strided --seq-len 1024 --stride 32 --layers 3 --json",
                                     "graph swin --grid 8x8 --window 4 --shifted --draw swin.png"))
    p.add_argument("pattern", choices=tuple(SCHEMAS), metavar="PATTERN", help=", ".join(SCHEMAS))
    groups = {}
    for parameter in PARAMETERS:
        takers = tuple(s.name for s in SCHEMAS.values() if parameter.name in s.names)
        if takers not in groups:
            title = ("every pattern" if len(takers) == len(SCHEMAS)
                     else f"pattern{'s' * (len(takers) > 1)} {', '.join(takers)}")
            groups[takers] = p.add_argument_group(title)
        _flag(p, groups[takers], parameter, takers)
    out = p.add_argument_group("output")
    out.add_argument("--draw", metavar="FILE.png", help="write a picture of the mask (and the graph when short)")
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--max-memory", type=memory_size, default=limits.DEFAULT_MAX_MEMORY, metavar="SIZE",
                     help="refuse, with the estimate, anything that would need more memory: bytes or a size such "
                          f"as 512MiB, 8GiB, 1.5TiB (default: {limits.format_size(limits.DEFAULT_MAX_MEMORY)})")
    p.set_defaults(run=_run)


def _flag(p, group, parameter, takers):
    """The flag(s) of one parameter, in the group of the patterns that take it: its kind's type or choices,
    None when not given (the schema then applies the pattern's default); a flag with a negation is a pair
    that excludes each other; a flag once spelled otherwise keeps that spelling, hidden."""
    named = {"dest": parameter.name, "help": _help(parameter, takers), **_argparse(parameter.kind)}
    if parameter.metavar is not None:
        named["metavar"] = parameter.metavar
    if parameter.negation is None:
        action = group.add_argument(parameter.flag, **named)
    else:
        word, meaning = parameter.negation
        both = group.add_mutually_exclusive_group()
        action = both.add_argument(parameter.flag, **named)
        both.add_argument(f"--{word}", dest=parameter.name, action="store_false", default=argparse.SUPPRESS,
                          help=meaning)
    for old in parameter.deprecated:
        deprecated_alias(p, old, action)


def _argparse(kind) -> dict:
    """The ``argparse`` form of a parameter's kind (:mod:`formal.graphs.kinds`): an integer's range checked as
    every command checks one (:func:`~formal.tools.arguments.bounded_int`), a flag, a word of a list; a grid
    or a file path is read by the kind itself."""
    from ...graphs.kinds import Choice, Flag, Integer
    if isinstance(kind, Integer):
        return {"type": bounded_int(kind.minimum, kind.maximum)}
    if isinstance(kind, Flag):
        return {"action": "store_true", "default": None}
    if isinstance(kind, Choice):
        return {"choices": kind.words}
    return {}


def _help(parameter, takers) -> str:
    """The parameter's meaning, its words (a choice), and which patterns need it or default it to what."""
    from ...graphs.schema import REQUIRED
    words = getattr(parameter.kind, "words", None)
    text = parameter.meaning + (f": {', '.join(words)}" if words else "")
    schemas = [SCHEMAS[name] for name in takers]
    required = [s.name for s in schemas if s[parameter.name].default is REQUIRED]
    defaults = {}
    for s in schemas:
        value = s[parameter.name].default
        if value is not REQUIRED and value is not None and not (value is False and parameter.negation is None):
            defaults.setdefault(_written(parameter, value), []).append(s.name)
    said = []
    others = [name for name in takers if name not in required]
    if required:
        said.append("required" if not others else f"required except by {', '.join(others)}"
                    if len(others) < len(required) else f"required by {', '.join(required)}")
    if len(defaults) == 1 and sum(map(len, defaults.values())) == len(takers):
        said.append(f"default: {next(iter(defaults))}")
    elif defaults:
        said.append("default: " + "; ".join(f"{v} for {', '.join(names)}" for v, names in defaults.items()))
    return text + (f" ({'; '.join(said)})" if said else "")


def _written(parameter, value) -> str:
    """A default as the command line gives it: a flag pair's flag, else the value."""
    if parameter.negation is not None:
        return parameter.flag if value else f"--{parameter.negation[0]}"
    return str(value)


def _given(args) -> dict:
    """The parameters the command line gives, by name (a flag left out is None)."""
    return {p.name: getattr(args, p.name) for p in PARAMETERS if getattr(args, p.name) is not None}


def _mean(value: float, digits: int) -> str:
    """A mean with ``digits`` decimals; from 10¹⁵ on, where a float's last digits are noise, six figures."""
    return f"{value:.{digits}f}" if abs(value) < 1e15 else f"{value:.6g}"


def _n(value) -> str:
    return f"{value:,}"


def _layers_text(value) -> str:
    return "never" if value is None else f"{_n(value)} layer{'s' * (value != 1)}"


def _without(layered) -> str:
    after = layered.get("without_residual_undetermined_after")
    if after is not None:
        return f"undetermined after {_n(after)} layers (the states had not repeated)"
    return _layers_text(layered["layers_to_coverage_without_residual"])


def to_text(r) -> str:
    params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
    kind = "self-attention" if r["self_attention"] else f"cross-attention, {_n(r['ell_z'])} keys"
    lines = [f"{r['pattern']}{f'({params})' if params else ''}: {kind}, {_n(r['ell_x'])} queries",
             f"edges             {_n(r['edges'])}"]
    if "formula" in r:
        f = r["formula"]
        if f["simplified_applies"] and f["simplified"] != f["exact"]:
            when = f"  (when {', '.join(f['when'])})" if f["when"] else ""
            lines.append(f"  formula         {f['simplified']}{when}")
            lines.append(f"  exact, any size {f['exact']}")
        else:
            lines.append(f"  formula         {f['exact']}")
    d = r["in_degree"]
    lines += [f"density           {r['density']:.4g} of {_n(r['ell_z'] * r['ell_x'])} pairs",
              f"in-degree         min {d['min']}, mean {_mean(d['mean'], 2)}, max {d['max']}"
              + (f"; {d['empty']} queries see no key" if d["empty"] else "")]
    f = r["flops"]
    lines.append(f"attention FLOPs   {_n(f['sparse'])} against {_n(f['dense'])} dense ({f['ratio']:.3g}×), "
                 f"{f['convention']} convention, H = {f['heads']}, d_head = {f['d_head']}")
    layered = r["layers"]
    if "skipped" in layered:
        lines.append(f"layers            skipped: {layered['skipped']}")
        return "\n".join(lines) + "\n"
    lines.append("receptive field   layer   min    mean     max   (with the residual path; min without it)")
    for row in layered["receptive_field"]:
        lines.append(f"                  {row['layer']:>5} {row['min']:>5} {_mean(row['mean'], 1):>7} {row['max']:>7}"
                     f"   ({row['min_without_residual']})")
    lines += [f"full coverage     {_layers_text(layered['layers_to_coverage'])} with the residual path, "
              f"{_without(layered)} without "
              f"(every position reaching {layered['coverage_target']})",
              f"max path length   {_layers_text(layered['max_path_length'])}"]
    return "\n".join(lines) + "\n"


def _run(args, out):
    with limits.memory_limit(args.max_memory), _matplotlib_scratch(args.draw):
        _command(args, out)


@contextlib.contextmanager
def _matplotlib_scratch(drawing):
    """While the command draws, matplotlib keeps its font cache in a temporary folder, removed afterwards,
    unless MPLCONFIGDIR names one: the picture is the only file the command writes."""
    if not drawing or "MPLCONFIGDIR" in os.environ:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="formal-matplotlib-") as scratch:
        os.environ["MPLCONFIGDIR"] = scratch
        try:
            yield
        finally:
            del os.environ["MPLCONFIGDIR"]


def _command(args, out):
    from ...graphs.specs import GraphSpec
    if args.draw == "-":                  # stdout carries the report: "-" names no file here, as everywhere
        from ..arguments import UsageError
        raise UsageError("--draw -: a picture cannot go to stdout, which carries the report; give a file, "
                         "e.g. --draw mask.png")
    if args.draw:
        from ...graphs.draw import check_picture
        check_picture(args.draw)                                          # before any work
    spec = GraphSpec.checked(args.pattern, _given(args), flags=True)
    p = spec.build()
    drawn = (p.build() if hasattr(p, "build") else p) if args.draw else None  # the edges, refused before any work
    result = spec.report(p, progress=sys.stderr)
    if args.draw:
        from ...graphs.draw import draw
        draw(drawn, args.draw)
        result["picture"] = args.draw
    if args.json:
        out.write(files.json_text(result))
    else:
        out.write(to_text(result) + (f"picture           {args.draw}\n" if args.draw else ""))
