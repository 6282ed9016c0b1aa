"""``verify --variants``: every combination of an algorithm's options, each a task of its own — what the
variants are, what the declarations skip and why, the tasks, and what the campaign would take (``--dry-run``).

``--variants all`` takes every algorithm ``--only`` names (default: all) with every option free;
``--variants OPTION=VALUE,...`` fixes those options (each read by its declared domain, as ``-o``) and takes the
algorithms that declare all of them — or, with ``--only``, refuses an algorithm that does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from formal import algorithms
from formal.engine.declarations import same_value
from formal.engine.domains import written
from formal.engine.options import parse_options, split_option
from formal.errors import ConfigError
from formal.sampling.variants import every_variant

from ..records import chosen
from .estimates import duration, estimate, task_cost
from .tasks import Checks, Variants

__all__ = ["Campaign", "select", "campaign", "dry_run_text", "left_out_lines", "WORKERS_SHOWN", "GROUP_SECONDS"]

#: The worker counts ``--dry-run`` estimates for, beside the run's own.
WORKERS_SHOWN = (1, 8, 64)
#: The seconds of work a task of ``--variants`` holds at least (its variants' measured costs): variants of a
#: fiftieth of a second are sent in groups, so that sending them costs little beside them, and small enough
#: that the workers finish together.
GROUP_SECONDS = 0.5


@dataclass
class Campaign:
    """The tasks of a run and the combinations the declarations skipped (``(algorithm, options, reason)``)."""

    tasks: list
    skipped: list = field(default_factory=list)
    variants: str | None = None   # the --variants text; None: examples drawn across the variants
    what: str = ""                # what the tasks do, said by --dry-run (default: from ``variants``)
    variant_count: int = 0        # the variants the tasks check (--variants)
    left_out: dict = field(default_factory=dict)   # algorithm → why --variants left it out (a value refused)


def select(text: str, only) -> tuple:
    """``--variants``' algorithms, each with the options it fixes (``{name: {option: value}}``), and those left
    out that declare every option named but refuse a value (``{name: why}``: ``bias=false`` leaves out the
    recurrent cells, whose bias is 'single', 'double' or 'none')."""
    text = text.strip()
    if text == "all":
        return {name: {} for name in chosen(only)}, {}
    if not text:
        raise ConfigError("--variants '' names nothing: give all, or OPTION=VALUE,... to fix some options")
    given = [part.strip() for part in text.split(",")]
    try:
        keys = [split_option(part)[0] for part in given]
    except ConfigError as exc:
        raise ConfigError(f"--variants {text!r}: {exc}") from None
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ConfigError(f"--variants gives option {repeated[0]} twice")
    selected, refused = {}, {}
    for name in chosen(only):
        specs = algorithms.get(name).option_specs
        try:
            fixed = {k: specs[k].check(v) for k, v in parse_options(name, given).items()}
            for k, v in fixed.items():
                why = next((why for value, why in specs[k].unexampled if same_value(value, v)), None)
                if why is not None:
                    raise ConfigError(f"{k} = {written(v)} of {name} has no example: {why}")
            selected[name] = fixed
        except ConfigError as exc:
            if only is not None:
                raise ConfigError(f"--variants {text}: {exc}") from None
            if set(keys) <= set(specs):
                refused[name] = str(exc)
    if not selected:
        named = list(dict.fromkeys(keys))
        why = next(iter(refused.values())) if refused else \
            f"none has the option {named[0]}" if len(named) == 1 else f"none has the options {' and '.join(named)}"
        raise ConfigError(f"--variants {text} selects no algorithm: {why}")
    return selected, refused


def campaign(variants, only, checks_of, profile: str, seed: int, device: str,
             max_memory: int | None = None) -> Campaign:
    """The tasks of ``verify``: one per algorithm (``variants`` None: its examples drawn across its variants;
    ``checks_of(name)`` its checks), or one per variant ``--variants variants`` selects (every check that
    applies to the variant); ``max_memory``: the bytes each task's examples may be estimated at (None: the
    default limit)."""
    if variants is not None:
        variants = variants.strip()
    if variants is None:
        return Campaign([Checks(name, tuple(checks_of(name)), profile, seed, device, None, task_cost(name, profile),
                                max_memory) for name in chosen(only)])
    selected, left_out = select(variants, only)
    out = Campaign([], variants=variants, left_out=left_out)
    for name, fixed in selected.items():
        found, skipped = every_variant(name, fixed)
        cost = task_cost(name, profile, variant=True)
        size = max(1, math.ceil(GROUP_SECONDS / cost))
        out.tasks += [Variants(name, tuple(tuple(options.items()) for options in found[k:k + size]), profile, seed,
                               device, cost * len(found[k:k + size]), max_memory)
                      for k in range(0, len(found), size)]
        out.variant_count += len(found)
        out.skipped += [(name, options, reason) for options, reason in skipped]
    if not out.tasks:
        why = f"every combination breaks a rule ({out.skipped[0][2]})" if out.skipped else \
            "the options fixed have no effect together (one applies only with a value another rules out)"
        raise ConfigError(f"--variants {variants} leaves no variant: {why}")
    return out


def dry_run_text(plan: Campaign, workers: int | None, executor: str, profile: str) -> str:
    """What ``--dry-run`` prints: the tasks, per algorithm, the combinations skipped, and the estimated wall
    time on ``workers`` (the run's own), 1, 8 and 64 workers."""
    per = {}
    for task in plan.tasks:
        count, cost = per.get(task.name, (0, 0.0))
        per[task.name] = (count + len(getattr(task, "variants", (None,))), cost + task.cost)
    skipped = {}
    for name, _, _ in plan.skipped:
        skipped[name] = skipped.get(name, 0) + 1
    what = plan.what or (f"verify --variants {plan.variants}" if plan.variants else
                         "verify: examples drawn across the variants")
    counted = f"{plan.variant_count:,} variants in {len(plan.tasks):,} tasks" if plan.variants else \
        f"{len(plan.tasks):,} tasks"
    rules = f", {sum(skipped.values()):,} combinations skipped by the declarations' rules" if plan.variants else ""
    lines = [f"{what} — profile {profile}, --dry-run: {counted}{rules}", "",
             f"{'algorithm':<24} {'variants' if plan.variants else 'tasks':>8} {'skipped':>8} {'CPU time':>14}"]
    for name, (count, cost) in per.items():
        lines.append(f"{name:<24} {count:>8,} {skipped.get(name, 0):>8,} {duration(cost):>14}")
    lines += left_out_lines(plan.left_out)
    unmeasured = [] if plan.what else [n for n in per
                                       if not task_cost(n, profile, variant=bool(plan.variants)).measured]
    if unmeasured:
        lines += ["", f"not measured (their costs are the median of the measured ones; measure them with python "
                      f"benchmarks/bench_campaign.py --costs --profile {profile}): {', '.join(unmeasured)}"]
    costs = [t.cost for t in plan.tasks]
    lines += ["", f"estimated wall time (measured per-task costs, the longest task first; {executor}):"]
    for n in sorted({*WORKERS_SHOWN, *([workers] if workers else [])}):
        mark = "  (this run)" if n == workers else ""
        lines.append(f"  {n:>4} worker{'s' if n > 1 else ' '}  {duration(estimate(costs, n, executor)):>14}{mark}")
    return "\n".join(lines) + "\n"


def left_out_lines(left_out: dict) -> list:
    """What the dry run and the report say of the algorithms ``--variants`` left out."""
    if not left_out:
        return []
    return ["", "left out (they declare the options fixed, but not the values):"] + \
        [f"  {name}: {why}" for name, why in left_out.items()]
