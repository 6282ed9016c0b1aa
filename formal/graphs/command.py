"""``formal-transformers graph PATTERN --n N [options]``: a pattern's edges, cost and reach.

Prints the edge count (and its symbolic formula), density, in-degrees, the attention FLOPs against dense
attention of the same size, the receptive field per layer, the layers until every position reaches every
position it may, and the maximum path length; ``--json`` prints the same as one object and ``--draw FILE``
writes a picture.

The built-in patterns other than BigBird's random keys are analysed from their structure
(:mod:`formal.graphs.structure`): no edge is made unless ``--draw`` asks for the picture, so a window over
a million tokens takes as long as one over a thousand.  For the others (``random``, ``edgelist``),
everything that grows with ℓ², ``|E|`` or the number of layers is estimated before it is built and refused
beyond ``--max-memory`` (default 4 GiB, :mod:`formal.guards.limits`) with one line giving the estimate.

This module imports numpy, networkx and sympy only when the command runs, so registering it costs the
other commands nothing.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import tempfile

from ..guards import files, limits
from ..cli import MAX_SIZE, bounded_int, memory_size
from ..errors import ConfigError

__all__ = ["register", "CHOICES", "build", "report"]

#: Pattern name on the command line → (its name in :data:`formal.graphs.patterns.PATTERNS`, the options it
#: takes: argparse dest → builder argument).
CHOICES = {
    "full": ("full", {}),
    "causal": ("causal", {"align": "align"}),
    "cross": ("cross", {}),
    "sliding-window": ("sliding_window", {"window": "window", "causal": "causal"}),
    "dilated": ("dilated", {"window": "window", "dilation": "dilation", "causal": "causal"}),
    "global-local": ("global_local", {"window": "window", "n_global": "n_global", "causal": "causal"}),
    "strided": ("strided", {"stride": "stride", "part": "part"}),
    "fixed": ("fixed", {"stride": "stride", "summary": "summary", "part": "part"}),
    "random": ("random", {"n_random": "n_random", "window": "window", "n_global": "n_global", "seed": "seed"}),
    "swin": ("swin", {"window": "window", "shifted": "shifted", "shift": "shift"}),
    "edgelist": (None, {}),
}
#: The Sparse Transformer's heads, for ``--part`` (the builders check them too).
PARTS = ("both", "local", "stride", "summary")
REQUIRED = {"sliding-window": ("window",), "dilated": ("window", "dilation"), "global-local": ("window", "n_global"),
            "strided": ("stride",), "fixed": ("stride",), "random": ("n_random",), "swin": ("window",)}
EXTRA = {"n_z": ("cross", "causal"), "grid": ("swin",), "file": ("edgelist",)}  # options beside the builder's
FLAGS = {"window": "--window", "dilation": "--dilation", "n_global": "--global", "stride": "--stride",
         "summary": "--summary", "part": "--part", "n_random": "--random", "seed": "--seed", "shift": "--shift",
         "shifted": "--shifted", "causal": "--causal/--bidirectional", "align": "--align", "n_z": "--n-z",
         "grid": "--grid", "file": "--file"}


def register(sub, usage_error):
    """Add the ``graph`` subcommand to the parser's subcommands; ``usage_error`` makes an exit-2 error."""
    p = sub.add_parser("graph", help="a sparse attention pattern: edges, FLOPs, receptive field, path length",
                       description="An attention pattern as a graph: edges (with the symbolic count), density, "
                                   "attention FLOPs against dense attention, receptive field per layer, layers to "
                                   "full coverage, maximum path length.")
    p.add_argument("pattern", choices=tuple(CHOICES), metavar="PATTERN", help=", ".join(CHOICES))
    p.add_argument("--n", type=bounded_int(1), metavar="N",
                   help="sequence length (the queries; the keys too, except cross)")
    p.add_argument("--n-z", type=bounded_int(1), dest="n_z", metavar="N",
                   help="context length (cross; causal with ℓ_z ≠ ℓ_x)")
    p.add_argument("--align", choices=("top-left", "bottom-right"), help="causal alignment when ℓ_z ≠ ℓ_x")
    p.add_argument("--window", type=bounded_int(0), metavar="W", help="window size (keys per query, itself included; "
                                                           "Swin: the side M)")
    p.add_argument("--dilation", type=bounded_int(1), metavar="D", help="distance between a dilated window's keys")
    p.add_argument("--global", type=bounded_int(0), dest="n_global", metavar="G", help="global positions (the first G)")
    p.add_argument("--stride", type=bounded_int(1), metavar="S", help="Sparse Transformer stride")
    p.add_argument("--summary", type=bounded_int(1), metavar="C", help="fixed pattern: summary positions per block")
    p.add_argument("--part", choices=PARTS, help="Sparse Transformer head(s) to take (default both)")
    p.add_argument("--random", type=bounded_int(1), dest="n_random", metavar="R",
                   help="random keys per query (BigBird)")
    p.add_argument("--seed", type=bounded_int(0), metavar="S", help="seed of the random pattern (default 0)")
    p.add_argument("--grid", metavar="HxW", help="Swin token grid, e.g. 8x8 (N = H·W)")
    p.add_argument("--shifted", action="store_true", default=None, help="Swin's shifted windows")
    p.add_argument("--shift", type=bounded_int(1), metavar="S", help="offset of the shifted windows (default M/2)")
    direction = p.add_mutually_exclusive_group()
    direction.add_argument("--causal", action="store_true", default=None, help="keys at or before the query only")
    direction.add_argument("--bidirectional", dest="causal", action="store_false", help="keys on both sides")
    p.add_argument("--file", metavar="FILE", help="edgelist: one 'key query' pair of positions per line")
    p.add_argument("--layers", type=bounded_int(0), default=4, metavar="L",
                   help="layers of receptive field to show (default 4)")
    p.add_argument("--heads", type=bounded_int(1, MAX_SIZE), default=1, metavar="H", help="heads, for the FLOPs (default 1)")
    p.add_argument("--d-head", type=bounded_int(1, MAX_SIZE), default=64, metavar="D",
                   help="width of a head, for the FLOPs (default 64)")
    p.add_argument("--draw", metavar="FILE.png", help="write a picture of the mask (and the graph when short)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--max-memory", type=memory_size, default=limits.DEFAULT_MAX_MEMORY, metavar="SIZE",
                   help="refuse, with the estimate, anything that would need more memory: bytes or a size such as "
                        "512M, 8G, 1.5T (powers of 1024; default 4G)")
    p.set_defaults(run=lambda args, out: _run(args, out, usage_error))


# ------------------------------------------------------------------------------------------ building
_GRID = re.compile(r"([0-9]{1,30})[xX×]([0-9]{1,30})")


def _grid(text_):
    match = _GRID.fullmatch(text_.strip())
    if match is None:
        shown = text_ if len(text_) <= 40 else text_[:36] + "…"
        raise ConfigError(f"--grid {shown!r} must be HxW, two positive integers, e.g. 8x8")
    height, width = int(match.group(1)), int(match.group(2))
    if not height or not width:
        raise ConfigError(f"--grid {text_!r} has a side of 0: the grid needs at least one row and one column")
    return height, width


def build(args, usage_error):
    """The pattern the command line describes: a :class:`~formal.graphs.structure.Structure` for the
    built-in patterns it covers (no edges), else a :class:`~formal.graphs.pattern.Pattern`."""
    from . import edgelist, patterns, structure
    name, takes = CHOICES[args.pattern]
    if name in structure.STRUCTURED:
        builder = functools.partial(structure.describe, name)
    else:
        builder = patterns.PATTERNS[name].build if name else None
    given = {dest for dest in FLAGS if getattr(args, dest, None) is not None}
    allowed = set(takes) | {flag for flag, users in EXTRA.items() if args.pattern in users}
    extra = sorted(given - allowed)
    if extra:
        raise usage_error(f"{FLAGS[extra[0]]} does not apply to the {args.pattern} pattern")
    missing = [d for d in REQUIRED.get(args.pattern, ()) if d not in given]
    if missing:
        raise usage_error(f"the {args.pattern} pattern needs {FLAGS[missing[0]]}")
    if args.pattern == "swin":
        if args.grid is None:
            raise usage_error("the swin pattern needs --grid HxW")
        height, width = _grid(args.grid)
        if args.n is not None and args.n != height * width:
            raise usage_error(f"--n {args.n} disagrees with --grid {args.grid} ({height * width} tokens)")
        options = {takes[d]: getattr(args, d) for d in takes if d in given}
        return builder(height, width, options.pop("window"), **options)
    if args.n is None:
        raise usage_error(f"the {args.pattern} pattern needs --n N")
    if args.pattern == "edgelist":
        if args.file is None:
            raise usage_error("the edgelist pattern needs --file FILE")
        return edgelist.read(args.file, args.n)
    options = {takes[d]: getattr(args, d) for d in takes if d in given}
    if args.pattern in ("cross", "causal") and args.n_z is not None:
        return builder(args.n_z, args.n, **options)
    if args.pattern == "cross":
        return builder(args.n, args.n)
    return builder(args.n, **options)


# ------------------------------------------------------------------------------------------ reporting
def report(p, *, layers: int, heads: int, d_head: int, progress=None) -> dict:
    """Everything the command prints, as plain data, for a pattern or a structure (``progress``: a stream for a
    live line on long runs)."""
    from ..core.symbols import text
    from . import analysis, patterns
    from .structure import Structure
    degree = p.in_degree_spread() if isinstance(p, Structure) else _degree_spread(p.in_degree)
    result = {"pattern": p.name, "params": p.params, "self_attention": p.self_attention,
              "ell_z": p.ell_z, "ell_x": p.ell_x, "edges": p.n_edges, "density": p.density, "in_degree": degree}
    if p.name in patterns.PATTERNS:
        exact, values = analysis.symbolic_edge_count(p)
        regime, conditions, holds = analysis.edge_count_regime(p)
        result["formula"] = {"exact": text(exact),
                             "values": {str(k): int(v) for k, v in sorted(values.items(), key=lambda kv: str(kv[0]))},
                             "simplified": text(regime), "when": [f"{text(c)} ≥ 0" for c in conditions],
                             "simplified_applies": holds}
    d_model = heads * d_head
    sizes = {"H": heads, "d_attn": d_head, "d_mid": d_head, "d_x": d_model, "d_z": d_model, "d_out": d_model}
    flops = analysis.attention_flops(p, sizes)
    result["flops"] = {"sparse": flops["sparse"], "dense": flops["dense"],
                       "ratio": flops["ratio"], "convention": "matmul", "heads": heads, "d_head": d_head,
                       "sparse_formula": text(flops["sparse_formula"])}
    result["layers"] = _layered(p, layers, progress)
    return result


def _layered(p, layers, stream=None):
    """Receptive fields, coverage and path length; a live ``what: layer N`` line on ``stream`` if a terminal."""
    from . import analysis, memory
    if not p.self_attention:
        return {"skipped": "cross-attention: queries never become keys, so layers do not compose"}
    live = stream is not None and getattr(stream, "isatty", lambda: False)()

    def tracker(what):
        def show(layer):
            if layer % 16 == 0:
                stream.write(f"\r\033[K{what}: layer {layer:,}")
                stream.flush()
        return show if live else None

    memory.require(memory.report_bytes(layers), f"the report of {memory.number(layers)} layers (a row each)")
    # One walk each, with and without the residual path; each layer is computed once, and none past the
    # point where the receptive fields settle (the rows after it repeat).  A structure needs no walk.
    grown = analysis.summary(p, layers, progress=tracker("full coverage"))
    plain = analysis.summary(p, layers, residual=False, progress=tracker("without the residual path"))
    per_layer = [{"layer": l + 1, "min": least, "mean": mean, "max": most, "min_without_residual": alone[0]}
                 for l, ((least, mean, most), alone) in enumerate(zip(grown.spread, plain.spread))]
    covered, plain_covered, longest = grown.coverage, plain.coverage, grown.max_path_length
    if live:
        stream.write("\r\033[K")
        stream.flush()
    result = {"receptive_field": per_layer,
              "coverage_target": "earlier positions" if p.is_causal else "all positions",
              "layers_to_coverage": covered, "layers_to_coverage_without_residual": plain_covered,
              "max_path_length": longest}
    if plain.undetermined is not None:  # a user's graph whose states repeat only after astronomically many layers
        result["without_residual_undetermined_after"] = plain.undetermined
    return result


def _degree_spread(values) -> dict:
    return {**_spread(values), "empty": int((values == 0).sum())}


def _spread(values) -> dict:
    if not values.size:
        return {"min": 0, "mean": 0.0, "max": 0}
    return {"min": int(values.min()), "mean": float(values.mean()), "max": int(values.max())}


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


def _run(args, out, usage_error):
    with limits.memory_limit(args.max_memory), _matplotlib_scratch(args.draw):
        _command(args, out, usage_error)


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


def _command(args, out, usage_error):
    if args.draw:
        from .draw import check_picture
        check_picture(args.draw)                                          # before any work
    p = build(args, usage_error)
    drawn = (p.build() if hasattr(p, "build") else p) if args.draw else None  # the edges, refused before any work
    result = report(p, layers=args.layers, heads=args.heads, d_head=args.d_head, progress=sys.stderr)
    if args.draw:
        from .draw import draw
        draw(drawn, args.draw)
        result["picture"] = args.draw
    if args.json:
        out.write(files.json_text(result))
    else:
        out.write(to_text(result) + (f"picture           {args.draw}\n" if args.draw else ""))
