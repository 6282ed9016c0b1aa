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
``check CLAIMS.toml [...] [--catalogue] [--only IDS] [--json]``
    complexity claims written as data, judged against the derived values (:mod:`formal.claims`).
``table1 [--cell rnn|gru|lstm] [--kernel K] [--radius R] [--n N ...] [--json]``
    Vaswani et al.'s Table 1 derived from the objects (:mod:`formal.models.table1`).

Bad input prints one line on stderr and exits 2; nothing on the command line is evaluated as code.
Commands that need torch (``conform``, ``verify``) are found through the ``formal_transformers.commands``
entry-point group; a command returns its exit status (1: the implementation it checked is at fault).
"""

from __future__ import annotations

import argparse
import os
import sys

from . import __version__
from .costs.conventions import CONVENTIONS
from .errors import ConfigError, FormalError, shown
from .guards.files import json_text
from .guards.limits import MAX_SIZE

MAX_MESSAGE = 600  # characters of an error line

__all__ = ["main", "build_parser", "bounded_int", "memory_size", "positive_seconds", "progress_line"]

PROG = "formal-transformers"


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit status 2."""

    def error(self, message):
        raise _UsageError(message)

    def format_help(self):
        for action in self._actions:  # the help lists every command, those of the entry points too
            if isinstance(action, _Commands):
                action.load_plugins()
        return super().format_help()

    def _check_value(self, action, value):
        if isinstance(action, _Commands) and value not in action.choices:  # a command not built in
            action.load_plugins()
        super()._check_value(action, value)


class _Commands(argparse._SubParsersAction):
    """The subcommands: the built-in ones, and those of the ``formal_transformers.commands`` entry points,
    registered only when a command line names one that is not built in (:meth:`_Parser._check_value`) or
    asks for the help, so that a built-in command imports nothing of theirs and skips the scan of the
    installed packages' entry points."""

    _plugins_loaded = False

    def load_plugins(self):
        if not self._plugins_loaded:
            self._plugins_loaded = True
            _plugin_commands(self)


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
            written = text if len(text) <= 24 else text[:20] + "…"
            raise argparse.ArgumentTypeError(f"{written!r} must be {wanted}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{value if len(text) <= 24 else shown(value)} must be {wanted}")
        return value

    parse.__name__ = wanted  # what argparse calls the type in its own messages
    return parse


def positive_seconds(text: str, maximum: float = 86400.0) -> float:
    """An argparse ``type`` for a time limit: a finite number of seconds > 0, at most a day."""
    import math
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a number of seconds") from None
    if not (0 < value <= maximum and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{shown(text)} must be a number of seconds > 0, at most {maximum:g}")
    return value


def progress_line(stream, verb: str):
    """``show(i, n, name)``, a live "verb i/n: name" line on ``stream`` when it is a terminal (else None),
    wiped after the last item: for commands that work through a list (``check``, ``prove``)."""
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None

    def show(i, n, name):
        stream.write(f"\r{verb} {i + 1}/{n}: {name[:50]:<50}")
        stream.flush()
        if i + 1 == n:
            stream.write("\r" + " " * 72 + "\r")
    return show


def memory_size(text: str) -> int:
    """An argparse ``type`` for ``--max-memory``: bytes from ``4G``, ``512M``, ``1.5GiB`` or a number of bytes
    (:func:`formal.guards.limits.parse_size`); anything else is the parser's one-line usage error."""
    from .guards.limits import parse_size
    try:
        return parse_size(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Formal Algorithms for Transformers as executable objects: "
                     "shapes and costs derived from the pseudocode.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.register("action", "parsers", _Commands)
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
    p.add_argument("--convention", choices=tuple(CONVENTIONS), help="FLOP convention of the costs (default matmul)")
    p.add_argument("--params", action="store_true", help="list the parameters with their shapes (as a table; "
                   "with --latex a tabular, with --json an object)")
    p.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="build a variant, e.g. -o n_kv_heads=2 or -o norm=rms (repeatable)")
    p.set_defaults(run=_show)

    p = sub.add_parser("complexity", help="parameters, FLOPs, memory and KV cache of a model",
                       description="What a model costs, derived from its algorithm object: parameters, FLOPs of "
                                   "a forward pass and of a training step, activation memory, KV cache.")
    p.add_argument("preset", nargs="?", help="a preset name (see `complexity --list`)")
    p.add_argument("--config", metavar="FILE.toml", help="a model configuration file instead of a preset")
    p.add_argument("--list", action="store_true", help="list the presets")
    p.add_argument("--seq-len", type=bounded_int(1, MAX_SIZE), metavar="T",
                   help="sequence length (default: the preset's context)")
    p.add_argument("--batch", type=bounded_int(1, MAX_SIZE), metavar="B", help="sequences per batch (default 1)")
    p.add_argument("--convention", choices=tuple(CONVENTIONS), default="matmul", help="FLOP convention")
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"), help="bytes per scalar (default fp32)")
    p.add_argument("--symbolic", action="store_true", help="print the formulas instead of numbers")
    p.add_argument("--kv", choices=("contiguous", "paged"), default="contiguous",
                   help="how the KV cache is kept: contiguous (default), or paged in blocks (PagedAttention: "
                        "blocks, bytes per block, waste against a contiguous reservation)")
    p.add_argument("--block", type=bounded_int(1, MAX_SIZE), metavar="B",
                   help="with --kv paged: tokens per block (default 16, vLLM's)")
    p.add_argument("--samples", type=bounded_int(1, MAX_SIZE), metavar="N",
                   help="with --kv paged: samples forked from the sequence as a shared prompt (default 1)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_complexity)

    from .graphs.command import register as register_graph
    register_graph(sub, _UsageError)
    from .claims.command import register as register_check
    register_check(sub)
    from .models.table1 import register as register_table1
    register_table1(sub)
    return parser  # the entry points' commands are registered when needed (_Commands)


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
    rows = [{"number": a.number, "name": a.name, "source": a.source, "summary": a.summary,
             "options": {k: a.option_docs.get(k, "") for k in a.options}} for a in ALGORITHMS.values()]
    if args.json:
        out.write(json_text({"algorithms": rows}))
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        options = f"  [options: {', '.join(r['options'])}]" if r["options"] else ""
        number = "" if r["number"] is None else r["number"]
        out.write(f"{number:>2}  {r['name']:<{width}}  {r['summary']}{options}\n")


def _show(args, out):
    from .engine import render
    from .algorithms import get
    from .engine.options import parse_options
    if args.convention is not None and (args.params or args.latex):
        raise _UsageError(f"--convention applies to costs, which {'--params' if args.params else '--latex'} "
                          "does not print")
    algorithm = get(args.name, **parse_options(args.name, args.option))
    convention = args.convention or "matmul"
    if args.params:
        if args.json:
            out.write(json_text(render.params_json(algorithm)))
        else:
            out.write(render.params_latex(algorithm) if args.latex else render.params_text(algorithm))
        return
    if args.json:
        out.write(json_text(render.to_json(algorithm, convention)))
    elif args.latex:
        out.write(render.LATEX_PACKAGES + "\n" + render.to_latex(algorithm))
    else:
        out.write(render.to_text(algorithm, convention))


def _complexity(args, out):
    from .models import complexity, presets
    from .models.config import load_config
    if args.list:
        _inapplicable(args, "--list", ("preset", "config", "seq_len", "batch", "dtype", "symbolic"))
        if args.json:
            rows = [{"name": p.name, "algorithm": p.algorithm, "seq_len": p.seq_len, "doc": p.doc}
                    for p in presets.PRESETS.values()]
            out.write(json_text({"presets": rows}))
            return
        names = max(len(p.name) for p in presets.PRESETS.values())
        algorithms = max(len(p.algorithm) for p in presets.PRESETS.values())
        for p in presets.PRESETS.values():
            out.write(f"{p.name:<{names}}  {p.algorithm:<{algorithms}}  {p.doc.split(':')[0]}\n")
        return
    if (args.preset is None) == (args.config is None):
        raise _UsageError("give a preset name or --config FILE.toml (one of them)")
    if args.config is not None:
        name, algorithm, options, sizes, default_len = load_config(args.config)
    else:
        preset = presets.get(args.preset)
        name, algorithm, options, sizes, default_len = (preset.name, preset.algorithm, preset.options,
                                                        preset.sizes, preset.seq_len)
    if args.kv != "paged":
        _inapplicable(args, "--kv contiguous", ("block", "samples"))
    elif args.symbolic:
        raise _UsageError("--kv paged prints numbers: it has no effect with --symbolic")
    if args.symbolic:  # the formulas as text: sympy
        model = complexity.Model(algorithm, options)
        _inapplicable(args, "--symbolic", ("seq_len", "batch", "dtype"))
        result = {"name": name, "algorithm": algorithm, "options": options, "convention": args.convention,
                  **complexity.formulas(model, args.convention)}
    else:  # numbers: from the formulas shipped with the package when it holds the model's (no sympy)
        model = complexity.model_formulas(algorithm, options)
        if args.seq_len is None and default_len is None:
            raise _UsageError(f"{name} has no default sequence length: give --seq-len T")
        result = complexity.numeric_report(name, model, sizes, seq_len=args.seq_len, default_len=default_len,
                                           batch=args.batch or 1, convention=args.convention,
                                           dtype=args.dtype or "fp32")
        if args.kv == "paged":
            if not result["kv_cache"]:
                raise _UsageError(f"--kv paged: {name} ({algorithm}) has no KV cache here; only decoder-only "
                                  "models decode with one")
            result["kv_cache"]["paged"] = complexity.paged_report(result, block=args.block or 16,
                                                                  samples=args.samples or 1)
    if args.json:
        out.write(json_text(result))
    else:
        out.write(_complexity_text(result, args.symbolic))


_FLAGS = {"preset": "a preset name", "config": "--config", "seq_len": "--seq-len", "batch": "--batch",
          "dtype": "--dtype", "symbolic": "--symbolic", "block": "--block", "samples": "--samples"}


def _inapplicable(args, flag, dests):
    """Refuse an option that would be silently ignored beside ``flag``."""
    given = [d for d in dests if getattr(args, d) not in (None, False)]
    if given:
        raise _UsageError(f"{_FLAGS[given[0]]} has no effect with {flag}")


def _complexity_text(r, symbolic) -> str:
    from .models.complexity import grouped
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
             f"parameters          {grouped(p['total'])}  (embedding {grouped(p['embedding'])}, "
             f"non-embedding {grouped(p['non_embedding'])})",
             f"FLOPs forward       {grouped(f['forward'])} per batch, {grouped(f['forward_per_sequence'])} per "
             f"sequence, {grouped(f['forward_per_token'])} per token",
             f"FLOPs training step {grouped(f['training_step'])} per batch, "
             f"{grouped(f['training_step_per_sequence'])} per sequence, "
             f"{grouped(f['training_step_per_token'])} per token",
             *([f"MACs forward        {grouped(f['forward_macs_per_sequence'])} per sequence (multiply–accumulates, "
                f"half the matmul FLOPs: the unit of Swin's and many vision papers' \"FLOPs\")"]
               if "forward_macs_per_sequence" in f else []),
             f"activation memory   {grouped(m['activations_bytes'])} bytes per batch "
             f"({m['activations_bytes'] / 2**30:.2f} GiB), {grouped(m['activations_bytes_per_token'])} per token"]
    if r["kv_cache"]:
        k = r["kv_cache"]
        lines.append(f"KV cache            {grouped(k['bytes_per_token'])} bytes per token, "
                     f"{grouped(k['bytes_per_sequence'])} per sequence ({k['bytes_per_sequence'] / 2**20:.1f} MiB)")
        if k.get("paged"):
            g = k["paged"]
            lines.append(f"KV paged, B = {g['block']:<4} {grouped(g['blocks'])} blocks per sequence, "
                         f"{grouped(g['bytes_per_block'])} bytes each; {grouped(g['wasted_slots'])} slots unused in "
                         f"the last block "
                         f"({grouped(g['wasted_bytes'])} bytes), where a contiguous reservation of "
                         f"{grouped(g['reservation'])} tokens leaves {grouped(g['reserved_waste'])} "
                         f"({grouped(g['reserved_waste_bytes'])} bytes)")
            if g["samples"] > 1:
                lines.append(f"KV paged, shared   {g['samples']} samples of this prompt hold "
                             f"{grouped(g['shared_prompt_blocks'])} blocks of it, "
                             f"{grouped(g['unshared_prompt_blocks'])} without sharing")
    else:
        lines.append("KV cache            none derived (only decoder-only models decode with a cache here)")
    if r.get("note"):
        lines.append(f"note: {r['note']}")
    return "\n".join(lines) + "\n"


def _fail(message: str, status: int = 2) -> int:
    """One line on stderr; exit 2 for bad usage, 1 where a checked implementation is at fault."""
    first = str(message).strip().splitlines()[0] if str(message).strip() else "error"
    if len(first) > MAX_MESSAGE:  # a message quoting a hostile value whole
        first = first[:MAX_MESSAGE - 1] + "…"
    print(f"{PROG}: error: {first}", file=sys.stderr)
    return status


def _internal(exc: BaseException) -> int:
    """Any other exception escaping a command: one line, exit 1 — a bug of this package, not of the input.
    ``FORMAL_TRANSFORMERS_TRACEBACK=1`` re-raises it with its traceback, for debugging."""
    if os.environ.get("FORMAL_TRANSFORMERS_TRACEBACK"):
        raise exc
    if isinstance(exc, MemoryError):
        return _fail("out of memory (the estimate before this step was too low: please report it, with the "
                     "command line)", 1)
    detail = " ".join(str(exc).split())[:300]
    return _fail(f"internal error: {type(exc).__name__}{': ' + detail if detail else ''} (a bug in {PROG}: please "
                 "report it with the command line; FORMAL_TRANSFORMERS_TRACEBACK=1 shows where it happened)", 1)


def main(argv=None) -> int:
    """Run the command line; returns the exit status: 0, 1 (a checked implementation is at fault, or an
    internal error), 2 (bad usage or input), 130 (interrupted)."""
    try:
        args = build_parser().parse_args(argv)
        status = args.run(args, sys.stdout)
        sys.stdout.flush()
    except _UsageError as exc:
        return _fail(exc)
    except FormalError as exc:
        return _fail(exc, getattr(exc, "status", 2))
    except BrokenPipeError:
        _quiet_stdout()  # the reader went away (`| head`): not an error
        return 0
    except KeyboardInterrupt:
        return 130
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the one guard: never a traceback
        return _internal(exc)
    return status or 0


def _quiet_stdout():
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
