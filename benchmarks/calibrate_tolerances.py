"""Calibrate the reference's lower-precision tolerances: the worst |reference − spec| (the spec in float64)
over many seeded examples of every algorithm, in float32 and bfloat16, relative to max(1, max |spec|).

    python benchmarks/calibrate_tolerances.py [--examples N] [--max-size S] [--seed S] [--device cpu|cuda]
                                              [--only NAME,NAME]

The examples are verify's and conform's (formal.sampling.examples): the boundary cases and N random ones whose
sizes grow to S (default: conform's thorough profile, the largest sizes a tolerance is used at).

Each algorithm's figures are declared with its correct implementation, ``Implementation(name, factory,
{"float32": …, "bfloat16": …})`` in its family module of reference/catalogue/; reference/conformance/
tolerances.py states how they were measured and the margin taken over them.
"""

from __future__ import annotations

import argparse
import math

from formal.sampling.examples import PROFILES, examples
from formal.tools.arguments import bounded_int
from reference import tolerances
from reference.model.execute import execute
from reference.records import records
from reference.verification.verify import relative_error


def worst(name, dtype, n, seed, device, max_size):
    return max(relative_error(ex.algorithm(**ex.arguments),
                              execute(ex.algorithm, dtype=dtype, device=device, **ex.arguments))
               for ex in examples(name, n, seed=seed, max_size=max_size))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=bounded_int(1), default=200)
    parser.add_argument("--max-size", type=bounded_int(2), default=PROFILES["thorough"].max_size)
    parser.add_argument("--seed", type=bounded_int(0), default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", help="comma-separated algorithm names (default: every one)")
    args = parser.parse_args()
    names = [r.name for r in records() if not r.token_outputs]  # token ids are compared exactly
    if args.only:
        unknown = sorted(set(args.only.split(",")) - set(names))
        if unknown:
            parser.error(f"no algorithm {unknown[0]!r} to calibrate; known: {', '.join(names)}")
        names = [n for n in names if n in args.only.split(",")]
    print(f"{'algorithm':24s} {'float32':>10s} {'bfloat16':>10s}   worst error / max(1, max|spec|); "
          f"(allowed now)")
    suggested = {"float32": {}, "bfloat16": {}}
    for name in names:
        cells = []
        for d in suggested:
            measured = worst(name, d, args.examples, args.seed, args.device, args.max_size)
            suggested[d][name] = float(f"{measured * tolerances.MARGIN:.0e}")  # rounded …
            if suggested[d][name] < measured * tolerances.MARGIN:                # … up
                step = 10 ** math.floor(math.log10(suggested[d][name]))
                suggested[d][name] = float(f"{suggested[d][name] + step:.0e}")
            cells.append(f"{measured:10.2e} ({tolerances.relative(d, name):.0e})")
        print(f"{name:24s} " + " ".join(cells), flush=True)
    print(f"measured × {tolerances.MARGIN}, rounded up (each algorithm's Implementation in its family module of "
          f"reference/catalogue/): {suggested}")


if __name__ == "__main__":
    main()
