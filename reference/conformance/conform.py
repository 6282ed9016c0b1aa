"""Check any implementation of one of the spec's algorithms against the spec (``formal-transformers conform``).

The checks run on seeded examples of the chosen variant (:mod:`formal.sampling.examples`): the boundary cases and
random examples growing to the profile's largest size, smallest first, so the first failure found is at the
smallest configuration tried.  The function runs through :mod:`reference.conformance.sandbox` (a worker process for a
named target), so whatever it does becomes a verdict.  Each example is checked for:

``signature``
    the function takes the spec's keyword arguments (:mod:`reference.conformance.targets` says which);
``runs``
    it returns within the time limit, instead of raising, exiting or ending its process;
``type``
    it returns arrays of real numbers (not None, text, ragged lists or complex numbers), one per output;
``shape``
    every output has the spec's shape;
``finite``
    no NaN or inf where the spec's output has none (a NaN is a failure, named as such);
``spec``
    every output equals the spec's numpy execution: max abs difference ≤ tolerance · max(1, max abs(spec))
    (under ``precision="float32"`` or ``"bfloat16"`` the boundary case of scores past exp's range is checked
    for ``shape`` and ``finite`` only: scores of ~10⁸ leave no margin for rounding, an overflow shows as NaN);
``masks``
    a query's output does not move when context columns its mask hides move (Algorithm 4, line 5: a
    hidden score is −∞, so a hidden key has no influence);
``causality``
    a decoder's output column t does not move when tokens after t move (Algorithms 8 and 10: column t
    predicts token t + 1 from tokens ≤ t); a forward recurrent layer's state at t does not move when inputs
    after t move (backward: before t);
``equivariance``
    where no position breaks symmetry, permuting the queries permutes the output columns and permuting
    the context leaves them, every mask's axes over the same positions permuted along (Algorithms 3–5
    without a score bias, which is positional; Algorithm 9 without positions and with the masked-LM head,
    one output per token; the position-wise MLP; a graph convolution or attention layer, its adjacency
    renumbered with its nodes).

The last three are properties of the algorithm, as its object declares them (its record,
:mod:`reference.records`), checked on the function alone (:mod:`reference.conformance.properties`); the spec
comparison already implies them, but a failure of one names the bug better than an error figure does.  An example on
which the spec itself is undefined (it raises) is skipped and reported; the generator draws sizes that satisfy every
constraint the algorithm states, so that happens only on measure-zero inputs.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from formal import algorithms
from formal.core import masks
from formal.engine.algorithm import Algorithm
from formal.errors import ConfigError, FormalError, ResourceError
from formal.guards import limits
from formal.sampling.examples import EXAMPLE_ALGORITHMS, MAX_EXAMPLES, MAX_SIZE, PROFILES, checked_int, examples
from formal.sampling.ties import Ties

from .. import tolerances
from .properties import Checker
from .sandbox import DEFAULT_TIMEOUT
from .targets import Failed, Target, runner

__all__ = ["PROPERTIES", "IN_ORDER", "Check", "Checker", "Outcome", "Report", "Settings", "check", "conform",
           "report_text", "normalise"]

PROPERTIES = {
    "signature": "takes the spec's keyword arguments",
    "runs": "returns, within the time limit, instead of raising or exiting",
    "type": "returns arrays of real numbers (token ids: integers), one per output",
    "shape": "every output has the spec's shape",
    "finite": "no NaN or inf where the spec has none",
    "spec": "equals the spec's numpy execution",
    "masks": "hidden context columns do not move a query's output",
    "causality": "output column t does not depend on tokens after t",
    "equivariance": "permuting tokens permutes (queries) or keeps (context) the output",
}

#: The properties checked on every example, in the order they are checked: where one fails, every one before it
#: was checked there and held (``masks``, ``causality`` and ``equivariance`` come after, where they apply).
IN_ORDER = ("signature", "runs", "type", "shape", "finite", "spec")


@dataclass
class Check:
    """One property over the examples it was checked on — the failing one included: how many, and the largest
    ``|Δ|`` measured (for ``spec``, ``masks``, ``causality`` and ``equivariance``; the failing example's too)."""

    property: str
    examples: int = 0
    max_error: float = 0.0
    verdict: str = "pass"


@dataclass
class Outcome:
    """One example as ``identify`` ranks a variant by it (:mod:`reference.conformance.candidates`): ``failed``, the
    first property that failed there (None: every one held); ``matched`` of ``entries``, the spec's output entries
    that the function's equal within the tolerance (none matched where its outputs could not be compared: it did
    not run, or returned other shapes; the large-score case counts no entry, no tolerance bounds its values);
    ``deviation``, the largest ``|Δ|`` relative to max(1, max |spec|) over the outputs (:func:`_deviation`; None where
    they could not be compared, or on the large-score case); ``what``, the failure's message without its ``|Δ|``
    (:class:`~reference.conformance.outputs.Failed`)."""

    failed: str | None
    matched: int
    entries: int
    deviation: float | None
    what: str = ""


@dataclass
class Report:
    target: str
    algorithm: str
    options: dict
    layout: str
    seed: int
    examples: int
    tolerance: float
    profile: str = "quick"
    max_size: int = 0
    boundary: int = 0
    timeout: float | None = DEFAULT_TIMEOUT
    checks: dict = field(default_factory=dict)
    failure: dict | None = None
    undefined: list = field(default_factory=list)
    left_out: list = field(default_factory=list)   # lower precision: examples a correct computation cannot meet
    printed: str = ""
    sizes: dict = field(default_factory=dict)   # the fixed and tied sizes: name → formula as written
    run: int = 0                                # examples the function was checked on, the failing one included
    precision: str = "float64"
    outcomes: list = field(default_factory=list, repr=False)   # an Outcome per example run (identify's ranking)

    @property
    def ok(self) -> bool:
        return self.failure is None

    def as_json(self) -> dict:
        """The report as one JSON object: every field but ``outcomes`` (identify's), ``checks`` as a list (each
        property's count and max error over the examples it was checked on, the failing one included), ``run``:
        the examples checked (up to the failing one: the check stops there), and the verdict."""
        out = {**asdict(self), "checks": [asdict(c) for c in self.checks.values()],
               "verdict": "pass" if self.ok else "fail"}
        del out["outcomes"]
        return out


def _outputs(result) -> tuple:
    return tuple(np.asarray(r, dtype=np.float64) for r in (result if isinstance(result, tuple) else (result,)))


def normalise(example) -> dict:
    """The example's arguments as a function receives them: every mask input (Algorithm 4's mask, a graph
    convolution's adjacency A) as an explicit 0/1 float array."""
    arguments = dict(example.arguments)
    for spec in example.algorithm.inputs:
        if spec.kind == "mask":
            arguments[spec.name] = masks.resolve(arguments.get(spec.name), *example.shape(spec.name)).astype(np.float64)
    return arguments


def _algorithm(algorithm, options) -> Algorithm:
    """The algorithm object to check against: given, or looked up by name once; ``options`` make a variant."""
    if isinstance(algorithm, str):
        if algorithm not in EXAMPLE_ALGORITHMS:
            raise ConfigError(f"conform checks {', '.join(EXAMPLE_ALGORITHMS)}; not {algorithm!r}")
        return algorithms.get(algorithm, **(options or {}))
    if not isinstance(algorithm, Algorithm):
        raise ConfigError(f"algorithm {algorithm!r} must be an algorithm object or a name (see `list`)")
    if algorithm.name not in EXAMPLE_ALGORITHMS:
        raise ConfigError(f"conform checks {', '.join(EXAMPLE_ALGORITHMS)}; not {algorithm.name!r}")
    return algorithm.variant(**options) if options else algorithm


@dataclass(frozen=True)
class Settings:
    """How one run checks: the examples' profile, count, largest size and seed, and how the target is called
    (layout, device, precision, time limit, memory cap) — validated once, shared by every variant checked."""

    layout: str = "columns"
    profile: str = "quick"
    n_examples: int = PROFILES["quick"].examples
    max_size: int = PROFILES["quick"].max_size
    seed: int = 0
    device: str = "cpu"
    precision: str = "float64"
    timeout: float | None = DEFAULT_TIMEOUT
    max_memory: int = 0

    @classmethod
    def checked(cls, *, layout="columns", profile="quick", n_examples=None, max_size=None, seed=0, device="cpu",
                precision="float64", timeout=DEFAULT_TIMEOUT, max_memory=None) -> "Settings":
        """The settings with the profile's defaults filled in, each checked (a ConfigError names a bad one)."""
        if profile not in PROFILES:
            raise ConfigError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
        n_examples = checked_int(PROFILES[profile].examples if n_examples is None else n_examples, "--examples",
                                 1, MAX_EXAMPLES)
        max_size = checked_int(PROFILES[profile].max_size if max_size is None else max_size, "--max-size", 2,
                               MAX_SIZE)
        max_memory = limits.parse_size(limits.DEFAULT_MAX_MEMORY if max_memory is None else max_memory)
        return cls(layout, profile, n_examples, max_size, checked_int(seed, "--seed", 0), device, precision,
                   timeout, max_memory)

    def runner(self, target, *, isolate=None):
        """The runner of ``target`` (:func:`reference.conformance.targets.runner`) under these settings."""
        return runner(target, timeout=self.timeout, isolate=isolate,
                      max_memory=self.max_memory if self.device == "cpu" else 0)

    def examples(self, algorithm, **given) -> list:
        """The profile's examples of ``algorithm`` (``given`` passes on ``sizes=`` when a caller has them), drawn
        under the run's memory limit (``--max-memory``): their estimate is refused past it, not past the default."""
        with limits.memory_limit(self.max_memory):
            return examples(algorithm, self.n_examples, seed=self.seed, max_size=self.max_size, **given)


def conform(target, algorithm, *, options=None, name=None, layout="columns", profile="quick", n_examples=None,
            max_size=None, seed=0, device="cpu", precision="float64", timeout=DEFAULT_TIMEOUT,
            isolate=None, cache=None, max_memory=None, sizes=None) -> Report:
    """Run every property of ``algorithm`` (an algorithm object, or a registry name; ``options`` make a
    variant) on ``target`` — a function object, run in this process, or its name ``path/to/file.py:function``,
    run in a worker process (``isolate=False``: here).

    The examples are the boundary cases and ``n_examples`` random ones growing up to ``max_size`` (both
    default to ``profile``'s, :data:`formal.sampling.examples.PROFILES`).  A call of the target that takes more
    than ``timeout`` seconds fails ``runs``.  The check stops at the first failure (at the smallest example);
    the report holds each property's count and largest ``|Δ|`` over the examples it was checked on, that one
    included, how many examples ran (``run``), and the failure if any.  ``cache`` (a dict) keeps the spec's outputs
    for the next call on the same examples.  ``max_memory`` (bytes or a size such as ``"4G"``; default
    :data:`formal.guards.limits.DEFAULT_MAX_MEMORY`) caps the worker's address space on the CPU (a function that
    allocates past it fails ``runs`` with a MemoryError; not applied with ``device="cuda"`` or in this
    process) and the spec's own arrays (:mod:`formal.guards.limits`).  ``sizes`` fixes and ties sizes as the
    checked code does (``["H=4", "d_attn=d_x/H"]`` or ``{"H": 4, "d_attn": "d_x/H"}``: :mod:`formal.sampling.ties`); the
    examples meet them by construction.
    """
    algorithm = _algorithm(algorithm, options)
    settings = Settings.checked(layout=layout, profile=profile, n_examples=n_examples, max_size=max_size, seed=seed,
                                device=device, precision=precision, timeout=timeout, max_memory=max_memory)
    ties = Ties.parse(algorithm, sizes)
    cases = settings.examples(algorithm, sizes=ties)
    run = settings.runner(target, isolate=isolate)
    name = name or (target if isinstance(target, str) else getattr(target, "__name__", repr(target)))
    try:
        report = check(run, name, algorithm, cases, settings, cache=cache)
    finally:
        run.close()   # first: what the worker prints as it ends (an atexit handler) belongs in the report
    report.printed, report.sizes = run.printed, ties.texts
    return report


def check(run, name: str, algorithm: Algorithm, cases: list, settings: Settings, *, cache=None,
          stop: bool = True) -> Report:
    """Every property of ``algorithm`` (one variant) on ``cases``, calling the target through ``run`` (a runner
    of :mod:`reference.conformance.targets`, left open: several variants may share one worker; what the worker
    printed so far is in the report, and the caller adds what it prints as it closes).  The check stops at the
    first failing example (the smallest); ``stop=False`` checks every example (``identify`` ranks variants by
    all of them), stopping only after a call that ran into the time limit, which the next ones would repeat."""
    s, cache = settings, {} if cache is None else cache
    bounds = None if s.precision == "float64" else _precision_bounds(algorithm, cases, s.precision, cache)
    relative = tolerances.FLOAT64 if bounds is None else max((b for b in bounds.values() if b is not None), default=0.0)
    report = Report(name, algorithm.label, dict(algorithm.options), s.layout, s.seed, s.n_examples, relative,
                    s.profile, s.max_size, sum(e.case != "random" for e in cases), s.timeout,
                    {p: Check(p) for p in PROPERTIES}, precision=s.precision)
    try:
        checked = Target(run, name, algorithm, layout=s.layout, device=s.device)
        checker = Checker(checked, relative, s.seed)
        checker.bounds, checker.precision = bounds, s.precision
        with limits.memory_limit(s.max_memory):
            _run(checked, cases, checker, report, cache, stop=stop, timeout=s.timeout)
    finally:
        report.printed = run.printed
    return report


def _precision_bounds(algorithm, cases, precision: str, cache: dict) -> dict:
    """id(example) → the relative bound a ``precision`` implementation is held to on it, as ``verify``'s rows
    are (:func:`reference.tolerances.bounds`: 4 × the error the spec emulated in that precision
    makes there, floored), or None where no digit is left to check (the example is left out); the large-score
    case, checked for shape and finiteness only, is not bounded."""
    measured = []
    for example in cases:
        want = _spec(example, normalise(example), cache)
        if isinstance(want, FormalError) or example.large:
            continue
        measured.append((example, tolerances.baseline(example.algorithm, normalise(example), precision, want,
                                                      seed=example.seed), want))
    found = tolerances.bounds([b for _, b, _ in measured], precision, tolerances.margin(algorithm, precision),
                              [tolerances.longest(normalise(e)) for e, _, _ in measured],
                              [tolerances.magnitude(w) for _, _, w in measured])
    return {id(e): bound.allowed for (e, _, _), bound in zip(measured, found)}


def _spec(example, arguments, cache: dict):
    """The spec's outputs, or its error where it is undefined on this example."""
    key = (example.describe(), example.seed, example.case, example.size)
    if key not in cache:
        try:
            cache[key] = _outputs(example.algorithm(**arguments))
        except ResourceError:  # not undefined: too large to check here
            raise
        except FormalError as exc:
            cache[key] = exc
    return cache[key]


def _deviation(want: tuple, got) -> float | None:
    """The largest difference from the spec relative to max(1, max |spec|), where the shapes agree (None where
    they do not): how far a failing implementation is from this variant (``identify`` ranks the nearest by it).
    A NaN or infinity the spec does not have makes it ``inf`` (:func:`reference.tolerances.deviation`)."""
    if len(want) != len(got) or any(w.shape != g.shape for w, g in zip(want, got)):
        return None
    return max((tolerances.deviation(w, g) for w, g in zip(want, got)), default=0.0)


def _run(target, cases, checker, report, cache, *, stop=True, timeout=None):
    """Check every example (up to the first failure, unless ``stop`` is false); the large-score case checks only
    ``shape`` and ``finite``: it is there for a softmax that overflows (NaN or ∞), and its scores (~10⁸) leave no
    margin for rounding below float64, nor for the finite masks real code adds (Swin's −100, BERT's −10⁴), as good
    as −∞ at any score a model makes.  A property's count is of the examples it was checked on, the failing one
    included (where one fails, those before it in :data:`IN_ORDER` held), and its max error includes the failing
    example's ``|Δ|``; the first failure, at the smallest example, is the report's."""
    algorithm = target.algorithm
    for example in cases:
        arguments = normalise(example)
        want = _spec(example, arguments, cache)
        if isinstance(want, FormalError):  # a configuration the spec does not define: no verdict on it
            report.undefined.append(f"{example.describe()}: {want}")
            continue
        got, failed, counted, values = None, None, set(), not example.large
        if checker.bounds is not None and values:   # a lower precision: this example's own bound
            checker.relative = checker.bounds.get(id(example))
            if checker.relative is None:   # a correct computation keeps no digit here: left out
                report.left_out.append(f"{example.describe()}: a correct computation in this precision keeps no "
                                       "digit of the output here")
                continue
        target.expect(want)
        report.run += 1
        started = time.monotonic()
        try:
            target.check_signature(arguments)
            _held(report, counted, "signature")
            got = target(arguments)
            _held(report, counted, "runs", "type")
            error = checker.compare_spec(want, got, arguments, values=values)
            _held(report, counted, "shape", "finite", *(("spec",) if values else ()))
            report.checks["spec"].max_error = max(report.checks["spec"].max_error, error)
            for prop, applies in checker.applies().items() if values else ():
                if not applies:
                    continue
                measured = getattr(checker, prop)(arguments, got)
                if measured is not None:
                    _held(report, counted, prop)
                    report.checks[prop].max_error = max(report.checks[prop].max_error, measured)
        except Failed as exc:
            reason = _ill_conditioned(example, arguments, want, exc, checker)
            if reason:   # correct computations break the bound here too: no verdict on this example
                report.left_out.append(f"{example.describe()}: {reason}")
                continue
            failed = exc
            _failed(report, counted, exc, values)
            if report.failure is None:
                report.failure = {"property": exc.property, "message": str(exc), "example": example.describe(),
                                  "case": example.case, "example_seed": example.seed,
                                  "deviation": None if got is None else _deviation(want, got)}
        report.outcomes.append(_outcome(failed, want, got, values, checker))
        if failed is not None and (stop or failed.property == "runs" and timeout is not None
                                   and time.monotonic() - started >= timeout):
            break
    if len(report.undefined) == len(cases):
        raise ConfigError(f"the spec is undefined on every example of {algorithm.label} with these options: "
                          f"{report.undefined[0]}")
    for c in report.checks.values():
        if c.examples == 0 and c.verdict == "pass":
            c.verdict = "n/a" if report.ok else "not run"


def _ill_conditioned(example, arguments, want, failed, checker) -> str:
    """Why a ``spec`` failure in a lower precision says nothing of the code (a correct computation errs as much:
    rounding decides the output of this example, :func:`reference.tolerances.unstable`), or ``""``."""
    if checker.bounds is None or failed.property != "spec" or example.large or failed.measured is None:
        return ""
    error = failed.measured / max(tolerances.scale(w) for w in want)   # |Δ| relative, as the bound is
    return tolerances.unstable(example.algorithm, arguments, checker.precision, want, error, seed=example.seed)


def _held(report, counted: set, *props) -> None:
    """Count ``props`` as checked on the example at hand (``counted``: those counted there so far)."""
    for prop in props:
        report.checks[prop].examples += 1
        counted.add(prop)


def _failed(report, counted: set, failed: Failed, values: bool) -> None:
    """Count the failing property on the example at hand, and the properties before it in :data:`IN_ORDER` that
    held there uncounted (a ``shape`` failure read before conversion: the function ran and returned arrays);
    its ``|Δ|``, where it measured one, joins the max error."""
    before = IN_ORDER[:IN_ORDER.index(failed.property)] if failed.property in IN_ORDER else ()
    _held(report, counted, *(p for p in before if p not in counted and (p != "spec" or values)))
    check = report.checks[failed.property]
    check.examples += 1
    check.verdict = "FAIL"
    if failed.measured is not None:
        check.max_error = max(check.max_error, failed.measured)


def _outcome(failed, want: tuple, got, values: bool, checker) -> Outcome:
    """The example's :class:`Outcome`: its entries within the tolerance, and its deviation."""
    prop, what = (None, "") if failed is None else (failed.property, failed.what)
    comparable = got is not None and len(want) == len(got) and all(w.shape == g.shape for w, g in zip(want, got))
    if not values:
        return Outcome(prop, 0, 0, None, what)
    entries = sum(int(w.size) for w in want)
    if not comparable:
        return Outcome(prop, 0, entries, None, what)
    allowed = checker.allowed(want)
    matched = sum(int((tolerances.differences(w, g) <= allowed).sum()) for w, g in zip(want, got))
    return Outcome(prop, matched, entries, _deviation(want, got), what)


def report_text(report: Report) -> str:
    """The report as a table — each property's count and max ``|Δ|`` over the examples it was checked on, the failing
    one included — and its verdict: PASS, or how many examples ran before the first failure ended the check, the
    failure and its smallest failing configuration (the last two lines)."""
    opts = ", ".join(f"{k}={v!r}" for k, v in report.options.items()) or "default"
    total = report.examples + report.boundary
    limit = "no time limit" if report.timeout is None else f"{report.timeout:g} s per call"
    lines = [f"conform {report.target} against {report.algorithm} [{opts}]",
             f"layout {report.layout}, profile {report.profile}: {report.boundary} boundary cases and "
             f"{report.examples} random examples up to size {report.max_size} from seed {report.seed}, "
             f"tolerance {report.tolerance:.0e} × max(1, max |spec|), {limit}"]
    if report.sizes:
        lines.append("sizes fixed and tied: " + ", ".join(f"{k} = {v}" for k, v in report.sizes.items()))
    lines += ["",
              f"{'property':<13} {'examples':>8} {'max error':>10}  verdict  what it checks"]
    for c in report.checks.values():
        error = f"{c.max_error:10.2e}" if c.examples and c.property in ("spec", "masks", "causality",
                                                                         "equivariance") else f"{'-':>10}"
        lines.append(f"{c.property:<13} {c.examples:>8} {error}  {c.verdict:<7}  {PROPERTIES[c.property]}")
    lines.append("")
    if report.undefined:
        lines.append(f"{len(report.undefined)} examples skipped, the spec being undefined there (first: "
                     f"{report.undefined[0]})")
    if report.left_out:
        lines.append(f"{len(report.left_out)} examples left out, no {report.precision} bound holding a correct "
                     f"computation there (first: {report.left_out[0]})")
    if report.printed:
        lines.append(f"the function printed {len(report.printed.splitlines())} lines (kept in --json as "
                     "\"printed\")")
    if report.ok:
        lines.append(f"PASS: every property held on {total - len(report.undefined) - len(report.left_out)} "
                     "examples")
    else:
        f = report.failure
        lines.append(f"checked {report.run} of the {total} examples, up to the smallest failing one (the first failure "
                     "ends the check); each property counts the examples it was checked on, that one included")
        rerun = f"--seed {report.seed} --examples {report.examples} --max-size {report.max_size}" + "".join(
            f" --size {k}={v.replace(' ', '')}" for k, v in report.sizes.items())
        lines.append(f"FAIL {f['property']}: {f['message']}")
        case = "" if f["case"] == "random" else f"boundary case {f['case']}: "
        lines.append(f"  smallest failing configuration: {case}{f['example']} (example seed {f['example_seed']}; "
                     f"rerun with {rerun})")
    return "\n".join(lines) + "\n"
