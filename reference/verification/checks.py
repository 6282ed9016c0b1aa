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

from .. import require_torch, tolerances
from ..model import training
from ..model.convert import params_to_torch, tokens_to_torch
from ..model.execute import execute
from ..records import chosen, record

__all__ = ["PROFILES", "Check", "CHECKS", "Row", "Measure", "relative_error", "example_loss", "allowed", "row",
           "rows", "plan", "applicable", "by_algorithm"]

torch = require_torch()

#: Profile → random examples per check (beside the boundary cases) and the longest sequence drawn.
PROFILES = {"quick": Profile(12, 5), "thorough": Profile(100, 17)}

_FD_STEP, _ETA = 1e-6, 0.1


def _outputs(value) -> tuple:
    return tuple(np.asarray(v, dtype=np.float64) for v in (value if isinstance(value, tuple) else (value,)))


def relative_error(want, got) -> float:
    """max |want − got| / max(1, max |want|) over every output; NaN must sit where the spec has NaN."""
    worst = 0.0
    for w, g in zip(_outputs(want), _outputs(got)):
        if w.shape != g.shape or not np.array_equal(np.isnan(w), np.isnan(g)):
            return float("inf")
        worst = max(worst, tolerances.deviation(w, g))
    return worst


class Measure:
    """One method per check: each returns the deviation measured on one example, on ``device``.

    The spec's output on an example is computed once, whichever check meets it first (float64, the sdpa
    path, float32 and bfloat16 compare with the same one), and kept until :meth:`forget`."""

    def __init__(self, device):
        self.device = device
        self._spec = {}   # id(example) → (the example, kept so that its id is not reused; the spec's output)

    def spec(self, ex):
        """The spec's output on ``ex`` (computed once: the spec is deterministic, its seed an argument)."""
        if id(ex) not in self._spec:
            self._spec[id(ex)] = (ex, ex.algorithm(**ex.arguments))
        return self._spec[id(ex)][1]

    def forget(self):
        """Drop the spec's outputs kept so far (one algorithm's: :func:`rows`)."""
        self._spec.clear()

    def float64(self, ex, **kw):
        got = execute(ex.algorithm, device=self.device, **kw, **ex.arguments)
        want = self.spec(ex)
        if record(ex.algorithm).token_outputs:  # token ids: how many differ
            return float(np.sum(np.asarray(want) != np.asarray(got))) if np.shape(want) == np.shape(got) else np.inf
        return relative_error(want, got)

    def sdpa(self, ex):
        return self.float64(ex, path="sdpa")

    def flex(self, ex):
        return self.float64(ex, path="flex")

    def lower(self, ex, dtype):
        """The relative error in ``dtype``; on the large-score case only whether the outputs are finite where
        the spec's are (0 or ∞): scores of ~10⁸ leave no margin for rounding, but an overflow is NaN or ∞."""
        if ex.large:
            got = _outputs(execute(ex.algorithm, device=self.device, dtype=dtype, **ex.arguments))
            want = _outputs(self.spec(ex))
            return 0.0 if all(w.shape == g.shape and np.array_equal(np.isfinite(w), np.isfinite(g))
                              for w, g in zip(want, got)) else float("inf")
        return relative_error(self.spec(ex), execute(ex.algorithm, device=self.device, dtype=dtype, **ex.arguments))

    def flops(self, ex):
        from torch.utils.flop_counter import FlopCounterMode
        with FlopCounterMode(display=False) as counter:
            execute(ex.algorithm, device=self.device, **ex.arguments)
        return abs(counter.get_total_flops() - ex.evaluate(ex.algorithm.cost("matmul").flops))

    def params(self, ex):
        tensors = params_to_torch({p: ex.arguments[p] for p in ex.params}, device=self.device)
        return abs(sum(t.numel() for t in tensors.values()) - ex.evaluate(ex.algorithm.param_count()))

    def sgd_step(self, ex):
        """(θ − θ')/η · u for a random unit direction u, against (L(θ + hu) − L(θ − hu)) / 2h of the spec."""
        rng = np.random.default_rng(ex.seed)
        direction = {p: rng.normal(size=np.shape(ex.arguments[p])) for p in ex.params}
        norm = np.sqrt(sum(float(np.sum(d ** 2)) for d in direction.values()))
        direction = {p: d / norm for p, d in direction.items()}
        sides = []
        for sign in (1, -1):
            moved = {**ex.arguments, **{p: ex.arguments[p] + sign * _FD_STEP * direction[p] for p in ex.params}}
            sides.append(float(ex.algorithm(**moved)))
        finite_difference = (sides[0] - sides[1]) / (2 * _FD_STEP)
        theta = params_to_torch({p: ex.arguments[p] for p in ex.params}, device=self.device)
        stepped = training.sgd_step(theta, example_loss(ex, self.device), _ETA)
        along = sum(float(torch.sum((theta[p] - stepped[p]).detach()
                                    * torch.as_tensor(direction[p], device=self.device)))
                    for p in ex.params) / _ETA
        return abs(along - finite_difference) / max(1.0, abs(finite_difference))

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
    """One of verify's checks: the records it ``applies`` to, the deviation ``allowed`` (None: the calibrated
    tolerance of the precision the check is named after), whether it runs on CUDA only, and the attention
    ``path`` an example's variant must take for it (None: any)."""

    applies: Callable
    allowed: float | None
    cuda: bool = False
    path: str | None = None


#: check name → :class:`Check`.
CHECKS = {
    "float64": Check(lambda r: True, tolerances.FLOAT64),
    "sdpa path": Check(lambda r: "sdpa" in r.paths, tolerances.FLOAT64, path="sdpa"),
    "flex path": Check(lambda r: "flex" in r.paths, tolerances.FLOAT64, cuda=True, path="flex"),
    "float32": Check(lambda r: not r.token_outputs, None),
    "bfloat16": Check(lambda r: not r.token_outputs, None),
    "matmul FLOPs": Check(lambda r: not r.token_outputs, 0),
    "params": Check(lambda r: True, 0),
    "SGD step": Check(lambda r: r.loss, 1e-6),
    "KV cache": Check(lambda r: r.name == "kv_dtransformer", tolerances.FLOAT64),   # what Measure.kv_cache runs
}


@dataclass
class Row:
    algorithm: str
    check: str
    examples: int
    max_error: float
    allowed: float
    verdict: str
    detail: str = ""
    variant: dict | None = None     # the options every example had (``verify --variants``); None: drawn


def plan(only, device) -> list:
    """``(algorithm, check)`` for every check of every algorithm ``only`` names (None: all) on ``device``."""
    return [(name, check) for name in chosen(only) for check in applicable(name, device)]


def applicable(subject, device) -> list:
    """The checks that apply to ``subject`` (a name, or an algorithm object: a variant, whose attention paths
    are its own) on ``device``."""
    return [check for check, c in CHECKS.items()
            if c.applies(record(subject)) and (device.type == "cuda" or not c.cuda)]


def _measure(measure, check, ex):
    method = {"sdpa path": measure.sdpa, "flex path": measure.flex, "matmul FLOPs": measure.flops,
              "params": measure.params, "SGD step": measure.sgd_step, "KV cache": measure.kv_cache,
              "float64": measure.float64}.get(check)
    return method(ex) if method else measure.lower(ex, check)


def allowed(name, check) -> float:
    """The deviation ``check`` allows algorithm ``name``."""
    figure = CHECKS[check].allowed
    return tolerances.relative(check, name) if figure is None else figure


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
            source = "SGD step" if check == "SGD step" else "examples"
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
    """One check of one algorithm on ``cases``."""
    limit, worst, detail = allowed(name, check), 0.0, ""
    for ex in cases:
        try:
            error = _measure(measure, check, ex)
        except Exception as exc:  # the reference broke: report it as this check's failure
            error, detail = float("inf"), f"{ex.describe()}: {type(exc).__name__}: {exc}"
        if error > limit and not detail:
            detail = ex.describe()
        worst = max(worst, error)
    return Row(name, check, len(cases), worst, limit, "FAIL" if worst > limit else "pass",
               detail if worst > limit else "")
