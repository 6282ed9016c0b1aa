"""The checks ``verify`` runs and what each measures on one example (needs torch).

Each :class:`Check` says which algorithms it applies to — read from their records
(:mod:`reference.records`): the attention paths a runner takes, whether the output is token ids,
whether the algorithm is a loss a training algorithm steps along — and the deviation it allows;
:class:`Measure` measures it on one example, and :func:`row` over an algorithm's seeded examples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from formal.sampling.examples import Profile, example_list, examples
from formal.sampling.rounding_cases import precision_cases

from .. import require_torch, tolerances
from ..model import training
from ..model.convert import params_to_torch, tokens_to_torch
from ..model.execute import execute
from ..records import chosen, record
from ..tolerances import outputs, relative_error

__all__ = ["PROFILES", "Check", "CHECKS", "Row", "Measure", "relative_error", "example_loss", "allowed", "row",
           "rows", "plan", "applicable", "by_algorithm"]

torch = require_torch()

#: Profile → random examples per check (beside the boundary cases) and the longest sequence drawn.
PROFILES = {"quick": Profile(12, 5), "thorough": Profile(100, 17)}

_FD_STEP, _ETA = 1e-6, 0.1

#: The margin of the SGD step's error over the central difference's own (:meth:`Measure.sgd_baseline`).
SGD_MARGIN = 10


class Measure:
    """One method per check: each returns the deviation measured on one example, on ``device``.

    The spec's output on an example is computed once, whichever check meets it first (float64, the sdpa
    path, float32 and bfloat16 compare with the same one), and kept until :meth:`forget`."""

    def __init__(self, device):
        self.device = device
        self._spec = {}   # id(example) → (the example, kept so that its id is not reused; the spec's output)
        self._baselines = {}   # (id(example), dtype) → the baseline error (the example is kept in _spec)

    def spec(self, ex):
        """The spec's output on ``ex`` (computed once: the spec is deterministic, its seed an argument)."""
        if id(ex) not in self._spec:
            self._spec[id(ex)] = (ex, ex.algorithm(**ex.arguments))
        return self._spec[id(ex)][1]

    def forget(self):
        """Drop the spec's outputs and baselines kept so far (one algorithm's: :func:`rows`)."""
        self._spec.clear()
        self._baselines.clear()

    def float64(self, ex, **kw):
        got = execute(ex.algorithm, device=self.device, **kw, **ex.arguments)
        want = self.spec(ex)
        if record(ex.algorithm).token_outputs:  # token ids: how many differ
            return float(np.sum(np.asarray(want) != np.asarray(got))) if np.shape(want) == np.shape(got) else np.inf
        return relative_error(want, got)

    def lower(self, ex, dtype, path="explicit"):
        """The relative error in ``dtype`` on attention ``path``; on the large-score case only whether the outputs
        are finite where the spec's are (0 or ∞): scores of ~10⁸ leave no margin for rounding, but an overflow is
        NaN or ∞."""
        got = execute(ex.algorithm, device=self.device, dtype=dtype, path=path, **ex.arguments)
        if ex.large:
            want, got = outputs(self.spec(ex)), outputs(got)
            return 0.0 if all(w.shape == g.shape and np.array_equal(np.isfinite(w), np.isfinite(g))
                              for w, g in zip(want, got)) else float("inf")
        return relative_error(self.spec(ex), got)

    def baseline(self, ex, dtype) -> float:
        """The error a known-good computation in ``dtype`` makes on ``ex`` (:func:`reference.tolerances.baseline`),
        computed once per example and precision, whichever path's row meets it first; 0 on the large-score case
        (judged on finiteness alone)."""
        key = (id(ex), dtype)
        if key not in self._baselines:
            self._baselines[key] = 0.0 if ex.large else tolerances.baseline(
                ex.algorithm, ex.arguments, dtype, self.spec(ex), seed=ex.seed)
        return self._baselines[key]

    def unstable(self, ex, dtype, error) -> str:
        """Why the reference's ``error`` in ``dtype`` on ``ex`` says nothing of it (a correct computation errs as
        much there: :func:`reference.tolerances.unstable`), or ``""``."""
        return "" if ex.large else tolerances.unstable(ex.algorithm, ex.arguments, dtype, self.spec(ex), error,
                                                       seed=ex.seed)

    def flops(self, ex):
        from torch.utils.flop_counter import FlopCounterMode
        with FlopCounterMode(display=False) as counter:
            execute(ex.algorithm, device=self.device, **ex.arguments)
        return abs(counter.get_total_flops() - ex.evaluate(ex.algorithm.cost("matmul").flops))

    def params(self, ex):
        tensors = params_to_torch({p: ex.arguments[p] for p in ex.params}, device=self.device)
        return abs(sum(t.numel() for t in tensors.values()) - ex.evaluate(ex.algorithm.param_count()))

    def _finite_differences(self, ex):
        """``(direction, FD(h), FD(2h), largest |L|)``: central differences of the spec's loss along a random unit
        direction at steps h and 2h — computed once per example (the check and its baseline share them)."""
        key = (id(ex), "fd")
        if key not in self._baselines:
            rng = np.random.default_rng(ex.seed)
            direction = {p: rng.normal(size=np.shape(ex.arguments[p])) for p in ex.params}
            norm = np.sqrt(sum(float(np.sum(d ** 2)) for d in direction.values()))
            direction = {p: d / norm for p, d in direction.items()}
            differences, largest = [], 0.0
            for step in (_FD_STEP, 2 * _FD_STEP):
                sides = [float(ex.algorithm(**{**ex.arguments, **{p: ex.arguments[p] + sign * step * direction[p]
                                                                  for p in ex.params}})) for sign in (1, -1)]
                differences.append((sides[0] - sides[1]) / (2 * step))
                largest = max(largest, *map(abs, sides))
            self._baselines[key] = (ex, direction, differences[0], differences[1], largest)   # ex: its id stays its
        return self._baselines[key][1:]

    def sgd_step(self, ex):
        """(θ − θ')/η · u for a random unit direction u, against (L(θ + hu) − L(θ − hu)) / 2h of the spec."""
        direction, finite_difference, _, _ = self._finite_differences(ex)
        theta = params_to_torch({p: ex.arguments[p] for p in ex.params}, device=self.device)
        stepped = training.sgd_step(theta, example_loss(ex, self.device), _ETA)
        along = sum(float(torch.sum((theta[p] - stepped[p]).detach()
                                    * torch.as_tensor(direction[p], device=self.device)))
                    for p in ex.params) / _ETA
        return abs(along - finite_difference) / max(1.0, abs(finite_difference))

    def sgd_baseline(self, ex) -> float:
        """How far the central difference itself may be from the true derivative, relative as the check's error
        is: its truncation error, estimated by how much it moves when the step doubles (|FD(h) − FD(2h)|, three
        times the O(h²) error at h), plus its rounding, ε·max|L|/h."""
        _, at_h, at_2h, largest = self._finite_differences(ex)
        floor = abs(at_h - at_2h) + np.finfo(np.float64).eps * largest / _FD_STEP
        return floor / max(1.0, abs(at_h))

    def kv_cache(self, ex):
        """Prefill the first token(s), then extend one token at a time: the distributions of the whole
        sequence equal Algorithm 10's (the spec's dtransformer on the same parameters)."""
        from formal import algorithms
        options = {k: v for k, v in ex.algorithm.options.items() if k != "step"}
        whole = algorithms.dtransformer.variant(**options)
        theta = {k: v for k, v in ex.arguments.items() if k not in ("x", "K_c", "V_c")}
        x = np.asarray(ex.arguments["x"], dtype=np.int64)
        prefill = algorithms.kv_dtransformer.variant(**options, step="prefill")
        extend = algorithms.kv_dtransformer.variant(**options, step="extend")
        P, K, V = execute(prefill, device=self.device, x=x[:1], **theta)
        columns = [P]
        for t in range(1, len(x)):
            P, K, V = execute(extend, device=self.device, x=x[t:t + 1], K_c=K, V_c=V, **theta)
            columns.append(P)
        return relative_error(whole(x=x, **theta), np.concatenate(columns, axis=1))


def example_loss(ex, device="cpu"):
    """The reference's loss of the example as a function of the parameter dict."""
    a, o = ex.arguments, ex.algorithm.options
    extra = {"ell_max": a.get("ell_max")}
    tokens = {n: tokens_to_torch(a[n], device=device) for n in ("x", "z", "s") if n in a}
    if ex.algorithm.name == "dloss":
        return lambda p: training.dloss(tokens["x"], p, o, **extra).sum()
    if ex.algorithm.name == "edloss":
        return lambda p: training.edloss(tokens["z"], tokens["x"], p, o, **extra).sum()
    mask = training.draw_mask(len(a["x"]), o["p_mask"], np.random.default_rng(a["seed"]))
    m = torch.tensor(mask, dtype=torch.float64, device=device)[None]
    return lambda p: training.eloss(tokens["x"], m, p, o, s=tokens.get("s") if o["token_types"] else None,
                                    **extra).sum()


@dataclass(frozen=True)
class Check:
    """One of verify's checks: the records it ``applies`` to; the deviation ``allowed`` (a fixed figure, or None
    where each example's bound is ``margin`` times a baseline measured on the example: the error a known-good
    computation in ``dtype`` makes, or for the SGD step the central difference's own error); whether it runs on
    CUDA only; the attention ``path`` it runs and an example's variant must take (None: the explicit one,
    whatever the variant); the precision ``dtype``; and ``basis``, what its bound comes from, in words."""

    applies: Callable
    allowed: float | None
    cuda: bool = False
    path: str | None = None
    dtype: str = "float64"
    basis: str = "fixed"
    margin: int | None = None

    def __post_init__(self):
        if self.allowed is not None and not 0 <= self.allowed < 1:   # relative to max(1, max|spec|): ≥ 1 passes all
            raise ValueError(f"a check's bound {self.allowed} reaches its output's range")


def _precision_checks() -> dict:
    """Every precision on every attention path: float64 against 1e-10, float32 and bfloat16 against their
    baselines (token outputs, compared exactly, in float64 only)."""
    out = {}
    for dtype in ("float64", "float32", "bfloat16"):
        for path, cuda in ((None, False), ("sdpa", False), ("flex", True)):
            name = dtype if path is None else f"{dtype} {path}"
            if dtype == "float64":
                applies = (lambda r: True) if path is None else (lambda r, p=path: p in r.paths)
                out[name] = Check(applies, tolerances.FLOAT64, cuda, path, dtype, "fixed: float64 rounding")
            else:
                applies = (lambda r: not r.token_outputs) if path is None else \
                    (lambda r, p=path: not r.token_outputs and p in r.paths)
                out[name] = Check(applies, None, cuda, path, dtype, f"{dtype} emulated", tolerances.MARGINS[dtype])
    return out


#: check name → :class:`Check`.
CHECKS = {
    **_precision_checks(),
    "matmul FLOPs": Check(lambda r: not r.token_outputs, 0, basis="exact"),
    "params": Check(lambda r: True, 0, basis="exact"),
    "SGD step": Check(lambda r: r.loss, None, basis="finite differences", margin=SGD_MARGIN),
    "KV cache": Check(lambda r: r.name == "kv_dtransformer", tolerances.FLOAT64,
                      basis="fixed: float64 rounding"),   # what Measure.kv_cache runs
}


@dataclass
class Row:
    """One check of one algorithm.  ``max_error`` and ``allowed`` are those of the example nearest its bound (the
    largest error/bound; with a fixed bound, the largest error); ``baseline`` the baseline there (None with a fixed
    bound), ``margin`` the factor over it, ``basis`` where the bound comes from; ``excluded`` the examples left out
    (a bound past the output's range), with the first's reason in ``detail`` when it passes."""

    algorithm: str
    check: str
    examples: int
    max_error: float
    allowed: float
    verdict: str
    detail: str = ""
    variant: dict | None = None     # the options every example had (``verify --variants``); None: drawn
    baseline: float | None = None
    margin: int | None = None
    basis: str = "fixed"
    excluded: int = 0


def plan(only, device) -> list:
    """``(algorithm, check)`` for every check of every algorithm ``only`` names (None: all) on ``device``."""
    return [(name, check) for name in chosen(only) for check in applicable(name, device)]


def applicable(subject, device) -> list:
    """The checks that apply to ``subject`` (a name, or an algorithm object: a variant, whose attention paths
    are its own) on ``device``."""
    return [check for check, c in CHECKS.items()
            if c.applies(record(subject)) and (device.type == "cuda" or not c.cuda)]


def _measure(measure, check, ex):
    c = CHECKS[check]
    method = {"matmul FLOPs": measure.flops, "params": measure.params, "SGD step": measure.sgd_step,
              "KV cache": measure.kv_cache}.get(check)
    if method is not None:
        return method(ex)
    if c.dtype == "float64":
        return measure.float64(ex, path=c.path or "explicit")
    return measure.lower(ex, c.dtype, c.path or "explicit")


def allowed(name, check) -> float | None:
    """The fixed deviation ``check`` allows (None: each example's bound is measured, :func:`bounds`)."""
    return CHECKS[check].allowed


def bounds(name, check, cases, measure) -> list:
    """Each example's :class:`reference.tolerances.Bound` under ``check``: the fixed figure, or ``margin`` times
    the baseline measured on it."""
    c = CHECKS[check]
    if c.allowed is not None:
        return [tolerances.Bound(c.allowed, 0.0, 1) for _ in cases]
    if check == "SGD step":
        return [tolerances.Bound(c.margin * b, b, c.margin) for b in map(measure.sgd_baseline, cases)]
    factor = tolerances.margin(record(name).algorithm, c.dtype)
    return tolerances.bounds([measure.baseline(ex, c.dtype) for ex in cases], c.dtype, factor,
                             [tolerances.longest(ex.arguments) for ex in cases],
                             [tolerances.magnitude(measure.spec(ex)) for ex in cases])


def by_algorithm(plan) -> list:
    """``plan`` (``(algorithm, check)`` pairs, each algorithm's together) as ``(algorithm, [its checks])``."""
    grouped = {}
    for name, check in plan:
        grouped.setdefault(name, []).append(check)
    return list(grouped.items())


def _draw(name, check, profile, seed, options=None) -> list:
    """The seeded examples that ``check`` draws from (one list for all checks but the SGD step's): of every
    variant, or of the one ``options`` fix."""
    n, options = PROFILES[profile].examples, options or {}
    if check == "SGD step":  # tiny sizes; a masked loss masks half its tokens (unless fixed) so that it is not 0
        masked = {"p_mask": 0.5} if "p_mask" in record(name).algorithm.options else {}
        return example_list(name, range(seed, seed + n), small=2, **{**masked, **options})
    return examples(name, n, seed=seed, max_size=PROFILES[profile].max_size, **options)


def _source(check) -> str:
    """Which list of examples ``check`` draws from: the SGD step's (tiny), the lower precisions' (the examples and
    :func:`~formal.sampling.rounding_cases.precision_cases`), or the examples."""
    if check == "SGD step":
        return "SGD step"
    return "precision" if CHECKS[check].dtype != "float64" else "examples"


def _on_path(cases, check) -> list:
    """Those of ``cases`` whose variant takes ``check``'s attention path."""
    path = CHECKS[check].path
    return cases if path is None else [ex for ex in cases if path in record(ex.algorithm).paths]


def rows(name, checks, profile, seed, measure, options=None):
    """The rows of ``checks`` of algorithm ``name`` (of the variant ``options`` fix, or drawn across its
    variants), in that order, one at a time: the examples drawn once for all of them (the SGD step's apart) and
    the spec's output on each computed once (:meth:`Measure.spec`) — the rows each check would have alone."""
    drawn, variant = {}, None if options is None else dict(options)   # one dict for the variant's rows
    try:
        for check in checks:
            source = _source(check)
            if source == "precision" and source not in drawn:   # the examples and the precision cases
                if "examples" not in drawn:
                    drawn["examples"] = _draw(name, "float64", profile, seed, options)
                drawn[source] = drawn["examples"] + precision_cases(name, seed, **(options or {}))
            if source not in drawn:
                drawn[source] = _draw(name, check, profile, seed, options)
            measured = _row(name, check, _on_path(drawn[source], check), measure)
            measured.variant = variant
            yield measured
    finally:
        measure.forget()


def row(name, check, profile, seed, measure) -> Row:
    """One check of one algorithm on its seeded examples: the same row whichever process runs it."""
    (only,) = rows(name, [check], profile, seed, measure)
    return only


def _row(name, check, cases, measure) -> Row:
    """One check of one algorithm on ``cases``, each example against its own bound (:func:`bounds`)."""
    c, judged, excluded = CHECKS[check], [], []
    for ex, bound in zip(cases, bounds(name, check, cases, measure)):
        if bound.allowed is None:
            excluded.append(f"{ex.describe()}: {bound.reason}")
            continue
        try:
            error, broke = _measure(measure, check, ex), ""
        except Exception as exc:  # the reference broke: report it as this check's failure
            error, broke = float("inf"), f"{ex.describe()}: {type(exc).__name__}: {exc}"
        judged.append((error, bound, broke or ex.describe(), ex, bool(broke)))
    if c.dtype != "float64" and c.allowed is None:   # a measured bound: a failure counts where it is the code's
        judged = _confirmed(judged, excluded, c.dtype, measure)
    failing = [j for j in judged if j[0] > j[1].allowed]
    # the example nearest its bound (a failing one first: the smallest, as examples come smallest first)
    worst = failing[0] if failing else max(judged, key=lambda j: _closeness(*j[:2]), default=None)
    row = Row(name, check, len(judged), 0.0, c.allowed if c.allowed is not None else 0.0,
              "FAIL" if failing else "pass", basis=c.basis, excluded=len(excluded), margin=c.margin)
    if worst is not None:
        row.max_error, row.allowed = worst[0], worst[1].allowed
        row.baseline = None if c.allowed is not None else worst[1].baseline
        row.margin = worst[1].margin if c.allowed is None else None
        row.detail = worst[2] if failing else ""
    if excluded and not failing:
        row.detail = f"{len(excluded)} left out, e.g. {excluded[0]}"
    return row


def _confirmed(judged, excluded, dtype, measure) -> list:
    """``judged`` with the failing examples where rounding decides the output (a correct computation errs as
    much there: :meth:`Measure.unstable`) moved to ``excluded`` with the reason, up to the first failure that is
    the implementation's (the row fails there; the failures after it are not looked at again)."""
    kept = []
    for at, (error, bound, label, ex, broke) in enumerate(judged):
        if error > bound.allowed and not broke:
            reason = measure.unstable(ex, dtype, error)
            if reason:
                excluded.append(f"{label}: {reason}")
                continue
            return kept + judged[at:]
        kept.append(judged[at])
    return kept


def _closeness(error, bound) -> float:
    """error / bound, the fraction of its bound an example's error takes (an exact bound of 0 met: 0)."""
    if bound.allowed == 0:
        return 0.0 if error == 0 else float("inf")
    return error / bound.allowed
