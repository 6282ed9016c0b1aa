"""The ``formal-transformers`` command (also ``python -m formal``).

Subcommands (each one's help ends with examples; :mod:`formal.tools.helptext` writes it):

``list [--json]``
    the algorithms, by number and name.
``show NAME [--json] [--latex] [--convention CONVENTION] [--params] [-o KEY=VALUE ...]``
    one algorithm as numbered pseudocode with each line's result shape and cost, and the totals.
``complexity PRESET|--config FILE.toml [--seq-len LENGTH] [--batch SEQUENCES] [--convention CONVENTION] [--dtype DTYPE]
[--symbolic] [--json]``
    parameters, FLOPs of a forward pass and of a training step, activation memory and KV cache
    (:mod:`formal.tools.commands.complexity`).
``graph PATTERN --seq-len LENGTH [pattern options] [--layers LAYERS] [--draw FILE.png] [--json]``
    an attention pattern as a graph: edges and their formula, density, FLOPs against dense attention,
    receptive field per layer, layers to full coverage, maximum path length (:mod:`formal.tools.commands.graph`).
``check CLAIMS.toml [...] [--catalogue] [--only IDS] [--json]``
    complexity claims written as data, judged against the derived values (:mod:`formal.tools.claims`).
``table1 [--cell rnn|gru|lstm] [--kernel KERNEL] [--radius RADIUS] [--measure-at LENGTH ...] [--json]``
    Vaswani et al.'s Table 1 derived from the objects (:mod:`formal.tools.commands.table1`).
``conform TARGET --algorithm NAME``, ``verify``, ``prove``
    check any implementation against the spec, the torch reference against the spec, and the theorems
    (:mod:`formal.tools.commands.conform`, :mod:`~formal.tools.commands.verify`, :mod:`~formal.tools.commands.prove`);
    registered only when named or for the help (:data:`DEFERRED`): they import ``reference`` or ``proofs``.

Bad input prints one line on stderr and exits 2; nothing on the command line is evaluated as code.  The
argument types every command shares, and :class:`~formal.tools.arguments.UsageError`, are
:mod:`formal.tools.arguments`.  A command returns its exit status (1: the implementation it checked is at fault).
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import __version__
from ..costs.conventions import CONVENTIONS
from ..errors import FormalError, shown
from ..guards.files import json_text
from .arguments import UsageError
from .helptext import Formatter, epilog

MAX_MESSAGE = 600  # characters of an error line

__all__ = ["main", "build_parser", "docs_parser", "sizes_text"]

PROG = "formal-transformers"


#: Where a namespace records, while it is parsed, the options :class:`_Once` has seen (removed afterwards).
_GIVEN = "_formal_options_given"


class _Once(argparse._StoreAction):
    """An option that takes a value, given once: a second ``--seq-len`` would silently replace the first, a flag
    with no effect, so it is refused (``--seq-len is given twice (10, then 12): give it once``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string is not None:
            given = vars(namespace).setdefault(_GIVEN, {})
            if self.dest in given:
                raise argparse.ArgumentError(self, f"is given twice ({shown(given[self.dest])}, then "
                                                   f"{shown(values)}): give it once")
            given[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit status 2, and whose options that take a value are
    given once (:class:`_Once`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _Once)
        self.register("action", "store", _Once)

    def parse_known_args(self, args=None, namespace=None):
        parsed, extras = super().parse_known_args(args, namespace)
        vars(parsed).pop(_GIVEN, None)          # the record of one parse is not an argument
        return parsed, extras

    def error(self, message):
        raise UsageError(message)

    def format_help(self):
        for action in self._actions:  # the help lists every command, the deferred ones too
            if isinstance(action, _Commands):
                action.load_deferred()
        return super().format_help()

    def _check_value(self, action, value):
        if isinstance(action, _Commands) and value not in action.choices:  # a deferred command
            action.load_deferred()
        super()._check_value(action, value)


#: The commands registered only when a command line names one of them or asks for the help (their modules
#: import ``reference`` or ``proofs`` when run): name → the module of :mod:`formal.tools.commands` with its
#: ``register``.  The others are registered at once (:func:`build_parser`).
DEFERRED = {"conform": "conform", "verify": "verify", "prove": "prove"}


class _Commands(argparse._SubParsersAction):
    """The subcommands: those :func:`build_parser` registers, and the :data:`DEFERRED` ones, registered only
    when a command line names one that is not registered yet (:meth:`_Parser._check_value`) or asks for the
    help, so that a light command imports nothing of theirs."""

    _deferred_loaded = False

    def add_parser(self, name, **kwargs):
        """Every command's parser writes its help one way (:class:`Formatter`)."""
        kwargs.setdefault("formatter_class", Formatter)
        return super().add_parser(name, **kwargs)

    def load_deferred(self):
        if not self._deferred_loaded:
            self._deferred_loaded = True
            from importlib import import_module
            for module in DEFERRED.values():
                import_module(f"{__package__}.commands.{module}").register(self)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, formatter_class=Formatter,
                     description="Formal Algorithms for Transformers as executable objects: shapes and costs "
                                 "derived from the pseudocode. Give a command; `formal-transformers COMMAND --help` "
                                 "says what it takes.",
                     epilog=epilog("list", "show attention", "complexity gpt2 --seq-len 512"))
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.register("action", "parsers", _Commands)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("list", help="List the algorithms, by number and name",
                       description="List the algorithms, by number and name, with the paper's summary of each and "
                                   "the options that build its variants (`show NAME -o KEY=VALUE`).",
                       epilog=epilog("list", "list --json"))
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_list)

    p = sub.add_parser("show", help="Show an algorithm as numbered pseudocode with its shapes and costs",
                       description="Show an algorithm as the paper's numbered pseudocode, with each line's result "
                                   "shape and cost and the totals; or its parameters (--params), as LaTeX (--latex) "
                                   "or as JSON (--json). The sizes are listed under the names a model "
                                   "configuration file gives them by ([sizes] of `complexity --config`).",
                       epilog=epilog("show attention", "show mhattention -o n_kv_heads=2 --convention full",
                                     "show dtransformer --params --latex"))
    p.add_argument("name", metavar="NAME", help="algorithm name (see `list`)")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--json", action="store_true", help="print one JSON object")
    view.add_argument("--latex", action="store_true", help="print an algorithmic environment")
    p.add_argument("--convention", choices=tuple(CONVENTIONS), metavar="CONVENTION",
                   help=f"FLOP convention of the costs: {', '.join(CONVENTIONS)} (default: matmul)")
    p.add_argument("--params", action="store_true", help="list the parameters with their shapes (as a table; "
                   "with --latex a tabular, with --json an object)")
    p.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="build a variant, e.g. -o n_kv_heads=2 or -o norm=rms (repeatable)")
    p.set_defaults(run=_show)

    from .commands.complexity import register as register_complexity
    register_complexity(sub)
    from .commands.graph import register as register_graph
    register_graph(sub)
    from .commands.check import register as register_check
    register_check(sub)
    from .commands.table1 import register as register_table1
    register_table1(sub)
    return parser  # the deferred commands are registered when needed (_Commands)


def docs_parser() -> argparse.ArgumentParser:
    """The parser of every command, the deferred ones too, with its texts as the docs' command-line page
    renders them (:func:`formal.tools.helptext.for_docs`)."""
    from .helptext import for_docs
    parser = build_parser()
    parser.format_help()                               # registers the deferred commands
    return for_docs(parser)


def _list(args, out):
    from ..algorithms import ALGORITHMS
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
    from ..algorithms import get
    from ..engine import render
    from ..engine.options import parse_options
    if args.convention is not None and (args.params or args.latex):
        raise UsageError(f"--convention applies to costs, which {'--params' if args.params else '--latex'} "
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
        out.write(render.to_text(algorithm, convention) + sizes_text(algorithm))


def sizes_text(algorithm) -> str:
    """The line closing ``show``'s text: each size as the view writes it, and the name a configuration file's
    ``[sizes]`` and ``--json`` give it where that differs (``N_C = n_classes``)."""
    from ..core.symbols import info
    written = [(info(s).glyph, info(s).name) for s in algorithm.symbols]
    if not written:
        return ""
    sizes = ", ".join(glyph if glyph == name else f"{glyph} = {name}" for glyph, name in written)
    return (f"\nSizes (after =, the name data and --json use: a config file's [sizes], claims, conform --size): "
            f"{sizes}\n")


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
    except FormalError as exc:  # a UsageError, or bad input
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
