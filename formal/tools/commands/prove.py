"""``formal-transformers prove [NAME ...] [--list] [--json]``: check the theorems and their perturbed twins;
``prove --mutants [--about] [--only NAMES] [--jobs N] [--timeout SECONDS]``: plant each catalogued bug in the spec
and report which theorems catch it (:mod:`proofs.mutation`).

Registered with the front door when named (:data:`formal.tools.cli.DEFERRED`).  Exit 0 when
every theorem is proved and every twin rejected (with ``--mutants``: every bug caught by the theorems it is about,
none broken); 1 when one is not (the package's theorems are at fault, not the user); 2 for bad input (an unknown
theorem or mutant, options that do not go together).
"""

from __future__ import annotations

import sys

from ...errors import FormalError, shown

__all__ = ["register"]


def register(sub):
    from ..helptext import epilog
    p = sub.add_parser("prove", help="Check the spec's theorems, and reject their perturbed twins",
                       description="Check the theorems about the algorithm objects — symbolically with sympy, "
                                   "exhaustively up to a bound, or on seeded examples, each labelled with the level "
                                   "of evidence it reaches — and check that each theorem's perturbed twin (the same "
                                   "statement made slightly false) is rejected. Exit 0 when every theorem is proved "
                                   "and every twin rejected, 1 otherwise, 2 for an unknown name. With --mutants, plant "
                                   "each bug of the shipped catalogue in the spec, in a fresh process of its own, and "
                                   "report which theorems' statements fail under it: exit 0 when every bug is caught "
                                   "by the theorems it is about; 130 on Ctrl-C, after the partial report.",
                       epilog=epilog("prove --list", "prove kaplan-n", "prove --mutants --about --jobs 2 --json"))
    p.add_argument("names", nargs="*", metavar="NAME", help="theorems to check (default: all; see --list)")
    p.add_argument("--list", action="store_true", help="list the theorems with their statements")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--mutants", action="store_true",
                   help="plant each bug of the shipped catalogue in the spec and report which theorems catch it "
                        "(with --list: list the catalogue)")
    p.add_argument("--about", action="store_true",
                   help="with --mutants: check only the theorems each bug is about (fast), not every theorem")
    p.add_argument("--only", metavar="NAMES", help="with --mutants: comma-separated bugs to plant (default: all)")
    p.add_argument("--jobs", type=int, metavar="JOBS",
                   help="with --mutants: worker processes, each planting one bug at a time in a fresh process of "
                        "its own (default: the CPUs available, at most 4; 1 plants them from this process)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --mutants: plant the bugs on a Dask cluster (pip install 'formal-transformers[dask]'): "
                        "a running scheduler's address (tcp://host:8786), or local:N to start N worker processes "
                        "here")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="with --mutants: stop a bug's process after this long; the theorems it had not decided are "
                        "undecided (default: 600)")
    p.set_defaults(run=_run)


def _cut(text, width):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _run(args, out):
    from proofs.registry import prove, theorems

    from ...guards.files import json_text
    from ..arguments import each_once, progress_line
    each_once(args.names, "the command line", "theorem")
    if (args.mutants or args.about or args.only is not None or args.jobs is not None or args.scheduler is not None
            or args.timeout is not None):
        return _run_mutants(args, out)
    if args.list:
        if args.names:
            raise FormalError("--list lists every theorem: give no names with it")
        rows = [{"name": t.name, "statement": t.statement, "level": t.level, "about": list(t.about),
                 "twin": t.twin} for t in theorems()]
        if args.json:
            out.write(json_text({"theorems": rows}))
        else:
            for r in rows:
                out.write(f"{r['name']:<34} {r['level']:<20} {r['statement']}\n")
        return 0
    results = prove(args.names, progress=progress_line(sys.stderr, "proving"))
    if args.json:
        out.write(json_text({"theorems": [r.as_json() for r in results],
                             "summary": {"theorems": len(results), "proved": sum(r.proved for r in results),
                                         "twins_rejected": sum(r.twin_rejected for r in results),
                                         "ok": all(r.ok for r in results)}}))
    else:
        header = ("theorem", "level", "result", "twin", "seconds")
        rows = [(r.theorem.name, r.theorem.level, r.verdict if r.proved else r.verdict.upper(),
                 r.twin_verdict if r.twin_rejected else f"{r.twin_verdict.upper()} (FAIL)", f"{r.seconds:.2f}")
                for r in results]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(5)]
        for row in [header, *rows]:
            out.write("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")
        out.write("\n")
        for r in results:
            out.write(f"{r.theorem.name}: {_cut(r.theorem.statement, 200)}\n")
            out.write(f"  proof:  {_cut(r.detail, 300)}\n")
            twin = r.twin_verdict if r.twin_rejected else r.twin_verdict.upper()
            out.write(f"  twin:   {_cut(r.theorem.twin, 200)} — {twin}: "
                      f"{_cut(r.counterexample, 300)}\n")
        proved, rejected = sum(r.proved for r in results), sum(r.twin_rejected for r in results)
        out.write(f"\n{len(results)} theorems: {proved} proved, {rejected} twins rejected\n")
    return 0 if all(r.ok for r in results) else 1


def _run_mutants(args, out):
    """``prove --mutants``: the campaign's report, or with ``--list`` the catalogue."""
    from proofs.mutants import catalogue
    from proofs.mutation import campaign, find, report_text

    from ...guards.files import json_text
    from ..arguments import name_list
    if not args.mutants:
        raise FormalError("--about, --only, --jobs, --scheduler and --timeout go with --mutants")
    if args.names:
        raise FormalError(f"--mutants plants bugs and checks the theorems they are about: give no theorem names "
                          f"(got {shown(args.names[0])}); choose bugs with --only")
    only = None if args.only is None else name_list(args.only, "--only", "bug", "see --mutants --list")
    if args.jobs is not None and args.jobs < 1:
        raise FormalError(f"--jobs {args.jobs} must be at least 1")
    if args.timeout is not None and not 0 < args.timeout < float("inf"):   # also nan
        raise FormalError(f"--timeout {args.timeout:g} must be a positive, finite number of seconds")
    if args.list:
        ignored = [flag for flag, given in (("--about", args.about), ("--jobs", args.jobs is not None),
                                            ("--scheduler", args.scheduler is not None),
                                            ("--timeout", args.timeout is not None)) if given]
        if ignored:
            raise FormalError(f"--mutants --list lists the catalogue and plants nothing: {ignored[0]} has no meaning "
                              "with it (--only chooses the bugs listed)")
        chosen = find(only) if only is not None else catalogue()
        rows = [{"name": m.name, "where": m.where, "about": list(m.about), "bug": m.bug} for m in chosen]
        if args.json:
            out.write(json_text({"mutants": rows}))
        else:
            for r in rows:
                out.write(f"{r['name']:<38} {r['where']:<16} {', '.join(r['about']) or '(no theorem)'}: {r['bug']}\n")
        return 0
    scheduler = None
    if args.scheduler is not None:
        from reference.execution.executors import parse_scheduler

        from .verify import MAX_LOCAL
        if args.jobs is not None:
            raise FormalError("--jobs runs worker processes here, --scheduler on a Dask cluster: give one of them")
        scheduler = parse_scheduler(args.scheduler, MAX_LOCAL)
    timeout = {} if args.timeout is None else {"timeout": args.timeout}
    report = campaign(only=only, about=args.about, jobs=args.jobs, scheduler=scheduler, progress=sys.stderr,
                      **timeout)
    if report.interrupted:   # the partial report, then one line; no JSON, which a reader would take as whole
        out.write(report_text(report))
        out.flush()
        sys.stderr.write(f"formal-transformers: prove --mutants interrupted after {len(report.results)} of "
                         f"{report.planned} bugs; the report above is partial\n")
        return 130
    out.write(json_text(report.as_json()) if args.json else report_text(report))
    return 0 if report.ok else 1
