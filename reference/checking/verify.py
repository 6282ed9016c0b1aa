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
import multiprocessing
import signal
import time
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait

import numpy as np

from formal.errors import ConfigError, FormalError
from formal.guards.files import destination, json_text, write_text

from .. import require_torch
from . import tolerances
from ..model import training
from ..model.convert import params_to_torch, tokens_to_torch
from ..model.device import device as resolve_device
from .examples import EXAMPLE_ALGORITHMS, Profile, checked_int, example, examples
from ..model.execute import execute

__all__ = ["PROFILES", "CHECKS", "Row", "Report", "WorkerError", "verify", "chosen", "write_json", "check_destination",
           "relative_error", "example_loss"]

torch = require_torch()

#: Profile → random examples per check (beside the boundary cases) and the longest sequence drawn.
PROFILES = {"quick": Profile(12, 5), "thorough": Profile(100, 17)}

_FAST = ("attention", "mhattention", "kv_mhattention", "dtransformer", "etransformer", "edtransformer",
         "kv_dtransformer", "window_mhattention", "swin_block", "swin_stage", "swin")
_TOKENS = ("dinference", "edinference")
_LOSSES = ("dloss", "edloss", "eloss")
_FD_STEP, _ETA = 1e-6, 0.1


def _outputs(value) -> tuple:
    return tuple(np.asarray(v, dtype=np.float64) for v in (value if isinstance(value, tuple) else (value,)))


def relative_error(want, got) -> float:
    """max |want − got| / max(1, max |want|) over every output; NaN must sit where the spec has NaN."""
    worst = 0.0
    for w, g in zip(_outputs(want), _outputs(got)):
        if w.shape != g.shape or not np.array_equal(np.isnan(w), np.isnan(g)):
            return float("inf")
        if w.size:
            worst = max(worst, float(np.nanmax(np.abs(w - g), initial=0.0)) / tolerances.scale(w))
    return worst


class _Checks:
    """One method per check: each returns the deviation measured on one example."""

    def __init__(self, device):
        self.device = device

    def float64(self, ex, **kw):
        got = execute(ex.algorithm, device=self.device, **kw, **ex.arguments)
        want = ex.algorithm(**ex.arguments)
        if ex.algorithm.name in _TOKENS:
            return float(np.sum(np.asarray(want) != np.asarray(got))) if np.shape(want) == np.shape(got) else np.inf
        return relative_error(want, got)

    def sdpa(self, ex):
        return self.float64(ex, path="sdpa")

    def flex(self, ex):
        return self.float64(ex, path="flex")

    def lower(self, ex, dtype):
        return relative_error(ex.algorithm(**ex.arguments), execute(ex.algorithm, device=self.device, dtype=dtype,
                                                            **ex.arguments))

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
        along = sum(float(torch.sum((theta[p] - stepped[p]).detach() * torch.as_tensor(direction[p], device=self.device)))
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


#: check name → (algorithms it applies to, allowed deviation (None: calibrated), runs on CUDA only).
CHECKS = {
    "float64": (EXAMPLE_ALGORITHMS, tolerances.FLOAT64, False),
    "sdpa path": (_FAST, tolerances.FLOAT64, False),
    "flex path": (("attention", "mhattention"), tolerances.FLOAT64, True),
    "float32": (tuple(n for n in EXAMPLE_ALGORITHMS if n not in _TOKENS), None, False),
    "bfloat16": (tuple(n for n in EXAMPLE_ALGORITHMS if n not in _TOKENS), None, False),
    "matmul FLOPs": (tuple(n for n in EXAMPLE_ALGORITHMS if n not in _TOKENS), 0, False),
    "params": (EXAMPLE_ALGORITHMS, 0, False),
    "SGD step": (_LOSSES, 1e-6, False),
    "KV cache": (("kv_dtransformer",), tolerances.FLOAT64, False),
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


def _plan(only, device) -> list:
    names = EXAMPLE_ALGORITHMS if only is None else chosen(only)
    return [(name, check) for name in names for check, (applies, _, cuda) in CHECKS.items()
            if name in applies and (device.type == "cuda" or not cuda)]


def _run(checks, check, ex):
    method = {"sdpa path": checks.sdpa, "flex path": checks.flex, "matmul FLOPs": checks.flops,
              "params": checks.params, "SGD step": checks.sgd_step, "KV cache": checks.kv_cache,
              "float64": checks.float64}.get(check)
    return method(ex) if method else checks.lower(ex, check)


def chosen(only) -> list:
    """The algorithm names of ``only`` (a list, or None for all), each known to verify; an empty list is a
    ConfigError: a run that checks nothing must not pass."""
    names = list(only)
    if not names:
        raise ConfigError("only names no algorithm: give at least one (known: " + ", ".join(EXAMPLE_ALGORITHMS) + ")")
    unknown = [n for n in names if n not in EXAMPLE_ALGORITHMS]
    if unknown:
        raise ConfigError(f"verify knows no algorithm {unknown[0]!r}; known: {', '.join(EXAMPLE_ALGORITHMS)}")
    return names


def _allowed(name, check) -> float:
    _, allowed, _ = CHECKS[check]
    return tolerances.relative(check, name) if allowed is None else allowed


def _row(name, check, profile, seed, checks) -> Row:
    """One check of one algorithm on its seeded examples: the same row whichever process runs it."""
    n = PROFILES[profile].examples
    if check == "SGD step":  # tiny sizes; eloss masks half its tokens so that its loss is not 0
        cases = [example(name, seed + k, small=2, **({"p_mask": 0.5} if name == "eloss" else {})) for k in range(n)]
    else:
        cases = examples(name, n, seed=seed, max_size=PROFILES[profile].max_size)
    if check in ("sdpa path", "flex path"):  # the additive score has only the explicit path
        cases = [ex for ex in cases if ex.algorithm.options.get("score") != "additive"]
    allowed, worst, detail = _allowed(name, check), 0.0, ""
    for ex in cases:
        try:
            error = _run(checks, check, ex)
        except Exception as exc:  # the reference broke: report it as this check's failure
            error, detail = float("inf"), f"{ex.describe()}: {type(exc).__name__}: {exc}"
        if error > allowed and not detail:
            detail = ex.describe()
        worst = max(worst, error)
    return Row(name, check, len(cases), worst, allowed, "FAIL" if worst > allowed else "pass",
               detail if worst > allowed else "")


def verify(*, profile="quick", device="auto", seed=0, only=None, jobs=1, progress=None) -> Report:
    """Run every check of every (chosen) algorithm; ``progress`` (a text stream) gets a live line.

    ``jobs=1`` runs the checks here, one after another; more run them in that many worker processes (at most
    one per check), each check on the same seeded examples as here, so the report is the same.
    """
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    seed = checked_int(seed, "seed", 0)
    jobs = checked_int(jobs, "jobs", 1)
    dev = resolve_device(device)
    plan = _plan(only, dev)
    report = Report(profile, str(dev), seed, torch.__version__)
    live = progress is not None and hasattr(progress, "isatty") and progress.isatty()

    def show(i, doing):
        if live:
            progress.write(f"\r\033[Kverify [{i}/{len(plan)}] {doing}")
            progress.flush()

    start = time.perf_counter()
    try:
        if jobs == 1 or len(plan) == 1:
            checks = _Checks(dev)
            for i, (name, check) in enumerate(plan):
                show(i + 1, f"{name}: {check}")
                report.rows.append(_row(name, check, profile, seed, checks))
        else:
            report.rows = _in_workers(plan, min(jobs, len(plan)), (profile, seed, str(dev)), show)
    finally:  # Ctrl-C included: the live line does not stay behind
        if live:
            progress.write("\r\033[K")
            progress.flush()
    report.seconds = time.perf_counter() - start
    return report


# ------------------------------------------------------------------------------------------ worker processes
#: Seconds of each algorithm's checks (quick profile, one CPU thread, measured): the worker processes take
#: the longest first, so that none is left running a long check while the others idle at the end.
_SECONDS = {"edloss": 5.1, "edtransformer": 4.0, "edinference": 3.5, "dinference": 3.4, "eloss": 2.7,
            "kv_dtransformer": 2.1, "etransformer": 2.0, "dloss": 2.0, "dtransformer": 1.5, "token_embedding": 0.8,
            "mhattention": 0.4, "kv_mhattention": 0.4, "attention": 0.2, "single_query_attention": 0.1,
            "swin": 43.0, "swin_stage": 2.7, "swin_block": 0.9, "window_mhattention": 0.6, "patch_merging": 0.1}


class WorkerError(FormalError):
    """A worker process died before it could check anything (no memory or processes left for it): exit 1."""

    status = 1


def _in_workers(plan, jobs, setting, show) -> list:
    """The rows of ``plan`` from ``jobs`` worker processes, each sent one check at a time, the longest first;
    a worker that dies fails the check it held and is replaced.  ``setting``: (profile, seed, device)."""
    todo = sorted(range(len(plan)), key=lambda i: (_SECONDS.get(plan[i][0], 0.0), -i))  # pop(): the longest
    rows, done = [None] * len(plan), 0
    held = {}  # connection → (its process, the index of the check it holds, or None until it is ready)
    started, finished = [], []

    def dispatch(conn, process):
        if todo:
            held[conn] = (process, todo[-1])
            with contextlib.suppress(OSError):  # it died meanwhile: wait() reports it, holding this check
                conn.send(plan[todo.pop()])
        else:
            with contextlib.suppress(OSError):
                conn.send(None)  # nothing left: it returns
            finished.append(process)

    try:
        show(0, f"starting {jobs} worker processes")
        for _ in range(jobs):
            conn, process = _start(setting, started)
            held[conn] = (process, None)
        while held:
            for conn in wait(list(held)):
                process, i = held.pop(conn)
                try:
                    message = conn.recv()
                except (EOFError, OSError):  # it died: a crash, the OOM killer, a signal
                    process.join()
                    message = _died(plan, i, process.exitcode)
                    conn = None
                    if todo:
                        replacement, process = _start(setting, started)
                        held[replacement] = (process, None)
                if isinstance(message, BaseException):  # a bug escaping a check: raised, as with --jobs 1
                    raise message
                if i is not None:
                    rows[i], done = message, done + 1
                    name, check = plan[i]
                    show(done, f"{name}: {check}")
                if conn is not None:
                    dispatch(conn, process)
    finally:  # Ctrl-C or an error included: no worker outlives the run
        for process in started:
            if process not in finished:
                process.terminate()
        for process in started:
            process.join(5)
            if process.is_alive():
                process.kill()
                process.join()
    return rows


def _died(plan, i, exitcode) -> Row:
    """The row of check ``i`` whose worker died holding it; a worker that died before it was ready is a
    WorkerError."""
    how = f"killed by {signal.Signals(-exitcode).name}" if exitcode < 0 else f"exit status {exitcode}"
    if i is None:
        raise WorkerError(f"a verify worker process died before it could check anything ({how}); --jobs 1 "
                          f"checks in this process")
    name, check = plan[i]
    return Row(name, check, 0, float("inf"), _allowed(name, check), "FAIL",
               f"the worker process running this check died ({how})")


def _start(setting, started):
    """A worker process (appended to ``started``) and the connection to it.  It is a fresh interpreter
    (``spawn``: torch's threads and ``fork`` do not mix) started with SIGINT blocked, so that Ctrl-C reaches
    only this process, which ends the workers."""
    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe()
    process = context.Process(target=_work, args=(there, *setting), name="verify worker", daemon=True)
    with _sigint_blocked():
        try:
            process.start()
        except OSError as exc:  # no processes or memory left
            raise WorkerError(f"could not start a verify worker process ({exc}); --jobs 1 checks in this "
                              f"process") from None
        started.append(process)
    there.close()
    return here, process


@contextlib.contextmanager
def _sigint_blocked():
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:  # a Ctrl-C that came meanwhile is delivered now
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _work(conn, profile, seed, device):
    """A worker: it checks each (algorithm, check) the parent sends and sends back its row (or the exception
    that escaped it), until it is sent None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)  # jobs × 1 thread: these tensors are too small to gain from more (measured)
    checks = _Checks(resolve_device(device))
    with contextlib.suppress(EOFError, OSError):  # the parent is gone: nothing to report to
        conn.send("ready")
        while (task := conn.recv()) is not None:
            try:
                row = _row(*task, profile, seed, checks)
            except Exception as exc:  # noqa: BLE001 - re-raised in the parent
                row = exc
            try:
                conn.send(row)
            except Exception as exc:  # noqa: BLE001 - an exception that does not pickle
                conn.send(RuntimeError(f"{type(row).__name__}: {row} (and {type(exc).__name__} sending it)"))


def check_destination(path) -> str:
    """The folder ``path`` would be written in; a ConfigError, before any work, if it cannot be written
    (see :func:`formal.guards.files.destination`)."""
    return destination(path, what="JSON report")


def write_json(report, path) -> None:
    """Write a report (anything with ``as_json()``) as JSON atomically: a temporary file beside ``path``,
    then one rename."""
    write_text(path, json_text(report.as_json()), what="JSON report")
