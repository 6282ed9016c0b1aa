"""Algorithms 11–13 in torch: the losses, the paper's SGD step with autograd, and the variants
:ref:`decision-training` names — minibatches and AdamW.

Every loss is the loss of each sequence, summed over its tokens as the paper writes it (B sequences give
B losses).  ``sgd_step`` is the paper's ``θ ← θ − η·∇loss``; :func:`train` runs N_epochs passes over the
data, one sequence per step (the paper's), or minibatches whose step follows the gradient of the mean of
their sequences' losses (a batch of one is the paper's step exactly).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from formal.errors import ConfigError
from formal.ops.sequences import special_token

from .. import require_torch
from .architectures import dtransformer, edtransformer, etransformer
from .convert import single
from .runners import runs

__all__ = ["dloss", "edloss", "eloss", "log_probabilities", "draw_mask", "sgd_step", "train", "OPTIMIZERS",
           "run_dloss", "run_edloss", "run_eloss"]

torch = require_torch()

OPTIMIZERS = ("sgd", "adamw")


def log_probabilities(logits):
    """``log softmax`` over the vocabulary, taken in float32 when the logits are in a lower precision and the
    result returned in theirs — as mixed-precision training takes it.  In bfloat16 itself the log-sum-exp is
    added to the row maximum before it is subtracted, and a loss near 0 (a probability near 1) loses every
    digit: verify's bfloat16 row met a loss of 0.028 off by 0.0032, twenty times a correct computation's."""
    if logits.dtype in (torch.bfloat16, torch.float16):
        return torch.log_softmax(logits.float(), dim=-1).to(logits.dtype)
    return torch.log_softmax(logits, dim=-1)


def _next_token_nll(logits, x):
    """``−Σ_{t=1}^{ℓ−1} log P[x[t+1], t]`` per sequence: logits (B, ℓ, N_V), x (B, ℓ) → (B,)."""
    if x.shape[-1] < 2:
        raise ConfigError(f"the next-token loss needs at least 2 tokens, got {x.shape[-1]}")
    logp = log_probabilities(logits[:, :-1])                                 # (B, ℓ−1, N_V)
    return -logp.gather(-1, x[:, 1:, None])[..., 0].sum(-1)


def dloss(x, p, options, **kwargs):
    """Algorithm 13's loss of each sequence x (B, ℓ) under Algorithm 10."""
    return _next_token_nll(dtransformer(x, p, options, **kwargs), x)


def edloss(z, x, p, options, **kwargs):
    """Algorithm 11's loss of each target x (B, ℓ_x) given its source z (B, ℓ_z) under Algorithm 8."""
    return _next_token_nll(edtransformer(z, x, p, options, **kwargs), x)


def draw_mask(shape, p_mask: float, rng: np.random.Generator) -> np.ndarray:
    """Algorithm 12, line 4: ``m[t] = [[rand() < p_mask]]`` from a numpy Generator, as the spec draws it."""
    return (rng.random(shape) < p_mask).astype(np.float64)


def eloss(x, m, p, options, *, s=None, **kwargs):
    """Algorithm 12's loss: the tokens where ``m`` (B, ℓ) is 1 become mask_token; the loss is
    ``−Σ_t m[t]·log P[x[t], t]`` of each sequence."""
    n_vocab = p["W_e"].shape[1]
    x_tilde = torch.where(m == 1, special_token("mask", n_vocab), x)
    logp = log_probabilities(etransformer(p, options, x=x_tilde, s=s, **kwargs))
    return -(m * logp.gather(-1, x[..., None])[..., 0]).sum(-1)


def sgd_step(params: Mapping, loss: Callable, eta: float) -> dict:
    """``θ ← θ − η·∇_θ loss(θ)``: a new parameter dict (leaves requiring grad), from ``loss(params)`` → scalar."""
    leaves = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    grads = torch.autograd.grad(loss(leaves), list(leaves.values()), allow_unused=True)
    return {k: (v - eta * (torch.zeros_like(v) if g is None else g)).detach().requires_grad_(True)
            for (k, v), g in zip(leaves.items(), grads)}


def train(params: Mapping, loss: Callable, data, *, eta: float, epochs: int = 1, optimizer="sgd",
          batch_size: int = 1, weight_decay: float = 0.01, betas=(0.9, 0.999)) -> dict:
    """Algorithms 11–13: ``epochs`` passes over ``data`` (a tuple of tensors with a leading N_data axis,
    passed to ``loss(params, *batch)`` → per-sequence losses).

    ``optimizer="sgd", batch_size=1`` is the paper's training; larger batches step along the gradient of
    the mean loss of a batch (in order, the last one possibly shorter); ``"adamw"`` is
    ``torch.optim.AdamW(lr=eta, betas, weight_decay)`` on the same mean.
    """
    if optimizer not in OPTIMIZERS:
        raise ConfigError(f"unknown optimizer {optimizer!r}; known: {', '.join(OPTIMIZERS)}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size = {batch_size!r} must be a positive integer")
    if not (isinstance(eta, (int, float)) and eta > 0):
        raise ConfigError(f"learning rate eta = {eta!r} must be a positive number")
    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    n_data = data[0].shape[0]
    if optimizer == "sgd":
        step = torch.optim.SGD(list(leaves.values()), lr=eta)
    else:
        step = torch.optim.AdamW(list(leaves.values()), lr=eta, betas=betas, weight_decay=weight_decay)
    for _ in range(epochs):
        for start in range(0, n_data, batch_size):
            batch = [d[start:start + batch_size] for d in data]
            step.zero_grad()
            value = loss(leaves, *batch)
            value.mean().backward()
            step.step()
    return {k: v.detach() for k, v in leaves.items()}


# --------------------------------------------------------------------- runs of the spec's Algorithms 11–13's losses
@runs("dloss")
def run_dloss(c):
    return single(dloss(c.tokens("x"), c.params, c.options, **c.kwargs()))


@runs("edloss")
def run_edloss(c):
    return single(edloss(c.tokens("z"), c.tokens("x"), c.params, c.options, **c.kwargs()))


@runs("eloss")
def run_eloss(c):
    x = c.tokens("x")
    m = torch.tensor(draw_mask(x.shape[-1], c.options["p_mask"], c.rng()), dtype=c.dtype, device=c.device)[None]
    s = c.tokens("s") if c.options["token_types"] else None
    return single(eloss(x, m, c.params, c.options, s=s, **c.kwargs()))
