"""The checking commands, registered with the front door (:mod:`formal.cli`) through the
``formal_transformers.commands`` entry-point group: ``conform`` and ``verify``.  ``conform`` (and ``verify
--mutants``, conform on the shipped catalogue) need no torch unless ``--device cuda`` is asked for or the
function checked needs it; ``verify`` checks the torch reference and says how to install torch where it is
missing.

Each ``register_*`` adds its subparser; each command's ``run`` writes its report and returns the exit
status: 0 when every property holds, 1 when one does not (the checked implementation is at fault), and
bad usage raises a :class:`~formal.errors.FormalError`, which the front door prints as one line, exit 2.
"""

from __future__ import annotations

import os

from formal.arguments import bounded_int, memory_size, positive_seconds
from formal.errors import FormalError
from formal.guards.files import json_text
from formal.guards.limits import DEFAULT_MAX_MEMORY, format_size
from formal.helptext import epilog

from .. import require_torch

__all__ = ["register_conform", "register_verify", "available_cores", "MAX_JOBS"]

#: The most worker processes ``verify --jobs`` may start: each imports torch (0.3 GB, 2 s of CPU), and past a
#: dozen or so the longest check, not the number of workers, sets how long a run takes.
MAX_JOBS = 32
#: The most worker processes ``--scheduler local:N`` may start.
MAX_LOCAL = 256


def _need_torch(what: str):
    """Without torch a command says how to install it, in one line (exit 2), instead of an ImportError."""
    try:
        require_torch(what=what)
    except ImportError as exc:
        raise FormalError(str(exc)) from None


def register_conform(sub):
    from .settings import DEFAULT_TIMEOUT, MAX_EXAMPLES, MAX_SIZE, PROFILES
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
                   help="the precision the function computes in, float64, float32 or bfloat16: its calibrated "
                        "tolerance applies")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _register_identify(p)
    p.set_defaults(run=_conform)


def _register_identify(p):
    from .settings import DEFAULT_BUDGET, MAX_BUDGET
    p.add_argument("--identify", action="store_true",
                   help="search the algorithm's variants (its options not given with -o) for those the function "
                        "conforms to; exit 0 when one does, 1 with the nearest when none does")
    p.add_argument("--budget", type=bounded_int(1, MAX_BUDGET), metavar="VARIANTS",
                   help=f"with --identify: the most variants tried, fewest changes from the defaults first "
                        f"(default: {DEFAULT_BUDGET})")


def _conform(args, out) -> int:
    if args.device == "cuda":  # cuda without torch or without a GPU: a usage error, before anything is imported
        _need_torch("conform --device cuda")
        from ..model.device import device as resolve_device
        resolve_device(args.device)
    from formal.engine.options import parse_options

    from .conform import conform, report_text
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

    from .identify import identify, identify_text
    from .settings import DEFAULT_BUDGET
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


def register_verify(sub):
    p = sub.add_parser(
        "verify", help="Check the torch reference against the spec, every algorithm and variant",
        description="Check the torch reference against the spec — the package's main job: run the formal ↔ "
                    "reference and cost properties for every algorithm and variant (float64 equality, both "
                    "attention paths, float32/bfloat16 within calibrated "
                    "tolerances, FLOPs = FlopCounterMode, parameters = numel, gradients = finite differences, "
                    "KV cache = recomputation) and print one table; --variants checks every combination of "
                    "options as a task of its own, on worker processes or a Dask cluster (--scheduler); "
                    "--mutants measures conform instead. Exit 0 when every check passes, 1 when one fails, "
                    "2 on bad usage, 130 on Ctrl-C (after the partial report).",
        epilog=epilog("verify", "verify --only attention,mhattention --jobs 1 --quiet",
                      "verify --json - --quiet > report.json", "verify --mutants --only attention",
                      "verify --variants all --only attention,mhattention --dry-run",
                      "verify --variants n_kv_heads=1,bias=false --scheduler local:4",
                      "verify --variants all --profile thorough --scheduler tcp://10.0.0.5:8786"))
    p.add_argument("--profile", choices=("quick", "thorough"), default="quick", metavar="PROFILE",
                   help="quick: 12 examples per check and the boundary cases; thorough: 100")
    p.add_argument("--variants", metavar="SPEC",
                   help="all: check every combination of each algorithm's options (their domains' values; "
                        "combinations a rule of the declarations rejects are skipped and counted), each a task "
                        "with examples of its own; OPTION=VALUE,...: the combinations with those options fixed "
                        "(default: each example draws its options)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the tasks, per algorithm, and the estimated wall time on 1, 8, 64 and this run's "
                        "workers (from measured per-task costs), and check nothing")
    p.add_argument("--jobs", type=bounded_int(1, MAX_JOBS), metavar="JOBS",
                   help=f"worker processes that run the tasks, the longest first (default: the CPU cores "
                        f"available, here {min(available_cores(), MAX_JOBS)}); 1 runs them in this process")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the tasks on a Dask cluster (pip install 'formal-transformers[dask]'): a running "
                        "scheduler's address (tcp://host:8786), or local:N to start N worker processes here")
    p.add_argument("--mutants", action="store_true",
                   help="instead: run conform on the shipped catalogue of correct implementations (each must "
                        "pass) and planted bugs (each must fail) and print the kill rate per algorithm")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", metavar="DEVICE",
                   help="where the reference runs: auto (cuda when available), cpu, cuda")
    p.add_argument("--seed", type=bounded_int(0), default=0, metavar="SEED", help="first example's seed")
    p.add_argument("--only", metavar="NAMES", help="comma-separated algorithm names (default: all)")
    p.add_argument("--json", metavar="FILE", help="also write the report as JSON to FILE (atomically); with -, "
                   "print it on stdout and the table on stderr")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(run=_verify)


def _executor(args):
    """``(jobs, scheduler)`` from --jobs and --scheduler: at most one of them is given."""
    from .executors import parse_scheduler
    if args.scheduler is not None and args.jobs is not None:
        raise FormalError("--jobs runs worker processes here, --scheduler on a Dask cluster: give one of them")
    if args.scheduler is not None:
        return 1, parse_scheduler(args.scheduler, MAX_LOCAL)
    return (min(available_cores(), MAX_JOBS) if args.jobs is None else args.jobs), None


def _verify(args, out) -> int:
    import sys

    if "sympy" not in sys.modules:  # it is imported soon, and reads this once (the workers inherit it)
        from .settings import SYMPY_CACHE_SIZE
        os.environ.setdefault("SYMPY_CACHE_SIZE", str(SYMPY_CACHE_SIZE))
    from .reports import check_destination, write_json
    if args.mutants and args.variants is not None:
        raise FormalError("--variants chooses the reference's variants, which --mutants does not check")
    if not args.mutants:
        _need_torch("verify")
    to_stdout = args.json == "-"            # - is stdout, as everywhere: the JSON there, the table on stderr
    if args.json and not to_stdout:
        check_destination(args.json)
    only = None if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    if only == []:
        raise FormalError(f"--only {args.only!r} names no algorithm: give comma-separated names (see `list`)")
    jobs, scheduler = _executor(args)
    progress = None if args.quiet else sys.stderr
    if args.dry_run:
        if args.json:
            raise FormalError("--dry-run prints the plan as text and checks nothing: there is no report for --json")
        return _dry_run(args, only, jobs, scheduler, out)
    try:
        if args.mutants:
            from .mutation import kill_rate
            report = kill_rate(profile=args.profile, seed=args.seed, only=only, progress=progress, jobs=jobs,
                               scheduler=scheduler)
        else:
            from .verify import verify
            report = verify(profile=args.profile, device=args.device, seed=args.seed, only=only, jobs=jobs,
                            progress=progress, variants=args.variants, scheduler=scheduler)
    except KeyboardInterrupt:  # before the tasks ran (while planning, importing): nothing to report
        sys.stderr.write("formal-transformers: verify interrupted before any task ran; no report written\n")
        return 130
    if report.interrupted:  # the partial report, then one line; no JSON, which a reader would take as whole
        (sys.stderr if to_stdout else out).write(report.text())
        sys.stderr.write(f"formal-transformers: verify interrupted after {report.done} of {report.tasks} tasks; "
                         f"the report above is partial; no JSON written\n")
        return 130
    if to_stdout:
        sys.stderr.write(report.text())
        out.write(json_text(report.as_json()))
    else:
        out.write(report.text())
        if args.json:
            write_json(report, args.json)
    return 0 if report.ok else 1


def _dry_run(args, only, jobs, scheduler, out) -> int:
    from .campaigns import dry_run_text
    if scheduler is None:
        workers, executor = jobs, "this process" if jobs == 1 else "processes"
    else:
        workers, executor = (scheduler[1] if scheduler[0] == "local" else None), "dask"
    if args.mutants:
        from .campaigns import Campaign
        from .mutation import tasks
        plan = Campaign(tasks(only, args.profile, args.seed), what="verify --mutants: conform on the catalogue")
    else:
        from .verify import prepare
        plan = prepare(profile=args.profile, device=args.device, seed=args.seed, only=only,
                       variants=args.variants)[1]
    out.write(dry_run_text(plan, workers, executor, args.profile))
    return 0


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity, where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1
