"""``formal-transformers table1``: Vaswani et al.'s Table 1 derived from the objects (:mod:`formal.models.table1`)."""

from __future__ import annotations

from ...errors import ConfigError
from ...guards.files import json_text
from ..arguments import bounded_int
from ..helptext import deprecated_alias, epilog

__all__ = ["register"]


def register(sub):
    """The ``table1`` command."""
    p = sub.add_parser("table1", help="Derive Vaswani et al.'s Table 1 from the objects",
                       description="Derive Vaswani et al.'s Table 1 — complexity per layer, sequential operations "
                                   "and maximum path length of self-attention, recurrent, convolutional and "
                                   "restricted layers — from the algorithm objects and their graphs, beside the "
                                   "paper's entries.",
                       epilog=epilog("table1", "table1 --cell gru --measure-at 128 --measure-at 512 --json"))
    p.add_argument("--cell", choices=("rnn", "gru", "lstm"), default="lstm", metavar="CELL",
                   help="the recurrent row's cell: rnn, gru, lstm")
    p.add_argument("--kernel", type=bounded_int(3, 99), default=3, metavar="KERNEL",
                   help="the convolution's kernel for path lengths (odd)")
    p.add_argument("--radius", type=bounded_int(1, 1000), default=4, metavar="RADIUS",
                   help="keys on each side of the restricted window, for path lengths")
    lengths = p.add_argument("--measure-at", dest="measure_at", type=bounded_int(2, 4096), action="append",
                             metavar="LENGTH", help="a sequence length to measure the maximum path lengths at "
                                                    "(repeatable; default: 64 and 256)")
    deprecated_alias(p, "--n", lengths)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_run)


def _run(args, out):
    if args.kernel % 2 == 0:
        raise ConfigError(f"--kernel {args.kernel} must be odd (a centred convolution)")
    sizes = tuple(sorted(set(args.measure_at))) if args.measure_at else (64, 256)
    from ...models.table1 import report, report_text
    r = report(cell=args.cell, n=sizes, kernel=args.kernel, radius=args.radius)
    out.write(json_text(r) if args.json else report_text(r))
