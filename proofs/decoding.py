"""Decoding with a key/value cache (Algorithm 10 with a cache, Algorithm 14): chained extends equal
recomputation, and greedy decoding with the cache generates the tokens it does without — checked on the spec's
own execution (numpy, float64), on seeded parameters and prompts of :mod:`formal.sampling.examples`.

Why no symbolic proof: each statement is about every prompt, every split into a prefill and extends, and every
number of generated tokens, while the spec executes Algorithm 10's layers, its causal softmax and the greedy
argmax numerically; the ops' symbolic meaning covers per-column ops only.
"""

from __future__ import annotations

import numpy as np

from .checks import gap as gap_of, seeded
from .theorem import Theorem

TOL = 1e-9

WHY = ("no symbolic proof: the statement is about every prompt and every split into extends, and the spec executes "
       "Algorithm 10's layers, the masked softmax and the argmax numerically")


#: Algorithm 10's options, one set per seed in turn: the paper's (learned positions, pre-norm, one K/V head per
#: head), and a Llama-like one (multi-query, RMS norm, SwiGLU) with a sinusoidal table, post-norm.  Fixed, not
#: drawn: each new set of options costs a derivation of every algorithm it builds.
OPTIONS = ({}, {"norm": "rms", "position": "sinusoidal-vaswani", "activation": "swiglu", "bias": False,
                "n_kv_heads": 1, "norm_position": "post", "eps": 0.01})


def _model(seed, n):
    """Seeded Algorithm 10 (the options ``OPTIONS[seed % 2]``, L = 2) and arguments at ℓ = n: the example and
    its parameters."""
    from formal import algorithms
    from formal.sampling.examples import example
    model = algorithms.get("dtransformer", **OPTIONS[seed % 2])
    ex = example(model, seed, small=4, pins={"ell": n, "ell_max": n}, sizes={"L": 2})
    return ex, {k: v for k, v in ex.arguments.items() if k != "x"}


def _splits(rng, n):
    """A prefill length c and at least two extends of random lengths (1 to 3) that end at n."""
    c = int(rng.integers(1, n - 1))
    stages, start = [], c
    while start < n:
        end = min(n, start + int(rng.integers(1, 4)))
        stages.append((start, end))
        start = end
    if len(stages) < 2:  # the last extend split in two
        (start, end), = stages
        stages = [(start, end - 1), (end - 1, end)]
    return c, stages


def _chained(perturbed):
    """prefill(x[:c]), then extends of random lengths, each taking the caches the previous returned: at each
    stage the columns equal Algorithm 10's on the sequence so far, and the caches the prefill's of it.  The
    twin drops the cache's last column before each extend."""
    from formal import algorithms

    def check(rng, n):
        ex, params = _model(int(rng.integers(2**31)), n)
        options, x = ex.algorithm.options, ex.arguments["x"]
        prefill = algorithms.get("kv_dtransformer", step="prefill", **options)
        extend = algorithms.get("kv_dtransformer", step="extend", **options)
        c, stages = _splits(rng, n)
        _, K, V = prefill(x=x[:c], **params)
        for k, (start, end) in enumerate(stages, 1):
            if perturbed:  # the cache one position short
                K, V = K[..., :-1], V[..., :-1]
            P, K, V = extend(x=x[start:end], K_c=K, V_c=V, **params)
            at = f"prefill of {c}, extend {k} (tokens {start}…{end - 1})"
            gap = gap_of(P, ex.algorithm(**dict(ex.arguments, x=x[:end]))[:, start:])
            if gap > TOL:
                return f"{at}: the columns differ from Algorithm 10's by {gap:.3g}"
            _, K_want, V_want = prefill(x=x[:end], **params)
            if K.shape != K_want.shape:
                return f"{at}: the cache holds {K.shape[-1]} positions, not {end}"
            gap = max(gap_of(K, K_want), gap_of(V, V_want))
            if gap > TOL:
                return f"{at}: the caches differ from the prefill's of tokens 0…{end - 1} by {gap:.3g}"
    return seeded(check, seeds=6, sizes=(4, 6, 8))


def _tokens_short(ex, params, prompt, count):
    """Greedy decoding with the spec's prefill and extend, the cache one position short at each extend."""
    from formal import algorithms
    options = {k: v for k, v in ex.algorithm.options.items() if k not in ("tau", "decoding", "kv_cache")}
    prefill = algorithms.get("kv_dtransformer", step="prefill", **options)
    extend = algorithms.get("kv_dtransformer", step="extend", **options)
    if "ell_max" in {str(s) for s in prefill.symbols}:  # a sinusoidal table's length, which no array binds
        params = dict(params, ell_max=len(prompt) + count)
    P, K, V = prefill(x=prompt, **params)
    tokens = [int(np.argmax(P[:, -1]))]
    while len(tokens) < count:
        P, K, V = extend(x=np.array(tokens[-1:]), K_c=K[..., :-1], V_c=V[..., :-1], **params)
        tokens.append(int(np.argmax(P[:, -1])))
    return np.array(tokens)


def _greedy(perturbed):
    """Algorithm 14 with greedy choice (τ → 0) and the KV cache generates the tokens it does without.  The twin
    decodes with a cache one position short at each extend."""
    from formal import algorithms
    from formal.sampling.examples import example

    def check(rng, n):
        prompt_length = int(rng.integers(2, 5))
        seed = int(rng.integers(2**31))
        decoder = algorithms.get("dinference", kv_cache=True, decoding="greedy", **OPTIONS[seed % 2])
        ex = example(decoder, seed, small=4, sizes={"L": 2},
                     pins={"ell": prompt_length, "ell_gen": n, "ell_max": prompt_length + n})
        params = {k: v for k, v in ex.arguments.items() if k not in ("x", "ell_gen", "ell_max")}
        without = algorithms.get("dinference", **dict(ex.algorithm.options, kv_cache=False))
        # without a position table nothing binds ℓ_max, up to which Algorithm 14 keeps its context
        want = without(**{"ell_max": prompt_length + n, **ex.arguments})
        got = (_tokens_short(ex, params, ex.arguments["x"], n) if perturbed else ex.algorithm(**ex.arguments))
        if len(got) != len(want) or np.any(got != want):
            step = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            return (f"prompt {ex.arguments['x'].tolist()}: with the cache {np.asarray(got).tolist()}, without "
                    f"{np.asarray(want).tolist()}: they first differ at generated token {step}")
    return seeded(check, seeds=8, sizes=(4, 6), label="ℓ_gen")


THEOREMS = [
    Theorem("kv-cache-equals-recomputation",
            "Decoding with the KV cache equals recomputation, over chained extends: prefilling the first c tokens, "
            "then extending several times (each extend taking the caches the previous returned) gives at each "
            "stage Algorithm 10's columns of the new tokens on the sequence so far, and caches equal to the "
            "prefill's of that sequence.",
            r"\mathrm{extend}(x_{s:e} \mid K, V) = \mathrm{DTransformer}(x_{:e})_{:, s:e},\ "
            r"(K, V) \leftarrow \mathrm{prefill}(x_{:e})\ \text{after each extend}",
            ("kv_dtransformer", "dtransformer"), "property-tested",
            "the spec's execution (float64; options and parameters seeded by formal.sampling.examples, L = 2), "
            "6 seeds at each of ℓ = 4, 6, 8, a random prefill length then at least two extends of 1 to 3 tokens, "
            f"|Δ| ≤ {TOL:g}; {WHY}",
            "A cache one position short (its last column dropped before each extend) gives the same columns.",
            _chained),
    Theorem("kv-cache-greedy-decoding",
            "Greedy decoding (Algorithm 14 with decoding = greedy, τ → 0) with the KV cache generates the same "
            "tokens as without it.",
            r"\mathrm{DInferenceKV}_{\tau \to 0}(x \mid \hat\theta) = "
            r"\mathrm{DInference}_{\tau \to 0}(x \mid \hat\theta)",
            ("dinference", "kv_dtransformer"), "property-tested",
            "the spec's execution (options, parameters and prompts of 2 to 4 tokens seeded by "
            "formal.sampling.examples, L = 2), 8 seeds at each of ℓ_gen = 4, 6, the tokens compared exactly; "
            f"{WHY}",
            "Greedy decoding with a cache one position short (its last column dropped before each extend) "
            "generates the same tokens.", _greedy),
]
