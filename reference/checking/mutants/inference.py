"""Algorithms 14 and 15: generating tokens from a trained decoder-only or encoder–decoder transformer.

Random draws follow the spec's documented procedure, so that a seed gives the spec's tokens and every variant
is checkable: one generator ``numpy.random.default_rng(seed)`` per run, and each token
``rng.choice(N_V, p=q)`` with ``q ∝ p^(1/τ)``; ``decoding="greedy"`` takes the first maximum of p and draws
nothing.  An implementation that samples otherwise (``torch.multinomial``, Gumbel-max) is checkable under
``decoding=greedy`` only.
"""

from __future__ import annotations

import numpy as np

from .decoder import context, dtransformer, kv_dtransformer
from .encoder_decoder import edtransformer
from .numerics import special_tokens

__all__ = ["draw", "dinference", "edinference"]


def draw(p, *, tau, decoding, rng):
    """One token from the distribution p (N_V): ``argmax p``, or a sample of ``p^(1/τ)`` normalised."""
    if decoding == "greedy":
        return int(np.argmax(p))
    q = p ** (1.0 / tau)
    return int(rng.choice(len(q), p=q / q.sum()))


def _recompute(model, x, p, ell_gen, ell_max, next_token, truncate):
    """Algorithm 14's loop: run the model on (at most the last ℓ_max tokens of) the whole sequence."""
    for _ in range(ell_gen):
        P = model(x=truncate(x, context(p, ell_max)), params=p, ell_max=ell_max)
        x = np.append(x, next_token(P))
    return x


def _cached(model, x, p, ell_gen, ell_max, next_token):
    """The same with a key/value cache: a prefill over the prompt, then one new token per step."""
    P, K, V = model(x=x, params=p, ell_max=ell_max)
    x = np.append(x, next_token(P))
    for _ in range(ell_gen - 1):
        P, K, V = model(x=x[-1:], K_c=K, V_c=V, params=p, ell_max=ell_max)
        x = np.append(x, next_token(P))
    return x


def _last(P):
    return P[:, -1]                                            # the distribution of the token after the last


def dinference(*, tau=1.0, decoding="sample", kv_cache=False, _draw=draw, _last=_last,
               _truncate=lambda x, ell_max: x if ell_max is None else x[-ell_max:], **options):
    """Algorithm 14: ``y_gen ← DInference(x, θ̂)``, the ℓ_gen tokens after the prompt x.  Without the cache
    the context is the last ℓ_max tokens (design decision 9); with it, no truncation is needed."""
    model = kv_dtransformer(**options) if kv_cache else dtransformer(**options)

    def dinference(x, params, ell_gen, seed=None, ell_max=None):
        rng = np.random.default_rng(seed)
        next_token = lambda P: _draw(_last(P), tau=tau, decoding=decoding, rng=rng)  # noqa: E731
        if kv_cache:
            y = _cached(model, x, params, ell_gen, ell_max, next_token)
        else:
            y = _recompute(model, x, params, ell_gen, ell_max, next_token, _truncate)
        return y[len(x):]
    return dinference


def _strip(x_hat, eos):
    """x̂ without its leading bos and a final eos."""
    return x_hat[1:-1] if len(x_hat) > 1 and x_hat[-1] == eos else x_hat[1:]


def edinference(*, tau=1.0, decoding="sample", _draw=draw, _start="bos", _stop=lambda y, eos: y == eos,
                _strip=_strip, **options):
    """Algorithm 15: ``y_gen ← EDInference(z, θ̂)``: from ``[bos_token]``, draw from ``P[:, −1]`` until
    eos_token is drawn or ℓ_gen tokens are; the tokens without bos and eos."""
    model = edtransformer(**options)

    def edinference(z, params, ell_gen, seed=None, ell_max=None):
        rng, special = np.random.default_rng(seed), special_tokens(params["W_e"].shape[1])
        x_hat = np.array([special[_start]])
        for _ in range(ell_gen):
            P = model(z=z, x=x_hat, params=params, ell_max=ell_max)
            x_hat = np.append(x_hat, _draw(P[:, -1], tau=tau, decoding=decoding, rng=rng))
            if _stop(x_hat[-1], special["eos"]):
                break
        return _strip(x_hat, special["eos"])
    return edinference
