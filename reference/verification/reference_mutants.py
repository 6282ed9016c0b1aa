"""``verify --mutants``' second half: planted bugs in the torch reference, each to be caught by verify's checks.

:mod:`reference.verification.mutation` measures ``conform`` on numpy implementations; this module measures
``verify`` itself.  Each :class:`ReferenceMutant` is a bug a kernel writer makes — most of them on one precision or
one attention path only, where the float64 comparison cannot see them (unscaled scores in bfloat16, a softmax summed
in bfloat16, Q/K/V cast to half for the float32 fused kernel, a backward pass in float32) — with the algorithms it
is run against and the checks expected to kill it.  It is planted by :func:`planted`: each function it names in
:mod:`reference.model` is replaced, in that module and in every module of :mod:`reference` that imported it by name,
and restored on exit.

A :class:`Planted` task runs every check of verify that applies to one algorithm
(:func:`~reference.verification.checks.rows`) once with nothing planted — the control, every row of which must pass
— and once per mutant run against it, with that mutant planted in whichever process runs the task (a worker imports
this module and plants the bug itself).  The runs draw the same examples and share what depends on them alone (the
spec's outputs, the baselines of the precision rows), so each mutant costs about its reference runs.  A mutant is
*killed by* a check when that check's row is FAIL; the report
(:class:`~reference.verification.mutation.ReferenceReport`) gives each check's kill rate over the mutants aimed at
it.

The catalogue names its checks as verify's reworked checks do (``"float64 sdpa"``, ``"bfloat16 sdpa"``, …): each
name is looked up in :data:`~reference.verification.checks.CHECKS` when a run starts (:func:`present`); a mutant
aimed at a check verify does not have yet still runs under the others, and the report names the missing check.
Mutants of the flex path run where FlexAttention does, on CUDA only; on the CPU they are listed as skipped.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import math
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from formal.errors import ConfigError

from .. import require_torch
from ..execution.protocol import Task
from .checks import Measure, applicable, rows

__all__ = ["ReferenceMutant", "ReferenceOutcome", "Planted", "MUTANTS", "CUDA_ONLY", "mutant",
           "planted", "present", "device_checks", "tasks", "skipped"]

torch = require_torch()

#: Why a mutant of the flex path is not run on the CPU.
CUDA_ONLY = "runs on CUDA only: the flex attention path needs a CUDA device"


@dataclass(frozen=True)
class ReferenceMutant:
    """One planted bug: its ``name``, the ``bug`` in one line, the ``targets`` (algorithms) it is run against,
    the ``checks`` expected to kill it, and the ``patch``: ``(module, function, make)`` triples, each replacing
    ``reference.model.<module>.<function>`` by ``make(original)``; ``cuda``: it runs on CUDA only."""

    name: str
    bug: str
    targets: tuple
    checks: tuple
    patch: tuple
    cuda: bool = False


@dataclass
class ReferenceOutcome:
    """verify's rows of one algorithm with one mutant planted (``mutant`` None: the control): each row as
    ``{"check", "examples", "max_error", "allowed", "baseline", "verdict", "detail"}``; ``error``: why there are
    none (the task killed every worker it ran on)."""

    mutant: str | None
    algorithm: str
    rows: list = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0    # the run's wall time, in whichever process ran it

    @property
    def failed(self) -> list:
        """The checks whose row is FAIL: those that kill the mutant (of a control: its false alarms)."""
        return [r["check"] for r in self.rows if r["verdict"] == "FAIL"]


# ------------------------------------------------------------------------------------------------- planting
def _reference_modules() -> list:
    """Every module of :mod:`reference` loaded, :mod:`reference.model`'s all imported first: a module imported
    while a bug is planted would keep the planted function after it is restored."""
    from ..model.runners import supported
    supported()   # imports every module of reference.model
    return [m for name, m in list(sys.modules.items()) if name == "reference" or name.startswith("reference.")]


@contextlib.contextmanager
def _replaced(module: str, function: str, make: Callable):
    """``reference.model.<module>.<function>`` replaced by ``make(original)`` wherever it is bound by name in
    :mod:`reference`, restored on exit (an exception included)."""
    original = getattr(importlib.import_module(f"reference.model.{module}"), function)
    bound = [(m, attr) for m in _reference_modules() for attr, value in list(vars(m).items()) if value is original]
    replacement = make(original)
    for m, attr in bound:
        setattr(m, attr, replacement)
    try:
        yield
    finally:
        for m, attr in bound:
            setattr(m, attr, original)


@contextlib.contextmanager
def planted(subject: ReferenceMutant):
    """``subject``'s bug planted in the reference for the ``with`` block, in this process."""
    with contextlib.ExitStack() as stack:
        for module, function, make in subject.patch:
            stack.enter_context(_replaced(module, function, make))
        yield


# --------------------------------------------------------------------------------- what the bugs compute
_BF16 = torch.bfloat16


def _explicit(Q, K, V, mask, *, empty, score, bias, softmax):
    """:func:`reference.model.attention.attend`'s explicit path for the dot scores, with ``softmax`` in place of
    torch's: the mutants of the softmax plant theirs here."""
    S = Q @ K.transpose(-1, -2)
    if score == "scaled_dot":
        S = S / math.sqrt(Q.shape[-1])
    if bias is not None:
        S = S + bias
    empty_rows = None
    if mask is not None:
        mask = mask[:, None] if mask.dim() == 3 else mask
        empty_rows = ~mask.any(-1, keepdim=True)
        S = S.masked_fill(~mask, -math.inf).masked_fill(empty_rows, 0.0)
    A = softmax(S)
    if empty_rows is not None and empty != "uniform":
        A = A.masked_fill(empty_rows, 0.0)
    Y = A @ V
    return Y if empty_rows is None or empty != "nan" else Y.masked_fill(empty_rows, math.nan)


def _summed_in_bf16(S):
    """``softmax`` over the last axis whose denominator is accumulated in bfloat16, one key at a time (torch's
    own ``sum`` accumulates in float32): each partial sum rounded to 8 significant bits."""
    E = torch.exp(S - S.amax(-1, keepdim=True))
    total = torch.zeros_like(E[..., 0])
    for j in range(E.shape[-1]):
        total = total + E[..., j]
    return E / total[..., None]


def _unstable(S):
    """``exp(S) / Σ exp(S)`` without subtracting the row's maximum: ∞/∞ once a score passes exp's range."""
    E = torch.exp(S)
    return E / E.sum(-1, keepdim=True)


def _attend_softmax(dtype, softmax):
    """attend whose explicit path in ``dtype`` computes the dot scores' softmax by ``softmax``."""
    def make(attend):
        def mutated(Q, K, V, mask=None, **kw):
            path, score, empty = kw.get("path", "explicit"), kw.get("score", "scaled_dot"), kw.get("empty", "zero")
            if Q.dtype != dtype or path != "explicit" or score not in ("scaled_dot", "dot") or empty == "error":
                return attend(Q, K, V, mask, **kw)
            return _explicit(Q, K, V, mask, empty=empty, score=score, bias=kw.get("bias"), softmax=softmax)
        return mutated
    return make


def _attend_unscaled(dtype, path):
    """attend that computes ``QKᵀ`` without ``1/√d_attn`` on ``path`` in ``dtype``."""
    def make(attend):
        def mutated(Q, K, V, mask=None, **kw):
            scaled = kw.get("score", "scaled_dot") == "scaled_dot"
            if Q.dtype == dtype and kw.get("path", "explicit") == path and scaled:
                kw["score"] = "dot"
            return attend(Q, K, V, mask, **kw)
        return mutated
    return make


def _causal_offset(mask):
    """The offset k of a causal mask as rows (``t_z ≤ t_x + k``, top-left or bottom-right); None for another."""
    if mask is None or mask.dim() != 2:
        return None
    ones = torch.ones_like(mask)
    return next((k for k in (0, mask.shape[1] - mask.shape[0]) if torch.equal(mask, ones.tril(k))), None)


def _causal_off_by_one_in_bf16(attend):
    def mutated(Q, K, V, mask=None, **kw):
        offset = _causal_offset(mask) if Q.dtype == _BF16 else None
        if offset is not None:
            mask = torch.ones_like(mask).tril(offset + 1)
        return attend(Q, K, V, mask, **kw)
    return mutated


def _sdpa_mask_transposed(attend):
    def mutated(Q, K, V, mask=None, **kw):
        if kw.get("path", "explicit") == "sdpa" and mask is not None:
            mask = mask.transpose(-1, -2)
        return attend(Q, K, V, mask, **kw)
    return mutated


def _sdpa_in_half_for_float32(attend):
    def mutated(Q, K, V, mask=None, **kw):
        if Q.dtype != torch.float32 or kw.get("path", "explicit") != "sdpa":
            return attend(Q, K, V, mask, **kw)
        return attend(Q.half(), K.half(), V.half(), mask, **kw).float()
    return mutated


def _scores_computed_twice(attend):
    def mutated(Q, K, V, mask=None, **kw):
        if kw.get("path", "explicit") == "explicit" and kw.get("score", "scaled_dot") != "additive":
            Q @ K.transpose(-1, -2)           # the row maxima's product, which the softmax computes again
        return attend(Q, K, V, mask, **kw)
    return mutated


def _flex_mask_transposed(flex):
    def mutated(Q, K, V, mask, scale=None, bias=None):
        return flex(Q, K, V, None if mask is None else mask.transpose(-1, -2), scale, bias)
    return mutated


def _causal_off_by_one(causal_mask):
    def mutated(ell_z, ell_x, *, align="top-left", device=None):
        admitted = causal_mask(ell_z, ell_x, align=align, device=device)
        return admitted | torch.nn.functional.pad(admitted, (1, 0))[:, :-1]   # key t_z + 1 admitted as well
    return mutated


def _causal_top_left_always(causal_mask):
    def mutated(ell_z, ell_x, *, align="top-left", device=None):
        return causal_mask(ell_z, ell_x, device=device)
    return mutated


def _layer_norm_in(dtype, variance):
    """layer_norm whose ``norm="layer"`` in ``dtype`` divides by ``√(variance(e, mean) + eps)``."""
    def make(layer_norm):
        def mutated(e, gamma, beta=None, *, norm="layer", eps=0.0):
            if e.dtype != dtype or norm != "layer":
                return layer_norm(e, gamma, beta, norm=norm, eps=eps)
            mean = e.mean(-1, keepdim=True)
            return (e - mean) / torch.sqrt(variance(e, mean) + eps) * gamma + beta
        return mutated
    return make


def _unbiased(e, mean):
    return (e - mean).square().sum(-1, keepdim=True) / (e.shape[-1] - 1)


def _one_pass(e, mean):
    return (e.square().mean(-1, keepdim=True) - mean.square()).clamp_min(0.0)


def _eps_dropped_in_float32(layer_norm):
    def mutated(e, gamma, beta=None, *, norm="layer", eps=0.0):
        return layer_norm(e, gamma, beta, norm=norm, eps=0.0 if e.dtype == torch.float32 else eps)
    return mutated


def _post_ln_residual_after_norm_in_bf16(layer):
    from ..model import architectures

    def mutated(X, steps, opts, p, l):
        if opts.norm_position != "post" or X.dtype != _BF16:
            return layer(X, steps, opts, p, l)
        for name, f in steps:
            X = architectures._norm(p, opts, name, f(X), l) + X      # LN(f(X)) + X, not LN(X + f(X))
        return X
    return mutated


def _vocabulary_summed_in_bf16(softmax_of):
    """The vocabulary's softmax (unembedding's, or the stacks' ``probabilities``) summed in bfloat16."""
    def make(original):
        def mutated(*args, **kw):
            if args[0].dtype != _BF16:
                return original(*args, **kw)
            return _summed_in_bf16(softmax_of(*args, **kw))
        return mutated
    return make


def _sinusoid_angles_in_bf16(table):
    def mutated(encoding, d_e, ell_max, *, dtype=None, device=None):
        if dtype != _BF16 or d_e % 2:
            return table(encoding, d_e, ell_max, dtype=dtype, device=device)
        one_indexed = encoding == "sinusoidal-paper"
        base = float(ell_max) if one_indexed else 10000.0
        pairs = torch.arange(d_e // 2, dtype=torch.float64, device=device)
        omega = (base ** -((2 * (pairs + 1) if one_indexed else 2 * pairs) / d_e)).to(_BF16)
        t = (torch.arange(ell_max, device=device) + (1 if one_indexed else 0)).to(_BF16)
        angle = t[:, None] * omega                                       # t·ω rounded to 8 significant bits
        return torch.stack((angle.sin(), angle.cos()), dim=-1).reshape(ell_max, d_e)
    return mutated


def _backward_in_float32(sgd_step):
    def mutated(params, loss, eta):
        leaves = {k: v.detach().float().requires_grad_(True) for k, v in params.items()}
        grads = torch.autograd.grad(loss(leaves), list(leaves.values()), allow_unused=True)
        return {k: (v.detach() - eta * (torch.zeros_like(v) if g is None else g.to(v.dtype))).requires_grad_(True)
                for (k, v), g in zip(params.items(), grads)}
    return mutated


def _weight_decay(sgd_step):
    def mutated(params, loss, eta):
        stepped = sgd_step(params, loss, eta)
        return {k: (v.detach() - eta * 0.01 * params[k].detach()).requires_grad_(True) for k, v in stepped.items()}
    return mutated


def _tied_unembedding_copied(params_to_torch):
    def mutated(params, **kw):
        out = params_to_torch(params, **kw)
        if "W_e" in out and "W_u" not in out:
            out["W_u"] = out["W_e"].t().clone()
        return out
    return mutated


def _rope_pairing_swapped(rotate):
    """rotate pairing the rows the other style's way: rotate-half's k with k + d/2 as interleaved, and 2k with
    2k + 1 as rotate-half."""
    def mutated(X, positions, rope, length=None):
        if rope is not None:
            rope = {**rope, "rope": "interleaved" if rope["rope"] == "half" else "half"}
        return rotate(X, positions, rope, length)
    return mutated


def _rope_theta_fixed(frequencies):
    """The rotary frequencies of the base 10000 whatever ``rope_theta`` says."""
    def mutated(rope, rows, length, **kw):
        return frequencies({**rope, "rope_theta": 10000.0}, rows, length, **kw)
    return mutated


def _positions_from_zero(positions_of):
    """The positions of a block of new tokens from 0, whatever the cache before them holds."""
    def mutated(length, start=0, device=None):
        return positions_of(length, 0, device=device)
    return mutated


def _unembedding_logits(e, W_u, b_u=None):
    return torch.nn.functional.linear(e, W_u, b_u)


# ------------------------------------------------------------------------------------------------ the catalogue
_SDPA_ROWS = ("float64 sdpa", "float32 sdpa", "bfloat16 sdpa")

#: The planted bugs, each with the algorithms it is run against and the checks expected to kill it.
MUTANTS = (
    ReferenceMutant("causal-off-by-one", "the causal mask admits key t + 1 (tril(1)), in every precision",
                    ("dtransformer",), ("float64",), (("attention", "causal_mask", _causal_off_by_one),)),
    ReferenceMutant("sdpa-mask-transposed", "the SDPA path gets the mask as (ℓ_z, ℓ_x), the spec's orientation: "
                    "transposed on that path only", ("mhattention",), _SDPA_ROWS,
                    (("attention", "attend", _sdpa_mask_transposed),)),
    ReferenceMutant("flex-mask-transposed", "the flex path's mask function reads mask[kv, q]: transposed on that "
                    "path only", ("mhattention",), ("float64 flex", "float32 flex", "bfloat16 flex"),
                    (("attention", "_flex", _flex_mask_transposed),), cuda=True),
    ReferenceMutant("scores-computed-twice", "QKᵀ computed twice on the explicit path (once for the row maxima, "
                    "once for the softmax): the output right, the matmul FLOPs not", ("attention",),
                    ("matmul FLOPs",), (("attention", "attend", _scores_computed_twice),)),
    ReferenceMutant("tied-unembedding-copied", "the converter materialises a tied W_u = W_eᵀ as a parameter of its "
                    "own: the tied weight counted twice", ("dtransformer",), ("params",),
                    (("convert", "params_to_torch", _tied_unembedding_copied),)),
    ReferenceMutant("kv-cache-top-left", "the cached step's causal mask aligned top-left, not bottom-right: a new "
                    "token sees only the first cached keys", ("kv_dtransformer",), ("KV cache",),
                    (("attention", "causal_mask", _causal_top_left_always),)),
    ReferenceMutant("sgd-weight-decay", "the SGD step decays the weights, θ ← θ − η(∇L + 0.01·θ) (AdamW's default "
                    "decay): the paper's step has none", ("dloss",), ("SGD step",),
                    (("training", "sgd_step", _weight_decay),)),
    ReferenceMutant("sgd-backward-float32", "the SGD step's backward pass computed in float32 and cast back",
                    ("dloss",), ("SGD step",), (("training", "sgd_step", _backward_in_float32),)),
    ReferenceMutant("float32-unstable-softmax", "the float32 explicit path takes exp of the raw scores (no row "
                    "maximum subtracted): ∞/∞ = NaN past exp's range", ("mhattention",), ("float32",),
                    (("attention", "attend", _attend_softmax(torch.float32, _unstable)),)),
    ReferenceMutant("float32-norm-eps-dropped", "the float32 layer norm drops eps (√v, not √(v + eps))",
                    ("layer_norm",), ("float32",),
                    (("normalization", "layer_norm", _eps_dropped_in_float32),)),
    ReferenceMutant("float32-sdpa-half-inputs", "Q, K, V cast to float16 for the float32 SDPA kernel (and its "
                    "output cast back)", ("mhattention",), ("float32 sdpa",),
                    (("attention", "attend", _sdpa_in_half_for_float32),)),
    ReferenceMutant("bf16-unscaled-scores", "the bfloat16 explicit path drops 1/√d_attn from the scores",
                    ("attention", "mhattention"), ("bfloat16",),
                    (("attention", "attend", _attend_unscaled(_BF16, "explicit")),)),
    ReferenceMutant("bf16-causal-off-by-one", "the bfloat16 kernels' causal bound is t_z ≤ t_x + 1 (tril(1)): "
                    "each token sees the next", ("mhattention",), ("bfloat16", "bfloat16 sdpa"),
                    (("attention", "attend", _causal_off_by_one_in_bf16),)),
    ReferenceMutant("bf16-unbiased-variance", "the bfloat16 layer norm divides the variance by d_e − 1",
                    ("layer_norm",), ("bfloat16",),
                    (("normalization", "layer_norm", _layer_norm_in(_BF16, _unbiased)),)),
    ReferenceMutant("bf16-post-ln-residual-after-norm", "the fused post-LN add in bfloat16 adds the residual after "
                    "the norm: LN(f(X)) + X, not LN(X + f(X))", ("dtransformer",), ("bfloat16",),
                    (("architectures", "layer", _post_ln_residual_after_norm_in_bf16),)),
    ReferenceMutant("bf16-softmax-summed-in-bf16", "the attention softmax's denominator accumulated in bfloat16, "
                    "one key at a time", ("attention", "mhattention"), ("bfloat16",),
                    (("attention", "attend", _attend_softmax(_BF16, _summed_in_bf16)),)),
    ReferenceMutant("bf16-vocabulary-softmax-summed-in-bf16", "the vocabulary softmax's denominator accumulated in "
                    "bfloat16, one token at a time", ("unembedding", "dtransformer"), ("bfloat16",),
                    (("unembedding", "unembedding", _vocabulary_summed_in_bf16(_unembedding_logits)),
                     ("architectures", "probabilities", _vocabulary_summed_in_bf16(lambda logits: logits)))),
    ReferenceMutant("bf16-one-pass-variance", "the bfloat16 layer norm's variance as E[x²] − E[x]² (clamped at 0): "
                    "cancellation when the entries share an offset", ("layer_norm",), ("bfloat16",),
                    (("normalization", "layer_norm", _layer_norm_in(_BF16, _one_pass)),)),
    ReferenceMutant("bf16-sinusoid-angles", "the sinusoid table's angles t·ω computed in bfloat16 (as RoPE in "
                    "bfloat16 does): far positions lose their phase", ("positional_embedding",), ("bfloat16",),
                    (("embedding", "sinusoid_table", _sinusoid_angles_in_bf16),)),
    ReferenceMutant("bf16-sdpa-unscaled", "the bfloat16 SDPA call passes scale=1: no 1/√d_attn on that path only",
                    ("mhattention",), ("bfloat16 sdpa",),
                    (("attention", "attend", _attend_unscaled(_BF16, "sdpa")),)),
    ReferenceMutant("rope-pairing-swapped", "the rotary embedding pairs the rows the other style's way (rotate-half's "
                    "k with k + d/2 as interleaved, Meta's 2k with 2k + 1 as rotate-half)",
                    ("mhattention", "dtransformer"), ("float64",), (("rotary", "rotate", _rope_pairing_swapped),)),
    ReferenceMutant("rope-theta-ignored", "the rotary frequencies use the base 10000 whatever rope_theta says",
                    ("mhattention",), ("float64",), (("rotary", "frequencies", _rope_theta_fixed),)),
    ReferenceMutant("kv-cache-rope-from-zero", "the new tokens of a cached step are rotated for positions 0, 1, … "
                    "instead of ℓ_c, ℓ_c + 1, …: the cache's length forgotten", ("kv_mhattention", "kv_dtransformer"),
                    ("float64",), (("attention", "positions_of", _positions_from_zero),)),
)


def mutant(name: str) -> ReferenceMutant:
    """The mutant called ``name``."""
    found = next((m for m in MUTANTS if m.name == name), None)
    if found is None:
        raise ConfigError(f"no reference mutant {name!r}; known: {', '.join(m.name for m in MUTANTS)}")
    return found


# ------------------------------------------------------------------------------------------------ running them
def present(check: str) -> str | None:
    """``check`` where verify has it (a mutant may name a check of another device's or version's), else None."""
    from .checks import CHECKS
    return check if check in CHECKS else None


def device_checks(device: str) -> list:
    """verify's checks that run on ``device`` (``"cpu"`` or ``"cuda"``), in their order."""
    from .checks import CHECKS
    return [name for name, check in CHECKS.items() if device == "cuda" or not getattr(check, "cuda", False)]


def _targets(subject, only) -> list:
    return [t for t in subject.targets if only is None or t in only]


def tasks(only, profile, seed, device) -> list:
    """One :class:`Planted` task per algorithm the mutants that run on ``device`` are run against (of those
    ``only`` names; None: all): its control, then those mutants — one task, so that they share its examples and
    the spec's work on them.  Each run costs about what the control does (on the quick profile the reference's
    runs, which no two share, take most of a row's time), so a task costs its algorithm's seconds per run."""
    from ..records import chosen
    from .estimates import task_cost
    only = None if only is None else set(chosen(only))
    grouped = {}
    for m in MUTANTS:
        if not m.cuda or device == "cuda":
            for target in _targets(m, only):
                grouped.setdefault(target, [None]).append(m.name)
    return [Planted(name, tuple(planted), profile, seed, device, len(planted) * task_cost(name, profile))
            for name, planted in grouped.items()]


def skipped(only, device) -> list:
    """``(mutant, bug, why)`` for each mutant (with a target ``only`` names) that does not run on ``device``."""
    from ..records import chosen
    only = None if only is None else set(chosen(only))
    return [(m.name, m.bug, CUDA_ONLY) for m in MUTANTS if m.cuda and device != "cuda" and _targets(m, only)]


#: Held while a task runs: a bug is planted in the whole process, so two tasks on threads of one worker (a Dask
#: worker of several threads) take turns.
_PLANTING = threading.Lock()


@dataclass(frozen=True)
class Planted(Task):
    """Every check of verify that applies to algorithm ``name`` on ``device`` (``"cpu"``, ``"cuda"``), run once
    per entry of ``mutants``: with that mutant planted in the reference — here, in whichever process runs the task
    — or, for None, with none (the control).  The runs draw the same examples, and share what the spec computes
    on them (:class:`_Shared`)."""

    name: str
    mutants: tuple
    profile: str
    seed: int
    device: str
    cost: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.name}: {', '.join(m or 'control' for m in self.mutants)}"

    def run(self) -> list:
        from formal.guards import limits

        from ..model.device import device as resolve_device
        where = resolve_device(self.device)
        checks, measure, found = applicable(self.name, where), _Shared(where), []
        with _PLANTING, limits.memory_limit(limits.max_memory()), _drawn_once():
            for name in self.mutants:
                start = time.perf_counter()
                with contextlib.nullcontext() if name is None else planted(mutant(name)):
                    measured = list(rows(self.name, checks, self.profile, self.seed, measure))
                found.append(ReferenceOutcome(name, self.name, [_row(r) for r in measured],
                                              seconds=time.perf_counter() - start))
        return found

    def split(self) -> list:
        if len(self.mutants) < 2:
            return []
        each = self.cost / len(self.mutants)
        return [Planted(self.name, (m,), self.profile, self.seed, self.device, each) for m in self.mutants]

    def died(self, cause: str) -> list:
        return [ReferenceOutcome(m, self.name, error=cause) for m in self.mutants]


def _row(r) -> dict:
    """A :class:`~reference.verification.checks.Row` as the report keeps it (its baseline too, where verify measures
    one)."""
    baseline = getattr(r, "baseline", None)
    return {"check": r.check, "examples": r.examples, "max_error": float(r.max_error), "allowed": float(r.allowed),
            "baseline": None if baseline is None else float(baseline), "verdict": r.verdict, "detail": r.detail}


class _Shared(Measure):
    """A :class:`~reference.verification.checks.Measure` whose results that depend on the example alone — the spec's
    output, and the baselines computed from the spec, never the reference — outlive :meth:`forget`, which still
    drops all else: the control and the mutants of a task compute them once.  (A method Measure lacks is never
    called.)"""

    def __init__(self, device):
        super().__init__(device)
        self._kept = {}

    def _keep(self, method: str, ex, *args):
        key = (method, id(ex), args)
        if key not in self._kept:   # the example is kept with its result, so that its id is not reused
            self._kept[key] = (ex, getattr(super(), method)(ex, *args))
        return self._kept[key][1]

    def spec(self, ex):
        return self._keep("spec", ex)

    def baseline(self, ex, *args):
        return self._keep("baseline", ex, *args)

    def sgd_baseline(self, ex, *args):
        return self._keep("sgd_baseline", ex, *args)


@contextlib.contextmanager
def _drawn_once():
    """verify's example draws memoised for the ``with`` block — every function of :mod:`formal.sampling` that
    :mod:`reference.verification.checks` calls by name (``examples``, ``example_list``, …), each a pure function
    of its arguments, the seed among them — so that every run of a task meets the same example objects, and what
    :class:`_Shared` keeps of them is found again."""
    from . import checks
    saved = {name: value for name, value in vars(checks).items()
             if inspect.isfunction(value) and value.__module__.startswith("formal.sampling.")}
    for name, draw in saved.items():
        setattr(checks, name, _memoised(draw))
    try:
        yield
    finally:
        for name, draw in saved.items():
            setattr(checks, name, draw)


def _memoised(draw):
    memo = {}

    def drawn(*args, **kw):
        key = repr((args, sorted(kw.items())))
        if key not in memo:
            memo[key] = draw(*args, **kw)
        return list(memo[key])
    return drawn
