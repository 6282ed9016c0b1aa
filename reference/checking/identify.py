"""Which variant of an algorithm is this implementation? (``formal-transformers conform --identify``).

The search runs :func:`reference.checking.conform.check` for every variant of the algorithm its declarations
allow (:mod:`formal.engine.declarations`): each option over its ``searched`` values — a choice over its values, a
range (``eps``) over the values real code uses, an integer (``n_kv_heads``) over its declared examples — with an
option that has no effect under the others' values (``applies``) kept at its default and the combinations a
:class:`~formal.engine.declarations.Requires` rule forbids never built.  Options given are fixed.  Variants are
tried fewest changes from the defaults first, at most ``budget`` of them, in two stages:

``prune``
    every variant on :data:`PRUNE_EXAMPLES` random examples no larger than :data:`PRUNE_SIZE` (cheap: the spec
    is numpy at tiny sizes); a failure there rules the variant out;
``confirm``
    the survivors on the whole profile (its boundary cases and random examples), as ``conform`` checks one.

One worker process runs the function for the whole search, and a call with the same arguments as an earlier one
(variants whose parameters and sizes agree draw the same arrays) is answered from the first call, so that its
output is compared with each variant's spec without running the function again.

When no variant conforms, the **nearest** are those that passed the most examples (over both stages), then whose
failing property comes later in the checking order (the function ran and had the spec's shapes, but its values
differ), then whose outputs deviate least from the spec (the largest |Δ| relative to max(1, max |spec|)).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np

from formal import algorithms
from formal.engine.algorithm import Algorithm
from formal.engine.declarations import same_value
from formal.engine.domains import Integer, Real, written
from formal.errors import ConfigError

from .conform import PROPERTIES, Settings, check
from .examples import EXAMPLE_ALGORITHMS, checked_int, examples
from .sandbox import DEFAULT_TIMEOUT
from .targets import Failed

__all__ = ["identify", "identify_text", "Identification", "Trial", "variants", "DEFAULT_BUDGET", "MAX_BUDGET",
           "PRUNE_EXAMPLES", "PRUNE_SIZE", "NEAREST"]

#: The most variants a search tries unless told (``--budget``): every variant of a decoder-only transformer
#: (3,072) fits; an encoder's (with its inputs and heads) does not, and the fewest changes are tried first.
DEFAULT_BUDGET = 4096
MAX_BUDGET = 1_000_000
#: The prune stage: this many random examples, sizes at most this (the smallest that tell variants apart).
PRUNE_EXAMPLES, PRUNE_SIZE = 2, 4
#: How many nearest variants a failed search names.
NEAREST = 3
_ORDER = tuple(PROPERTIES)


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
    ``searched`` values, fewest changes from the defaults first (then in declaration order)."""
    names = list(specs)
    choices = {n: (fixed[n],) if n in fixed else specs[n].searched for n in names}
    out, values = [], {}

    def assign(i):
        if i == len(names):
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
    """A runner (:mod:`reference.checking.targets`) whose answers are kept: a call with the same arguments as
    an earlier one returns that call's outputs (or raises its failure) without calling the function again."""

    def __init__(self, run):
        self.run, self.signature = run, run.signature
        self.calls = self.asked = 0
        self._answers = {}

    @property
    def printed(self) -> str:
        return self.run.printed

    def call(self, kwargs: dict, outputs) -> tuple:
        h = hashlib.sha256()
        _digest((kwargs, list(outputs)), h)
        key = h.hexdigest()
        self.asked += 1
        if key not in self._answers:
            self.calls += 1
            try:
                self._answers[key] = self.run.call(kwargs, outputs)
            except Failed as failed:
                self._answers[key] = failed
        answer = self._answers[key]
        if isinstance(answer, Failed):
            raise answer
        return tuple(np.array(a, copy=True) for a in answer)

    def close(self):
        self.run.close()


# ------------------------------------------------------------------------------------------ the search
@dataclass
class Trial:
    """One variant tried: its options (those that differ from the defaults), how far it got, and its
    failure."""

    options: dict
    changes: dict
    stage: str = "prune"          # the last stage it ran: prune or confirm
    verdict: str = "pruned"       # pruned (failed the prune stage), failed (the confirm stage), confirmed
    passed: int = 0               # examples passed over both stages
    failure: dict | None = None

    def distance(self) -> tuple:
        """The sort key of "nearest" (the module docstring)."""
        f = self.failure or {}
        deviation = f.get("deviation")
        return (-self.passed, -_ORDER.index(f.get("property", "equivariance")),
                float("inf") if deviation is None else deviation)

    def as_json(self) -> dict:
        return {"options": self.changes, "stage": self.stage, "verdict": self.verdict,
                "examples_passed": self.passed, "failure": self.failure}


@dataclass
class Identification:
    target: str
    algorithm: str
    fixed: dict
    searched: dict                 # option → the values tried
    kinds: dict                    # option → "range" or "integer" for the options not a choice
    space: int                     # the variants the declarations allow
    budget: int
    prune: dict
    confirm: dict
    trials: list = field(default_factory=list)
    unsearched: list = field(default_factory=list)    # options left at a value in an untried variant
    calls: int = 0
    asked: int = 0

    @property
    def confirmed(self) -> list:
        return [t for t in self.trials if t.verdict == "confirmed"]

    @property
    def survivors(self) -> list:
        return [t for t in self.trials if t.stage == "confirm"]

    @property
    def cut(self) -> bool:
        return self.space > len(self.trials)

    @property
    def ok(self) -> bool:
        return bool(self.confirmed)

    def nearest(self, n: int = NEAREST) -> list:
        return sorted((t for t in self.trials if t.verdict != "confirmed"), key=Trial.distance)[:n]

    def as_json(self) -> dict:
        return {"target": self.target, "algorithm": self.algorithm, "fixed": self.fixed,
                "searched": self.searched, "kinds": self.kinds, "prune": self.prune, "confirm": self.confirm,
                "budget": {"limit": self.budget, "used": len(self.trials), "space": self.space, "cut": self.cut,
                           "not_fully_searched": self.unsearched},
                "function_calls": self.calls, "calls_asked": self.asked,
                "tried": [t.as_json() for t in self.trials],
                "survivors": [t.changes for t in self.survivors],
                "confirmed": [t.changes for t in self.confirmed],
                "nearest": [] if self.ok else [t.as_json() for t in self.nearest()],
                "verdict": "identified" if self.ok else "none"}


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
    are :func:`reference.checking.conform.conform`'s and apply to the confirm stage.  ``progress``, a
    callable, receives a line of text now and then."""
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
        unsearched=sorted({k for v in space[budget:] for k in _changes(specs, v)}, key=list(specs).index))
    say = progress or (lambda text: None)
    run = Shared(settings.runner(target, isolate=isolate))
    try:
        for i, values in enumerate(todo):
            if i % 100 == 0 and len(todo) > 100:
                say(f"identify: prune stage, variant {i + 1} of {len(todo)}")
            result.trials.append(_prune(run, result.target, family, specs, values, small, given))
        survivors = result.survivors
        for i, trial in enumerate(survivors):
            say(f"identify: confirm stage, variant {i + 1} of {len(survivors)} ({_options_text(trial.changes)})")
            _confirm(run, result.target, family, trial, settings, given)
    finally:
        result.calls, result.asked = run.calls, run.asked
        run.close()
    return result


def _attempted(report) -> int:
    return report.checks["signature"].examples - (0 if report.ok else 1)


def _prune(run, target, family, specs, values, small, given) -> Trial:
    trial = Trial(values, _changes(specs, values))
    variant = algorithms.get(family, **values)
    cases = examples(variant, small.n_examples, seed=small.seed, max_size=small.max_size, boundary=False, **given)
    try:
        report = check(run, target, variant, cases, small)
    except ConfigError:     # the spec is undefined on these small examples: no evidence; the confirm stage decides
        trial.stage = "confirm"
        return trial
    trial.passed = _attempted(report)
    if report.ok:
        trial.stage = "confirm"
    else:
        trial.failure = {**report.failure, "stage": "prune"}
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
        trial.verdict, trial.failure = "failed", {**report.failure, "stage": "confirm"}


# ------------------------------------------------------------------------------------------ the text
def _options_text(changes: dict) -> str:
    return ", ".join(f"{k}={written(v)}" for k, v in changes.items()) or "the defaults"


def _variant_text(family, changes) -> str:
    return f"{family} with {_options_text(changes)}" if changes else f"{family} (its defaults)"


def identify_text(result: Identification) -> str:
    """The search and its verdict, as lines of text."""
    r = result
    values = "; ".join(f"{k} ∈ {{{', '.join(map(written, v))}}}" for k, v in r.searched.items())
    lines = [f"identify {r.target} among the variants of {r.algorithm}",
             f"searched {values}"]
    if r.fixed:
        lines.append("fixed by -o: " + _options_text(r.fixed))
    if r.kinds:
        lines.append("not a choice, searched over declared values: " + ", ".join(
            f"{k} ({'the values real code uses' if kind == 'range' else 'its declared examples'})"
            for k, kind in r.kinds.items()))
    c = r.confirm
    lines.append(f"tried {len(r.trials)} of {r.space} variants (budget {r.budget}): {len(r.trials) - len(r.survivors)} "
                 f"ruled out on {r.prune['examples']} random examples up to size {r.prune['max_size']}, "
                 f"{len(r.survivors)} checked on the {c['profile']} profile (boundary cases and {c['examples']} "
                 f"random examples up to size {c['max_size']}); the function ran {r.calls} times for {r.asked} "
                 "calls")
    if r.cut:
        lines.append(f"the budget cut the search short ({r.space - len(r.trials)} variants untried, --budget to "
                     f"raise it); not fully searched: {', '.join(r.unsearched)}")
    lines.append("")
    confirmed = r.confirmed
    if len(confirmed) == 1:
        lines.append(f"CONFORMS to {_variant_text(r.algorithm, confirmed[0].changes)}")
    elif confirmed:
        differ = [k for k in r.searched if len({repr(t.options[k]) for t in confirmed}) > 1]
        lines.append(f"CONFORMS to {len(confirmed)} variants, indistinguishable on these examples (they differ "
                     f"in {', '.join(differ)}):")
        lines += [f"  {_variant_text(r.algorithm, t.changes)}" for t in confirmed]
    else:
        lines.append(f"NO VARIANT of {r.algorithm} conforms; the nearest (most examples passed, then the latest "
                     "failing property, then the smallest deviation from the spec):")
        for t in r.nearest():
            f = t.failure
            deviation = "" if f.get("deviation") is None else f", deviation {f['deviation']:.2e}"
            lines.append(f"  {_variant_text(r.algorithm, t.changes)}: {t.passed} examples passed; fails "
                         f"{f['property']}{deviation} at {f['example'] or 'every example'}")
            lines.append(f"    {f['message']}")
    return "\n".join(lines) + "\n"
