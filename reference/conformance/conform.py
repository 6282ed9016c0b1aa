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

__all__ = ["PROPERTIES", "Check", "Checker", "Report", "Settings", "check", "conform", "report_text", "normalise"]

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

@dataclass
class Check:
    """One property over the examples it applied to: how many, and the largest deviation measured."""

    property: str
    examples: int = 0
    max_error: float = 0.0
    verdict: str = "pass"


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
    printed: str = ""
    sizes: dict = field(default_factory=dict)   # the fixed and tied sizes: name → formula as written

    @property
    def ok(self) -> bool:
        return self.failure is None

    def as_json(self) -> dict:
        return {**asdict(self), "checks": [asdict(c) for c in self.checks.values()],
                "verdict": "pass" if self.ok else "fail"}


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
    than ``timeout`` seconds fails ``runs``.  The report holds each property's count and largest deviation,
    and the first failure (at the smallest example) if any.  ``cache`` (a dict) keeps the spec's outputs
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


def check(run, name: str, algorithm: Algorithm, cases: list, settings: Settings, *, cache=None) -> Report:
    """Every property of ``algorithm`` (one variant) on ``cases``, calling the target through ``run`` (a runner
    of :mod:`reference.conformance.targets`, left open: several variants may share one worker; what the worker
    printed so far is in the report, and the caller adds what it prints as it closes)."""
    relative = tolerances.relative(settings.precision, algorithm)
    s = settings
    report = Report(name, algorithm.label, dict(algorithm.options), s.layout, s.seed, s.n_examples, relative,
                    s.profile, s.max_size, sum(e.case != "random" for e in cases), s.timeout,
                    {p: Check(p) for p in PROPERTIES})
    try:
        checked = Target(run, name, algorithm, layout=s.layout, device=s.device)
        with limits.memory_limit(s.max_memory):
            _run(checked, cases, Checker(checked, relative, s.seed), report, {} if cache is None else cache)
    finally:
        report.printed = run.printed
    return report


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


def _run(target, cases, checker, report, cache):
    """Check every example; the large-score case checks only ``shape`` and ``finite``: it is there for a
    softmax that overflows (NaN or ∞), and its scores (~10⁸) leave no margin for rounding below float64, nor
    for the finite masks real code adds (Swin's −100, BERT's −10⁴), as good as −∞ at any score a model makes."""
    algorithm = target.algorithm
    for example in cases:
        arguments = normalise(example)
        want = _spec(example, arguments, cache)
        if isinstance(want, FormalError):  # a configuration the spec does not define: no verdict on it
            report.undefined.append(f"{example.describe()}: {want}")
            continue
        got = None
        target.expect(want)
        try:
            target.check_signature(arguments)
            report.checks["signature"].examples += 1
            got = target(arguments)
            for p in ("runs", "type"):
                report.checks[p].examples += 1
            values = not example.large
            error = checker.compare_spec(want, got, arguments, values=values)
            for p in ("shape", "finite", "spec") if values else ("shape", "finite"):
                report.checks[p].examples += 1
            report.checks["spec"].max_error = max(report.checks["spec"].max_error, error)
            for prop, applies in checker.applies().items() if values else ():
                if not applies:
                    continue
                measured = getattr(checker, prop)(arguments, got)
                if measured is not None:
                    report.checks[prop].examples += 1
                    report.checks[prop].max_error = max(report.checks[prop].max_error, measured)
        except Failed as failed:
            report.checks[failed.property].examples += 1
            report.checks[failed.property].verdict = "FAIL"
            report.failure = {"property": failed.property, "message": str(failed), "example": example.describe(),
                              "case": example.case, "example_seed": example.seed,
                              "deviation": None if got is None else _deviation(want, got)}
            break
    if len(report.undefined) == len(cases):
        raise ConfigError(f"the spec is undefined on every example of {algorithm.label} with these options: "
                          f"{report.undefined[0]}")
    for c in report.checks.values():
        if c.examples == 0 and c.verdict == "pass":
            c.verdict = "n/a" if report.ok else "not run"


def report_text(report: Report) -> str:
    """The report as a table and one verdict line."""
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
    if report.printed:
        lines.append(f"the function printed {len(report.printed.splitlines())} lines (kept in --json as "
                     "\"printed\")")
    if report.ok:
        lines.append(f"PASS: every property held on {total - len(report.undefined)} examples")
    else:
        f = report.failure
        rerun = f"--seed {report.seed} --examples {report.examples} --max-size {report.max_size}" + "".join(
            f" --size {k}={v.replace(' ', '')}" for k, v in report.sizes.items())
        lines.append(f"FAIL {f['property']}: {f['message']}")
        case = "" if f["case"] == "random" else f"boundary case {f['case']}: "
        lines.append(f"  smallest failing configuration: {case}{f['example']} (example seed {f['example_seed']}; "
                     f"rerun with {rerun})")
    return "\n".join(lines) + "\n"
