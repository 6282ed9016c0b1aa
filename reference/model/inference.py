"""Algorithms 14 and 15 in torch: generation, with and without a key/value cache.

Distributions come from the torch stacks; the draw itself uses a numpy Generator exactly as the spec's
does (``y ∝ p^{1/τ}`` by ``Generator.choice``, or ``argmax p`` for greedy decoding), so the same seed draws
the same tokens from equal distributions.  With a cache, a prefill runs the prompt once and each later step
runs only the newest token against every layer's cached keys and values, under the bottom-right causal
mask (:ref:`decision-causal-alignment`).
"""

from __future__ import annotations

import numpy as np

from formal.errors import ConfigError
from formal.ops.sequences import special_token, tempered

from .. import require_torch
from .architectures import (
    decode,
    dtransformer,
    encode,
    stack_options,
)
from .convert import to_numpy
from .kv_cache import kv_dtransformer
from .runners import runs

__all__ = ["dinference", "edinference", "draw", "run_dinference", "run_edinference"]

torch = require_torch()


def draw(p: np.ndarray, tau: float, decoding: str, rng: np.random.Generator) -> int:
    """One token from the distribution ``p``: ``argmax p`` (the first maximum) or ``y ∝ p^{1/τ}``."""
    if decoding == "greedy":
        return int(np.argmax(p))
    return int(rng.choice(p.shape[0], p=tempered(p, tau)))


def _last_distribution(logits) -> np.ndarray:
    return torch.softmax(logits[0, -1], dim=-1).detach().cpu().to(torch.float64).numpy()


def dinference(x, p, options, *, ell_gen: int, rng=None, ell_max=None, path="explicit"):
    """Algorithm 14: ``ell_gen`` tokens continuing the prompt x (1, ℓ); the context keeps the last ℓ_max
    tokens (:ref:`decision-inference-context`), or, with ``options["kv_cache"]``, the cache keeps them all."""
    tau, decoding = options.get("tau", 1.0), options.get("decoding", "sample")
    if "W_p" in p:
        ell_max = p["W_p"].shape[1]
    tokens = x
    if options.get("kv_cache"):
        if options.get("position", "learned") != "none" and x.shape[-1] + ell_gen - 1 > ell_max:
            raise ConfigError(f"ell + ell_gen - 1 = {x.shape[-1] + ell_gen - 1} exceeds ell_max = {ell_max}: "
                              "a cache keeps absolute positions and cannot truncate")
        logits, cache = kv_dtransformer(x, None, p, options, ell_max=ell_max, path=path)
        for i in range(ell_gen):
            y = torch.tensor([[draw(_last_distribution(logits), tau, decoding, rng)]], device=x.device)
            tokens = torch.cat((tokens, y), dim=1)
            if i < ell_gen - 1:
                logits, cache = kv_dtransformer(y, cache, p, options, ell_max=ell_max, path=path)
    else:
        if ell_max is None:
            raise ConfigError("dinference needs ell_max (the context is truncated to the last ell_max tokens)")
        for _ in range(ell_gen):
            logits = dtransformer(tokens[:, -ell_max:], p, options, ell_max=ell_max, path=path)
            y = torch.tensor([[draw(_last_distribution(logits), tau, decoding, rng)]], device=x.device)
            tokens = torch.cat((tokens, y), dim=1)
    return tokens[:, x.shape[-1]:]


def edinference(z, p, options, *, ell_gen: int, rng=None, ell_max=None, path="explicit"):
    """Algorithm 15: from ``[bos]`` draw tokens until eos or ``ell_gen`` tokens; returned without bos/eos."""
    opts = stack_options(options, "edtransformer")
    tau, decoding = options.get("tau", 1.0), options.get("decoding", "sample")
    n_vocab = p["W_e"].shape[1]
    bos, eos = special_token("bos", n_vocab), special_token("eos", n_vocab)
    Z = encode(z, p, opts, path, ell_max)
    x_hat = torch.tensor([[bos]], device=z.device)
    for _ in range(ell_gen):
        y = draw(_last_distribution(decode(x_hat, Z, p, opts, path, ell_max)), tau, decoding, rng)
        x_hat = torch.cat((x_hat, torch.tensor([[y]], device=z.device)), dim=1)
        if y == eos:
            return x_hat[:, 1:-1]
    return x_hat[:, 1:]


# ------------------------------------------------------------------- runs of the spec's Algorithms 10, 14, 15


@runs("dinference")
def run_dinference(c):
    return to_numpy(dinference(c.tokens("x"), c.params, c.options, ell_gen=c["ell_gen"], rng=c.rng(),
                               **c.kwargs())[0])


@runs("edinference")
def run_edinference(c):
    return to_numpy(edinference(c.tokens("z"), c.params, c.options, ell_gen=c["ell_gen"], rng=c.rng(),
                                **c.kwargs())[0])
