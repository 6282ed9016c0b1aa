"""``formal-transformers verify``: the spec against its torch reference, every algorithm and variant.

Each check runs on seeded random examples (:mod:`reference.checking.examples`, options drawn from every variant) and
measures one number, the largest deviation, against what it may be:

``float64``
    the reference's output against the spec's numpy execution; allowed 1e-10.
``sdpa path``
    the same on the fast path (``scaled_dot_product_attention``); 1e-10.
``flex path``
    the same on FlexAttention with the mask as a mask function (CUDA only); 1e-10.
``float32``, ``bfloat16``
    the reference in that precision against the float64 spec; the calibrated tolerance.
``matmul FLOPs``
    the derived FLOPs (``matmul`` convention) against ``FlopCounterMode`` on the explicit path; 0.
``params``
    the derived parameter count against the sum of ``numel``; 0.
``SGD step``
    ``(θ − θ')/η`` of the reference's step along a random direction against central differences of the
    spec's loss; 1e-6, relative.
``KV cache``
    a prefill, then one-token steps, against Algorithm 10 on the whole sequence; 1e-10.

Errors in float checks are absolute, scaled by ``max(1, max abs(spec))``; token outputs (Algorithms 14
and 15) count the tokens that differ.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from formal.errors import ConfigError

from .. import require_torch
from ..model.device import device as resolve_device
from .checks import CHECKS, PROFILES, Measure, Row, by_algorithm, example_loss, plan, relative_error, rows
from .examples import checked_int
from .records import chosen
from .reports import check_destination, write_json
from .workers import WorkerError, in_workers

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

    @property
    def ok(self) -> bool:
        return all(r.verdict != "FAIL" for r in self.rows)

    def as_json(self) -> dict:
        return {**asdict(self), "verdict": "pass" if self.ok else "fail",
                "rows": [{**asdict(r), "max_error": r.max_error if np.isfinite(r.max_error) else None}
                         for r in self.rows]}

    def text(self) -> str:
        width = max(len(r.algorithm) for r in self.rows) if self.rows else 9
        lines = [f"verify: the spec against the torch reference — profile {self.profile}, device {self.device}, "
                 f"seed {self.seed}, torch {self.torch}", "",
                 f"{'algorithm':<{width}}  {'check':<12}  {'examples':>8}  {'max error':>9}  {'allowed':>9}  verdict"]
        for r in self.rows:
            lines.append(f"{r.algorithm:<{width}}  {r.check:<12}  {r.examples:>8}  {_figure(r.max_error):>9}  "
                         f"{_figure(r.allowed):>9}  {r.verdict}{'  ' + r.detail if r.detail else ''}")
        failed = [r for r in self.rows if r.verdict == "FAIL"]
        lines += ["", f"{len(self.rows) - len(failed)} passed, {len(failed)} failed ({len(self.rows)} checks, "
                      f"{sum(r.examples for r in self.rows)} examples, {self.seconds:.0f} s)"]
        return "\n".join(lines) + "\n"


def _figure(x) -> str:
    if x == 0:
        return "0"
    return "inf" if not np.isfinite(x) else f"{x:.1e}"


def verify(*, profile="quick", device="auto", seed=0, only=None, jobs=1, progress=None) -> Report:
    """Run every check of every (chosen) algorithm; ``progress`` (a text stream) gets a live line.

    ``jobs=1`` runs the checks here, one after another; more run them in that many worker processes (at most
    one per algorithm), each check on the same seeded examples as here, so the report is the same.
    """
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    seed = checked_int(seed, "seed", 0)
    jobs = checked_int(jobs, "jobs", 1)
    dev = resolve_device(device)
    checks = plan(only, dev)
    report = Report(profile, str(dev), seed, torch.__version__)
    live = progress is not None and hasattr(progress, "isatty") and progress.isatty()

    def show(i, doing):
        if live:
            progress.write(f"\r\033[Kverify [{i}/{len(checks)}] {doing}")
            progress.flush()

    start = time.perf_counter()
    try:
        if jobs == 1 or len(checks) == 1:
            measure = Measure(dev)
            for name, its in by_algorithm(checks):
                with contextlib.closing(rows(name, its, profile, seed, measure)) as measured:
                    for check in its:
                        show(len(report.rows) + 1, f"{name}: {check}")
                        report.rows.append(next(measured))
        else:
            report.rows = in_workers(checks, jobs, (profile, seed, str(dev)), show)
    finally:  # Ctrl-C included: the live line does not stay behind
        if live:
            progress.write("\r\033[K")
            progress.flush()
    report.seconds = time.perf_counter() - start
    return report
