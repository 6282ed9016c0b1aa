"""The spec's own numpy execution against independent numpy implementations of the same algorithms, per
algorithm, printed as a table of ratios.

    python benchmarks/bench_spec.py [--repeats N] [--algorithms NAME ...] [--profile P] [--sizes largest|all]
                                    [--json FILE]

For every algorithm ``conform`` checks, the examples are the profile's at its largest sizes (the largest quarter
of its boundary cases and random examples, by total size, every option drawn from its domain; ``--sizes all``:
every one, as ``verify`` and ``conform`` run them), each set repeated to at least 20 ms of the control, and the
control is the correct implementation the mutant catalogue holds for that variant
(:mod:`reference.catalogue`: numpy, the paper's column layout, written as a user would).  Each
repetition runs, side by side:

- ``spec``: the spec on every example, as a program calling it again on the same shapes meets it (a run on the
  shapes of an earlier one replays that one's checked tape, :mod:`formal.engine.tape`, and the programs of its
  batched loops and column calls, :mod:`formal.engine.program`);
- ``control``: the control on every example;
- ``first``: the spec's first runs (every tape forgotten first: each example checked in full, its heads and
  windows batched, what repeats inside it — layers, steps — replayed): what ``verify`` and ``conform`` meet;
- ``plain``: the spec with no tape (:func:`formal.engine.tape.untaped`), every column call column by column and
  every loop trip by trip (:func:`formal.engine.columns.one_by_one`): the definition, executed as written.

The figures are the minimum CPU time over the repetitions (the least disturbed by other work on a shared
machine), per call (the set's time over its examples), and each ratio to the control.  The spec checks every
argument's shape, every line's result shape, the memory guard and NaN's origin, which the control does not: its
floor per call (15–35 µs) is the price of those checks, and the last line names the algorithms it keeps over
the goal — single calls whose control is a few numpy calls on small arrays.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def _largest(examples: list) -> list:
    """The largest quarter of ``examples`` by total size (at least 3): the profile's largest sizes."""
    ranked = sorted(examples, key=lambda e: e.size)
    return ranked[-max(3, len(ranked) // 4):]


def _cases(name, profile, sizes="largest"):
    """``(algorithm, spec arguments, control, control arguments)`` per example the spec defines: the profile's
    examples at its largest sizes, or all of them."""
    from formal.errors import FormalError
    from formal.sampling.examples import PROFILES, examples
    from reference.catalogue import IMPLEMENTATIONS
    from reference.conformance.conform import normalise
    from reference.conformance.targets import Target

    settings = PROFILES[profile]
    cases = []
    drawn = examples(name, settings.examples, seed=0, max_size=settings.max_size)
    for example in _largest(drawn) if sizes == "largest" else drawn:
        arguments = normalise(example)
        control = IMPLEMENTATIONS[name].factory(**example.algorithm.options)
        try:
            example.algorithm(**arguments)
        except FormalError:      # undefined there: conform skips it too
            continue
        called = Target(control, name, example.algorithm).arguments(arguments)   # as conform calls it
        cases.append((example.algorithm, arguments, control, called))
    return cases


def _cpu(run) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def measure(name, *, repeats=5, profile="quick", sizes="largest") -> dict:
    """The minimum CPU seconds over ``repeats`` of the spec (its runs replayed), the control, the spec's first
    runs (every tape forgotten: each example checked in full, what repeats inside it replayed) and the spec
    with neither tapes nor columns at once (the definition, as executed before either)."""
    from formal.engine.columns import one_by_one
    from formal.engine.tape import forget, untaped

    cases = _cases(name, profile, sizes)
    rounds = [1]

    def spec(fresh=False):
        for _ in range(rounds[0]):
            if fresh:      # every tape forgotten: each example's first run
                forget()
            for algorithm, arguments, _, _ in cases:
                algorithm(**arguments)

    def control():
        for _ in range(rounds[0]):
            for _, _, function, arguments in cases:
                function(**arguments)

    def first():
        spec(fresh=True)

    def definition():
        with one_by_one(), untaped():
            spec()

    spec(), control()   # warm: the derivations, the compiled size expressions
    rounds[0] = max(1, int(0.02 / max(_cpu(control), 1e-6)))   # ≥ 20 ms of the control per measurement
    times = {"spec": [], "control": [], "first": [], "one_by_one": []}
    for _ in range(repeats):
        for key, run in (("spec", spec), ("control", control), ("first", first), ("one_by_one", definition)):
            times[key].append(_cpu(run))
    best = {key: min(values) for key, values in times.items()}
    return {"algorithm": name, "examples": len(cases), "rounds": rounds[0],
            **{f"{k}_ms": 1e3 * v / rounds[0] for k, v in best.items()},
            "ratio": best["spec"] / best["control"], "ratio_first": best["first"] / best["control"],
            "ratio_one_by_one": best["one_by_one"] / best["control"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, metavar="N", help="repetitions per algorithm (default 5)")
    parser.add_argument("--algorithms", nargs="+", metavar="NAME", help="these algorithms only (default: all)")
    parser.add_argument("--profile", default="quick", choices=("quick", "thorough"), help="examples (default quick)")
    parser.add_argument("--sizes", default="largest", choices=("largest", "all"),
                        help="the profile's examples at its largest sizes (the largest quarter, default) or all")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--goal", type=float, default=3.0, metavar="RATIO", help="the ratio aimed at (default 3)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats} must be at least 1")
    from formal.sampling.examples import EXAMPLE_ALGORITHMS
    names = args.algorithms or list(EXAMPLE_ALGORITHMS)
    unknown = [n for n in names if n not in EXAMPLE_ALGORITHMS]
    if unknown:
        parser.error(f"unknown algorithm {unknown[0]!r}; known: {', '.join(EXAMPLE_ALGORITHMS)}")
    print(f"{'algorithm':<24} {'examples':>8} {'control µs':>10} {'spec µs':>8} {'ratio':>6}  {'first µs':>8} "
          f"{'ratio':>6}  {'plain µs':>8} {'ratio':>6}", flush=True)
    rows = []
    for name in names:
        row = measure(name, repeats=args.repeats, profile=args.profile, sizes=args.sizes)
        rows.append(row)
        call = {k: 1e3 * row[f"{k}_ms"] / row["examples"] for k in ("control", "spec", "first", "one_by_one")}
        row.update({f"{k}_us_per_call": v for k, v in call.items()})
        print(f"{name:<24} {row['examples']:>8} {call['control']:>10.1f} {call['spec']:>8.1f} {row['ratio']:>6.1f}"
              f"  {call['first']:>8.1f} {row['ratio_first']:>6.1f}  {call['one_by_one']:>8.1f} "
              f"{row['ratio_one_by_one']:>6.1f}", flush=True)
    over = [r for r in rows if r["ratio"] > args.goal]
    total = {k: sum(r[k] for r in rows) for k in ("spec_ms", "control_ms", "first_ms", "one_by_one_ms")}
    print(f"{len(rows) - len(over)} of {len(rows)} algorithms within {args.goal:g}× their control (replayed runs); "
          f"all together {total['spec_ms'] / total['control_ms']:.1f}× replayed, "
          f"{total['first_ms'] / total['control_ms']:.1f}× first runs, "
          f"{total['one_by_one_ms'] / total['control_ms']:.1f}× plain; minimum CPU time of {args.repeats} "
          f"repetitions, {args.profile} profile, {args.sizes} sizes, python {sys.version.split()[0]}")
    if over:   # what the spec checks on every call, against a control of a few numpy calls on small arrays
        extra = [r["spec_us_per_call"] - r["control_us_per_call"] for r in over]
        print(f"over {args.goal:g}×: {', '.join(r['algorithm'] for r in over)} — their controls take "
              f"{min(r['control_us_per_call'] for r in over):.1f}–{max(r['control_us_per_call'] for r in over):.1f} "
              f"µs a call, the spec {min(extra):.0f}–{max(extra):.0f} µs more (its checks of every argument, the "
              f"replay, the output's finiteness)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"profile": args.profile, "sizes": args.sizes, "repeats": args.repeats, "goal": args.goal,
                       "rows": rows}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
