"""Algorithms 14 and 15: generating tokens from a trained decoder-only or encoder–decoder transformer, and
their planted bugs.

Random draws follow the spec's documented procedure, so that a seed gives the spec's tokens and every variant
is checkable: one generator ``numpy.random.default_rng(seed)`` per run, and each token
``rng.choice(N_V, p=q)`` with ``q ∝ p^(1/τ)``; ``decoding="greedy"`` takes the first maximum of p and draws
nothing.  An implementation that samples otherwise (``torch.multinomial``, Gumbel-max) is checkable under
``decoding=greedy`` only.
"""

from __future__ import annotations

import numpy as np

from .architectures import context, dtransformer, edtransformer
from .attention import GROUPED, mhattention
from .embedding import TABLES, tables_with
from .entry import Implementation, makers
from .kv_cache import kv_dtransformer
from .numerics import special_tokens

__all__ = ["draw", "dinference", "edinference", "IMPLEMENTATIONS", "MUTANTS", "EQUIVALENT"]


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
    the context is the last ℓ_max tokens (:ref:`decision-inference-context`); with it, no truncation is needed."""
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


# ------------------------------------------------------------------------------------- planted pieces
def _power_tau_sample(p, *, tau, decoding, rng):
    """Samples from p^τ, not p^(1/τ): a high temperature sharpens instead of flattening."""
    q = p**tau
    return int(rng.choice(len(q), p=q / q.sum()))


def _sample_whatever_decoding(p, *, tau, decoding, rng):
    """Samples even under decoding=greedy, from a generator seeded 0 (a greedy run is given no seed)."""
    return draw(p, tau=tau, decoding="sample", rng=np.random.default_rng(0))


# ----------------------------------------------------------------------------------------- catalogue
IMPLEMENTATIONS = (
    # token ids: compared exactly, no lower precision
    Implementation("dinference", dinference,
                   seconds={"quick": (2.4, 0.27), "thorough": (8.0, 0.82)}),
    Implementation("edinference", edinference,
                   seconds={"quick": (2.4, 0.33), "thorough": (9.2, 1.37)}),
)
_seam, _variant = makers(*IMPLEMENTATIONS)
_GREEDY = {"decoding": "greedy"}
_VASWANI = TABLES["sinusoidal-vaswani"]

MUTANTS = (
    _seam("dinference_power_tau", "dinference", {"tau": 2.0},
          "samples from p^τ instead of p^(1/τ)", "review", _draw=_power_tau_sample),
    _seam("dinference_greedy_wrong_axis", "dinference", _GREEDY,
          "takes the argmax over positions (the last row of P) instead of the vocabulary", "review",
          _last=lambda P: P[-1]),
    _seam("dinference_first_column", "dinference", _GREEDY,
          "draws from P[:, 0] (the first token's prediction) instead of the last column", "review",
          _last=lambda P: P[:, 0]),
    _seam("dinference_not_truncated", "dinference", {},
          "runs the model on the whole sequence instead of its last ℓ_max tokens (kv_cache=false)", "review",
          _truncate=lambda x, ell_max: x),
    _variant("dinference_ignores_tau", "dinference", {"tau": 0.5}, {"tau": 1.0}, "samples from p under tau=0.5"),
    _seam("dinference_samples_under_greedy", "dinference", _GREEDY,
          "samples (from a generator seeded 0) under decoding=greedy", "variant option decoding",
          _draw=_sample_whatever_decoding),
    _seam("dinference_cache_positions_restart", "dinference", {"kv_cache": True},
          "the cached steps give each new token position 0", "variant option kv_cache",
          _positions=lambda W_p, start, n: W_p[:, :n]),
    _seam("dinference_gqa_first_kv_head", "dinference", {**_GREEDY, **GROUPED},
          "every query head reads key/value head 0 under n_kv_heads=2", "variant option n_kv_heads",
          _attention=mhattention(_group=lambda h, H, H_kv: 0)),
    _seam("edinference_ignores_eos", "edinference", {},
          "keeps drawing after eos_token, up to ℓ_gen tokens", "review", _stop=lambda y, eos: False),
    _seam("edinference_starts_with_eos", "edinference", {},
          "starts from id N_V − 1 (the paper's 1-indexed bos_token, which is eos)", "review", _start="eos"),
    _seam("edinference_keeps_eos", "edinference", {},
          "returns the final eos_token with the generated tokens", "review", _strip=lambda x, eos: x[1:]),
    _seam("edinference_power_tau", "edinference", {"tau": 0.5},
          "samples from p^τ instead of p^(1/τ)", "variant option tau", _draw=_power_tau_sample),
    _variant("edinference_greedy_under_sample", "edinference", {}, {"decoding": "greedy"},
             "takes the argmax under the default decoding=sample"),
    _seam("edinference_paper_sinusoid_is_vaswani", "edinference", {"position": "sinusoidal-paper"},
          "adds Vaswani et al.'s table (base 10000, 0-indexed) for the paper's", "variant option position",
          _table=tables_with(sinusoidal_paper=_VASWANI)),
)

#: Bugs left out because no input can detect them (equivalent mutants), and why.
EQUIVALENT = {"sampling from p^τ under τ = 1": "p^τ = p^(1/τ)"}
