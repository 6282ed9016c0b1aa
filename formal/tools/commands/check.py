"""``formal-transformers check CLAIMS.toml [...] [--catalogue] [--only IDS] [--timeout SECONDS]
[--time-budget TOTAL_SECONDS | --jobs N | --scheduler ADDRESS|local:N] [--verbose] [--json]``.

Claims are decided one by one in this process — or, with ``--jobs`` or ``--scheduler``, the ``property`` and
``implementation`` claims (seconds each: they run seeded examples) are sent to worker processes here or to a
Dask cluster on ``reference``'s execution layer (:mod:`formal.tools.claims.jobs`), while
the others are decided here; the verdicts come back in the claims' order, and the report is the same.
``--time-budget`` bounds a run in this process only (with ``--jobs`` or ``--scheduler`` it is refused);
``--timeout`` bounds each claim wherever it runs.

Exit 0 when every claim holds or matches its ``expect``; 1 when one does not; 2 when a file cannot be read
or a claim is invalid (one line on stderr names the first such claim and its field; the report is still
printed, so the JSON stays one valid object); 130 on Ctrl-C, after the report of the claims decided so far
(the others undecided, not reached: interrupted) and one line on stderr.
"""

from __future__ import annotations

import sys

from ...errors import ConfigError, FormalError, shown

__all__ = ["register", "run_files", "Interrupted", "MAX_JOBS"]

#: The most worker processes ``check --jobs`` may start (as ``verify --jobs``).
MAX_JOBS = 32
_BOTH = "--jobs runs worker processes here, --scheduler on a Dask cluster: give one of them"


def register(sub):
    from ..arguments import bounded_int, positive_seconds
    from ..helptext import epilog
    p = sub.add_parser("check", help="Check complexity claims written as TOML against the derived values",
                       description="Check claims — a paper's or a slide's figures and formulas, written as "
                                   "[[claim]] tables in TOML — against the values derived from the algorithm "
                                   "objects: holds or fails, with the derived figure and the reason. Exit 0 when "
                                   "every claim holds or matches its expect, 1 when one does not, 2 for a file "
                                   "that cannot be read or an invalid claim, 130 on Ctrl-C (after the partial "
                                   "report). The property and implementation claims run seeded examples: "
                                   "--jobs or --scheduler decides them in worker processes or on a Dask cluster, "
                                   "with the same report.",
                       epilog=epilog("check claims.toml",
                                     "check --catalogue --only vaswani-sa-path,vaswani-conv-path --verbose",
                                     "check --catalogue --time-budget 60 --json",
                                     "check claims.toml --jobs 4",
                                     "check claims.toml --scheduler tcp://10.0.0.5:8786 --json"))
    p.add_argument("files", nargs="*", metavar="FILE.toml", help="claims files")
    p.add_argument("--catalogue", action="store_true",
                   help="check the catalogue shipped with the package (the papers' and lecture notes' claims)")
    p.add_argument("--only", metavar="IDS", help="comma-separated claim ids to check")
    p.add_argument("--timeout", type=positive_seconds, default=30.0, metavar="SECONDS",
                   help="the longest one claim may take to decide, before it is reported invalid (an "
                        "implementation claim has conform's limit per call instead) (default: 30)")
    p.add_argument("--time-budget", type=positive_seconds, default=None, metavar="TOTAL_SECONDS",
                   help="the longest the whole run may take: claims not reached by then are reported undecided, "
                        "not reached (default: none)")
    p.add_argument("--jobs", type=bounded_int(1, MAX_JOBS), metavar="JOBS",
                   help="worker processes that decide the property and implementation claims, the slow ones "
                        "(the others are decided here) (default: 1: every claim in this process)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="decide the property and implementation claims on a Dask cluster (pip install "
                        "'formal-transformers[dask]'): a running scheduler's address (tcp://host:8786), or local:N "
                        "to start N worker processes here")
    p.add_argument("--verbose", action="store_true", help="give every claim's reason, those that hold too")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_run)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_files`: ``verdicts`` has every claim's, those not decided undecided (not
    reached: interrupted)."""

    def __init__(self, verdicts):
        super().__init__("interrupted")
        self.verdicts = verdicts


def run_files(paths, *, catalogue: bool = False, only=None, progress=None, timeout: float | None = 30.0,
              budget: float | None = None, jobs: int = 1, scheduler: str | None = None, stream=None) -> list:
    """The verdicts of every claim in ``paths`` (and the catalogue), in order; ``timeout`` bounds each claim,
    ``budget`` the whole run (seconds; the claims not reached in it are undecided, not reached).

    With ``jobs`` > 1 or a ``scheduler`` (``local:N`` or a Dask scheduler's address), the property and
    implementation claims — the slow ones — are decided in worker processes or on the cluster
    (:mod:`formal.tools.claims.jobs`; ``stream`` shows their progress), the others here: the
    same verdicts.  Ctrl-C: :class:`Interrupted`, with the verdicts so far."""
    from ..claims.decide import undecided
    from ..claims.verdict import INTERRUPTED
    elsewhere = _executor(jobs, scheduler, budget)
    claims = _claims(paths, catalogue, only)
    verdicts = [None] * len(claims)
    try:
        if elsewhere is not None:
            sent = [i for i, claim in enumerate(claims) if _slow(claim)]
            found = elsewhere([claims[i] for i in sent], timeout=timeout, jobs=jobs, scheduler=scheduler,
                              progress=stream)
            for i, verdict in zip(sent, found):
                verdicts[i] = verdict
            if None in found:           # Ctrl-C: the executors ended their workers
                raise KeyboardInterrupt
        _decide_here(claims, verdicts, progress, timeout, budget)
    except KeyboardInterrupt:
        raise Interrupted([undecided(c, INTERRUPTED, reached=False) if v is None else v
                           for c, v in zip(claims, verdicts)]) from None
    return verdicts


def _claims(paths, catalogue, only) -> list:
    from ..claims.claim import load
    claims = []
    if catalogue:
        from ..claims.catalogue import files
        paths = list(files()) + list(paths)
    for path in paths:
        claims += load(path)
    if only is not None:
        known = {c.id for c in claims}
        missing = sorted(set(only) - known)
        if missing:
            raise ConfigError(f"--only names {shown(missing[0])}, which no claim has")
        claims = [c for c in claims if c.id in only]
    return claims


def _slow(claim) -> bool:
    """Whether a claim runs examples (a ``property`` or ``implementation`` claim, valid as read)."""
    return claim.error is None and (claim.kind == "implementation"
                                    or bool(claim.assertion) and claim.assertion[0] == "property")


def _executor(jobs, scheduler, budget):
    """The function that decides claims elsewhere (:func:`formal.tools.claims.jobs.decide_elsewhere`) where
    ``jobs`` or ``scheduler`` asks for it, else None."""
    if jobs == 1 and scheduler is None:
        return None
    if scheduler is not None and jobs != 1:
        raise ConfigError(_BOTH)
    flag = "--jobs" if scheduler is None else "--scheduler"
    if budget is not None:
        raise ConfigError(f"--time-budget bounds a run in this process; with {flag} bound each claim with "
                          "--timeout instead")
    from ..claims.jobs import decide_elsewhere
    return decide_elsewhere


def _decide_here(claims, verdicts, progress, timeout, budget):
    """Decide in this process each claim whose verdict is None yet, in order, within ``budget``."""
    import time

    from ..claims.decide import decide, not_reached
    todo = [i for i, v in enumerate(verdicts) if v is None]
    deadline = None if budget is None else time.monotonic() + budget
    for k, i in enumerate(todo):
        claim = claims[i]
        if progress is not None:
            progress(k, len(todo), claim.id)
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            verdicts[i] = not_reached(claim)
        elif left is not None and (timeout is None or left < timeout):
            verdicts[i] = decide(claim, timeout=left, budget=True)
        else:
            verdicts[i] = decide(claim, timeout=timeout)


def _run(args, out):
    from ..arguments import name_list, progress_line
    if not args.files and not args.catalogue:
        raise FormalError("give a claims file (FILE.toml) or --catalogue")
    only = None
    if args.only is not None:
        only = set(name_list(args.only, "--only", "claim", "the ids of the claims files"))
    if args.jobs is not None and args.scheduler is not None:
        raise FormalError(_BOTH)
    try:
        verdicts = run_files(args.files, catalogue=args.catalogue, only=only,
                             progress=progress_line(sys.stderr, "checking"), timeout=args.timeout,
                             budget=args.time_budget, jobs=args.jobs or 1, scheduler=args.scheduler,
                             stream=sys.stderr)
    except Interrupted as stop:  # the partial report, then one line
        _report(stop.verdicts, args, out)
        done = sum(v.reached for v in stop.verdicts)
        sys.stderr.write(f"formal-transformers: check interrupted after {done} of {len(stop.verdicts)} claims; "
                         "the report above is partial\n")
        return 130
    _report(verdicts, args, out)
    invalid = [v for v in verdicts if v.verdict == "invalid"]
    if invalid:
        out.flush()
        first = invalid[0]
        more = f" (and {len(invalid) - 1} more)" if len(invalid) > 1 else ""
        error = FormalError(f"claim {first.claim.id!r} in {first.claim.file} is invalid: {first.reason}{more}")
        raise error
    return 0 if all(v.ok for v in verdicts) else 1


def _report(verdicts, args, out):
    from ...guards.files import json_text
    from ..claims.report import as_json, as_text
    out.write(json_text(as_json(verdicts)) if args.json else as_text(verdicts, verbose=args.verbose))
