"""Attention (Algorithms 4, 5, 10): permutation equivariance, the order of the context, causality and KV-cache
decoding — checked on the spec's own execution (numpy, float64) or its objects."""

from __future__ import annotations

import numpy as np

from .checks import seeded
from .theorem import Theorem

TOL = 1e-10


def _attention(name, rng, n, n_z=None, d=3):
    """The spec's algorithm, bias-free, and random arguments at ℓ_x = n (ℓ_z = n_z; Z omitted: Z = X)."""
    from formal import algorithms
    algorithm = algorithms.get(name, bias=False)
    heads = 2
    shapes = {"X": (d, n), "W_q": (d, d), "W_k": (d, d), "W_v": (d, d)}
    if name == "mhattention":
        shapes = {"X": (d, n), "W_q": (heads, 2, d), "W_k": (heads, 2, d), "W_v": (heads, 2, d), "W_o": (d, heads * 2)}
    if n_z is not None:
        shapes["Z"] = (d, n_z)
    return algorithm, {k: rng.normal(size=s) for k, s in shapes.items()}


def _mask(kind, n_z, n_x):
    """The spec's causal mask (formal.core.masks.causal, top-left: t_z ≤ t_x), or the twin's: shifted by one."""
    from formal.core import masks
    causal = masks.causal(n_z, n_x, align="top-left").astype(float)
    if kind != "shifted":
        return causal
    t_z, t_x = np.arange(n_z)[:, None], np.arange(n_x)[None, :]
    return (t_z <= t_x + 1).astype(float)


def _equivariant(perturbed):
    def check(rng, n):
        for name in ("attention", "mhattention"):
            algorithm, args = _attention(name, rng, n)
            if perturbed:
                args["mask"] = _mask("causal", n, n)
            perm = np.roll(np.arange(n), 1)
            base = algorithm(**args)
            moved = algorithm(**dict(args, X=args["X"][:, perm]))
            gap = np.max(np.abs(moved - base[:, perm]))
            if gap > TOL:
                return f"{name}: permuting the tokens by {perm.tolist()} moved the output by {gap:.3g}"
    return seeded(check, sizes=(2, 3, 5))


def _context_order(perturbed):
    def check(rng, n):
        for name in ("attention", "mhattention"):
            algorithm, args = _attention(name, rng, 3, n_z=n)
            if perturbed:
                args["mask"] = _mask("causal", n, 3)
            perm = np.roll(np.arange(n), 1)
            base = algorithm(**args)
            moved = algorithm(**dict(args, Z=args["Z"][:, perm]))
            gap = np.max(np.abs(moved - base))
            if gap > TOL:
                return f"{name}: permuting the context by {perm.tolist()} (the mask kept) moved the output by {gap:.3g}"
    return seeded(check, sizes=(2, 3, 5))


def _causal(perturbed):
    from formal import algorithms
    from reference.checking.examples import example

    def check(rng, n):
        t = int(rng.integers(n - 1))
        for name in ("attention", "mhattention"):
            algorithm, args = _attention(name, rng, n)
            args["mask"] = _mask("shifted" if perturbed else "causal", n, n)
            later = args["X"].copy()
            later[:, t + 1:] += rng.normal(size=later[:, t + 1:].shape)
            gap = np.max(np.abs(algorithm(**dict(args, X=later))[:, :t + 1] - algorithm(**args)[:, :t + 1]))
            if gap > TOL:
                return f"{name}: columns 0…{t} moved by {gap:.3g} when only columns after {t} changed"
        if not perturbed:  # Algorithm 10, whose mask is its own
            ex = example(algorithms.get("dtransformer"), int(rng.integers(2**31)), small=n, pins={"ell": n})
            x = ex.arguments["x"]
            vocab = ex.sizes["N_V"]
            later = x.copy()
            later[t + 1:] = (later[t + 1:] + 1) % vocab
            base, moved = ex.algorithm(**ex.arguments), ex.algorithm(**dict(ex.arguments, x=later))
            gap = np.max(np.abs(moved[:, :t + 1] - base[:, :t + 1]))
            if vocab > 1 and gap > TOL:
                return f"dtransformer: columns 0…{t} moved by {gap:.3g} when only tokens after {t} changed"
    return seeded(check, sizes=(2, 3, 5, 8))


def _kv_cache(perturbed):
    """prefill(x[:c]) then extend(x[c:]) with its caches gives the columns c… of Algorithm 10 on x."""
    from formal import algorithms
    from reference.checking.examples import example
    prefill, extend = algorithms.get("kv_dtransformer", step="prefill"), algorithms.get("kv_dtransformer")

    def check(rng, n):
        ex = example(algorithms.get("dtransformer"), int(rng.integers(2**31)), small=n, pins={"ell": n})
        args, x = ex.arguments, ex.arguments["x"]
        params = {k: v for k, v in args.items() if k != "x"}
        c = int(rng.integers(2, len(x)))
        _, K, V = prefill(x=x[:c], **params)
        if perturbed:  # the cache one position short
            K, V = K[..., :-1], V[..., :-1]
        P, _, _ = extend(x=x[c:], K_c=K, V_c=V, **params)
        want = ex.algorithm(**args)[:, c - (1 if perturbed else 0):][:, :P.shape[1]]
        gap = np.max(np.abs(P - want))
        if gap > 1e-9:
            return f"extending a cache of {K.shape[-1]} positions by {len(x) - c} tokens differs by {gap:.3g}"
    return seeded(check, seeds=8, sizes=(3, 4, 6))


THEOREMS = [
    Theorem("attention-permutation-equivariant",
            "Without a mask, self-attention (Algorithms 4 and 5, Z = X) is permutation-equivariant: permuting the "
            "tokens permutes the output columns alike.",
            r"\mathrm{Attention}(X P \mid X P) = \mathrm{Attention}(X \mid X)\,P",
            ("attention", "mhattention"), "property-tested",
            "the spec's execution (float64), 20 seeds at each of ℓ = 2, 3, 5, a cyclic shift, |Δ| ≤ 1e-10",
            "With a causal mask, self-attention is permutation-equivariant.", _equivariant),
    Theorem("attention-context-order",
            "Without a mask, attention does not depend on the order of the context Z.",
            r"\mathrm{Attention}(X \mid Z P) = \mathrm{Attention}(X \mid Z)",
            ("attention", "mhattention"), "property-tested",
            "the spec's execution, 20 seeds at each of ℓ_z = 2, 3, 5, |Δ| ≤ 1e-10",
            "With a causal mask kept in place, attention does not depend on the order of Z.", _context_order),
    Theorem("causal-masking",
            "With the causal mask, output column t does not depend on input columns after t (Algorithms 4, 5 "
            "and 10).",
            r"\mathrm{Mask}[t_z, t_x] = [t_z \le t_x] \Rightarrow \partial \tilde V_{:, t} / \partial X_{:, t'} = 0"
            r"\ \text{for } t' > t",
            ("attention", "mhattention", "dtransformer"), "property-tested",
            "the spec's execution, 20 seeds at each of ℓ = 2, 3, 5, 8, the later columns (tokens) changed",
            "With the mask shifted by one (t_z ≤ t_x + 1), output t does not depend on columns after t.", _causal),
    Theorem("kv-cache-equals-recomputation",
            "Decoding with the KV cache equals recomputation: prefilling the first c tokens and extending by the "
            "rest gives Algorithm 10's columns c onwards.",
            r"\mathrm{extend}(x_{c:} \mid \mathrm{prefill}(x_{:c})) = \mathrm{DTransformer}(x)_{:, c:}",
            ("kv_dtransformer", "dtransformer"), "property-tested",
            "the spec's execution (float64, seeded parameters of reference.checking.examples), 8 seeds at each of "
            "ℓ = 3, 4, 6, a random split, |Δ| ≤ 1e-9",
            "A cache one position short gives the same columns.", _kv_cache),
]
