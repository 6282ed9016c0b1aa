"""``formal-transformers conform``: check any implementation of an algorithm against the spec
(:mod:`reference.conformance`), and ``conform --identify``, which variant it is.  It needs no torch unless
``--device cuda`` is asked for or the function checked needs it.  Exit 0 when every property holds, 1 when
one does not (the checked implementation is at fault); bad usage raises a :class:`~formal.errors.FormalError`,
which the front door prints as one line, exit 2."""

from __future__ import annotations

from reference import require_torch

from ...errors import FormalError
from ...guards.files import json_text
from ...guards.limits import DEFAULT_MAX_MEMORY, format_size
from ..arguments import bounded_int, memory_size, positive_seconds
from ..helptext import epilog

__all__ = ["register", "need_torch"]


def need_torch(what: str):
    """Without torch a command says how to install it, in one line (exit 2), instead of an ImportError."""
    try:
        require_torch(what=what)
    except ImportError as exc:
        raise FormalError(str(exc)) from None


def register(sub):
    from reference.conformance.settings import DEFAULT_TIMEOUT

    from ...sampling.profiles import MAX_EXAMPLES, MAX_SIZE, PROFILES
    quick, thorough = PROFILES["quick"], PROFILES["thorough"]
    p = sub.add_parser(
        "conform", help="Check any implementation of an algorithm against the spec",
        description="Check a Python function against one of the spec's algorithms on seeded examples — the "
                    "boundary cases (ℓ = 1, ℓ = ℓ_max, ℓ_z ≠ ℓ_x, one and several heads and layers, lengths past "
                    "every power of two) and random ones: equality with the spec, shapes, NaN, masks, causality, "
                    "equivariance. The function runs in a worker process: its exceptions, exits, output and "
                    "hangs are reported, never passed on. Exit 0 when every property holds, 1 with the smallest "
                    "failing configuration when one does not, 2 on bad usage.",
        epilog=epilog("conform examples/attention.py:attention --algorithm attention",
                      "conform mymodule:mha --algorithm mhattention -o n_kv_heads=2 --profile thorough",
                      "conform mymodule:mha --algorithm mhattention --identify --json"))
    p.add_argument("target", metavar="TARGET", help="path/to/file.py:function or module:function")
    p.add_argument("--algorithm", required=True, metavar="NAME", help="the spec's algorithm (see `list`)")
    p.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="the variant the function implements, e.g. -o bias=false (repeatable)")
    p.add_argument("--layout", choices=("columns", "rows"), default="columns",
                   metavar="LAYOUT", help="columns: the paper's d×ℓ; rows: inputs and outputs transposed, ℓ×d "
                        "(an image's feature grid stays n_h×n_w×D)")
    p.add_argument("--profile", choices=tuple(PROFILES), default="quick", metavar="PROFILE",
                   help=f"quick: {quick.examples} random examples up to size {quick.max_size}; "
                        f"thorough: {thorough.examples} up to size {thorough.max_size}")
    p.add_argument("--examples", type=bounded_int(1, MAX_EXAMPLES), metavar="EXAMPLES",
                   help="random examples, beside the boundary cases (default: the profile's)")
    p.add_argument("--max-size", type=bounded_int(2, MAX_SIZE), metavar="LENGTH",
                   help="the longest sequence drawn; lengths past every power of two up to LENGTH are boundary cases "
                        "(default: the profile's)")
    p.add_argument("--seed", type=bounded_int(0), default=0, metavar="SEED", help="first example's seed")
    p.add_argument("--size", action="append", default=[], metavar="NAME=EXPR",
                   help="fix a size (--size H=4) or tie it to the others as the function does (--size d_attn=d_x/H "
                        "--size d_z=d_x), in the claims' formula grammar; the examples meet it (repeatable)")
    p.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"time one call of the function may take before it fails (default: {DEFAULT_TIMEOUT:g})")
    p.add_argument("--max-memory", type=memory_size, default=DEFAULT_MAX_MEMORY, metavar="SIZE",
                   help=f"memory the function's worker may take (its address space, on the CPU) and the spec's "
                        f"arrays: bytes or a size such as 8GiB (default: {format_size(DEFAULT_MAX_MEMORY)})")
    p.add_argument("--in-process", action="store_true",
                   help="run the function in this process (a debugger can stop in it; a hang cannot be ended)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", metavar="DEVICE",
                   help="passed to the function as device= when it takes one: cpu, cuda")
    p.add_argument("--precision", choices=("float64", "float32", "bfloat16"), default="float64", metavar="DTYPE",
                   help="the precision the function computes in, float64, float32 or bfloat16: each example is "
                        "held to 4x what the spec emulated in that precision errs by there")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _register_identify(p)
    p.set_defaults(run=_conform)


def _register_identify(p):
    from reference.conformance.settings import DEFAULT_BUDGET, MAX_BUDGET
    p.add_argument("--identify", action="store_true",
                   help="search the algorithm's variants (its options not given with -o) for those the function "
                        "conforms to; exit 0 when one does, 1 with the nearest when none does")
    p.add_argument("--budget", type=bounded_int(1, MAX_BUDGET), metavar="VARIANTS",
                   help=f"with --identify: the most variants tried, fewest changes from the defaults first "
                        f"(default: {DEFAULT_BUDGET})")


def _conform(args, out) -> int:
    if args.device == "cuda":  # cuda without torch or without a GPU: a usage error, before anything is imported
        need_torch("conform --device cuda")
        from reference.model.device import device as resolve_device
        resolve_device(args.device)
    from reference.conformance.conform import conform, report_text

    from ...engine.options import parse_options
    options = parse_options(args.algorithm, args.option) if args.option else {}
    if args.identify:
        return _identify(args, options, out)
    if args.budget is not None:
        raise FormalError("--budget bounds the search of --identify; give --identify too")
    report = conform(args.target, args.algorithm, options=options, layout=args.layout, profile=args.profile,
                     n_examples=args.examples, max_size=args.max_size, seed=args.seed, device=args.device,
                     precision=args.precision, timeout=args.timeout, isolate=not args.in_process,
                     max_memory=args.max_memory, sizes=args.size or None)
    if args.json:
        out.write(json_text(report.as_json()))
    else:
        out.write(report_text(report))
    return 0 if report.ok else 1


def _identify(args, options, out) -> int:
    import sys

    from reference.conformance.identify import identify, identify_text
    from reference.conformance.settings import DEFAULT_BUDGET
    sizes = getattr(args, "size", None)
    given = {"sizes": sizes} if sizes else {}
    progress = None if args.json else (lambda text: sys.stderr.write(text + "\n"))
    result = identify(args.target, args.algorithm, options=options, layout=args.layout, profile=args.profile,
                      n_examples=args.examples, max_size=args.max_size, seed=args.seed, device=args.device,
                      precision=args.precision, timeout=args.timeout, isolate=not args.in_process,
                      max_memory=args.max_memory, progress=progress,
                      budget=DEFAULT_BUDGET if args.budget is None else args.budget, **given)
    out.write(json_text(result.as_json()) if args.json else identify_text(result))
    return 0 if result.ok else 1


