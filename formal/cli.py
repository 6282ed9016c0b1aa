"""The ``formal-transformers`` command (also ``python -m formal``).

Subcommands:

``list [--json]``
    the algorithms, by number and name.
``show NAME [--json] [--latex] [--convention matmul|kaplan|chinchilla|full] [--params] [-o KEY=VALUE ...]``
    one algorithm as numbered pseudocode with each line's result shape and cost, and the totals.
``complexity PRESET|--config FILE.toml [--seq-len T] [--batch B] [--convention C] [--dtype D] [--symbolic] [--json]``
    parameters, FLOPs of a forward pass and of a training step, activation memory and KV cache.
``graph PATTERN --n N [pattern options] [--layers L] [--draw FILE.png] [--json]``
    an attention pattern as a graph: edges and their formula, density, FLOPs against dense attention,
    receptive field per layer, layers to full coverage, maximum path length (:mod:`formal.graphs.command`).

Bad input prints one line on stderr and exits 2; nothing on the command line is evaluated as code.
Commands that need torch (``conform``, ``verify``) are found through the ``formal_transformers.commands``
entry-point group; a command returns its exit status (1: the implementation it checked is at fault).
"""

from __future__ import annotations

import argparse
import json
import sys

from . import __version__
from .cost import CONVENTIONS
from .errors import ConfigError, FormalError

__all__ = ["main", "build_parser", "bounded_int"]

PROG = "formal-transformers"


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit status 2."""

    def error(self, message):
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _integers(minimum: int, maximum: int | None) -> str:
    if maximum is not None:
        return f"an integer from {minimum} to {maximum}"
    return {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer ≥ {minimum}")


def bounded_int(minimum: int, maximum: int | None = None):
    """An argparse ``type`` for an integer option: the integer written, if ``minimum ≤ value ≤ maximum``
    (``maximum=None``: no upper bound); anything else is the parser's one-line usage error, exit status 2
    (``argument --seed: -1 must be a non-negative integer``).

    Examples
    --------
    >>> seed = bounded_int(0)
    >>> seed("7")
    7
    >>> seed("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: -1 must be a non-negative integer
    >>> bounded_int(1, 8)("1.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '1.5' must be an integer from 1 to 8
    """
    for name, bound in (("minimum", minimum), ("maximum", maximum)):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
            raise ConfigError(f"bounded_int: {name} = {bound!r} must be an int")
    if maximum is not None and maximum < minimum:
        raise ConfigError(f"bounded_int: maximum = {maximum} is below minimum = {minimum}")
    wanted = _integers(minimum, maximum)

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:  # not an integer: '1.5', 'abc', or too many digits
            shown = text if len(text) <= 24 else text[:20] + "…"
            raise argparse.ArgumentTypeError(f"{shown!r} must be {wanted}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{value} must be {wanted}")
        return value

    parse.__name__ = wanted  # what argparse calls the type in its own messages
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Formal Algorithms for Transformers as executable objects: "
                     "shapes and costs derived from the pseudocode.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("list", help="list the algorithms")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_list)

    p = sub.add_parser("show", help="show one algorithm with its shapes and costs")
    p.add_argument("name", help="algorithm name (see `list`)")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--json", action="store_true", help="print one JSON object")
    view.add_argument("--latex", action="store_true", help="print an algorithmic environment")
    p.add_argument("--convention", choices=tuple(CONVENTIONS), default="matmul", help="FLOP convention")
    p.add_argument("--params", action="store_true", help="list the parameters with their shapes")
    p.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="build a variant, e.g. -o n_kv_heads=2 or -o norm=rms (repeatable)")
    p.set_defaults(run=_show)

    p = sub.add_parser("complexity", help="parameters, FLOPs, memory and KV cache of a model",
                       description="What a model costs, derived from its algorithm object: parameters, FLOPs of "
                                   "a forward pass and of a training step, activation memory, KV cache.")
    p.add_argument("preset", nargs="?", help="a preset name (see `complexity --list`)")
    p.add_argument("--config", metavar="FILE.toml", help="a model configuration file instead of a preset")
    p.add_argument("--list", action="store_true", help="list the presets")
    p.add_argument("--seq-len", type=bounded_int(1), metavar="T",
                   help="sequence length (default: the preset's context)")
    p.add_argument("--batch", type=bounded_int(1), default=1, metavar="B", help="sequences per batch (default 1)")
    p.add_argument("--convention", choices=tuple(CONVENTIONS), default="matmul", help="FLOP convention")
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"), default="fp32", help="bytes per scalar")
    p.add_argument("--symbolic", action="store_true", help="print the formulas instead of numbers")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_complexity)

    from .graphs.command import register as register_graph
    register_graph(sub, _UsageError)

    _plugin_commands(sub)
    return parser


def _plugin_commands(sub):
    """Commands living beside the code they drive (``reference/``), registered through entry points."""
    from importlib.metadata import entry_points
    for entry in entry_points(group="formal_transformers.commands"):
        try:
            register = entry.load()
        except ImportError as exc:
            p = sub.add_parser(entry.name, help=f"(unavailable: {exc.name} is not installed)")
            p.set_defaults(run=_missing(entry.name, exc))
            continue
        register(sub)


def _missing(name, exc):
    def run(args, out):
        raise FormalError(f"`{name}` needs {exc.name}, which is not installed: "
                          "pip install torch==2.13.0 'formal-transformers[torch]'")
    return run


def _list(args, out):
    from .algorithms import ALGORITHMS
    rows = [{"number": a.number, "name": a.name, "summary": a.summary,
             "options": {k: a.option_docs.get(k, "") for k in a.options}} for a in ALGORITHMS.values()]
    if args.json:
        json.dump({"algorithms": rows}, out, indent=2, ensure_ascii=False)
        out.write("\n")
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        options = f"  [options: {', '.join(r['options'])}]" if r["options"] else ""
        out.write(f"{r['number']:>2}  {r['name']:<{width}}  {r['summary']}{options}\n")


def _show(args, out):
    from . import render
    from .algorithms import get
    from .options import parse_options
    algorithm = get(args.name, **parse_options(args.name, args.option))
    if args.params:
        if args.json:
            json.dump(render.params_json(algorithm), out, indent=2, ensure_ascii=False)
            out.write("\n")
        else:
            out.write(render.params_text(algorithm))
        return
    if args.json:
        json.dump(render.to_json(algorithm, args.convention), out, indent=2, ensure_ascii=False)
        out.write("\n")
    elif args.latex:
        out.write(render.to_latex(algorithm))
    else:
        out.write(render.to_text(algorithm, args.convention))


def _complexity(args, out):
    from . import complexity, presets
    from .config import load_config
    if args.list:
        for p in presets.PRESETS.values():
            out.write(f"{p.name:<17} {p.algorithm:<14} {p.doc.split(':')[0]}\n")
        return
    if (args.preset is None) == (args.config is None):
        raise _UsageError("give a preset name or --config FILE.toml (one of them)")
    if args.config is not None:
        name, algorithm, options, sizes, default_len = load_config(args.config)
    else:
        preset = presets.get(args.preset)
        name, algorithm, options, sizes, default_len = (preset.name, preset.algorithm, preset.options,
                                                        preset.sizes, preset.seq_len)
    model = complexity.Model(algorithm, options)
    if args.symbolic:
        result = {"name": name, "algorithm": algorithm, "options": options, "convention": args.convention,
                  **complexity.formulas(model, args.convention)}
    else:
        seq_len = default_len if args.seq_len is None else args.seq_len
        if seq_len is None:
            raise _UsageError("the configuration has no seq_len: give --seq-len T")
        result = {"name": name, **complexity.report(model, sizes, seq_len=seq_len, batch=args.batch,
                                                    convention=args.convention, dtype=args.dtype)}
    if args.json:
        json.dump(result, out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(_complexity_text(result, args.symbolic))


def _group(n) -> str:
    return f"{n:,}" if isinstance(n, int) else f"{n:,.1f}"


def _complexity_text(r, symbolic) -> str:
    head = f"{r['name']}: {r['algorithm']}"
    if symbolic:
        lines = [head + f" ({r['convention']} convention), as formulas"]
        rows = [("parameters, total", r["params"]["total"]), ("  embedding", r["params"]["embedding"]),
                ("  non-embedding", r["params"]["non_embedding"]),
                ("FLOPs, forward (one sequence)", r["flops"]["forward_per_sequence"]),
                ("FLOPs, training step (one sequence)", r["flops"]["training_step_per_sequence"]),
                ("activations (scalars, one sequence)", r["memory"]["activations_scalars_per_sequence"])]
        if r["kv_cache"]:
            rows += [("KV cache (scalars per token)", r["kv_cache"]["scalars_per_token"])]
        return "\n".join(lines + [f"{k}:\n  {v}" for k, v in rows]) + "\n"
    f, m, p = r["flops"], r["memory"], r["params"]
    lines = [head + f" at sequence length {r['seq_len']}, batch {r['batch']}, {r['convention']} convention, "
                    f"{r['dtype']}",
             f"parameters          {_group(p['total'])}  (embedding {_group(p['embedding'])}, "
             f"non-embedding {_group(p['non_embedding'])})",
             f"FLOPs forward       {_group(f['forward'])} per batch, {_group(f['forward_per_sequence'])} per "
             f"sequence, {_group(f['forward_per_token'])} per token",
             f"FLOPs training step {_group(f['training_step'])} per batch, "
             f"{_group(f['training_step_per_sequence'])} per sequence, {_group(f['training_step_per_token'])} per token",
             f"activation memory   {_group(m['activations_bytes'])} bytes per batch "
             f"({m['activations_bytes'] / 2**30:.2f} GiB), {_group(m['activations_bytes_per_token'])} per token"]
    if r["kv_cache"]:
        k = r["kv_cache"]
        lines.append(f"KV cache            {_group(k['bytes_per_token'])} bytes per token, "
                     f"{_group(k['bytes_per_sequence'])} per sequence ({k['bytes_per_sequence'] / 2**20:.1f} MiB)")
    else:
        lines.append("KV cache            none derived (only decoder-only models decode with a cache here)")
    return "\n".join(lines) + "\n"


def _fail(message: str, status: int = 2) -> int:
    """One line on stderr; exit 2 for bad usage, 1 where a checked implementation is at fault."""
    first = str(message).strip().splitlines()[0] if str(message).strip() else "error"
    print(f"{PROG}: error: {first}", file=sys.stderr)
    return status


def main(argv=None) -> int:
    """Run the command line; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        status = args.run(args, sys.stdout)
        sys.stdout.flush()
    except _UsageError as exc:
        return _fail(exc)
    except FormalError as exc:
        return _fail(exc, getattr(exc, "status", 2))
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (`| head`): not an error
        return 0
    except KeyboardInterrupt:
        return 130
    return status or 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
