"""Which variant of an algorithm is this implementation? (``formal-transformers conform --identify``).

The search runs :func:`reference.conformance.conform.check` for every variant of the algorithm its declarations
allow (:mod:`formal.engine.declarations`): each option over its ``searched`` values — a choice over its values, a
range (``eps``) over the values real code uses, an integer (``n_kv_heads``) over its declared examples — with an
option that has no effect under the others' values (``applies``) kept at its default and the combinations a
:class:`~formal.engine.declarations.Requires` rule forbids never built.  Options given are fixed.  Variants are
tried fewest changes from the defaults first, at most ``budget`` of them, in two stages, and a third where none
conforms:

``prune``
    every variant on :data:`PRUNE_EXAMPLES` random examples no larger than :data:`PRUNE_SIZE` (cheap: the spec
    is numpy at tiny sizes); a failure there rules the variant out;
``confirm``
    the survivors on the whole profile (its boundary cases and random examples), as ``conform`` checks one;
``rank``
    only where no variant conforms: every variant on all its prune examples, past a failure; then the
    :data:`RANKED` nearest on them (at least; an eighth of a larger search, and every survivor) on
    :data:`RANK_EXAMPLES` more random examples and the boundary cases, all up to :data:`PRUNE_SIZE` — the cases
    where one-bug code agrees with its own variant (one head, one token, no mask, …) and a variant that differs
    from it in an option does not.  Not run after a call that ran into the time limit (each new call could too).

One worker process runs the function for the whole search, and a call with the same arguments as an earlier one
(variants whose parameters and sizes agree draw the same arrays) is answered from the first call, so that its
output is compared with each variant's spec without running the function again.

When no variant conforms, the **nearest** are ranked by how they fail on every example of the rank stage (their
:class:`~reference.conformance.candidates.Fit`), not by how far they got before a first failure on the smallest
examples: the largest share of examples on which every property holds, then of the outputs' entries equal within
the tolerance, then the smallest deviation — the median over those examples of the largest ``|Δ|`` relative to
max(1, max |spec|), each variant's one figure, the same in the text and the JSON — then the latest failing property
in the checking order.  For code with one bug, the nearest is the variant that agrees with it wherever the bug
does not show.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import replace

import numpy as np

from formal import algorithms
from formal.engine.algorithm import Algorithm
from formal.engine.declarations import same_value
from formal.engine.domains import Integer, Real
from formal.errors import ConfigError
from formal.sampling.examples import EXAMPLE_ALGORITHMS, checked_int
from formal.sampling.ties import Ties

from .candidates import Fit, Identification, Trial, identify_text, options_text
from .conform import Settings, check
from .sandbox import DEFAULT_TIMEOUT
from .settings import DEFAULT_BUDGET, MAX_BUDGET
from .targets import Failed

__all__ = ["identify", "variants", "Shared", "DEFAULT_BUDGET", "MAX_BUDGET", "PRUNE_EXAMPLES", "PRUNE_SIZE", "RANKED",
           "RANK_EXAMPLES",
           "identify_text", "Identification", "Trial", "Fit"]   # the last four: the report's (.candidates)

#: A search of more variants than this is long: it says how far it got every this many variants.
LONG = 100
#: The prune stage: this many random examples, sizes at most this (the smallest that tell variants apart).
PRUNE_EXAMPLES, PRUNE_SIZE = 2, 4
#: The rank stage: at least this many variants (all of a search this small) checked on this many more random
#: examples and the boundary cases, all up to :data:`PRUNE_SIZE`.
RANKED, RANK_EXAMPLES = 32, 6


# ------------------------------------------------------------------------------------------ the variants
def _consistent(specs, values: dict) -> bool:
    """Whether the options assigned so far can be one variant: none set away from its default where it has no
    effect, no rule broken."""
    for name, value in values.items():
        control = specs[name].applies
        if control and control[0] in values and not specs.applies(name, values) \
                and not same_value(value, specs[name].default):
            return False
    return not any(r.option in values and r.other in values and r.broken(values) for r in specs.rules)


def variants(specs, fixed: dict) -> list:
    """Every variant the declarations ``specs`` allow with the options ``fixed``, each option over its
    ``searched`` values, fewest changes from the defaults first (then in declaration order).  An option group
    (:attr:`formal.engine.declarations.Option.group`: the rotary settings, the QK-norm, a cap) is searched as
    ``verify --variants all`` enumerates it (:func:`formal.sampling.variants.option_groups`): with the other
    options at their defaults, unless ``fixed`` names one of its options — then it joins the product.  Fix one
    (``-o rope=half``, or every rotary option but those to find) to search a group together with the rest."""
    from formal.sampling.variants import option_groups
    names = list(specs)
    base, apart = option_groups(specs, fixed)
    seen, out = set(), []
    for group in (None,) + apart:
        varied = base if group is None else set(group)
        choices = {n: (fixed[n],) if n in fixed else specs[n].searched if n in varied else (specs[n].default,)
                   for n in names}
        values = {}

        def assign(i):
            if i == len(names):
                key = tuple(repr(values[n]) for n in names)
                if key not in seen:
                    seen.add(key)
                    out.append(dict(values))
                return
            for value in choices[names[i]]:
                values[names[i]] = value
                if _consistent(specs, values):
                    assign(i + 1)
                del values[names[i]]
        assign(0)
    return sorted(out, key=lambda v: len(_changes(specs, v)))


def _changes(specs, options: dict) -> dict:
    return {k: v for k, v in options.items() if not same_value(v, specs[k].default)}


def _fixed(specs, options, name) -> dict:
    """The options given, checked and in normal form."""
    fixed = {}
    for key, value in (options or {}).items():
        if key not in specs:
            raise ConfigError(f"{name} has no option {key!r}; its options: {', '.join(specs) or 'none'}")
        fixed[key] = specs[key].check(value)
    return fixed


# ------------------------------------------------------------------------------------------ one worker, shared
def _digest(value, h) -> None:
    if isinstance(value, dict):
        for key in sorted(value):
            h.update(f"<{key}>".encode())
            _digest(value[key], h)
    elif isinstance(value, (tuple, list)):
        h.update(f"[{len(value)}".encode())
        for v in value:
            _digest(v, h)
    elif isinstance(value, np.ndarray):
        h.update(f"{value.dtype}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    else:
        h.update(f"{type(value).__name__}:{value!r};".encode())


class Shared:
    """A runner (:mod:`reference.conformance.targets`) whose answers are kept: a call with the same arguments as
    an earlier one returns that call's outputs (or raises its failure) without calling the function again.
    ``timed_out``: whether a call failed after running into the time limit (the rank stage, whose examples are
    new calls, is then not run: each could take as long)."""

    def __init__(self, run):
        self.run, self.signature = run, run.signature
        self.calls = self.asked = 0
        self.timed_out = False
        self._answers = {}

    @property
    def printed(self) -> str:
        return self.run.printed

    def call(self, kwargs: dict, outputs, shapes=None) -> tuple:
        """The function's outputs on ``kwargs``, converted against the spec's ``shapes`` (part of the key: the
        same output may fit one variant's shapes and not another's)."""
        h = hashlib.sha256()
        _digest((kwargs, list(outputs), None if shapes is None else [list(s) for s in shapes]), h)
        key = h.hexdigest()
        self.asked += 1
        if key not in self._answers:
            self.calls += 1
            started = time.monotonic()
            try:
                self._answers[key] = self.run.call(kwargs, outputs, shapes)
            except Failed as failed:
                self._answers[key] = failed
                limit = getattr(self.run, "timeout", None)
                self.timed_out |= limit is not None and time.monotonic() - started >= limit
        answer = self._answers[key]
        if isinstance(answer, Failed):
            raise answer
        return tuple(np.array(a, copy=True) for a in answer)

    def close(self):
        self.run.close()


# ------------------------------------------------------------------------------------------ the search
def _name(algorithm) -> str:
    name = algorithm.name if isinstance(algorithm, Algorithm) else algorithm
    if not isinstance(name, str) or name not in EXAMPLE_ALGORITHMS:
        raise ConfigError(f"conform --identify searches {', '.join(EXAMPLE_ALGORITHMS)}; not {name!r}")
    return name


def _kind(option) -> str | None:
    parts = option.domain.parts()
    return "range" if any(isinstance(p, Real) for p in parts) else \
        "integer" if any(isinstance(p, Integer) for p in parts) else None


def identify(target, algorithm, *, options=None, sizes=None, budget=DEFAULT_BUDGET, name=None, layout="columns",
             profile="quick", n_examples=None, max_size=None, seed=0, device="cpu", precision="float64",
             timeout=DEFAULT_TIMEOUT, isolate=None, max_memory=None, progress=None) -> Identification:
    """Search the variants of ``algorithm`` (a registry name; an algorithm object stands for its name) for
    those ``target`` conforms to (the module docstring).  ``options`` are fixed; ``sizes`` (fixed and tied
    sizes) are passed to the examples when given; ``budget`` bounds the variants tried; the other arguments
    are :func:`reference.conformance.conform.conform`'s and apply to the confirm stage.  ``progress``, a
    callable, receives a line of text every :data:`LONG` variants of a long search and at each variant confirmed."""
    family = _name(algorithm)
    specs = algorithms.get(family).option_specs
    fixed = _fixed(specs, options, family)
    budget = checked_int(budget, "--budget", 1, MAX_BUDGET)
    if not set(specs) - set(fixed):
        raise ConfigError(f"{family} has no option to search" + (" (every one is fixed by -o)" if specs else "")
                          + "; check it without --identify")
    space = variants(specs, fixed)
    if not space:
        specs.resolve(fixed, family)   # names the conflict
        raise ConfigError(f"no variant of {family} has the options {fixed}")
    settings = Settings.checked(layout=layout, profile=profile, n_examples=n_examples, max_size=max_size,
                                seed=seed, device=device, precision=precision, timeout=timeout,
                                max_memory=max_memory)
    ties = Ties.parse(algorithms.get(family, **fixed), sizes)   # a tie that names no size fails before the search
    given = {} if sizes is None else {"sizes": sizes}
    small = replace(settings, n_examples=PRUNE_EXAMPLES, max_size=min(PRUNE_SIZE, settings.max_size))
    todo = space[:budget]
    searched = {k: list(specs[k].searched) for k in specs if k not in fixed}
    result = Identification(
        name or (target if isinstance(target, str) else getattr(target, "__name__", repr(target))), family,
        fixed, searched,
        {k: _kind(specs[k]) for k in searched if _kind(specs[k])}, len(space), budget,
        {"examples": small.n_examples, "max_size": small.max_size, "boundary": False},
        {"profile": settings.profile, "examples": settings.n_examples, "max_size": settings.max_size,
         "boundary": True},
        unsearched=sorted({k for v in space[budget:] for k in _changes(specs, v)}, key=list(specs).index),
        sizes=ties.texts)
    say = progress if progress is not None and len(todo) > LONG else (lambda text: None)
    run = Shared(settings.runner(target, isolate=isolate))
    try:
        for i, values in enumerate(todo):
            if i % LONG == 0:
                say(f"identify: prune stage, variant {i + 1} of {len(todo)}")
            result.trials.append(_prune(run, result.target, family, specs, values, small, given))
        survivors = result.survivors
        for i, trial in enumerate(survivors):
            say(f"identify: confirm stage, variant {i + 1} of {len(survivors)} ({options_text(trial.changes)})")
            _confirm(run, result.target, family, trial, settings, given)
        if not result.ok and not run.timed_out:
            _rank(run, result, small, given, say)   # (past the time limit, each new call could take as long)
    finally:
        result.calls, result.asked = run.calls, run.asked
        run.close()
        for trial in result.trials:
            trial.evidence = {}     # the variants, their examples and the spec's outputs: not the report's
    return result


def _attempted(report) -> int:
    """The examples passed before the check stopped (at its first failure)."""
    return sum(o.failed is None for o in report.outcomes)


def _failure(report, stage: str) -> dict:
    """The report's failure as a trial keeps it: its message without the ``|Δ|`` it quotes (the trial's one deviation
    figure is ``failure["deviation"]``: its failing example's, until the rank stage gives it its median)."""
    what = next((o.what for o in report.outcomes if o.failed), report.failure["message"])
    return {**report.failure, "message": what, "stage": stage}


def _prune(run, target, family, specs, values, small, given) -> Trial:
    trial = Trial(values, _changes(specs, values))
    variant = algorithms.get(family, **values)
    cases = small.examples(variant, boundary=False, **given)
    trial.evidence = {"variant": variant, "cases": cases, "cache": {}}
    try:
        report = check(run, target, variant, cases, small, cache=trial.evidence["cache"])
    except ConfigError:     # the spec is undefined on these small examples: no evidence; the confirm stage decides
        trial.stage = "confirm"
        return trial
    trial.passed = _attempted(report)
    if report.ok:
        trial.stage = "confirm"
    else:
        trial.failure = _failure(report, "prune")
    return trial


def _confirm(run, target, family, trial, settings, given):
    variant = algorithms.get(family, **trial.options)
    try:
        report = check(run, target, variant, settings.examples(variant, **given), settings)
    except ConfigError as exc:
        trial.verdict, trial.failure = "failed", {"property": "spec", "message": str(exc), "example": "",
                                                  "case": "", "example_seed": None, "deviation": None,
                                                  "stage": "confirm"}
        return
    trial.passed += _attempted(report)
    if report.ok:
        trial.verdict = "confirmed"
    else:
        trial.verdict, trial.failure = "failed", _failure(report, "confirm")


def _rank(run, result, small, given, say):
    """The rank stage (none conforms; the module docstring): every variant's :class:`Fit` on all its prune
    examples, then the nearest on them — :data:`RANKED` at least, an eighth of a larger search, every survivor —
    on those, :data:`RANK_EXAMPLES` more random examples (seeds after the prune stage's) and the boundary cases,
    all up to the prune size; a failure's ``deviation`` becomes its fit's."""
    trials = result.trials
    for trial in trials:
        if not run.timed_out:
            _fit(run, result.target, trial, trial.evidence.get("cases"), small)
    count = max(RANKED, -(-len(trials) // 8))
    chosen = sorted(trials, key=Trial.distance)[:count]
    chosen += [t for t in result.survivors if all(t is not c for c in chosen)]
    more = replace(small, n_examples=RANK_EXAMPLES, seed=small.seed + small.n_examples)
    for i, trial in enumerate(chosen):
        if i % LONG == 0:
            say(f"identify: rank stage, variant {i + 1} of {len(chosen)}")
        if "variant" not in trial.evidence or run.timed_out:
            continue
        cases = trial.evidence["cases"] + more.examples(trial.evidence["variant"], **given)
        _fit(run, result.target, trial, sorted(cases, key=lambda e: e.size), small)
    result.rank = {"examples": small.n_examples + RANK_EXAMPLES, "max_size": small.max_size, "boundary": True,
                   "variants": len(chosen), "of": len(trials), "timed_out": run.timed_out}


def _fit(run, target, trial, cases, small):
    """``trial``'s :class:`Fit` on ``cases``, every one checked (past a failure); none where the spec is undefined
    on all of them.  Its failure's ``deviation`` becomes the fit's."""
    if not cases:
        return
    try:
        report = check(run, target, trial.evidence["variant"], cases, small, cache=trial.evidence["cache"],
                       stop=False)
    except ConfigError:
        return
    trial.fit = Fit.of(report.outcomes)
    if trial.failure is not None:
        trial.failure["deviation"] = trial.fit.deviation
