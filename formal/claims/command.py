"""``formal-transformers check CLAIMS.toml [...] [--catalogue] [--only IDS] [--timeout SECONDS]
[--time-budget TOTAL_SECONDS] [--verbose] [--json]``.

Exit 0 when every claim holds or matches its ``expect``; 1 when one does not; 2 when a file cannot be read
or a claim is invalid (one line on stderr names the first such claim and its field; the report is still
printed, so the JSON stays one valid object).
"""

from __future__ import annotations

import sys

from ..errors import ConfigError, FormalError, shown

__all__ = ["register", "run_files"]


def register(sub):
    from ..arguments import positive_seconds
    from ..helptext import epilog
    p = sub.add_parser("check", help="Check complexity claims written as TOML against the derived values",
                       description="Check claims — a paper's or a slide's figures and formulas, written as "
                                   "[[claim]] tables in TOML — against the values derived from the algorithm "
                                   "objects: holds or fails, with the derived figure and the reason. Exit 0 when "
                                   "every claim holds or matches its expect, 1 when one does not, 2 for a file "
                                   "that cannot be read or an invalid claim.",
                       epilog=epilog("check claims.toml",
                                     "check --catalogue --only vaswani-sa-path,vaswani-conv-path --verbose",
                                     "check --catalogue --time-budget 60 --json"))
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
    p.add_argument("--verbose", action="store_true", help="give every claim's reason, those that hold too")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_run)


def run_files(paths, *, catalogue: bool = False, only=None, progress=None, timeout: float | None = 30.0,
              budget: float | None = None) -> list:
    """The verdicts of every claim in ``paths`` (and the catalogue), in order; ``timeout`` bounds each claim,
    ``budget`` the whole run (seconds; the claims not reached in it are undecided, not reached)."""
    import time

    from .claim import load
    from .decide import decide, not_reached
    claims = []
    if catalogue:
        from .catalogue import files
        paths = list(files()) + list(paths)
    for path in paths:
        claims += load(path)
    if only is not None:
        known = {c.id for c in claims}
        missing = sorted(set(only) - known)
        if missing:
            raise ConfigError(f"--only names {shown(missing[0])}, which no claim has")
        claims = [c for c in claims if c.id in only]
    verdicts, deadline = [], None if budget is None else time.monotonic() + budget
    for i, claim in enumerate(claims):
        if progress is not None:
            progress(i, len(claims), claim.id)
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            verdicts.append(not_reached(claim))
        elif left is not None and (timeout is None or left < timeout):
            verdicts.append(decide(claim, timeout=left, budget=True))
        else:
            verdicts.append(decide(claim, timeout=timeout))
    return verdicts


def _run(args, out):
    from ..arguments import progress_line
    from ..guards.files import json_text
    from .report import as_json, as_text
    if not args.files and not args.catalogue:
        raise FormalError("give a claims file (FILE.toml) or --catalogue")
    only = None
    if args.only is not None:
        only = {s.strip() for s in args.only.split(",") if s.strip()}
        if not only:
            raise FormalError(f"--only {shown(args.only)} names no claim: give comma-separated ids")
    verdicts = run_files(args.files, catalogue=args.catalogue, only=only,
                         progress=progress_line(sys.stderr, "checking"), timeout=args.timeout,
                         budget=args.time_budget)
    out.write(json_text(as_json(verdicts)) if args.json else as_text(verdicts, verbose=args.verbose))
    invalid = [v for v in verdicts if v.verdict == "invalid"]
    if invalid:
        out.flush()
        first = invalid[0]
        more = f" (and {len(invalid) - 1} more)" if len(invalid) > 1 else ""
        error = FormalError(f"claim {first.claim.id!r} in {first.claim.file} is invalid: {first.reason}{more}")
        raise error
    return 0 if all(v.ok for v in verdicts) else 1
