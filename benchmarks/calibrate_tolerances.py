"""Calibrate the reference's lower-precision tolerances: the worst |reference − spec| (the spec in float64)
over many seeded examples of every algorithm, in float32 and bfloat16, relative to max(1, max |spec|).

    python benchmarks/calibrate_tolerances.py [--examples N] [--seed S] [--device cpu|cuda]

reference/tolerances.py states the figures this printed and the margin taken over them.
"""

from __future__ import annotations

import argparse
import math

from reference import tolerances
from reference.examples import EXAMPLE_ALGORITHMS, examples
from reference.execute import execute
from reference.verify import relative_error


def worst(name, dtype, n, seed, device):
    return max(relative_error(ex.algorithm(**ex.arguments),
                              execute(ex.algorithm, dtype=dtype, device=device, **ex.arguments))
               for ex in examples(name, n, seed=seed))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    names = [n for n in EXAMPLE_ALGORITHMS if n not in ("dinference", "edinference")]  # tokens, not numbers
    print(f"{'algorithm':24s} {'float32':>10s} {'bfloat16':>10s}   worst error / max(1, max|spec|); "
          f"(allowed now)")
    suggested = {"float32": {}, "bfloat16": {}}
    for name in names:
        cells = []
        for d in suggested:
            measured = worst(name, d, args.examples, args.seed, args.device)
            suggested[d][name] = float(f"{measured * tolerances.MARGIN:.0e}")  # rounded …
            if suggested[d][name] < measured * tolerances.MARGIN:                # … up
                suggested[d][name] = float(f"{suggested[d][name] + 10 ** math.floor(math.log10(suggested[d][name])):.0e}")
            cells.append(f"{measured:10.2e} ({tolerances.relative(d, name):.0e})")
        print(f"{name:24s} " + " ".join(cells), flush=True)
    print(f"measured × {tolerances.MARGIN}, rounded up: {suggested}")


if __name__ == "__main__":
    main()
