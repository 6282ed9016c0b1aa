"""How far the reference may stray from the float64 spec, and the baseline each lower-precision bound comes from.

float64 is held to :data:`FLOAT64` (1e-10, relative to ``max(1, max |spec|)``) everywhere.  In float32 and
bfloat16 a bound is measured, example by example, on the example itself: the **baseline** is the error a
known-good computation in that precision makes there — the spec run with every op's result rounded to the
precision (:mod:`formal.engine.precision`), on the arguments rounded to it, once to nearest and once with
stochastic rounding, the larger of the two errors — and the bound is :data:`MARGINS` (4 in both) times it
(:func:`bounds`).  Floors keep a lucky baseline from making a bound no correct computation meets, each scaled
to the output's size: the row's median relative baseline (its typical error), one rounding of the output (the
unit roundoff u) and a float32 sum's k·u (what a float32 accumulation errs by, which the emulation does not
make).  An algorithm that moves values without arithmetic (a table lookup) is held to one rounding: its margin
is 1 (:func:`margin`).  An example whose bound reaches the output's range (``margin × baseline ≥ 1``: a
correct computation keeps no digit there) is left out, with the reason, never by loosening the row.

``verify``'s rows (:mod:`reference.verification.checks`), ``conform --precision`` and the tests comparing the
reference with third parties in a lower precision (:func:`allowed`, one example's bound) all take their bounds
from here: no figure is calibrated by hand.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from formal.engine import precision as emulation
from formal.errors import ConfigError

__all__ = ["DTYPES", "MARGIN", "MARGINS", "FLOAT64", "RUNS", "SETTLED", "Bound", "baseline", "bounds", "margin",
           "magnitude", "allowed", "unstable", "longest", "scale", "differences", "deviation", "outputs",
           "relative_error"]

#: The margin a lower-precision error may have over the baseline's (:func:`bounds`), per precision.  Measured
#: (the worst error / (bound / margin) over a row's examples: ``python benchmarks/calibrate_tolerances.py``), the
#: correct reference comes to 3.25× its float32 baseline on one thorough example (a layer norm with ε = 0 of three
#: nearly equal entries: torch's float32 kernels keep float32 inside an op, a norm's mean and variance, where the
#: emulation rounds each op's result once) and to 3.4× its bfloat16 one on an encoder–decoder loss of 0.26 (seeds
#: from 10⁶); the worst elsewhere is 2.6×.  4 leaves room over both and still fails every planted precision bug.
MARGINS = {"float32": 4, "bfloat16": 4}

#: The margin the docs quote (the same in both precisions).
MARGIN = MARGINS["bfloat16"]

#: The precisions a tolerance exists for.
DTYPES = ("float64", "float32", "bfloat16")

#: float64 is held to 1e-10 everywhere: far above float64's rounding through any algorithm here (≤ 1e-14
#: measured), far below any bug's error.
FLOAT64 = 1e-10

if not FLOAT64 < 1 or any(m * emulation.UNIT_ROUNDOFF[d] >= 1 for d, m in MARGINS.items()):   # no output exceeds
    raise ConfigError(f"a bound reaches the output's range: FLOAT64 = {FLOAT64}, margins {MARGINS}")


def scale(want) -> float:
    """``max(1, max |want|)`` over the finite entries (an empty output has scale 1)."""
    values = np.abs(np.asarray(want, dtype=np.float64))
    finite = values[np.isfinite(values)]
    return max(1.0, float(finite.max())) if finite.size else 1.0


def differences(want, got) -> np.ndarray:
    """``|got − want|`` entry by entry (arrays of one shape), never blind to a NaN: an entry where the two agree —
    equal numbers, the same infinity, NaN in both (the spec's NaN, ``empty='nan'``, met) — differs by 0; any other
    entry where either is NaN or infinite differs by ``inf``.  (``abs(w − g)`` alone gives NaN there, which ``max``,
    ``np.nanmax`` and every comparison would pass over as if it were no difference.)

    >>> differences(np.array([1.0, np.nan, np.inf, 2.0]), np.array([1.5, np.nan, np.inf, np.nan])).tolist()
    [0.5, 0.0, 0.0, inf]
    """
    w, g = np.asarray(want, dtype=np.float64), np.asarray(got, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(w - g)
    agree = (w == g) | (np.isnan(w) & np.isnan(g))
    return np.where(agree, 0.0, np.where(np.isnan(diff), np.inf, diff))


def deviation(want, got) -> float:
    """The largest difference of ``got`` from ``want`` relative to :func:`scale` (``max(1, max |want|)``): how
    far an output is from the spec's.  A NaN or infinity of ``got`` that ``want`` does not have at that entry
    makes it ``inf`` — non-finite, never hidden as a small number (:func:`differences`).

    >>> deviation(np.array([2.0, 4.0]), np.array([2.0, 2.0]))
    0.5
    >>> deviation(np.array([2.0, 4.0]), np.array([np.nan, np.nan]))
    inf
    """
    diff = differences(want, got)
    return float(diff.max()) / scale(want) if diff.size else 0.0


def outputs(value) -> tuple:
    """An algorithm's output as a tuple of float64 arrays (one per output)."""
    return tuple(np.asarray(v, dtype=np.float64) for v in (value if isinstance(value, tuple) else (value,)))


def relative_error(want, got) -> float:
    """max |want − got| / max(1, max |want|) over every output; NaN must sit where the spec has NaN."""
    worst = 0.0
    for w, g in zip(outputs(want), outputs(got)):
        if w.shape != g.shape or not np.array_equal(np.isnan(w), np.isnan(g)):
            return float("inf")
        worst = max(worst, deviation(w, g))
    return worst


def allowed(dtype: str, algorithm, want, arguments: dict | None = None) -> float:
    """The largest absolute error a correct computation of ``algorithm`` (an algorithm object: a variant) in
    ``dtype`` may show against the float64 spec's output ``want`` on ``arguments``: :data:`FLOAT64` relative in
    float64; in float32 and bfloat16 the bound of this one example (:func:`bounds` of its :func:`baseline`,
    without a row to take a median of), ``inf`` where no digit is left to check."""
    if dtype not in DTYPES:
        raise ConfigError(f"no bound for dtype {dtype!r}; known: {', '.join(DTYPES)}")
    wants = outputs(want)
    size = max(scale(w) for w in wants)
    if dtype == "float64":
        return FLOAT64 * size
    if arguments is None:
        raise ConfigError(f"a {dtype} bound is measured on the example: pass its arguments")
    (bound,) = bounds([baseline(algorithm, arguments, dtype, want)], dtype, margin(algorithm, dtype),
                      [longest(arguments)], [magnitude(want)])
    return float("inf") if bound.allowed is None else bound.allowed * size


def longest(arguments: dict) -> int:
    """The longest axis of ``arguments``' arrays (1 where none has one): the most terms a sum over them can
    take — the k of a float32 sum's floor k·u (:func:`bounds`).

    >>> longest({"X": np.zeros((4, 512)), "t": 3, "mask": None})
    512
    """
    return max((max(np.shape(v), default=1) for v in arguments.values() if isinstance(v, np.ndarray)), default=1)


def _rounded_arguments(arguments: dict, dtype: str, rng=None) -> dict:
    return {k: emulation.round_to(v, dtype, rng) if isinstance(v, (np.ndarray, float)) else v
            for k, v in arguments.items()}


def baseline(algorithm, arguments: dict, dtype: str, want, *, seed: int = 0) -> float:
    """The error a known-good computation in ``dtype`` makes on ``algorithm(**arguments)``, relative to
    ``max(1, max |want|)`` (``want``: the float64 spec's output): the larger of the spec's own errors emulated
    in ``dtype`` (every op's result rounded, :mod:`formal.engine.precision`, the arguments rounded too), to
    nearest and stochastically (seeded by ``seed``) — two correct computations whose rounding errors fall
    differently, so that one that happens to round luckily does not set the bound."""
    worst = 0.0
    for rng in (None, np.random.default_rng(seed)):
        with emulation.emulated(dtype, rng):
            got = algorithm(**_rounded_arguments(arguments, dtype, rng))
        worst = max(worst, relative_error(want, got))
    return worst


#: How many more correct computations (stochastically rounded) :func:`unstable` runs before it calls a failure
#: the implementation's: the failure stands where its error lies past all of them, in the top 1/64 of correct
#: computations' errors there.  Set on the two examples where the correct reference broke its bound (verify's
#: quick draws, seeds 0–11): a Swin stage of 2-wide tokens, whose layer norms flip sign under rounding (3 runs in
#: 10 err as much as the fused path's 0.13), and an encoder–decoder loss of 10.7 summed in bfloat16 (2 in 40 err
#: 6 roundings of the loss, as the reference does): 64 runs miss the second with probability 0.95⁶⁴ ≈ 4 %, 16
#: with 44 %.
RUNS = 64

#: After this many of those runs a failure whose error is past the margin times the worst of them is the
#: implementation's without the rest (every planted bug's is: ``verify --mutants``); a nearer one takes all
#: :data:`RUNS`.
SETTLED = 8


def unstable(algorithm, arguments: dict, dtype: str, want, error: float, *, seed: int = 0,
             runs: int = RUNS) -> str:
    """Why an implementation's ``error`` (relative to ``max(1, max |want|)``) past its ``dtype`` bound on one
    example says nothing of the implementation, or ``""`` where the failure is its own: ``runs`` more correct
    computations — the spec emulated in ``dtype`` with stochastic rounding (:func:`baseline`'s second run), each
    seeded apart from ``seed`` — and the first that errs as much is the reason: rounding decides the output of
    this example (it is ill-conditioned in ``dtype``: a tie a rounding breaks either way, a norm of nearly equal
    entries), so a margin over what *one* correct computation erred by does not bound correct computations here.
    Run only on failures: a passing example needs no second look, and a failing one costs at most ``runs``
    emulations — :data:`SETTLED` where the error is past :data:`MARGINS` times the worst of them (a bug's, far
    past every correct computation's); an error no correct computation reaches (or ∞) is never excused."""
    worst = 0.0
    for run in range(runs):
        rng = np.random.default_rng([seed, run, 1])     # apart from the baseline's stream (default_rng(seed))
        with emulation.emulated(dtype, rng):
            got = algorithm(**_rounded_arguments(arguments, dtype, rng))
        own = relative_error(want, got)
        if own >= error:
            return (f"rounding decides the output here (ill-conditioned in {dtype}): a correct {dtype} computation "
                    f"(stochastic rounding, run {run + 1} of {runs}) errs by {own:.2g}, as much as the "
                    f"implementation's {error:.2g}")
        worst = max(worst, own)
        if run + 1 >= SETTLED and error > MARGINS.get(dtype, MARGIN) * worst:
            return ""
    return ""


@functools.cache
def margin(algorithm, dtype: str = "bfloat16") -> int:
    """:data:`MARGINS` of ``dtype``, or 1 for an algorithm whose ops only move values (a table lookup): its result
    in a lower precision is its inputs' rounding, which the baseline is, exactly."""
    from formal.engine.execution import flat_lines, ops_of
    ops = [op for line in flat_lines(algorithm.lines) for op in ops_of(line.expr)]
    return 1 if ops and all(op.free for op in ops) else MARGINS[dtype]


@dataclass(frozen=True)
class Bound:
    """One example's lower-precision bound: ``allowed`` = ``margin × baseline`` (None where the example is left
    out: ``reason`` says why), with the baseline it came from and the floor that set it, if one did."""

    allowed: float | None
    baseline: float
    margin: int
    floor: str = ""           # "", "row median" or "one rounding"
    reason: str = ""


#: The precision a lower-precision kernel accumulates in (every torch kernel, and every fused attention kernel,
#: sums float32 and bfloat16 products in float32).
ACCUMULATOR = "float32"


def magnitude(want) -> float:
    """How large an output is on the scale errors are measured on: ``max |want| / max(1, max |want|)`` over every
    output (1 where an entry reaches 1; 1/256 for probabilities spread over 256 tokens), never below float32's
    unit roundoff (an output of zeros)."""
    largest = max((float(np.max(np.abs(w[np.isfinite(w)]))) for w in outputs(want) if np.isfinite(w).any()),
                  default=0.0)
    return max(largest / max(1.0, largest), emulation.UNIT_ROUNDOFF[ACCUMULATOR])


def bounds(baselines: list, dtype: str, margin: int = MARGIN, lengths=None, magnitudes=None) -> list:
    """Each example's :class:`Bound` from the baselines of one row's examples (:func:`baseline`): ``margin ×
    max(b, r·m, u·m, k·u_acc·m)`` — b its baseline, m its output's :func:`magnitude` (``magnitudes``; 1 where not
    given), r the row's median relative baseline (median of b/m: the typical error of a correct computation,
    so that a lucky rounding sets no bound), u the unit roundoff of ``dtype`` (one rounding of the output's
    largest entry), k the example's longest sum (``lengths``: :func:`longest` of its arguments) and u_acc float32's unit
    roundoff — a sum of k terms accumulated in float32 errs by up to ≈ k·u_acc of its operands (the classical
    γ_k), which the emulation (each op exact, then rounded once) does not make; it matters in float32 only, and
    is not scaled by the output (a sum that cancels to a small output errs as its operands do).  The other
    floors scale with the output, so an output of probabilities ~1/256 is held to errors ~1/256 the size.  An
    example whose bound reaches 1 (the output's whole range: a correct computation keeps no digit) is left out
    with the reason."""
    if not baselines:
        return []
    lengths = [1] * len(baselines) if lengths is None else lengths
    magnitudes = [1.0] * len(baselines) if magnitudes is None else magnitudes
    typical = float(np.median([b / m for b, m in zip(baselines, magnitudes)]))
    u, u_acc = emulation.UNIT_ROUNDOFF[dtype], emulation.UNIT_ROUNDOFF[ACCUMULATOR]
    out = []
    for b, k, m in zip(baselines, lengths, magnitudes):
        floors = ((b, ""), (typical * m, "row median"), (u * m, "one rounding"),
                  (k * u_acc, f"a float32 sum of {k}"))   # of operands as large as the scale, whatever the output
        base, floor = max(floors, key=lambda t: t[0])
        if margin * base >= 1:
            out.append(Bound(None, b, margin, floor, f"a correct {dtype} computation errs by {b:.2g} of the output's "
                                                      f"range here: no digit is left to check"))
        else:
            out.append(Bound(margin * base, base, margin, floor))
    return out
