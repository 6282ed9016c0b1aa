"""``formal-transformers verify``: the spec against its torch reference, every algorithm and variant.

Each check runs on seeded random examples (:mod:`formal.sampling.examples`, options drawn from every variant) and
measures one number, the largest deviation, against what it may be:

``float64``, ``float64 sdpa``, ``float64 flex``
    the reference's output on the explicit attention path, on ``scaled_dot_product_attention`` and on
    FlexAttention (CUDA only) against the spec's numpy execution; allowed 1e-10.
``float32``, ``float32 sdpa``, ``float32 flex``, ``bfloat16``, …
    the reference in that precision, on that path, against the float64 spec.  Each example is held to
    4 × its **baseline**, the error a known-good computation in that precision makes on it (the spec
    emulated in the precision: :func:`reference.tolerances.baseline`; floors and exclusions:
    :func:`reference.tolerances.bounds`), on the examples and the cases that bring precision bugs out
    (:mod:`formal.sampling.rounding_cases`).
``matmul FLOPs``
    the derived FLOPs (``matmul`` convention) against ``FlopCounterMode`` on the explicit path; exact.
``params``
    the derived parameter count against the sum of ``numel``; exact.
``SGD step``
    ``(θ − θ')/η`` of the reference's step along a random direction against central differences of the
    spec's loss; 10 × the central difference's own error on the example (:meth:`.checks.Measure.sgd_baseline`).
``KV cache``
    a prefill, then one-token steps, against Algorithm 10 on the whole sequence; 1e-10.

Each row shows the example nearest its bound: its error, its bound, and where the bound comes from (``4 ×
4.1e-03 baseline``, ``fixed``, ``exact``).  Errors in float checks are absolute, scaled by ``max(1, max
abs(spec))``; token outputs (Algorithms 14 and 15) count the tokens that differ.

A run is a list of tasks (:mod:`.tasks`: one per algorithm, or with ``variants`` one per combination of its
options, :mod:`.campaigns`) run here, in worker processes or on a Dask cluster
(:mod:`reference.execution.executors`); each task is a pure function of (algorithm, variant, checks, seed), so
the report is the same whatever runs it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from formal import algorithms
from formal.engine.domains import written
from formal.errors import ConfigError
from formal.guards import limits
from formal.sampling.examples import checked_int

from .. import require_torch
from ..execution.executors import flatten, run_shown
from ..execution.workers import WorkerError
from ..model.device import device as resolve_device
from ..records import chosen
from .campaigns import campaign, left_out_lines
from .checks import CHECKS, PROFILES, Row, applicable, example_loss, relative_error
from .reports import check_destination, write_json
from .tasks import Skipped

__all__ = ["PROFILES", "CHECKS", "Row", "Report", "WorkerError", "verify", "chosen", "write_json", "check_destination",
           "relative_error", "example_loss"]

torch = require_torch()


@dataclass
class Report:
    profile: str
    device: str
    seed: int
    torch: str
    rows: list = field(default_factory=list)
    seconds: float = 0.0
    variants: str | None = None     # --variants; None: examples drawn across the variants
    skipped: list = field(default_factory=list)   # (algorithm, options, reason) of each combination skipped
    tasks: int = 0
    done: int = 0                   # tasks finished: fewer than ``tasks`` after Ctrl-C
    left_out: dict = field(default_factory=dict)  # algorithm → why --variants left it out

    @property
    def ok(self) -> bool:
        return all(r.verdict != "FAIL" for r in self.rows) and not self.interrupted

    @property
    def interrupted(self) -> bool:
        return self.done < self.tasks

    def as_json(self) -> dict:
        out = {"profile": self.profile, "device": self.device, "seed": self.seed, "torch": self.torch,
               "seconds": self.seconds, "verdict": "interrupted" if self.interrupted else "pass" if self.ok else "fail",
               "tasks": self.tasks, "done": self.done,
               "rows": [_row_json(r, self.variants is not None) for r in self.rows]}
        if self.variants is not None:
            out.update(variants=self.variants, by_option=by_option(self.rows), skipped=skipped(self.skipped),
                       left_out=self.left_out)
        return out

    def text(self) -> str:
        title = "every variant" if self.variants == "all" else f"the variants with {self.variants}" \
            if self.variants else "the spec"
        lines = [f"verify{' --variants ' + self.variants if self.variants else ''}: {title} against the torch "
                 f"reference — profile {self.profile}, device {self.device}, seed {self.seed}, torch {self.torch}", ""]
        lines += _variant_lines(self) if self.variants is not None else _table(self.rows)
        failed = [r for r in self.rows if r.verdict == "FAIL"]
        checked = len({(r.algorithm, tuple(r.variant.items())) for r in self.rows if r.variant is not None})
        variants = f" of {checked:,} variants" if self.variants is not None else ""
        lines += ["", f"{len(self.rows) - len(failed)} passed, {len(failed)} failed ({len(self.rows)} checks"
                      f"{variants}, {sum(r.examples for r in self.rows)} examples, {self.seconds:.0f} s)"]
        if self.skipped:
            lines[-1] += f"; {len(self.skipped):,} combinations skipped"
        if self.interrupted:
            lines.append(f"interrupted: {self.done} of {self.tasks} tasks finished — a partial report")
        return "\n".join(lines) + "\n"


def _row_json(r, variants: bool) -> dict:
    out = {**asdict(r), "max_error": r.max_error if np.isfinite(r.max_error) else None,
           "allowed": r.allowed if np.isfinite(r.allowed) else None}
    if not variants:
        out.pop("variant")
    return out


def _table(rows) -> list:
    width = max([len(r.algorithm) for r in rows] + [9])
    check = max([len(r.check) for r in rows] + [5])
    lines = [f"{'algorithm':<{width}}  {'check':<{check}}  {'examples':>8}  {'error':>9}  {'allowed':>9}  "
             f"{'from':<22}  verdict"]
    for r in rows:
        lines.append(f"{r.algorithm:<{width}}  {r.check:<{check}}  {r.examples:>8}  {_figure(r.max_error):>9}  "
                     f"{_figure(r.allowed):>9}  {basis(r):<22}  {r.verdict}{'  ' + r.detail if r.detail else ''}")
    return lines


def basis(r) -> str:
    """Where a row's bound comes from, in a few words: ``4 × 2.1e-03 baseline`` (margin × the baseline at the
    example nearest its bound), ``1e-10 fixed`` or ``exact``."""
    if r.baseline is not None:
        return f"{r.margin} × {_figure(r.baseline)} baseline"
    return "exact" if r.basis == "exact" else "fixed" if r.basis.startswith("fixed") else "-"   # -: none measured


def by_option(rows) -> list:
    """Per algorithm, option and value: the variants checked with that value and how many of them failed a
    check — where the failures gather (``bias = False``: 24 of 24) shows at a glance.  A variant counts for an
    option only where the option has an effect (``activation`` with the additive score only)."""
    seen = {}
    for r in rows:
        key = (r.algorithm, tuple(r.variant.items()))
        seen[key] = seen.get(key, False) or r.verdict == "FAIL"
    counts = {}   # (algorithm, option) → value → [value, variants, failed]: declaration order, values as met
    specs = {}
    for (name, options), failed in seen.items():
        declared = specs.setdefault(name, algorithms.get(name).option_specs)
        values = dict(options)
        for option, value in options:
            if not declared.applies(option, values):   # no effect here (activation with the dot score)
                continue
            entry = counts.setdefault((name, option), {}).setdefault(written(value), [value, 0, 0])
            entry[1] += 1
            entry[2] += failed
    order = {name: i for i, name in enumerate(specs)}
    ranked = sorted(counts.items(), key=lambda item: (order[item[0][0]], list(specs[item[0][0]]).index(item[0][1])))
    return [{"algorithm": n, "option": o, "value": c[0], "variants": c[1], "failed": c[2]}
            for (n, o), values in ranked if len(values) > 1 for c in values.values()]


def skipped(combinations) -> list:
    """The combinations skipped (``(algorithm, options, reason)``), one entry per algorithm and reason: how
    many, and the first."""
    grouped = {}
    for name, options, why in combinations:
        entry = grouped.setdefault((name, why), {"algorithm": name, "reason": why, "combinations": 0,
                                                 "first": options})
        entry["combinations"] += 1
    return list(grouped.values())


def _variant_lines(report) -> list:
    """The variants' report: per algorithm, per option that varies, per value, the variants and those failed;
    then every failed check with its variant, and the combinations skipped, with why."""
    lines = [f"{'algorithm':<24}  {'option':<16}  {'value':<22}  {'variants':>8}  {'failed':>6}"]
    last = (None, None)
    for e in by_option(report.rows):
        name = e["algorithm"] if e["algorithm"] != last[0] else ""
        option = e["option"] if (e["algorithm"], e["option"]) != last else ""
        last = (e["algorithm"], e["option"])
        lines.append(f"{name:<24}  {option:<16}  {written(e['value'])[:22]:<22}  {e['variants']:>8}  "
                     f"{e['failed']:>6}")
    failed = [r for r in report.rows if r.verdict == "FAIL"]
    if failed:
        lines += ["", "failed:"]
        for r in failed:
            variant = ", ".join(f"{k}={v!r}" for k, v in r.variant.items())
            lines.append(f"  {r.algorithm}({variant}) {r.check}: max error {_figure(r.max_error)}, allowed "
                         f"{_figure(r.allowed)}{' — ' + r.detail if r.detail else ''}")
    grouped = skipped(report.skipped)
    if grouped:
        lines += ["", "skipped:"]
        lines += [f"  {e['algorithm']}: {e['combinations']:,} combinations — {e['reason']}" for e in grouped]
    return lines + left_out_lines(report.left_out)


def _figure(x) -> str:
    if x == 0:
        return "0"
    if x != x:   # NaN: a bound never measured (the task died before)
        return "-"
    return "inf" if not np.isfinite(x) else f"{x:.1e}"


def verify(*, profile="quick", device="auto", seed=0, only=None, jobs=1, progress=None, variants=None,
           scheduler=None, max_memory=None) -> Report:
    """Run every check of every (chosen) algorithm; ``progress`` (a text stream) gets a live bar.

    ``variants`` (``"all"`` or ``"OPTION=VALUE,..."``: :mod:`.campaigns`) checks every combination of the
    algorithms' options, each on examples of its own; None draws each example's options across them.
    ``jobs=1`` runs the tasks here, one after another; more run them in that many worker processes;
    ``scheduler`` (:func:`~reference.execution.executors.parse_scheduler`'s pair) on a Dask cluster — the same
    report whichever.  ``max_memory`` (bytes, or a size such as ``"8GiB"``) is the limit each task's examples
    are estimated against before any is drawn (default: :data:`formal.guards.limits.DEFAULT_MAX_MEMORY`).
    Ctrl-C returns the partial report (:attr:`Report.interrupted`).
    """
    report, plan = prepare(profile=profile, device=device, seed=seed, only=only, variants=variants,
                           max_memory=max_memory)
    jobs = checked_int(jobs, "jobs", 1)
    start = time.perf_counter()
    results = run_shown(plan.tasks, "verify", progress, jobs=jobs, scheduler=scheduler)
    report.seconds = time.perf_counter() - start
    report.done = sum(r is not None for r in results)
    for found in flatten(results):
        if isinstance(found, Skipped):
            report.skipped.append((found.algorithm, found.variant, found.reason))
        else:
            report.rows.append(found)
    return report


def prepare(*, profile="quick", device="auto", seed=0, only=None, variants=None, max_memory=None):
    """The empty report of a run and its :class:`~.campaigns.Campaign` (what ``--dry-run`` shows); ``max_memory``
    (bytes or a size such as ``"8GiB"``; None: the default) bounds the estimate of each task's examples."""
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    seed = checked_int(seed, "seed", 0)
    dev = resolve_device(device)
    max_memory = None if max_memory is None else limits.parse_size(max_memory)
    plan = campaign(variants, only, lambda name: applicable(name, dev), profile, seed, str(dev), max_memory)
    report = Report(profile, str(dev), seed, torch.__version__, variants=plan.variants, skipped=list(plan.skipped),
                    left_out=dict(plan.left_out),
                    tasks=len(plan.tasks))
    return report, plan
