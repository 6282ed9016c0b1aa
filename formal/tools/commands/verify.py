"""``formal-transformers verify``: the torch reference against the spec, every algorithm and variant
(:mod:`reference.verification`), ``verify --variants`` campaigns and ``verify --mutants`` (verify's kill rate
per check on the reference's planted bugs, and conform's on the shipped catalogue), on the execution layer
(:mod:`reference.execution`).  It says how to install torch where it is missing.  Exit 0 when every check
passes, 1 when one fails, 2 on bad usage, 130 on Ctrl-C (after the partial report)."""

from __future__ import annotations

import os

from ...errors import FormalError
from ...guards.files import json_text
from ...guards.limits import DEFAULT_MAX_MEMORY, format_size
from ..arguments import bounded_int, memory_size, name_list
from ..helptext import epilog
from .conform import need_torch

__all__ = ["register", "available_cores", "MAX_JOBS", "MAX_LOCAL"]

#: The most worker processes ``verify --jobs`` may start: each imports torch (0.3 GB, 2 s of CPU), and past a
#: dozen or so the longest check, not the number of workers, sets how long a run takes.
MAX_JOBS = 32
#: The most worker processes ``--scheduler local:N`` may start.
MAX_LOCAL = 256


def register(sub):
    p = sub.add_parser(
        "verify", help="Check the torch reference against the spec, every algorithm and variant",
        description="Check the torch reference against the spec — the package's main job: run the formal ↔ "
                    "reference and cost properties for every algorithm and variant (float64 equality on every "
                    "attention path, float32/bfloat16 within 4x what a correct computation in that precision "
                    "errs by on each example, FLOPs = FlopCounterMode, parameters = numel, gradients = finite "
                    "differences, KV cache = recomputation) and print one table; --variants checks every "
                    "combination of options as a task of its own, on worker processes or a Dask cluster (--scheduler); "
                    "--mutants measures verify's checks and conform instead. Exit 0 when every check passes, 1 "
                    "when one fails, 2 on bad usage, 130 on Ctrl-C (after the partial report).",
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
                   help="instead: run verify's checks on the torch reference with each of its planted bugs "
                        "(precision-path and single-path ones; every check must kill one, the reference with none "
                        "must pass) and print the kill rate per check; and conform on the shipped catalogue of "
                        "correct implementations (each must pass) and planted bugs (each must fail), with the kill "
                        "rate per algorithm")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), metavar="DEVICE",
                   help="where the reference runs: auto (cuda when available; the default), cpu, cuda (refused "
                        "where torch sees no GPU); not with --mutants, whose reference runs where auto puts it")
    p.add_argument("--max-memory", type=memory_size, metavar="SIZE",
                   help=f"the memory each task's examples may take, estimated before any is drawn: bytes or a size "
                        f"such as 8GiB (default: {format_size(DEFAULT_MAX_MEMORY)}); not with --mutants")
    p.add_argument("--seed", type=bounded_int(0), default=0, metavar="SEED", help="first example's seed")
    p.add_argument("--only", metavar="NAMES", help="comma-separated algorithm names (default: all)")
    p.add_argument("--json", metavar="FILE", help="also write the report as JSON to FILE (atomically); with -, "
                   "print it on stdout and the table on stderr")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(run=_verify)


def _executor(args):
    """``(jobs, scheduler)`` from --jobs and --scheduler: at most one of them is given."""
    from reference.execution.executors import parse_scheduler
    if args.scheduler is not None and args.jobs is not None:
        raise FormalError("--jobs runs worker processes here, --scheduler on a Dask cluster: give one of them")
    if args.scheduler is not None:
        return 1, parse_scheduler(args.scheduler, MAX_LOCAL)
    return (min(available_cores(), MAX_JOBS) if args.jobs is None else args.jobs), None


def _verify(args, out) -> int:
    import sys

    if "sympy" not in sys.modules:  # it is imported soon, and reads this once (the workers inherit it)
        from reference.execution.processes import SYMPY_CACHE_SIZE
        os.environ.setdefault("SYMPY_CACHE_SIZE", str(SYMPY_CACHE_SIZE))
    from reference.verification.reports import check_destination, write_json
    if args.mutants and args.variants is not None:
        raise FormalError("--variants chooses the reference's variants, which --mutants does not check")
    if args.mutants and args.device is not None:   # its reference runs where verify's default does
        raise FormalError(f"--device {args.device} chooses where verify's reference runs; --mutants runs its planted "
                          f"bugs where a GPU is, else on the CPU (the flex path's on CUDA only): give no --device "
                          f"with it")
    if args.mutants and args.max_memory is not None:   # the catalogue's examples are small and fixed
        raise FormalError("--max-memory bounds the examples of verify's campaigns; --mutants draws the profile's "
                          "small ones: give no --max-memory with it")
    device = "auto" if args.device is None else args.device
    if not args.mutants:
        need_torch("verify")
    to_stdout = args.json == "-"            # - is stdout, as everywhere: the JSON there, the table on stderr
    if args.json and not to_stdout:
        check_destination(args.json)
    only = None if args.only is None else name_list(args.only, "--only", "algorithm", "see `list`")
    jobs, scheduler = _executor(args)
    progress = None if args.quiet else sys.stderr
    if args.dry_run:
        if args.json:
            raise FormalError("--dry-run prints the plan as text and checks nothing: there is no report for --json")
        return _dry_run(args, only, jobs, scheduler, device, out)
    try:
        if args.mutants:
            from reference.verification.mutation import kill_rate
            report = kill_rate(profile=args.profile, seed=args.seed, only=only, progress=progress, jobs=jobs,
                               scheduler=scheduler)
        else:
            from reference.verification.verify import verify
            report = verify(profile=args.profile, device=device, seed=args.seed, only=only, jobs=jobs,
                            progress=progress, variants=args.variants, scheduler=scheduler,
                            max_memory=args.max_memory)
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


def _dry_run(args, only, jobs, scheduler, device, out) -> int:
    from reference.verification.campaigns import dry_run_text
    if scheduler is None:
        workers, executor = jobs, "this process" if jobs == 1 else "processes"
    else:
        workers, executor = (scheduler[1] if scheduler[0] == "local" else None), "dask"
    if args.mutants:
        from reference.verification.campaigns import Campaign
        from reference.verification.mutation import reference_plan, tasks
        planted = reference_plan(only, args.profile, args.seed, device)[1]   # none without torch
        what = "verify on the reference's planted bugs, conform on the catalogue" if planted else \
            "conform on the catalogue"
        plan = Campaign(planted + tasks(only, args.profile, args.seed), what=f"verify --mutants: {what}")
    else:
        from reference.verification.verify import prepare
        plan = prepare(profile=args.profile, device=device, seed=args.seed, only=only,
                       variants=args.variants, max_memory=args.max_memory)[1]
    out.write(dry_run_text(plan, workers, executor, args.profile))
    return 0


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity, where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1
