"""Measure how close the correct reference comes to its lower-precision bounds: per row (algorithm, precision,
attention path), the largest ratio of its error to its floored baseline over every example — what the margin
(reference.tolerances.MARGINS: 4 in both) must stay above.

    python benchmarks/calibrate_tolerances.py [--profile quick|thorough] [--seeds 0,1,2] [--only NAME,NAME]
                                              [--device cpu|cuda]

The examples are verify's (the profile's boundary cases and random examples, and the precision cases); the
baseline of each is the error of the spec emulated in that precision (reference/tolerances.py), floored as
verify floors it.  A ratio near the margin on a row is a row whose bound is tight; one past it is a false alarm
of verify — a bug of the reference, or a margin too small: look at the example the row names.
"""

from __future__ import annotations

import argparse

from formal.tools.arguments import UsageError, name_list
from reference import tolerances
from reference.model.device import device as resolve_device
from reference.records import records
from reference.verification.checks import CHECKS, PROFILES, Measure, applicable, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=list(PROFILES), default="quick")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds (default 0)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", help="comma-separated algorithm names (default: every one)")
    args = parser.parse_args()
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        parser.error(f"--seeds must be comma-separated integers, not {args.seeds!r}")
    known = [r.name for r in records()]
    names = known
    if args.only:
        try:
            names = name_list(args.only, "--only", "algorithm", "see `formal-transformers list`")
        except UsageError as exc:
            parser.error(str(exc))
        unknown = [n for n in names if n not in known]
        if unknown:
            parser.error(f"no algorithm {unknown[0]!r}; known: {', '.join(known)}")
    device = resolve_device(args.device)
    lower = [c for c, check in CHECKS.items() if check.dtype != "float64"]
    print(f"{'algorithm':24s} {'check':16s} {'worst error / (bound / margin)':>31s}  (margins {tolerances.MARGINS}; "
          f"profile {args.profile}, seeds {args.seeds})")
    overall = (0.0, "")
    for name in names:
        its = [c for c in applicable(name, device) if c in lower]
        worst = {}
        for seed in seeds:
            for row in rows(name, its, args.profile, seed, Measure(device)):
                ratio = row.max_error / row.allowed * row.margin if row.allowed else 0.0
                if ratio >= worst.get(row.check, (0.0,))[0]:
                    worst[row.check] = (ratio, row.verdict)
        for check, (ratio, verdict) in worst.items():
            print(f"{name:24s} {check:16s} {ratio:31.2f}  {'' if verdict == 'pass' else verdict}", flush=True)
            overall = max(overall, (ratio, f"{name} {check}"))
    print(f"largest: {overall[0]:.2f} ({overall[1]}); the margins are {tolerances.MARGINS}")


if __name__ == "__main__":
    main()
